//! How consolidation runs: its timers and its guards.

use std::time::Duration;

use crate::settings::MemorySettings;

/// Consolidation's settings, with the defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsolidationOptions {
    /// Time between background runs; `None` turns background runs off (the timer and
    /// the runs after a flush); on-demand runs still work.
    pub interval: Option<Duration>,
    /// Least time between the last run and one started by a flush.
    pub after_flush_gap: Duration,
    /// When a run could not finish (the user edited MEMORY.md meanwhile, another process
    /// was consolidating, the model failed), the next try comes this much later.
    pub retry_after: Duration,
    /// Most characters MEMORY.md may have after a rewrite.
    pub budget_chars: usize,
    /// Largest share of the old bullets a rewrite may drop.
    pub max_dropped_share: f64,
    /// Daily logs older than this many days (and already merged) move to memory/archive/;
    /// 0 keeps them where they are.
    pub archive_after_days: u32,
    /// Most characters of daily logs sent in one run; the rest waits for the next run.
    pub max_log_chars: usize,
}

impl Default for ConsolidationOptions {
    fn default() -> Self {
        Self {
            interval: Some(Duration::from_secs(6 * 3600)),
            after_flush_gap: Duration::from_secs(30 * 60),
            retry_after: Duration::from_secs(15 * 60),
            budget_chars: 16_000,
            max_dropped_share: 0.25,
            archive_after_days: 90,
            max_log_chars: 48_000,
        }
    }
}

impl ConsolidationOptions {
    /// The defaults, with what `[memory]` sets. Values that make no sense (negative hours,
    /// a share outside 0..=1, a budget of 0) fall back to the default.
    pub fn from_settings(settings: &MemorySettings) -> Self {
        let defaults = Self::default();
        let interval = match settings.consolidation_interval_hours {
            Some(0.0) => None,
            Some(hours) => Duration::try_from_secs_f64(hours * 3600.0)
                .ok()
                .or(defaults.interval),
            None => defaults.interval,
        };
        Self {
            interval,
            budget_chars: settings
                .memory_budget_chars
                .filter(|&n| n > 0)
                .unwrap_or(defaults.budget_chars),
            max_dropped_share: settings
                .max_dropped_share
                .filter(|share| (0.0..=1.0).contains(share))
                .unwrap_or(defaults.max_dropped_share),
            archive_after_days: settings
                .archive_after_days
                .unwrap_or(defaults.archive_after_days),
            ..defaults
        }
    }

    /// The answer's token limit: room for a file of the budget, and some over it (an
    /// answer cut off by the limit would be a truncated file).
    pub(super) fn max_tokens(&self) -> u32 {
        let tokens = self.budget_chars / 3 + 1024;
        u32::try_from(tokens).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn settings_override_the_defaults_and_zero_hours_turns_the_timer_off() {
        let settings = MemorySettings {
            consolidation_interval_hours: Some(0.5),
            memory_budget_chars: Some(8000),
            max_dropped_share: Some(0.1),
            archive_after_days: Some(30),
            ..MemorySettings::default()
        };
        assert_eq!(
            ConsolidationOptions::from_settings(&settings),
            ConsolidationOptions {
                interval: Some(Duration::from_secs(1800)),
                budget_chars: 8000,
                max_dropped_share: 0.1,
                archive_after_days: 30,
                ..ConsolidationOptions::default()
            }
        );
        let off = MemorySettings {
            consolidation_interval_hours: Some(0.0),
            max_dropped_share: Some(2.0),
            ..MemorySettings::default()
        };
        let options = ConsolidationOptions::from_settings(&off);
        assert_eq!(options.interval, None);
        assert_eq!(options.max_dropped_share, 0.25);
        assert_eq!(
            ConsolidationOptions::from_settings(&MemorySettings::default()),
            ConsolidationOptions::default()
        );
    }
}
