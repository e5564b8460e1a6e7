//! The workspace context's stamp: what it was built from, to see when it must be built
//! again.

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{Local, NaiveDate};

/// How long a stamp is trusted when nothing in the run could have changed the files: an
/// edit by hand, in an editor or by another process, is seen at the first model call after
/// this long. (A model call takes longer than this, so in practice every call looks.)
const TRUSTED_FOR: Duration = Duration::from_millis(200);

/// What the workspace context was built from, cheap to take and compare: the size and
/// time of change of each file in it (and of the folders whose lists it shows), and the
/// day (tomorrow, today's log is another file). A run compares it before each model call
/// when a tool that may write ran since it was taken, or when it is older than
/// [`TRUSTED_FOR`].
#[derive(Debug, Clone)]
pub(super) struct ContextStamp {
    day: NaiveDate,
    files: Vec<Option<(u64, std::time::SystemTime)>>,
    taken: Instant,
}

impl ContextStamp {
    pub(super) fn take(root: &Path) -> Self {
        let day = Local::now().date_naive();
        let logs = [day - chrono::Duration::days(1), day].map(cairn_memory::daily_log::path);
        let files = ["AGENTS.md", "MEMORY.md", "skills", "subagents", "knowledge"]
            .iter()
            .map(|p| p.to_string())
            .chain(logs)
            .map(|rel| {
                let meta = std::fs::metadata(root.join(rel)).ok()?;
                Some((meta.len(), meta.modified().ok()?))
            })
            .collect();
        Self {
            day,
            files,
            taken: Instant::now(),
        }
    }

    /// Whether the files changed since this stamp was taken, looked at only when
    /// `touched` (a tool that may write ran) or the stamp is no longer trusted. A stamp
    /// found unchanged is trusted again from now.
    pub(super) fn changed(&mut self, root: &Path, touched: bool) -> bool {
        if !touched && self.taken.elapsed() < TRUSTED_FOR {
            return false;
        }
        let now = Self::take(root);
        if now.day == self.day && now.files == self.files {
            self.taken = now.taken;
            return false;
        }
        true
    }
}
