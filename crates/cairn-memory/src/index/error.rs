//! What can go wrong with the memory index.

use std::io;
use std::path::{Path, PathBuf};

use tantivy::TantivyError;

use crate::catalog::CatalogError;

/// Why the index could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("index: {0}")]
    Tantivy(#[from] TantivyError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("the index is updated by another Cairn process; try again when it is done")]
    ReadOnly,
    #[error("the index writer stopped")]
    WriterGone,
    /// The index needs rebuilding, and another process writes it: only that one may.
    #[error(
        "another Cairn process writes the memory index, which this one cannot read ({0}); \
         it is rebuilt when that process next starts"
    )]
    RebuildElsewhere(String),
    #[error(transparent)]
    Watch(#[from] crate::watch::WatchError),
    /// Search by meaning was asked for without an embedding model.
    #[error(
        "search by meaning needs the embedding model, which is not set up: fetch it with \
         scripts/fetch-model.sh, or set `[memory] embedder` in config.toml"
    )]
    NoEmbedder,
    #[error("cannot embed the query: {0}")]
    Embed(String),
    /// A setting of the index cannot be used (a bad `[memory] exclude` pattern).
    #[error("{0}")]
    Settings(String),
}

impl IndexError {
    pub(super) fn io(path: &Path, source: io::Error) -> Self {
        IndexError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
