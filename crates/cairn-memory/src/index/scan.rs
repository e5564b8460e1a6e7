//! Reading workspace files for the index: which files are sources, and what one of them
//! holds now (hash, chunks, or why it cannot be indexed).

use std::fs;
use std::io;
use std::path::Path;
use std::time::UNIX_EPOCH;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::catalog::SessionRecord;
use crate::chunk::{chunk_source, Chunk};
use crate::source::{classify, Source, SourceKind};

/// The folders that hold sources (besides MEMORY.md and AGENTS.md at the root).
const SOURCE_DIRS: &[&str] = &["memory", "knowledge", "sessions"];

/// Every source file in the workspace, as workspace-relative paths, sorted. Symbolic links
/// are not followed (a link could lead out of the workspace).
pub fn sources(root: &Path) -> Vec<Source> {
    let mut found = Vec::new();
    for name in ["MEMORY.md", "AGENTS.md"] {
        if root.join(name).is_file() {
            found.extend(classify(name));
        }
    }
    for dir in SOURCE_DIRS {
        walk(root, &root.join(dir), &mut found);
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

fn walk(root: &Path, dir: &Path, found: &mut Vec<Source>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            if !entry.file_name().to_string_lossy().starts_with('.') {
                walk(root, &path, found);
            }
        } else if kind.is_file() {
            if let Some(source) = relative(root, &path).as_deref().and_then(classify) {
                found.push(source);
            }
        }
    }
}

/// `path` relative to `root` with forward slashes, when it is inside and valid UTF-8.
pub fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    let parts = parts?;
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Size and modification time of a file, or `None` when it is gone or not a regular file.
pub fn stat(path: &Path) -> io::Result<Option<(u64, i64)>> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => {
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64);
            Ok(Some((meta.len(), mtime)))
        }
        Ok(_) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The largest file the index reads; larger ones are skipped unread (a sparse file can
/// claim any size, and reading it whole would exhaust memory).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Why a file of `size` bytes was not read.
pub fn too_large(size: u64) -> String {
    format!(
        "too large to index ({} MiB; files up to {} MiB are read)",
        size >> 20,
        MAX_FILE_BYTES >> 20
    )
}

/// What a source file holds now.
pub enum Content {
    Chunks {
        chunks: Vec<Chunk>,
        session: Option<SessionRecord>,
    },
    /// Not indexable, with the reason (shown to the user).
    Skipped(String),
}

/// Hash of the bytes, and their chunks or the reason they cannot be indexed.
pub fn read(source: &Source, bytes: &[u8], mtime_ns: i64) -> (String, Content) {
    let hash = blake3::hash(bytes).to_hex().to_string();
    if bytes.contains(&0) {
        return (
            hash,
            Content::Skipped("binary file (contains NUL bytes)".into()),
        );
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return (hash, Content::Skipped("not UTF-8 text".into()));
    };
    let session = match source.kind {
        SourceKind::Session => session_record(&source.path, text, mtime_ns),
        _ => None,
    };
    let chunks = chunk_source(source.kind, text);
    (hash, Content::Chunks { chunks, session })
}

/// The catalog's view of a session file: id from the file name, title, creation time from
/// the header, message count.
fn session_record(path: &str, text: &str, mtime_ns: i64) -> Option<SessionRecord> {
    let id = path.strip_prefix("sessions/")?.strip_suffix(".jsonl")?;
    let mut record = SessionRecord {
        id: id.to_string(),
        title: None,
        created_at: None,
        updated_at: DateTime::<Utc>::from_timestamp_nanos(mtime_ns).to_rfc3339(),
        messages: 0,
    };
    for line in text.lines() {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let field = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_string);
        match value.get("type").and_then(Value::as_str) {
            Some("session") => record.created_at = field("created_at"),
            Some("session_info") => record.title = field("title"),
            Some("message") => record.messages += 1,
            _ => {}
        }
    }
    Some(record)
}
