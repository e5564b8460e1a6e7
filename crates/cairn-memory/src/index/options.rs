//! How an index is opened: recency, waits, the writer's memory, the embedder, what is left
//! out and how much of a file is read.

use std::sync::Arc;
use std::time::Duration;

use super::vectors::Embedder;

#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// The most of its score a dated daily log's hit loses to age (0: recency off; see
    /// `weigh`).
    pub recency_strength: f64,
    /// Days after which a dated hit has lost half of `recency_strength`.
    pub half_life_days: f64,
    /// How long a search waits for the index to catch up before answering `stale`.
    pub catch_up_wait: Duration,
    /// How long the watcher waits for edits to settle.
    pub debounce: Duration,
    /// Memory for the Tantivy writer.
    pub writer_heap_bytes: usize,
    /// Makes the vectors of search by meaning; without one, search is by keyword only.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Up to this many vectors, search by meaning compares every one exactly; past it,
    /// the vectors' signs shortlist candidates first (see `cairn-bench search`).
    pub exact_search_up_to: usize,
    /// Globs of paths left out of the index (`[memory] exclude`), as in `.gitignore`.
    pub exclude: Vec<String>,
    /// The largest note (markdown, text) read, in bytes; larger ones are skipped unread.
    pub max_text_bytes: u64,
    /// The largest document (PDF, DOCX, ODT, EPUB, HTML) read, in bytes.
    pub max_document_bytes: u64,
    /// What reading one document may cost (time, memory).
    pub extract: cairn_extract::guard::Limits,
    /// What the readers may use: OCR (off: pictures are not indexed, scanned pages not
    /// read) and its languages, PDFium's library.
    pub read: cairn_extract::ReadOptions,
}

/// The default of [`IndexOptions::recency_strength`]: a year-old log keeps 85% of its
/// score, enough to settle near-ties in favour of the newer, never to bury the older.
pub const RECENCY_STRENGTH: f64 = 0.15;
/// The default of [`IndexOptions::max_text_bytes`]: 5 MB.
pub const MAX_TEXT_BYTES: u64 = 5 << 20;
/// The default of [`IndexOptions::max_document_bytes`]: 50 MB.
pub const MAX_DOCUMENT_BYTES: u64 = 50 << 20;

impl IndexOptions {
    /// The most bytes read of a file of this format.
    pub(crate) fn limit(&self, format: crate::source::Format) -> u64 {
        match format {
            crate::source::Format::Session => super::scan::MAX_SESSION_BYTES,
            f if f.is_document() || f.is_picture() => self.max_document_bytes,
            _ => self.max_text_bytes,
        }
    }
}

impl Default for IndexOptions {
    fn default() -> Self {
        Self {
            recency_strength: RECENCY_STRENGTH,
            half_life_days: 30.0,
            catch_up_wait: Duration::from_millis(500),
            debounce: Duration::from_millis(200),
            writer_heap_bytes: 64 * 1024 * 1024,
            embedder: None,
            exact_search_up_to: 20_000,
            exclude: Vec::new(),
            max_text_bytes: MAX_TEXT_BYTES,
            max_document_bytes: MAX_DOCUMENT_BYTES,
            extract: cairn_extract::guard::Limits::default(),
            read: cairn_extract::ReadOptions::default(),
        }
    }
}
