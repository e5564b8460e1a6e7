//! Reading workspace files for the index: which files are sources, and what one of them
//! holds now (hash, chunks, or why it cannot be indexed).

use std::fs;
use std::io;
use std::path::Path;
use std::time::UNIX_EPOCH;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::rules::{Found, Rules};
use crate::catalog::SessionRecord;
use cairn_extract::guard::Limits;
use cairn_extract::Kind;

use crate::chunk::{chunk_pages, chunk_source_sized, Chunk, Sizing};
use crate::source::{Format, Source, SourceKind};

/// Every source file in the workspace (see [`Rules`]), sorted, with no exclusions of
/// the settings. Symbolic links are not followed (a link could lead out of the workspace).
pub fn sources(root: &Path) -> Vec<Source> {
    let mut found = Vec::new();
    if let Ok(mut rules) = Rules::new(root, &[]) {
        rules.walk(&mut |entry| {
            if let Found::Source(source) = entry {
                found.push(source);
            }
        });
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
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

/// The largest session transcript the index reads; larger ones are skipped unread (a
/// sparse file can claim any size, and reading it whole would exhaust memory).
pub const MAX_SESSION_BYTES: u64 = 64 << 20;

/// Why a file of `size` bytes was not read, when `limit` is the most that is.
pub fn too_large(size: u64, limit: u64) -> String {
    format!(
        "too large to index ({}; files up to {} are read, `[memory] max_file_mb`)",
        megabytes(size),
        megabytes(limit)
    )
}

fn megabytes(bytes: u64) -> String {
    let mb = bytes as f64 / f64::from(1 << 20);
    if mb >= 10.0 || mb.fract() == 0.0 {
        format!("{mb:.0} MB")
    } else {
        format!("{mb:.1} MB")
    }
}

/// What a source file holds now.
pub enum Content {
    Chunks {
        chunks: Vec<Chunk>,
        session: Option<SessionRecord>,
    },
    /// Not indexable, with the reason (shown to the user).
    Skipped(String),
    /// A document its reader could not read, with the reader's reason.
    Failed(String),
}

/// The extractor's name for a document format.
fn document_kind(format: Format) -> Option<Kind> {
    Some(match format {
        Format::Pdf => Kind::Pdf,
        Format::Docx => Kind::Docx,
        Format::Odt => Kind::Odt,
        Format::Epub => Kind::Epub,
        Format::Html => Kind::Html,
        Format::Markdown | Format::Text | Format::Session => return None,
    })
}

/// The hash a file's bytes are known by.
pub fn hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// The chunks of a file's bytes, or the reason they cannot be indexed.
pub fn read(
    source: &Source,
    bytes: &[u8],
    mtime_ns: i64,
    sizing: &Sizing,
    limits: Limits,
) -> Content {
    if let Some(kind) = document_kind(source.format) {
        let content = match cairn_extract::guard::extract(kind, bytes, limits) {
            Ok(extracted) => {
                let pages: Vec<(Option<u32>, &str)> = extracted
                    .pages
                    .iter()
                    .map(|p| (p.number, p.text.as_str()))
                    .collect();
                Content::Chunks {
                    chunks: chunk_pages(&pages, sizing),
                    session: None,
                }
            }
            Err(why) => Content::Failed(why),
        };
        return content;
    }
    if bytes.contains(&0) {
        return Content::Skipped("binary file (contains NUL bytes)".into());
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Content::Skipped("not UTF-8 text".into());
    };
    let session = match source.kind {
        SourceKind::Session => session_record(&source.path, text, mtime_ns),
        _ => None,
    };
    let chunks = chunk_source_sized(source.kind, text, sizing);
    Content::Chunks { chunks, session }
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
