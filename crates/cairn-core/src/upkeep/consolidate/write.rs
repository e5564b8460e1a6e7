//! Replacing MEMORY.md: backup first, never over an edit made meanwhile, atomically.

use std::io;

use cairn_memory::{beneath, Workspace};
use chrono::{DateTime, Utc};

use super::logs::{free_path, ARCHIVE_DIR};
use super::report::ConsolidateError;
use crate::upkeep::flush::MAX_READ_BYTES;

const MEMORY: &str = "MEMORY.md";

/// MEMORY.md's text; `None` when there is no such file. Read beneath the workspace: a
/// MEMORY.md that is a link out of it is an error, and nothing is read.
pub(super) fn read_memory(workspace: &Workspace) -> Result<Option<String>, ConsolidateError> {
    match beneath::read_to_string(workspace.root(), MEMORY, MAX_READ_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) if e.io_kind() == Some(io::ErrorKind::InvalidData) => Err(ConsolidateError::io(
            MEMORY,
            io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"),
        )),
        Err(e) => Err(e.into()),
    }
}

/// How [`replace`] ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Replaced {
    /// `backup`: where the old file was copied (`None`: there was no file).
    Written { backup: Option<String> },
    /// MEMORY.md no longer held what the run read: nothing was written.
    EditedMeanwhile,
}

/// Replaces MEMORY.md, read as `read` at the start of the run, with `new`: copies `read`
/// to `memory/archive/MEMORY-<now>.md`, then puts `new` in place atomically only if the
/// file still holds `read` at that very moment (an edit saved at any time before is never
/// overwritten: see `beneath::replace_if`). When the file changed meanwhile nothing is
/// written and the backup is removed again.
pub(super) fn replace(
    workspace: &Workspace,
    read: Option<&str>,
    new: &str,
    now: DateTime<Utc>,
) -> Result<Replaced, ConsolidateError> {
    let backup = match read {
        Some(old) => Some(back_up(workspace, old, now)?),
        None => None,
    };
    let unchanged = |now: Option<&[u8]>| now == read.map(str::as_bytes);
    match beneath::replace_if(workspace.root(), MEMORY, new.as_bytes(), unchanged)? {
        beneath::Swap::Replaced => Ok(Replaced::Written { backup }),
        beneath::Swap::Kept => {
            if let Some(backup) = &backup {
                let _ = beneath::remove_file(workspace.root(), backup);
            }
            Ok(Replaced::EditedMeanwhile)
        }
    }
}

/// Writes `old` to a new file in memory/archive/; returns its workspace path.
fn back_up(
    workspace: &Workspace,
    old: &str,
    now: DateTime<Utc>,
) -> Result<String, ConsolidateError> {
    let name = format!("MEMORY-{}.md", now.format("%Y%m%dT%H%M%SZ"));
    let path = free_path(workspace, ARCHIVE_DIR, &name)?;
    beneath::write_atomic(workspace.root(), &path, old.as_bytes())?;
    Ok(path)
}
