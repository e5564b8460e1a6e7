//! What the index reaches, file by file: every file the rules look at with its status
//! (indexed with its chunks and vectors, skipped by a rule, failed by its reader, or not
//! yet indexed), what OCR read of it and left unread, and the totals. `cairn index
//! --report` and the app's Coverage view show it.

use std::collections::HashMap;

use serde::Serialize;
use tantivy::schema::Value;
use tantivy::TantivyDocument;

use super::ocr::OcrNote;
use super::rules::Found;
use super::{IndexError, MemoryIndex};
use crate::catalog::Catalog;

/// Where a file stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    Indexed,
    /// Left out by a rule: ignored, excluded, too large, binary, an unsupported type.
    Skipped,
    /// Its reader could not read it (a broken or scanned document).
    Failed,
    /// A source the index has not reached yet.
    Pending,
}

/// One file (or an ignored folder) in the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileEntry {
    pub path: String,
    pub status: FileStatus,
    /// An ignored folder, reported once for everything in it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub folder: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub chunks: u64,
    /// Of its chunks, those with a vector for search by meaning.
    pub embedded: u64,
    /// Read by OCR: a picture (1), or a PDF's pages without a text layer.
    #[serde(skip_serializing_if = "is_zero")]
    pub ocr_pages: u32,
    /// Scanned pages left unread (OCR off, Tesseract missing, out of time), and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unread_scans: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Every file with its status, and the totals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FilesReport {
    pub files: Vec<FileEntry>,
    pub indexed: u64,
    pub skipped: u64,
    pub failed: u64,
    pub pending: u64,
    pub chunks: u64,
    pub embedded: u64,
    /// The embedding model the vectors are of, when search by meaning is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding_model: Option<String>,
    /// Files indexed with text read by OCR.
    pub ocr_files: u64,
    /// Scanned pages (pictures among them) not read, by reason: `12 scanned pages not
    /// read: install tesseract-ocr`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unread_scans: Vec<String>,
}

impl MemoryIndex {
    /// Every file the index looks at, with its status, read from the files, the catalog
    /// and the index as they are now (call [`MemoryIndex::sync`] first for a current one).
    pub fn files_report(&self) -> Result<FilesReport, IndexError> {
        let shared = &self.shared;
        let mut all_rules = super::all_rules(shared)?;
        let catalog = Catalog::open(&shared.state.join("state.db"))?;
        let records: HashMap<String, _> = catalog
            .files()?
            .into_iter()
            .map(|f| (f.path.clone(), f))
            .collect();
        let counts = self.chunk_counts()?;
        let mut report = FilesReport {
            embedding_model: shared.embedder().map(|e| e.model()),
            ..FilesReport::default()
        };
        // Scanned pages left unread, by why.
        let mut unread: std::collections::BTreeMap<String, u64> = Default::default();
        let mut visit = |found| {
            let entry = match found {
                Found::Left {
                    path,
                    folder,
                    reason,
                } => FileEntry {
                    path,
                    status: FileStatus::Skipped,
                    folder,
                    reason: Some(reason),
                    chunks: 0,
                    embedded: 0,
                    ocr_pages: 0,
                    unread_scans: None,
                },
                Found::Source(source) => {
                    let record = records.get(&source.path);
                    let (chunks, embedded) = counts.get(&source.path).copied().unwrap_or_default();
                    let (status, reason) = match record {
                        None => (FileStatus::Pending, None),
                        Some(r) if r.failed => (FileStatus::Failed, r.skipped.clone()),
                        Some(r) if r.skipped.is_some() => (FileStatus::Skipped, r.skipped.clone()),
                        Some(_) => (FileStatus::Indexed, None),
                    };
                    let note = record.and_then(|r| OcrNote::from_json(r.ocr.as_deref()));
                    if let Some(note) = &note {
                        if note.unread > 0 {
                            let why = note.why.clone().unwrap_or_default();
                            *unread.entry(why).or_insert(0) += u64::from(note.unread);
                        }
                    }
                    FileEntry {
                        path: source.path,
                        status,
                        folder: false,
                        reason,
                        chunks,
                        embedded,
                        ocr_pages: note.as_ref().map_or(0, |n| n.pages),
                        unread_scans: note.as_ref().and_then(OcrNote::unread_line),
                    }
                }
            };
            if entry.status == FileStatus::Indexed && entry.ocr_pages > 0 {
                report.ocr_files += 1;
            }
            match entry.status {
                FileStatus::Indexed => report.indexed += 1,
                FileStatus::Skipped => report.skipped += 1,
                FileStatus::Failed => report.failed += 1,
                FileStatus::Pending => report.pending += 1,
            }
            report.chunks += entry.chunks;
            report.embedded += entry.embedded;
            report.files.push(entry);
        };
        for rules in &mut all_rules {
            rules.walk(&mut visit);
        }
        report.unread_scans = unread
            .into_iter()
            .map(|(why, pages)| match pages {
                1 => format!("1 scanned page not read: {why}"),
                n => format!("{n} scanned pages not read: {why}"),
            })
            .collect();
        Ok(report)
    }

    /// Per path, the chunks the index holds and how many of them have a vector.
    fn chunk_counts(&self) -> Result<HashMap<String, (u64, u64)>, IndexError> {
        let shared = &self.shared;
        let searcher = shared.reader.searcher();
        let vectors = shared.vectors();
        let mut counts: HashMap<String, (u64, u64)> = HashMap::new();
        for (ordinal, segment) in searcher.segment_readers().iter().enumerate() {
            let ids = segment.fast_fields().u64("chunk")?.first_or_default_col(0);
            for doc in segment.doc_ids_alive() {
                let address = tantivy::DocAddress::new(ordinal as u32, doc);
                let stored: TantivyDocument = searcher.doc(address)?;
                let Some(path) = stored
                    .get_first(shared.fields.path)
                    .and_then(|v| v.as_str())
                else {
                    continue;
                };
                let entry = counts.entry(path.to_string()).or_default();
                entry.0 += 1;
                if vectors.contains(ids.get_val(doc)) {
                    entry.1 += 1;
                }
            }
        }
        Ok(counts)
    }
}
