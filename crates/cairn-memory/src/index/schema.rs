//! The index's fields and the analyzer its text goes through. Changing either changes
//! [`SCHEMA_VERSION`], and an index of another version is rebuilt from the files.

use std::fs;
use std::path::Path;

use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STORED, STRING,
};
use tantivy::tokenizer::{
    AsciiFoldingFilter, LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer,
};
use tantivy::{Index, IndexSettings};

use super::IndexError;

use super::stem::EnglishStems;

use crate::source::SourceKind;

/// Bumped whenever the fields, the analyzer or what a field holds change (5: sessions
/// are dated).
pub const SCHEMA_VERSION: u32 = 5;

/// The analyzer of searchable text: words, lower case, accents folded, English stems.
pub const ANALYZER: &str = "cairn";

/// The fields of a chunk document.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    /// Workspace-relative path (exact, for deletes and filters).
    pub path: Field,
    /// The source kind (`memory`, `daily`, `agents`, `knowledge`, `session`, `note`).
    pub source: Field,
    pub heading: Field,
    pub body: Field,
    pub start_line: Field,
    pub end_line: Field,
    /// Days since 1970-01-01 for dated daily logs (their hits age); 0 for everything else.
    pub day: Field,
    /// The source kind as one bit ([`kind_bit`]), for filtering while ranking.
    pub kind: Field,
    /// The chunk's id ([`super::vectors::chunk_id`]), which names its vector.
    pub chunk: Field,
    /// The page a document's chunk is on (1-based; 0 for a file without pages).
    pub page: Field,
}

impl Fields {
    pub fn schema() -> (Schema, Fields) {
        let mut builder = Schema::builder();
        let text = |positions: bool| {
            let record = if positions {
                IndexRecordOption::WithFreqsAndPositions
            } else {
                IndexRecordOption::WithFreqs
            };
            TextOptions::default().set_stored().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(ANALYZER)
                    .set_index_option(record),
            )
        };
        let fields = Fields {
            path: builder.add_text_field("path", STRING | STORED),
            source: builder.add_text_field("source", STRING | STORED),
            heading: builder.add_text_field("heading", text(false)),
            body: builder.add_text_field("body", text(true)),
            start_line: builder.add_u64_field("start_line", STORED),
            end_line: builder.add_u64_field("end_line", STORED),
            day: builder.add_i64_field("day", INDEXED | FAST | STORED),
            kind: builder.add_u64_field("kind", FAST),
            chunk: builder.add_u64_field("chunk", FAST),
            page: builder.add_u64_field("page", STORED),
        };
        (builder.build(), fields)
    }
}

/// The bit of `kind` in the `kind` field; a corpus is the OR of its kinds' bits.
pub fn kind_bit(kind: SourceKind) -> u64 {
    let position = SourceKind::ALL.iter().position(|k| *k == kind).unwrap_or(0);
    1 << position
}

pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(EnglishStems)
        .build()
}

/// Bytes of the document store read together. A hit's text is read by loading its whole
/// block, and Tantivy's default (16 KiB, LZ4-compressed) made decompressing that the
/// largest part of a keyword query, for chunks of a few hundred bytes. Blocks of 4 KiB,
/// stored as they are, cost a copy: a keyword query at 10,000 chunks went from 0.21 to
/// 0.09 ms, for an index a quarter larger (still smaller than SQLite FTS5's). (For indexes
/// made from now on; older ones keep their blocks and still work.)
const DOCSTORE_BLOCK_BYTES: usize = 4096;

/// Blocks of the document store kept in memory per segment (1 MiB).
pub const DOCSTORE_CACHE_BLOCKS: usize = 256;

/// The settings a new index is made with.
fn settings() -> IndexSettings {
    IndexSettings {
        docstore_blocksize: DOCSTORE_BLOCK_BYTES,
        docstore_compression: tantivy::store::Compressor::None,
        ..IndexSettings::default()
    }
}

/// Makes the analyzer known to an opened or created index.
pub fn register(index: &Index) {
    index.tokenizers().register(ANALYZER, analyzer());
}

/// The terms of `text` as the index sees them, in order (repeats kept, for phrases).
pub fn tokens(text: &str) -> Vec<String> {
    let mut analyzer = analyzer();
    let mut stream = analyzer.token_stream(text);
    let mut tokens = Vec::new();
    while let Some(token) = stream.next() {
        tokens.push(token.text.clone());
    }
    tokens
}

/// Replaces whatever is at `dir` with an empty index.
pub fn create_fresh(dir: &Path, schema: Schema) -> Result<(), IndexError> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| IndexError::io(dir, e))?;
    }
    fs::create_dir_all(dir).map_err(|e| IndexError::io(dir, e))?;
    Index::builder()
        .schema(schema)
        .settings(settings())
        .create_in_dir(dir)?;
    Ok(())
}

/// Days since 1970-01-01.
pub(crate) fn day_number(date: chrono::NaiveDate) -> i64 {
    date.signed_duration_since(chrono::NaiveDate::default())
        .num_days()
}

/// The date of a day number; `None` for 0 (undated) and numbers no date has.
pub(crate) fn date_of_day(day: i64) -> Option<chrono::NaiveDate> {
    let since = chrono::Duration::try_days(day).filter(|_| day > 0)?;
    chrono::NaiveDate::default().checked_add_signed(since)
}
