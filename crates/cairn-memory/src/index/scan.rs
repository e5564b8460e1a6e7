//! Reading workspace files for the index: which files are sources, and what one of them
//! holds now (hash, chunks, or why it cannot be indexed).

use std::fs;
use std::io;
use std::path::Path;
use std::time::UNIX_EPOCH;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::ocr::{self, OcrNote};
use super::rules::{Found, Rules};
use crate::catalog::SessionRecord;
use cairn_extract::guard::Limits;
use cairn_extract::{Extracted, Kind, ReadOptions};

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
        Format::Image => Kind::Image,
        Format::Markdown | Format::Text | Format::Session => return None,
    })
}

/// The hash a file's bytes are known by.
pub fn hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// How documents are read: what one may cost, what the readers may use, and the state
/// of OCR now (see [`ocr::stamp`]).
pub struct Readers<'a> {
    pub limits: Limits,
    pub options: &'a ReadOptions,
    pub ocr_stamp: &'a str,
}

/// The chunks of a file's bytes, or the reason they cannot be indexed; with what OCR did,
/// when it bore on the file.
pub fn read(
    source: &Source,
    bytes: &[u8],
    mtime_ns: i64,
    sizing: &Sizing,
    readers: &Readers,
) -> (Content, Option<OcrNote>) {
    if let Some(kind) = document_kind(source.format) {
        return read_document(kind, bytes, sizing, readers);
    }
    (read_text(source, bytes, mtime_ns, sizing), None)
}

/// A document's chunks through its reader. A picture not read for want of OCR (off,
/// Tesseract missing) is skipped, not failed; so is a document of scanned pages only.
fn read_document(
    kind: Kind,
    bytes: &[u8],
    sizing: &Sizing,
    readers: &Readers,
) -> (Content, Option<OcrNote>) {
    let unread_picture = match (kind, readers.options.ocr.as_ref()) {
        (Kind::Image, None) => Some(cairn_extract::ocr::off("text in pictures is")),
        (Kind::Image, Some(_)) if readers.ocr_stamp == ocr::MISSING_STAMP => {
            Some(cairn_extract::ocr::missing("text in pictures is"))
        }
        _ => None,
    };
    if let Some(why) = unread_picture {
        let note = ocr::of_unread_picture(&why, readers.ocr_stamp);
        return (Content::Skipped(why), note);
    }
    match extract(kind, bytes, readers) {
        Ok(extracted) => {
            let note = ocr::of_extracted(&extracted, readers.ocr_stamp);
            if let Some(unread) = extracted.unread.as_ref().filter(|_| extracted.is_empty()) {
                let content = if unread.why.starts_with(cairn_extract::ocr::MISSING)
                    || unread.why.starts_with(cairn_extract::ocr::OFF)
                {
                    Content::Skipped(unread.described())
                } else {
                    Content::Failed(unread.described())
                };
                return (content, note);
            }
            let pages: Vec<(Option<u32>, &str)> = extracted
                .pages
                .iter()
                .map(|p| (p.number, p.text.as_str()))
                .collect();
            let chunks = chunk_pages(&pages, sizing);
            let content = Content::Chunks {
                chunks,
                session: None,
            };
            (content, note)
        }
        Err(why) => match ocr::of_unread_picture(&why, readers.ocr_stamp) {
            Some(note) => (Content::Skipped(why), Some(note)),
            None => (Content::Failed(why), None),
        },
    }
}

/// How many times a file's own time limit the OCR pass of a PDF with scanned pages may
/// take: with the default minute, ten minutes, a few hundred pages.
const OCR_PASS_FACTOR: u32 = 10;

/// A document read by its reader. A PDF, while OCR can run, is read in two passes: its text
/// layer within the file's own limit (a file that makes the parser hang costs that much),
/// then, only when it has pages without one, again with OCR, which may take
/// [`OCR_PASS_FACTOR`] times longer, so a scanned book is read whole rather than cut at
/// the limit.
fn extract(kind: Kind, bytes: &[u8], readers: &Readers) -> Result<Extracted, String> {
    let ocr_runs = readers.options.ocr.is_some() && readers.ocr_stamp != ocr::MISSING_STAMP;
    if kind != Kind::Pdf || !ocr_runs {
        return cairn_extract::guard::extract_with(kind, bytes, readers.limits, readers.options);
    }
    let text_layer = ReadOptions {
        ocr: None,
        ..readers.options.clone()
    };
    let first = cairn_extract::guard::extract_with(kind, bytes, readers.limits, &text_layer)?;
    if first.unread.is_none() {
        return Ok(first);
    }
    let limits = Limits {
        timeout: readers.limits.timeout.saturating_mul(OCR_PASS_FACTOR),
        ..readers.limits
    };
    cairn_extract::guard::extract_with(kind, bytes, limits, readers.options)
}

/// A note's or a session's chunks, when its bytes are text.
fn read_text(source: &Source, bytes: &[u8], mtime_ns: i64, sizing: &Sizing) -> Content {
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
