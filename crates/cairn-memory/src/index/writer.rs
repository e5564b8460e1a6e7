//! The writer thread's handle and start, the lock that makes one process the index's
//! writer, and the rules of every root the writer walks.

use std::fs;
use std::path::Path;
use std::sync::{mpsc, Arc};
use std::thread;

use tantivy::TantivyError;

use super::worker::{Job, Worker};
use super::{embedding, rules, IndexError, Shared};
use crate::catalog::Catalog;

/// The writer thread; when the last handle goes, it finishes its queue and releases the
/// index's writer lock before the drop returns.
pub(super) struct WriterThread {
    pub(super) jobs: Option<mpsc::Sender<Job>>,
    thread: Option<thread::JoinHandle<()>>,
    /// `.cairn/index-writer.lock`, let go of once the thread has ended.
    lock: Option<fs::File>,
}

impl Drop for WriterThread {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.lock.take();
    }
}

/// Starts the writer thread under `lock`; `None` when Tantivy's own writer lock is taken
/// (by a process that does not take ours).
pub(super) fn start_writer(
    shared: &Arc<Shared>,
    catalog: Catalog,
    known: std::collections::HashMap<String, crate::catalog::FileRecord>,
    lock: fs::File,
) -> Result<Option<Arc<WriterThread>>, IndexError> {
    let heap = shared.options.writer_heap_bytes;
    // Two threads analyse and invert the text while this one reads and chunks the files:
    // with one, a full build waited on it (a segment each after a build, merged later).
    let writer = match shared.index.writer_with_num_threads(2, heap) {
        Ok(writer) => writer,
        Err(TantivyError::LockFailure(..)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    // A process killed during a commit leaves the files it wrote but never named in
    // meta.json; the next commit of the same change wants the same names (a delete file
    // is named by segment and opstamp) and would fail. Holding the writer lock, nothing
    // else can be writing them.
    if let Err(e) = writer.garbage_collect_files().wait() {
        tracing::warn!(error = %e, "cannot remove the index files of an unfinished commit");
    }
    let (tx, rx) = mpsc::channel();
    let embedding = shared.embedder().map(|embedder| {
        let model = shared.vectors().model().to_string();
        embedding::Embedding::new(embedder, model)
    });
    let rules = all_rules(shared)?;
    let worker = Worker {
        shared: shared.clone(),
        writer,
        catalog,
        known,
        embedding,
        rules,
        sizing: None,
        ocr_stamp: super::ocr::stamp(&shared.options.read),
    };
    let thread = thread::Builder::new()
        .name("cairn-index-writer".into())
        .spawn(move || worker.run(rx))
        .map_err(|e| IndexError::io(&shared.state, e))?;
    Ok(Some(Arc::new(WriterThread {
        jobs: Some(tx),
        thread: Some(thread),
        lock: Some(lock),
    })))
}

/// The rules of every root: the workspace's, then each folder's.
pub(crate) fn all_rules(shared: &Shared) -> Result<Vec<rules::Rules>, IndexError> {
    let exclude = &shared.options.exclude;
    let mut all = vec![rules::Rules::new(&shared.root, exclude).map_err(IndexError::Settings)?];
    for folder in &shared.folders {
        all.push(rules::Rules::outside(folder, exclude).map_err(IndexError::Settings)?);
    }
    Ok(all)
}

/// Takes `.cairn/index-writer.lock`, which the one process writing the index holds for as
/// long as it does; `None` when another process (or handle) holds it. Only its holder
/// may delete and rebuild the index, so a process that finds an index it cannot read
/// never destroys the one a running app is writing.
pub(super) fn take_writer_lock(state: &Path) -> Result<Option<fs::File>, IndexError> {
    let path = state.join("index-writer.lock");
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| IndexError::io(&path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(fs::TryLockError::WouldBlock) => Ok(None),
        Err(fs::TryLockError::Error(e)) => Err(IndexError::io(&path, e)),
    }
}
