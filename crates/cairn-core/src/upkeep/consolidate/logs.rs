//! The daily logs (`memory/YYYY-MM-DD.md`) and the archive they retire to, read and
//! moved beneath the workspace (a link out of it is never followed).

use std::io;

use cairn_memory::beneath::{self, EntryKind};
use cairn_memory::{MemoryError, Workspace};
use chrono::NaiveDate;

use super::report::ConsolidateError;
use super::state::Watermark;
use crate::upkeep::flush::MAX_READ_BYTES;

/// Where backups of MEMORY.md and retired daily logs go.
pub(super) const ARCHIVE_DIR: &str = "memory/archive";

/// One daily log as read at the start of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DailyLog {
    /// `memory/YYYY-MM-DD.md`.
    pub relative: String,
    pub date: NaiveDate,
    pub text: String,
}

/// Every daily log directly in memory/, oldest first. Other notes in memory/ are not
/// daily logs; a log that is not UTF-8 text, too large, or not a regular file of the
/// workspace (a link is not followed) is left out with a warning.
pub(super) fn daily_logs(workspace: &Workspace) -> Result<Vec<DailyLog>, ConsolidateError> {
    let root = workspace.root();
    let entries = match beneath::entries(root, "memory") {
        Ok(entries) => entries,
        Err(e) if e.is_not_found() => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut logs = Vec::new();
    for entry in entries {
        let name = entry.name.to_string_lossy().into_owned();
        let Some(date) = log_date(&name) else {
            continue;
        };
        let relative = format!("memory/{name}");
        if entry.kind != EntryKind::File {
            tracing::warn!("consolidation skips {relative}: not a regular file");
            continue;
        }
        match beneath::read_to_string(root, &relative, MAX_READ_BYTES) {
            Ok(text) => logs.push(DailyLog {
                relative,
                date,
                text,
            }),
            // Deleted since the listing.
            Err(e) if e.is_not_found() => {}
            Err(e @ MemoryError::Io { .. }) if e.io_kind() != Some(io::ErrorKind::InvalidData) => {
                return Err(e.into())
            }
            Err(e) => tracing::warn!("consolidation skips {relative}: {e}"),
        }
    }
    logs.sort_by_key(|log| log.date);
    Ok(logs)
}

/// The date of a daily log's file name (`2026-03-01.md`).
fn log_date(name: &str) -> Option<NaiveDate> {
    cairn_memory::daily_log::date_of(name)
}

/// Moves the logs dated before `cutoff` whose text is all merged to memory/archive/
/// (a log not merged yet stays until a run merges it) and forgets them in the watermark.
/// Returns the logs moved: (old path, new path).
pub(super) fn archive_old(
    workspace: &Workspace,
    logs: &[DailyLog],
    watermark: &mut Watermark,
    cutoff: NaiveDate,
) -> Result<Vec<(String, String)>, ConsolidateError> {
    let mut moved = Vec::new();
    for log in logs.iter().filter(|log| log.date < cutoff) {
        if watermark.unmerged(log).is_some() {
            continue;
        }
        if !still_reads(workspace, &log.relative, &log.text) {
            continue;
        }
        let name = log.relative.trim_start_matches("memory/");
        let to = free_path(workspace, ARCHIVE_DIR, name)?;
        beneath::rename(workspace.root(), &log.relative, &to)?;
        watermark.forget(&log.relative);
        moved.push((log.relative.clone(), to));
    }
    Ok(moved)
}

/// Whether the file still holds `text` (an append since the run began keeps it in place).
fn still_reads(workspace: &Workspace, relative: &str, text: &str) -> bool {
    beneath::read_to_string(workspace.root(), relative, MAX_READ_BYTES).is_ok_and(|now| now == text)
}

/// `dir/name`, or `dir/<stem>-2.md`, `-3` ... when taken (workspace-relative); creates
/// `dir` beneath the workspace.
pub(super) fn free_path(
    workspace: &Workspace,
    dir: &str,
    name: &str,
) -> Result<String, MemoryError> {
    let root = workspace.root();
    beneath::create_dir_all(root, dir)?;
    let stem = name.strip_suffix(".md").unwrap_or(name);
    let mut path = format!("{dir}/{name}");
    let mut n = 2;
    while beneath::exists(root, &path)? {
        path = format!("{dir}/{stem}-{n}.md");
        n += 1;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dated_markdown_files_are_daily_logs() {
        assert!(log_date("2026-03-01.md").is_some());
        assert_eq!(log_date("2026-3-1.md"), None);
        assert_eq!(log_date("2026-03-01.txt"), None);
        assert_eq!(log_date("ideas.md"), None);
        assert_eq!(log_date("2026-02-30.md"), None);
    }
}
