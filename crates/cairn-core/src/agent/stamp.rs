//! The workspace context's stamp: what it was built from, to see when it must be built
//! again.

use std::path::Path;

use chrono::{Duration, Local, NaiveDate};

/// What the workspace context was built from, cheap to take and compare: the size and
/// time of change of each file in it (and of the folders whose lists it shows), and the
/// day (tomorrow, today's log is another file). A run compares it before each model call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ContextStamp {
    day: NaiveDate,
    files: Vec<Option<(u64, std::time::SystemTime)>>,
}

impl ContextStamp {
    pub(super) fn take(root: &Path) -> Self {
        let day = Local::now().date_naive();
        let logs = [day - Duration::days(1), day].map(cairn_memory::daily_log::path);
        let files = ["AGENTS.md", "MEMORY.md", "skills", "subagents", "knowledge"]
            .iter()
            .map(|p| p.to_string())
            .chain(logs)
            .map(|rel| {
                let meta = std::fs::metadata(root.join(rel)).ok()?;
                Some((meta.len(), meta.modified().ok()?))
            })
            .collect();
        Self { day, files }
    }
}
