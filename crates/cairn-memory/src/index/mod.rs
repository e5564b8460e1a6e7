//! The memory index: Tantivy over the workspace's sources, kept current by
//! one writer thread (see `worker`), searched without ever waiting for a commit.
//!
//! Opening reconciles nothing by itself: call [`MemoryIndex::sync`] (blocking until the
//! index matches the disk) or [`MemoryIndex::sync_in_background`], and
//! [`MemoryIndex::watch`] (or [`MemoryIndex::follow`] with a shared watcher) to follow
//! edits. When another process holds the writer (the desktop app while the CLI
//! searches), the index opens read-only and follows that process's commits.

mod embedding;
mod error;
mod files;
pub mod folders;
mod ocr;
mod options;
mod progress;
mod rank;
mod report;
pub mod rules;
pub(crate) mod scan;
mod schema;
mod search;
mod semantic;
mod shared;
mod slots;
mod snippet;
mod stem;
mod vectors;
mod watch;
mod weigh;
mod when;
mod worker;
mod writer;

use std::fs;

use std::path::Path;
use std::sync::{mpsc, Arc, Condvar, Mutex, PoisonError, RwLock};
use std::time::Duration;

use tantivy::directory::MmapDirectory;
use tantivy::{Index, ReloadPolicy, TantivyError};

pub use error::IndexError;
pub use files::{FileEntry, FileStatus, FilesReport};
pub use options::{IndexOptions, MAX_DOCUMENT_BYTES, MAX_TEXT_BYTES, RECENCY_STRENGTH};
pub use report::{IndexStatus, OpenNotice, SyncReport};
pub use scan::sources;
pub use schema::SCHEMA_VERSION;
pub use search::{Coverage, SearchHit, SearchMode, SearchQuery, SearchResults, LONG_PASS};
pub use semantic::shortlist_size;
pub use shared::MemoryIndex;
use shared::Progress;
pub(crate) use shared::Shared;
pub use vectors::{chunk_id, embedding_text, signs, Embedder, Quantized, VectorStore};
pub use watch::Watch;

use crate::catalog::Catalog;
use crate::Workspace;
pub(crate) use schema::day_number;
use schema::Fields;
use worker::Job;
pub(super) use writer::all_rules;
use writer::{start_writer, take_writer_lock, WriterThread};

/// Catalog key holding the schema version of the index on disk.
const SCHEMA_KEY: &str = "index_schema_version";

/// How long a process without the writer lock waits for the writer to create the index.
const WAIT_FOR_WRITER: Duration = Duration::from_secs(5);

/// The index in `dir` if it exists and can be used, else why not (nothing when it does
/// not exist).
fn existing(
    catalog: &Catalog,
    dir: &Path,
    fields_schema: &tantivy::schema::Schema,
    current: &str,
) -> Result<(Option<Index>, Vec<OpenNotice>), IndexError> {
    let recorded = catalog.get_meta(SCHEMA_KEY)?;
    if !dir.join("meta.json").is_file() {
        return Ok((None, Vec::new()));
    }
    if recorded.as_deref() != Some(current) {
        return Ok((None, vec![OpenNotice::SchemaChanged { from: recorded }]));
    }
    Ok(match Index::open_in_dir(dir) {
        Ok(index) if index.schema() == *fields_schema => (Some(index), Vec::new()),
        Ok(_) => (None, vec![OpenNotice::SchemaChanged { from: recorded }]),
        Err(e) => (None, vec![OpenNotice::Corrupt(e.to_string())]),
    })
}

impl MemoryIndex {
    /// Opens the index in `.cairn/index` (creating it, or rebuilding it when its schema
    /// changed or it cannot be read) and starts its writer.
    pub fn open(workspace: &Workspace, options: IndexOptions) -> Result<Self, IndexError> {
        rules::Rules::new(workspace.root(), &options.exclude).map_err(IndexError::Settings)?;
        let state = workspace.state_dir();
        fs::create_dir_all(&state).map_err(|e| IndexError::io(&state, e))?;
        let mut lock = take_writer_lock(&state)?;
        let catalog = Catalog::open(&state.join("state.db"))?;
        let dir = state.join("index");
        let (fields_schema, fields) = Fields::schema();
        let current = SCHEMA_VERSION.to_string();
        // Another process holding the writer lock may be creating the index right now:
        // give it a moment rather than fail (or take over if it has gone meanwhile).
        let deadline = std::time::Instant::now() + WAIT_FOR_WRITER;
        let (index, mut notices) = loop {
            let (index, notices) = existing(&catalog, &dir, &fields_schema, &current)?;
            if index.is_some() || lock.is_some() || std::time::Instant::now() >= deadline {
                break (index, notices);
            }
            std::thread::sleep(Duration::from_millis(100));
            lock = take_writer_lock(&state)?;
        };
        if index.is_none() && lock.is_none() && notices.is_empty() {
            notices.push(OpenNotice::Corrupt("it was not created in time".into()));
        }
        let index = match index {
            Some(index) => index,
            None if lock.is_none() => {
                return Err(IndexError::RebuildElsewhere(
                    notices
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; "),
                ))
            }
            None => {
                for notice in &notices {
                    tracing::warn!(?notice, "rebuilding the memory index from the files");
                }
                schema::create_fresh(&dir, fields_schema)?;
                catalog.clear_files()?;
                catalog.set_meta(SCHEMA_KEY, &current)?;
                let directory = MmapDirectory::open(&dir)
                    .map_err(|e| IndexError::Tantivy(TantivyError::from(e)))?;
                Index::open(directory)?
            }
        };
        schema::register(&index);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::OnCommitWithDelay)
            .doc_store_cache_num_blocks(schema::DOCSTORE_CACHE_BLOCKS)
            .try_into()?;
        let known = catalog
            .files()?
            .into_iter()
            .map(|f| (f.path.clone(), f))
            .collect::<std::collections::HashMap<_, _>>();
        let model = options
            .embedder
            .as_ref()
            .map(|e| e.model())
            .unwrap_or_default();
        let embedder = RwLock::new(options.embedder.clone());
        let shared = Arc::new(Shared {
            root: workspace.root().to_path_buf(),
            folders: workspace.folders().to_vec(),
            folder_problems: workspace.folder_problems().to_vec(),
            state: state.clone(),
            index: index.clone(),
            reader,
            fields,
            options,
            progress: Mutex::new(Progress {
                files: known.values().filter(|f| f.skipped.is_none()).count() as u64,
                ..Progress::default()
            }),
            progressed: Condvar::new(),
            embedder,
            vectors: RwLock::new(vectors::VectorStore::new(model)),
            slot_cache: Mutex::new(slots::SlotCache::default()),
            reading_catalog: Mutex::new(None),
        });
        shared.progress().chunks = shared.reader.searcher().num_docs();
        let writer = match lock {
            Some(lock) => start_writer(&shared, catalog, known, lock)?,
            None => {
                *shared
                    .reading_catalog
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(catalog);
                None
            }
        };
        Ok(Self {
            shared,
            writer: Arc::new(Mutex::new(writer)),
            notices,
        })
    }

    /// What happened while opening (a rebuild and why).
    pub fn notices(&self) -> &[OpenNotice] {
        &self.notices
    }

    pub fn is_read_only(&self) -> bool {
        self.writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
    }

    /// For a read-only handle: becomes the writer when the process that wrote the index
    /// has gone (its lock is free), and catches up with the files in the background.
    /// Whether this handle writes the index now.
    pub fn take_over(&self) -> Result<bool, IndexError> {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        if writer.is_some() {
            return Ok(true);
        }
        let Some(lock) = take_writer_lock(&self.shared.state)? else {
            return Ok(false);
        };
        let catalog = Catalog::open(&self.shared.state.join("state.db"))?;
        let known = catalog
            .files()?
            .into_iter()
            .map(|f| (f.path.clone(), f))
            .collect();
        *writer = start_writer(&self.shared, catalog, known, lock)?;
        let Some(thread) = writer.clone() else {
            return Ok(false);
        };
        drop(writer);
        tracing::info!("the memory index's writer has gone: this process writes it now");
        self.send(
            &thread,
            Job::Reconcile {
                rebuild: false,
                reply: None,
            },
        )?;
        Ok(true)
    }

    fn submit(&self, job: Job) -> Result<(), IndexError> {
        let current = self
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let thread = match current {
            Some(thread) => thread,
            None if self.take_over()? => self
                .writer
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
                .ok_or(IndexError::ReadOnly)?,
            None => return Err(IndexError::ReadOnly),
        };
        self.send(&thread, job)
    }

    fn send(&self, thread: &WriterThread, job: Job) -> Result<(), IndexError> {
        let jobs = thread.jobs.as_ref().ok_or(IndexError::WriterGone)?;
        self.shared.progress().queued += 1;
        jobs.send(job).map_err(|_| IndexError::WriterGone)
    }

    /// Makes the index match the files on disk, and waits for it.
    pub fn sync(&self) -> Result<SyncReport, IndexError> {
        self.reconcile(false)
    }

    /// Throws the index away and indexes every file again, and waits for it.
    pub fn rebuild(&self) -> Result<SyncReport, IndexError> {
        self.reconcile(true)
    }

    fn reconcile(&self, rebuild: bool) -> Result<SyncReport, IndexError> {
        let (tx, rx) = mpsc::channel();
        self.submit(Job::Reconcile {
            rebuild,
            reply: Some(tx),
        })?;
        rx.recv().map_err(|_| IndexError::WriterGone)?
    }

    /// Starts a reconcile without waiting (searches meanwhile say `stale` if it is slow).
    pub fn sync_in_background(&self) -> Result<(), IndexError> {
        self.submit(Job::Reconcile {
            rebuild: false,
            reply: None,
        })
    }

    /// Tells the index that these files (absolute, or relative to the workspace root) may
    /// have changed.
    pub fn changed<P: AsRef<Path>>(&self, paths: &[P]) -> Result<(), IndexError> {
        let root = &self.shared.root;
        let relative: Vec<String> = paths
            .iter()
            .filter_map(|p| {
                let p = p.as_ref();
                if p.is_absolute() {
                    let outside =
                        self.shared.folders.iter().find_map(|f| {
                            Some(format!("{}/{}", f.name, scan::relative(&f.root, p)?))
                        });
                    outside.or_else(|| scan::relative(root, p))
                } else {
                    p.to_str().map(|s| s.replace('\\', "/"))
                }
            })
            .collect();
        if relative.is_empty() {
            return Ok(());
        }
        self.submit(Job::Changed(relative))
    }

    /// The folders searched in place, by name.
    pub fn folders(&self) -> &[folders::Folder] {
        &self.shared.folders
    }

    /// Folders of the settings that are not searched, each with why.
    pub fn folders_unavailable(&self) -> Vec<String> {
        let mut out = self.shared.folder_problems.clone();
        for folder in &self.shared.folders {
            if let Some(why) = folders::unavailable(folder) {
                out.push(format!("{}: {why}", folder.root.display()));
            }
        }
        out
    }

    /// Follows edits to the workspace (inside or outside the app) until the returned
    /// handle is dropped, with a watcher of its own.
    pub fn watch(&self) -> Result<Watch, IndexError> {
        watch::start(self.clone(), self.shared.options.debounce)
    }

    /// Follows edits through `watcher`, shared with others, until the returned handle is
    /// dropped. `watcher` should watch this index's workspace and folders.
    pub fn follow(&self, watcher: &crate::watch::FolderWatch) -> Watch {
        watch::follow(self.clone(), watcher)
    }

    pub(crate) fn root(&self) -> &Path {
        &self.shared.root
    }
}
