//! Cairn's side: the memory index (Tantivy) opened on the workspace and synced, then
//! searched the way the app searches it.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::ensure;
use cairn_memory::{Corpus, IndexOptions, MemoryIndex, SearchQuery, SearchResults, Workspace};

use super::corpus::TODAY;

/// What building the index took.
#[derive(Debug, Clone, Copy)]
pub struct Built {
    /// `MemoryIndex::open` and `sync` (scan, read, chunk, index, commit, catalog).
    pub build: Duration,
    pub files: u64,
    pub chunks: u64,
    /// `.cairn/index`, right after the sync.
    pub bytes: u64,
    /// Segments of the index right after the sync.
    pub segments: usize,
    /// A second `sync` with nothing changed (as at a start of the app, or whenever the
    /// watcher asks for a reconcile).
    pub resync: Duration,
}

/// Opens the workspace's index (a fresh one) and indexes every file.
pub fn build(workspace: &Workspace, options: IndexOptions) -> anyhow::Result<(MemoryIndex, Built)> {
    let started = Instant::now();
    let index = MemoryIndex::open(workspace, options)?;
    let report = index.sync()?;
    let build = started.elapsed();
    ensure!(
        report.skipped.is_empty(),
        "the index skipped files: {:?}",
        report.skipped
    );
    let dir = workspace.state_dir().join("index");
    let (bytes, segments) = (dir_bytes(&dir), segments(&dir));
    let started = Instant::now();
    index.sync()?;
    let resync = started.elapsed();
    Ok((
        index,
        Built {
            build,
            files: report.files,
            chunks: report.chunks,
            bytes,
            segments,
            resync,
        },
    ))
}

/// Top ten over every corpus, with snippets, recency measured from [`TODAY`].
pub fn query(text: &str) -> SearchQuery {
    SearchQuery {
        text: text.to_string(),
        limit: 10,
        corpus: Corpus::All,
        today: Some(TODAY),
        mode: None,
    }
}

pub fn search(index: &MemoryIndex, text: &str) -> anyhow::Result<SearchResults> {
    Ok(index.search_now(&query(text))?)
}

/// Bytes of the files under `dir`.
pub fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => dir_bytes(&entry.path()),
            Ok(kind) if kind.is_file() => entry.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// The segments listed in the index's `meta.json` (0 when it cannot be read).
pub fn segments(dir: &Path) -> usize {
    fs::read(dir.join("meta.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .and_then(|meta| meta.get("segments")?.as_array().map(Vec::len))
        .unwrap_or(0)
}
