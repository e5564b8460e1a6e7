//! Reading a session file, repairing what a crash can leave behind.
//!
//! - A torn last line (a write cut short) is moved to `<id>.jsonl.corrupt-<ts>` and cut from
//!   the file; everything before it loads.
//! - A damaged line in the middle is skipped with a warning and left in the file.
//! - An entry type from a newer version is kept (as `Unknown`) and skipped in context.
//! - Tool calls left without a result are answered "interrupted" (see `Session::open`).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use cairn_protocol::{EntryKind, SessionEntry, SessionHeader, SESSION_FORMAT_VERSION};
use serde_json::Value;

use super::tree::SessionTree;
use crate::error::HarnessError;

/// Something loading fixed or set aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repair {
    /// The torn last line was moved to `moved_to`.
    TornLine { line: usize, moved_to: PathBuf },
    /// A line in the middle could not be read and was skipped.
    SkippedLine { line: usize, error: String },
    /// An entry of a type this version does not know was kept but is ignored.
    UnknownEntry { line: usize, entry_type: String },
    /// Tool calls without a result were answered: those that were running as possibly
    /// part run, those that never started as not run.
    InterruptedCalls {
        ran: Vec<String>,
        not_run: Vec<String>,
    },
}

impl std::fmt::Display for Repair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Repair::TornLine { line, moved_to } => write!(
                f,
                "line {line} was cut short by a crash; it was moved to {}",
                moved_to.display()
            ),
            Repair::SkippedLine { line, error } => write!(f, "line {line} skipped: {error}"),
            Repair::UnknownEntry { line, entry_type } => {
                write!(
                    f,
                    "line {line}: entry type `{entry_type}` is from a newer version; kept"
                )
            }
            Repair::InterruptedCalls { ran, not_run } => {
                let mut said = Vec::new();
                if !ran.is_empty() {
                    said.push(format!(
                        "{} tool call(s) were running and may have partly run",
                        ran.len()
                    ));
                }
                if !not_run.is_empty() {
                    said.push(format!("{} never started", not_run.len()));
                }
                write!(f, "{}; each was answered so", said.join(", "))
            }
        }
    }
}

/// The largest session file that is read; larger ones are refused unread (a sparse file
/// can claim any size, and reading it whole would exhaust memory).
pub const MAX_SESSION_BYTES: u64 = 512 << 20;

/// The bytes of a session file, refused with its size when it is too large.
fn read_bounded(path: &Path) -> Result<Vec<u8>, HarnessError> {
    match cairn_memory::beneath::read_path(path, MAX_SESSION_BYTES) {
        Ok(bytes) => Ok(bytes),
        Err(cairn_memory::MemoryError::TooLarge { bytes, .. }) => Err(format_error(
            path,
            &format!(
                "the file is {} MiB, more than the {} MiB a session may hold; it was not read",
                bytes >> 20,
                MAX_SESSION_BYTES >> 20
            ),
        )),
        Err(cairn_memory::MemoryError::Io { source, .. }) => Err(HarnessError::io(path, source)),
        Err(e) => Err(e.into()),
    }
}

/// A session read from disk.
#[derive(Debug)]
pub struct LoadedSession {
    pub tree: SessionTree,
    pub repairs: Vec<Repair>,
    /// The file's last line lacks its newline (the writer adds it before appending).
    pub needs_newline: bool,
}

/// Reads and repairs `path`. `repair_file`: allowed to move a torn tail aside (false for
/// read-only looks such as `sessions show`).
pub fn load(path: &Path, repair_file: bool) -> Result<LoadedSession, HarnessError> {
    let bytes = read_bounded(path)?;
    let mut lines = split_lines(&bytes);
    let Some((_, header_line)) = lines.next() else {
        return Err(format_error(path, "the file is empty"));
    };
    let header = parse_header(path, header_line)?;
    let mut tree = SessionTree::new(header);
    let mut repairs = Vec::new();
    let ends_with_newline = bytes.last() == Some(&b'\n');
    let mut torn = None;
    for (number, (offset, line)) in lines.enumerate().map(|(i, l)| (i + 2, l)) {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let is_last = offset + line.len() >= bytes.len();
        match parse_entry(line) {
            Ok(entry) => {
                if let EntryKind::Unknown { raw } = &entry.kind {
                    let entry_type = raw["type"].as_str().unwrap_or("?").to_string();
                    repairs.push(Repair::UnknownEntry {
                        line: number,
                        entry_type,
                    });
                }
                tree.apply(entry);
            }
            Err(_) if is_last && !ends_with_newline => torn = Some((number, offset)),
            Err(error) => repairs.push(Repair::SkippedLine {
                line: number,
                error,
            }),
        }
    }
    // After a torn tail is cut, the file ends right after the previous line's newline.
    let needs_newline = !ends_with_newline && torn.is_none();
    if let Some((line, offset)) = torn {
        if repair_file {
            let moved_to = set_aside(path, &bytes[offset..], offset as u64)?;
            repairs.push(Repair::TornLine { line, moved_to });
        }
    }
    Ok(LoadedSession {
        tree,
        repairs,
        needs_newline,
    })
}

/// Lines with their byte offsets; the last piece may lack a newline.
fn split_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut offset = 0;
    bytes.split(|&b| b == b'\n').filter_map(move |line| {
        let start = offset;
        offset += line.len() + 1;
        (start < bytes.len()).then_some((start, line))
    })
}

fn parse_header(path: &Path, line: &[u8]) -> Result<SessionHeader, HarnessError> {
    let header: SessionHeader = serde_json::from_slice(line)
        .map_err(|e| format_error(path, &format!("line 1 is not a session header: {e}")))?;
    if header.kind != "session" {
        return Err(format_error(path, "line 1 is not a session header"));
    }
    if header.version > SESSION_FORMAT_VERSION {
        tracing::warn!(
            "{} was written by a newer Cairn (format {}); unknown entries will be skipped",
            path.display(),
            header.version
        );
    }
    Ok(header)
}

/// Parses one entry; an unknown `type` with an id becomes `Unknown`.
fn parse_entry(line: &[u8]) -> Result<SessionEntry, String> {
    match serde_json::from_slice::<SessionEntry>(line) {
        Ok(entry) => Ok(entry),
        Err(typed_error) => {
            let value: Value = serde_json::from_slice(line).map_err(|e| e.to_string())?;
            let entry_type = value["type"].as_str().unwrap_or_default();
            let id = value["id"].as_str();
            match id {
                Some(id) if !EntryKind::KNOWN_TYPES.contains(&entry_type) => Ok(SessionEntry {
                    id: id.to_string(),
                    parent_id: value["parent_id"].as_str().map(str::to_string),
                    ts: value["ts"].as_str().unwrap_or_default().to_string(),
                    kind: EntryKind::Unknown { raw: value },
                }),
                _ => Err(typed_error.to_string()),
            }
        }
    }
}

/// Copies the torn tail to a `.corrupt-<ts>` file beside the session, then cuts it from
/// the session so appends start on a clean line.
fn set_aside(path: &Path, tail: &[u8], keep: u64) -> Result<PathBuf, HarnessError> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".corrupt-{stamp}"));
    let aside = PathBuf::from(aside);
    let mut out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&aside)
        .map_err(|e| HarnessError::io(&aside, e))?;
    out.write_all(tail)
        .and_then(|()| out.sync_all())
        .map_err(|e| HarnessError::io(&aside, e))?;
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| HarnessError::io(path, e))?;
    file.set_len(keep)
        .and_then(|()| file.sync_all())
        .map_err(|e| HarnessError::io(path, e))?;
    Ok(aside)
}

fn format_error(path: &Path, message: &str) -> HarnessError {
    HarnessError::SessionFormat {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparse_terabyte_session_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.jsonl");
        std::fs::File::create(&path)
            .unwrap()
            .set_len(1 << 40)
            .unwrap();
        let err = load(&path, false).unwrap_err().to_string();
        assert!(err.contains("the file is 1048576 MiB"), "{err}");
        assert!(err.contains("huge.jsonl"), "{err}");
    }
}
