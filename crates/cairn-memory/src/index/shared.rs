//! What the index's handle, its searches and its writer thread share: the Tantivy index
//! and reader, the options, progress, the embedder and its vectors.

use std::path::PathBuf;
use std::sync::{
    Arc, Condvar, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
use std::time::Instant;

use tantivy::{Index, IndexReader};

use super::folders::Folder;
use super::options::IndexOptions;
use super::report::OpenNotice;
use super::schema::Fields;
use super::slots::SlotCache;
use super::vectors::{Embedder, VectorStore};
use super::writer::WriterThread;
use crate::catalog::Catalog;

#[derive(Debug, Default)]
pub(super) struct Progress {
    /// Jobs sent to the writer, and jobs it finished.
    pub(super) queued: u64,
    pub(super) done: u64,
    pub(super) files: u64,
    pub(super) chunks: u64,
    pub(super) last_error: Option<String>,
    /// Distinct live chunks, and how many of them have a vector.
    pub(super) to_embed: u64,
    pub(super) embedded: u64,
    pub(super) embed_error: Option<String>,
    /// The stored vectors were checked against the model's length.
    pub(super) checked: bool,
    /// When the whole pass over the files that runs now began (at start, after a folder
    /// moved).
    pub(super) pass_started: Option<Instant>,
}

pub(crate) struct Shared {
    pub(super) root: PathBuf,
    /// The folders searched in place, named; and the ones left out, with why.
    pub(super) folders: Vec<Folder>,
    pub(super) folder_problems: Vec<String>,
    /// `.cairn/`, where the catalog and the writer's lock are.
    pub(super) state: PathBuf,
    pub(super) index: Index,
    pub(super) reader: IndexReader,
    pub(super) fields: Fields,
    pub(super) options: IndexOptions,
    pub(super) progress: Mutex<Progress>,
    pub(super) progressed: Condvar,
    /// The embedding model now (`options.embedder` at first; the app may change it).
    pub(super) embedder: RwLock<Option<Arc<dyn Embedder>>>,
    /// The vectors of the embedder's model (empty without one).
    pub(super) vectors: RwLock<VectorStore>,
    pub(super) slot_cache: Mutex<SlotCache>,
    /// A read-only process's catalog, for loading the vectors the writer adds.
    pub(super) reading_catalog: Mutex<Option<Catalog>>,
}

impl Shared {
    pub(super) fn progress(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn embedder(&self) -> Option<Arc<dyn Embedder>> {
        self.embedder
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(super) fn vectors(&self) -> RwLockReadGuard<'_, VectorStore> {
        self.vectors.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn vectors_mut(&self) -> RwLockWriteGuard<'_, VectorStore> {
        self.vectors.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A handle to the workspace's index; clones share it.
#[derive(Clone)]
pub struct MemoryIndex {
    pub(super) shared: Arc<Shared>,
    /// The writer thread when this process writes the index; a read-only process takes
    /// it up once the writing process has gone ([`MemoryIndex::take_over`]).
    pub(super) writer: Arc<Mutex<Option<Arc<WriterThread>>>>,
    pub(super) notices: Vec<OpenNotice>,
}
