//! What consolidation remembers between runs and restarts, in the catalog's key-value
//! table (`.cairn/state.db`): when it last ran, and which daily logs it has merged.

use std::collections::BTreeMap;

use cairn_memory::catalog::Catalog;
use cairn_memory::Workspace;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::logs::DailyLog;
use super::report::ConsolidateError;

const LAST_RUN: &str = "consolidation.last_run";
const WATERMARK: &str = "consolidation.watermark";
const WATERMARK_VERSION: u32 = 1;

pub(super) fn open(workspace: &Workspace) -> Result<Catalog, ConsolidateError> {
    let dir = workspace.state_dir();
    std::fs::create_dir_all(&dir).map_err(|e| ConsolidateError::io(".cairn", e))?;
    Ok(Catalog::open(&dir.join("state.db"))?)
}

/// When the last run that counts for the timer ended (a run that was deferred, busy or
/// failed does not count).
pub(super) fn last_run(catalog: &Catalog) -> Result<Option<DateTime<Utc>>, ConsolidateError> {
    let value = catalog.get_meta(LAST_RUN)?;
    // A value that does not parse counts as never: the next run fixes it.
    Ok(value
        .and_then(|v| DateTime::parse_from_rfc3339(&v).ok())
        .map(|t| t.to_utc()))
}

pub(super) fn set_last_run(catalog: &Catalog, at: DateTime<Utc>) -> Result<(), ConsolidateError> {
    Ok(catalog.set_meta(LAST_RUN, &at.to_rfc3339())?)
}

/// Which daily logs were merged, as far as they were: path -> hash and length of the
/// text merged. A log is new again when its text is no longer that (today's log grows).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) struct Watermark {
    version: u32,
    logs: BTreeMap<String, Mark>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
struct Mark {
    /// blake3 of the first `bytes` bytes, hex.
    hash: String,
    bytes: usize,
}

impl Watermark {
    pub(super) fn load(catalog: &Catalog) -> Result<Self, ConsolidateError> {
        let stored = catalog.get_meta(WATERMARK)?;
        // Unreadable or of another version: every log counts as new, which only costs a
        // model call (the model merges duplicates).
        Ok(stored
            .and_then(|text| serde_json::from_str::<Watermark>(&text).ok())
            .filter(|w| w.version == WATERMARK_VERSION)
            .unwrap_or_default())
    }

    pub(super) fn save(&self, catalog: &Catalog) -> Result<(), ConsolidateError> {
        let stored = Watermark {
            version: WATERMARK_VERSION,
            logs: self.logs.clone(),
        };
        let text = serde_json::to_string(&stored).unwrap_or_default();
        Ok(catalog.set_meta(WATERMARK, &text)?)
    }

    /// The text of `log` not merged yet; `None` when there is none. A log that only grew
    /// gives its new lines; one edited otherwise gives all of it.
    pub(super) fn unmerged<'a>(&self, log: &'a DailyLog) -> Option<&'a str> {
        let Some(mark) = self.logs.get(&log.relative) else {
            return Some(&log.text);
        };
        let grown = log
            .text
            .get(..mark.bytes)
            .is_some_and(|head| hash(head) == mark.hash);
        let new = if grown {
            log.text.get(mark.bytes..).unwrap_or_default()
        } else {
            &log.text
        };
        Some(new).filter(|text| !text.trim().is_empty())
    }

    /// Records `log`'s text as merged.
    pub(super) fn mark(&mut self, log: &DailyLog) {
        let mark = Mark {
            hash: hash(&log.text),
            bytes: log.text.len(),
        };
        self.logs.insert(log.relative.clone(), mark);
    }

    pub(super) fn forget(&mut self, relative: &str) {
        self.logs.remove(relative);
    }
}

pub(super) fn hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn log(text: &str) -> DailyLog {
        DailyLog {
            relative: "memory/2026-03-01.md".into(),
            date: NaiveDate::from_ymd_opt(2026, 3, 1).unwrap_or_default(),
            text: text.into(),
        }
    }

    #[test]
    fn a_grown_log_gives_its_new_lines_an_edited_one_all_of_it() {
        let mut watermark = Watermark::default();
        let first = log("# 2026-03-01\n\n- 09:00 — a\n");
        assert_eq!(watermark.unmerged(&first), Some(first.text.as_str()));
        watermark.mark(&first);
        assert_eq!(watermark.unmerged(&first), None);
        let grown = log("# 2026-03-01\n\n- 09:00 — a\n- 10:00 — b\n");
        assert_eq!(watermark.unmerged(&grown), Some("- 10:00 — b\n"));
        let edited = log("# 2026-03-01\n\n- 09:00 — A\n");
        assert_eq!(watermark.unmerged(&edited), Some(edited.text.as_str()));
        let blank_lines = log("# 2026-03-01\n\n- 09:00 — a\n\n\n");
        assert_eq!(watermark.unmerged(&blank_lines), None);
    }
}
