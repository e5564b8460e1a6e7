//! Timing helpers shared by the benchmarks.

use std::time::Duration;

/// Durations of repeated runs of one operation.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    sorted: Vec<Duration>,
}

impl Samples {
    pub fn new(mut samples: Vec<Duration>) -> Self {
        samples.sort();
        Self { sorted: samples }
    }

    /// The median (the lower middle one for an even count).
    pub fn p50(&self) -> Duration {
        self.percentile(50)
    }

    pub fn p95(&self) -> Duration {
        self.percentile(95)
    }

    pub fn p99(&self) -> Duration {
        self.percentile(99)
    }

    /// Nearest-rank percentile: the smallest sample with at least `p`% of samples at or
    /// below it.
    pub fn percentile(&self, p: usize) -> Duration {
        if self.sorted.is_empty() {
            return Duration::ZERO;
        }
        let rank = (p * self.sorted.len()).div_ceil(100).max(1);
        self.sorted[rank.min(self.sorted.len()) - 1]
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Microseconds per item.
pub fn us_per(d: Duration, items: u64) -> f64 {
    us(d) / items.max(1) as f64
}

/// Rounds for JSON output (three decimals are below the noise of any figure here).
pub fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let samples = Samples::new((1..=20).rev().map(Duration::from_millis).collect());
        assert_eq!(samples.p50(), Duration::from_millis(10));
        assert_eq!(samples.p95(), Duration::from_millis(19));
        assert_eq!(samples.p99(), Duration::from_millis(20));
        assert_eq!(samples.percentile(100), Duration::from_millis(20));
        assert_eq!(Samples::default().p95(), Duration::ZERO);
    }
}
