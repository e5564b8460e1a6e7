//! How a hit's day weighs on its score: recency that settles ties without burying old
//! facts, and the days a query asks about.
//!
//! Every factor is at most 1, so a ranking can keep the k-th best weighed score as a safe
//! threshold for raw scores (see `rank`).
//! - Recency: a dated hit (a daily log) loses at most `strength` of its score to age,
//!   half of that after `half_life` days: with the default strength, a year-old log keeps
//!   85% of its score and yesterday's nearly all of it. A query that asks for the latest
//!   ("now", "currently", "last time") weighs age [`LATEST_FACTOR`] times as much, so
//!   that of two statements of a changed fact the newer comes first. Undated notes and
//!   MEMORY.md never age.
//! - Asked days: with "in May" or "last week" in the query, a hit from outside those
//!   days (or undated) keeps [`OUTSIDE_WINDOW`] of its score: the asked days come first
//!   unless another hit matches far better.

/// A hit outside the days a query asks about keeps this share of its score.
pub(super) const OUTSIDE_WINDOW: f32 = 0.4;
/// How many times more age weighs when the query asks for the latest.
pub(super) const LATEST_FACTOR: f32 = 2.0;
/// The most of its score a hit may lose to age, whatever the settings say.
const MOST_STRENGTH: f32 = 0.9;

/// What a hit's day does to its score.
#[derive(Debug, Clone, Copy)]
pub(super) struct Weighing {
    /// Today as a day number.
    pub today: i64,
    /// The most a dated hit loses to age (0: recency off).
    pub strength: f32,
    /// Days after which a hit has lost half of `strength`.
    pub half_life: f32,
    /// The asked days as day numbers, first and last inclusive.
    pub window: Option<(i64, i64)>,
}

impl Weighing {
    /// The weighing for a query: `strength` (the setting) raised when it asks for the
    /// latest.
    pub fn new(
        today: i64,
        strength: f32,
        half_life: f32,
        latest: bool,
        window: Option<(i64, i64)>,
    ) -> Self {
        let strength = if latest {
            strength * LATEST_FACTOR
        } else {
            strength
        };
        Self {
            today,
            strength: strength.clamp(0.0, MOST_STRENGTH),
            half_life: half_life.max(0.001),
            window,
        }
    }

    /// The factor (0 to 1) for a hit from `day` (0: undated).
    pub fn factor(&self, day: i64) -> f32 {
        let mut factor = 1.0;
        if let Some((first, last)) = self.window {
            if day <= 0 || day < first || day > last {
                factor = OUTSIDE_WINDOW;
            }
        }
        if day > 0 && day < self.today && self.strength > 0.0 {
            let aged = 1.0 - 0.5f32.powf((self.today - day) as f32 / self.half_life);
            factor *= 1.0 - self.strength * aged;
        }
        factor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn age_costs_at_most_the_strength_and_spares_undated_hits() {
        let w = Weighing::new(1000, 0.2, 30.0, false, None);
        assert_eq!(w.factor(0), 1.0);
        assert_eq!(w.factor(1000), 1.0);
        assert!((w.factor(970) - 0.9).abs() < 1e-6);
        assert!(w.factor(1000 - 365) > 0.8 - 1e-6 && w.factor(1000 - 365) < 0.8 + 1e-3);
        assert!((w.factor(1) - 0.8).abs() < 1e-3, "never below 1 - strength");
        assert_eq!(
            Weighing::new(1000, 0.0, 30.0, true, None).factor(1),
            1.0,
            "off"
        );
    }

    #[test]
    fn asking_for_the_latest_weighs_age_more() {
        let plain = Weighing::new(1000, 0.15, 30.0, false, None);
        let latest = Weighing::new(1000, 0.15, 30.0, true, None);
        assert!(latest.factor(700) < plain.factor(700));
        assert!((latest.factor(1) - 0.7).abs() < 1e-3);
        assert!(Weighing::new(1000, 0.8, 30.0, true, None).factor(1) >= 0.1 - 1e-6);
    }

    #[test]
    fn the_asked_days_come_first() {
        let w = Weighing::new(1000, 0.15, 30.0, false, Some((800, 830)));
        assert!(w.factor(810) > 0.8);
        assert!(w.factor(990) <= OUTSIDE_WINDOW);
        assert!(w.factor(0) <= OUTSIDE_WINDOW);
    }
}
