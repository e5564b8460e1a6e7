//! The daily logs (`memory/YYYY-MM-DD.md`) and the archive they retire to.

use std::fs;
use std::io;
use std::path::Path;

use cairn_memory::Workspace;
use chrono::NaiveDate;

use super::report::ConsolidateError;
use super::state::Watermark;

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
/// daily logs; a log that is not UTF-8 text is left out with a warning.
pub(super) fn daily_logs(workspace: &Workspace) -> Result<Vec<DailyLog>, ConsolidateError> {
    let dir = workspace.root().join("memory");
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ConsolidateError::io("memory", e)),
    };
    let mut logs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| ConsolidateError::io("memory", e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(date) = log_date(&name) else {
            continue;
        };
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let relative = format!("memory/{name}");
        match fs::read_to_string(entry.path()) {
            Ok(text) => logs.push(DailyLog {
                relative,
                date,
                text,
            }),
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                tracing::warn!("consolidation skips {relative}: not UTF-8 text");
            }
            // Deleted since the listing.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(ConsolidateError::io(relative, e)),
        }
    }
    logs.sort_by_key(|log| log.date);
    Ok(logs)
}

/// The date of a daily log's file name (`2026-03-01.md`).
fn log_date(name: &str) -> Option<NaiveDate> {
    let stem = name.strip_suffix(".md")?;
    NaiveDate::parse_from_str(stem, "%Y-%m-%d")
        .ok()
        .filter(|_| stem.len() == 10)
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
        let from = workspace.root().join(&log.relative);
        if !still_reads(&from, &log.text) {
            continue;
        }
        let name = log.relative.trim_start_matches("memory/");
        let to = free_path(&workspace.root().join(ARCHIVE_DIR), name)
            .map_err(|e| ConsolidateError::io(ARCHIVE_DIR, e))?;
        fs::rename(&from, &to).map_err(|e| ConsolidateError::io(log.relative.clone(), e))?;
        watermark.forget(&log.relative);
        moved.push((log.relative.clone(), workspace.relative(&to)));
    }
    Ok(moved)
}

/// Whether the file still holds `text` (an append since the run began keeps it in place).
fn still_reads(path: &Path, text: &str) -> bool {
    fs::read_to_string(path).is_ok_and(|now| now == text)
}

/// `dir/name`, or `dir/<stem>-2.md`, `-3` ... when taken; creates `dir`.
pub(super) fn free_path(dir: &Path, name: &str) -> io::Result<std::path::PathBuf> {
    fs::create_dir_all(dir)?;
    let stem = name.strip_suffix(".md").unwrap_or(name);
    let mut path = dir.join(name);
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{stem}-{n}.md"));
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
