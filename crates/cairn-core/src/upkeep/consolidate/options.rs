//! How consolidation runs: its timers and its guards.

use std::time::Duration;

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
    /// The answer's token limit: room for a file of the budget, and some over it (an
    /// answer cut off by the limit would be a truncated file).
    pub(super) fn max_tokens(&self) -> u32 {
        let tokens = self.budget_chars / 3 + 1024;
        u32::try_from(tokens).unwrap_or(u32::MAX)
    }
}
