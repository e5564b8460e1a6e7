//! The index's one writer: a thread that owns the Tantivy writer and the catalog, takes
//! jobs in order (files that changed, a full reconcile, a rebuild), and after each job
//! commits the index, then records in the catalog what the index now holds. The catalog is
//! written only after a successful commit, so a crash in between leaves the catalog
//! behind the index, never ahead: the next reconcile indexes those files again (deleting
//! by path first, so nothing is doubled).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{mpsc, Arc};
use std::time::Instant;

use chrono::Utc;
use tantivy::{IndexWriter, TantivyDocument, Term};

use super::embedding::Embedding;
use super::ocr::{self, OcrNote};
use super::rules::{Found, Rules};
use super::scan::{self, Content};
use super::vectors::Embedder;
use super::{IndexError, Shared, SyncReport};
use crate::catalog::{Catalog, FileRecord};
use crate::chunk::{Chunk, Sizing};
use crate::source::{Source, SourceKind};
use crate::MemoryError;

/// Whether a file's reader failed on it.
enum ContentKind {
    Failed,
    Other,
}

/// The start of the hash recorded for a file skipped unread.
const UNREAD: &str = "unread:";

pub(super) type Reply = mpsc::Sender<Result<SyncReport, IndexError>>;

pub(super) enum Job {
    /// These workspace-relative paths may have changed (from the watcher or a tool).
    Changed(Vec<String>),
    /// Compare every source on disk with the catalog; `rebuild` re-indexes everything.
    Reconcile { rebuild: bool, reply: Option<Reply> },
    /// Embed with this model from now on (`None`: no vectors).
    Embedder(Option<Arc<dyn Embedder>>),
}

pub(super) struct Worker {
    pub shared: std::sync::Arc<Shared>,
    pub writer: IndexWriter<TantivyDocument>,
    pub catalog: Catalog,
    /// The catalog's files, kept in memory (this thread is their only writer).
    pub known: HashMap<String, FileRecord>,
    /// Background embedding, with an embedding model.
    pub embedding: Option<Embedding>,
    /// Which files are sources: the workspace's rules first, then each folder searched
    /// in place.
    pub rules: Vec<Rules>,
    /// How chunks are measured: by the embedding model's tokenizer when it has one
    /// (found on this thread, not while opening: loading it takes a moment).
    pub sizing: Option<Sizing>,
    /// The state of OCR (see `ocr::stamp`), looked at again before each job.
    pub ocr_stamp: String,
}

/// Catalog key holding how the indexed chunks were cut ([`Sizing::key`]).
const CHUNKING_KEY: &str = "chunking";

/// How chunks are cut for `embedding`'s model.
fn sizing_of(embedding: Option<&Embedding>) -> Sizing {
    embedding
        .and_then(super::embedding::tokens_of)
        .map_or_else(Sizing::estimate, Sizing::model)
}

/// What one job changed, applied to the catalog once the index committed.
#[derive(Default)]
struct Batch {
    upserts: Vec<FileRecord>,
    removed: Vec<String>,
    index_changed: bool,
    report: SyncReport,
}

impl Worker {
    /// The next job; while chunks wait for their vectors, embeds a batch whenever no
    /// job is waiting. `None` once every handle has gone.
    fn next_job(&mut self, jobs: &mpsc::Receiver<Job>) -> Option<Job> {
        loop {
            match self.embedding.as_mut() {
                Some(embedding) if embedding.has_work() => match jobs.try_recv() {
                    Ok(job) => return Some(job),
                    Err(mpsc::TryRecvError::Empty) => {
                        embedding.step(&self.shared, &mut self.catalog);
                    }
                    Err(mpsc::TryRecvError::Disconnected) => return None,
                },
                _ => return jobs.recv().ok(),
            }
        }
    }

    fn sizing(&mut self) -> &Sizing {
        let embedding = self.embedding.as_ref();
        self.sizing.get_or_insert_with(|| sizing_of(embedding))
    }

    pub fn run(mut self, jobs: mpsc::Receiver<Job>) {
        // The stored vectors are loaded here, not while opening: a hundred thousand of
        // them take a noticeable moment, and opening is on the app's start-up path.
        // (A read-only process loads them at its first search by meaning.)
        if self.embedding.is_some() {
            if let Err(e) = super::embedding::load_new(&self.shared, &self.catalog) {
                tracing::warn!(error = %e, "cannot load the stored vectors; they are made again");
            }
        }
        while let Some(job) = self.next_job(&jobs) {
            let (result, reply) = match job {
                Job::Changed(paths) => {
                    // Coalesce what else is already waiting.
                    let mut paths: BTreeSet<String> = paths.into_iter().collect();
                    let mut extra = 0;
                    let mut then = None;
                    while let Ok(next) = jobs.try_recv() {
                        match next {
                            Job::Changed(more) => {
                                extra += 1;
                                paths.extend(more);
                            }
                            other => {
                                then = Some(other);
                                break;
                            }
                        }
                    }
                    let result = self.update(paths.into_iter().collect(), false, false);
                    self.finish_job(&result, 1 + extra);
                    match then {
                        Some(Job::Reconcile { rebuild, reply }) => (self.reconcile(rebuild), reply),
                        Some(Job::Embedder(embedder)) => {
                            self.switch_embedder(embedder);
                            (Ok(SyncReport::default()), None)
                        }
                        Some(Job::Changed(_)) | None => continue,
                    }
                }
                Job::Reconcile { rebuild, reply } => (self.reconcile(rebuild), reply),
                Job::Embedder(embedder) => {
                    self.switch_embedder(embedder);
                    (Ok(SyncReport::default()), None)
                }
            };
            self.finish_job(&result, 1);
            if let Some(reply) = reply {
                let _ = reply.send(result);
            }
        }
    }

    /// Embeds with `embedder` from now on: the vectors held are the new model's (loaded
    /// from the catalog, where an earlier use of it left them), and what it lacks is
    /// planned; the first plan sweeps the other models' vectors from the catalog.
    fn switch_embedder(&mut self, embedder: Option<Arc<dyn Embedder>>) {
        let model = embedder.as_ref().map(|e| e.model()).unwrap_or_default();
        // Also done by `set_embedder`; again here, after the last batch of the old model.
        self.shared.vectors_mut().reset(model.clone());
        self.embedding = embedder.map(|embedder| Embedding::new(embedder, model));
        let before = self.sizing.take().map(|s| s.key());
        if Some(self.sizing().key()) != before {
            // The new model's window is another: cut every chunk again to fit it.
            if let Err(error) = self.reconcile(false) {
                tracing::warn!(%error, "cannot cut the chunks again for the new model");
            }
        }
        if self.embedding.is_some() {
            if let Err(e) = super::embedding::load_new(&self.shared, &self.catalog) {
                tracing::warn!(error = %e, "cannot load the stored vectors; they are made again");
            }
        }
    }

    fn finish_job(&mut self, result: &Result<SyncReport, IndexError>, jobs: u64) {
        if let Some(embedding) = self.embedding.as_mut() {
            embedding.plan(&self.shared, &mut self.catalog);
        }
        let chunks = self.shared.reader.searcher().num_docs();
        let files = self.known.values().filter(|f| f.skipped.is_none()).count() as u64;
        let mut progress = self.shared.progress();
        progress.done += jobs;
        progress.files = files;
        progress.chunks = chunks;
        progress.last_error = result.as_ref().err().map(ToString::to_string);
        drop(progress);
        self.shared.progressed.notify_all();
    }

    /// Compares every file with the index; searches meanwhile know how long it has run
    /// (see `search_waiting`).
    fn reconcile(&mut self, rebuild: bool) -> Result<SyncReport, IndexError> {
        self.shared.progress().pass_started = Some(std::time::Instant::now());
        let result = self.reconcile_all(rebuild);
        self.shared.progress().pass_started = None;
        result
    }

    fn reconcile_all(&mut self, rebuild: bool) -> Result<SyncReport, IndexError> {
        let chunking = self.sizing().key();
        let cut_otherwise = self.catalog.get_meta(CHUNKING_KEY)?.as_deref() != Some(&chunking);
        let rebuild = rebuild || (cut_otherwise && !self.known.is_empty());
        if rebuild {
            self.writer.delete_all_documents()?;
            self.catalog.clear_files()?;
            self.known.clear();
        }
        // The ignore files may have changed: read them again.
        let mut paths = BTreeSet::new();
        for rules in &mut self.rules {
            rules.forget();
            rules.walk(&mut |found| {
                if let Found::Source(source) = found {
                    paths.insert(source.path);
                }
            });
        }
        paths.extend(self.known.keys().cloned());
        // Nothing to delete by path from an empty index: the commit then has no deletes
        // to apply to the segments it writes (each path is in `paths` once).
        let empty = rebuild || self.shared.reader.searcher().num_docs() == 0;
        // Notes first, then documents, then pictures (OCR, the slowest): each kind is
        // committed, and so searchable, before the next is read.
        let mut report = SyncReport::default();
        for group in by_reading_cost(paths) {
            if !group.is_empty() {
                let done = self.update(group, true, empty)?;
                report = merged(report, done);
            }
        }
        // A file deleted after it was read and before the commit would stay findable
        // until something touched it again (no watcher runs during a one-off sync, and a
        // rebuild's scan may predate the watcher's events): look once more.
        let gone: Vec<String> = self
            .known
            .keys()
            .filter(|path| {
                self.where_is(path).is_none_or(|(at, rel)| {
                    matches!(scan::stat(&self.rules[at].root().join(rel)), Ok(None))
                })
            })
            .cloned()
            .collect();
        if !gone.is_empty() {
            let after = self.update(gone, false, false)?;
            report.removed += after.removed;
            report.files = after.files;
            report.chunks = after.chunks;
            report.not_indexed = after.not_indexed;
            report.took += after.took;
        }
        if cut_otherwise {
            self.catalog.set_meta(CHUNKING_KEY, &chunking)?;
        }
        Ok(report)
    }

    /// Brings the index up to date for `paths`. `trust_stat`: a file whose size and mtime
    /// match the catalog is taken as unchanged without reading it. `empty`: the index holds
    /// nothing, and every path comes once.
    fn update(
        &mut self,
        paths: Vec<String>,
        trust_stat: bool,
        empty: bool,
    ) -> Result<SyncReport, IndexError> {
        let started = Instant::now();
        self.ocr_stamp = ocr::stamp(&self.shared.options.read);
        let mut batch = Batch::default();
        for path in paths {
            if let Err(error) = self.update_one(&path, trust_stat, empty, &mut batch) {
                tracing::warn!(path, %error, "cannot index");
                batch.report.skipped.push((path, error.to_string()));
            }
        }
        if batch.index_changed {
            if let Err(error) = self.writer.commit() {
                // Nothing of this job reached the index: forget it, the catalog still
                // says what is really there and the next reconcile retries.
                let _ = self.writer.rollback();
                return Err(error.into());
            }
            self.shared.reader.reload()?;
        }
        self.catalog.apply(&batch.upserts, &batch.removed)?;
        for path in &batch.removed {
            self.known.remove(path);
            if let Some(id) = session_id(path) {
                self.catalog.remove_session(id)?;
            }
        }
        for record in batch.upserts {
            self.known.insert(record.path.clone(), record);
        }
        let mut report = batch.report;
        report.not_indexed = self
            .known
            .values()
            .filter_map(|f| Some((f.path.clone(), f.skipped.clone()?)))
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .collect();
        report.files = self.known.values().filter(|f| f.skipped.is_none()).count() as u64;
        report.chunks = self.shared.reader.searcher().num_docs();
        report.took = started.elapsed();
        Ok(report)
    }

    fn update_one(
        &mut self,
        path: &str,
        trust_stat: bool,
        empty: bool,
        batch: &mut Batch,
    ) -> Result<(), IndexError> {
        let sizing = self.sizing().clone();
        let admitted = self.where_is(path).and_then(|(at, relative)| {
            let rules = &mut self.rules[at];
            let source = rules.admit(&relative).ok()?;
            Some((source, rules.root().to_path_buf(), relative))
        });
        let known = self.known.get(path);
        let Some((source, root, relative)) = admitted else {
            if known.is_some() {
                self.remove(path, batch);
            }
            return Ok(());
        };
        let absolute: PathBuf = root.join(&relative);
        let Some((size, mtime_ns)) =
            scan::stat(&absolute).map_err(|e| IndexError::io(&absolute, e))?
        else {
            if known.is_some() {
                self.remove(path, batch);
            }
            return Ok(());
        };
        let limit = self.shared.options.limit(source.format);
        // A file skipped unread for its size is looked at again once the limit allows it.
        let unread_fits = known.is_some_and(|k| k.hash.starts_with(UNREAD) && size <= limit);
        // So is one read under another state of OCR (Tesseract installed since, say).
        let ocr_stale = known.is_some_and(|k| ocr_is_stale(k, &self.ocr_stamp));
        if trust_stat
            && !unread_fits
            && !ocr_stale
            && known.is_some_and(|k| k.size == size && k.mtime_ns == mtime_ns)
        {
            return Ok(());
        }
        // Beneath its root: a link on the way that leads out of it is not followed.
        let bytes = match crate::beneath::read(&root, &relative, limit) {
            Ok(bytes) => bytes,
            Err(MemoryError::TooLarge { bytes, .. }) => {
                let reason = scan::too_large(size.max(bytes), limit);
                self.skip_unread(path, &source, (size, mtime_ns), reason, batch);
                return Ok(());
            }
            // Deleted between the stat and the read, or reached through a link out.
            Err(e) if e.is_not_found() || matches!(e, MemoryError::Path(_)) => {
                if known.is_some() {
                    self.remove(path, batch);
                }
                return Ok(());
            }
            Err(MemoryError::Io { path, source }) => return Err(IndexError::Io { path, source }),
            Err(e) => {
                return Err(IndexError::io(
                    &absolute,
                    std::io::Error::other(e.to_string()),
                ))
            }
        };
        let mut record = FileRecord {
            path: path.to_string(),
            source: source.kind.as_str().to_string(),
            hash: scan::hash(&bytes),
            size,
            mtime_ns,
            chunks: 0,
            skipped: None,
            indexed_at: Utc::now().to_rfc3339(),
            failed: false,
            ocr: None,
        };
        if let Some(known) = known.filter(|k| k.hash == record.hash && !ocr_stale) {
            // Touched, not changed: remember the new mtime only.
            record.chunks = known.chunks;
            record.skipped.clone_from(&known.skipped);
            record.indexed_at.clone_from(&known.indexed_at);
            record.failed = known.failed;
            record.ocr.clone_from(&known.ocr);
            batch.upserts.push(record);
            return Ok(());
        }
        // Read (a document extracted) only now that the bytes are known to be new.
        let readers = scan::Readers {
            limits: self.shared.options.extract,
            options: &self.shared.options.read,
            ocr_stamp: &self.ocr_stamp,
        };
        let (content, ocr_note) = scan::read(&source, &bytes, mtime_ns, &sizing, &readers);
        record.ocr = ocr_note.as_ref().map(OcrNote::to_json);
        if !empty {
            self.writer
                .delete_term(Term::from_field_text(self.shared.fields.path, path));
        }
        batch.index_changed = true;
        batch.report.changed += 1;
        let content_kind = match &content {
            Content::Failed(_) => ContentKind::Failed,
            _ => ContentKind::Other,
        };
        match content {
            Content::Chunks { chunks, session } => {
                record.chunks = chunks.len() as u64;
                // A session is dated by the day it began (local time), as a log by its name.
                let date = source.date.or_else(|| {
                    let began = session.as_ref()?.created_at.as_deref()?;
                    let began = chrono::DateTime::parse_from_rfc3339(began).ok()?;
                    Some(began.with_timezone(&chrono::Local).date_naive())
                });
                for chunk in &chunks {
                    self.writer
                        .add_document(self.document(&source, date, chunk))?;
                }
                if let Some(session) = session {
                    self.catalog.upsert_session(&session)?;
                }
            }
            Content::Skipped(reason) | Content::Failed(reason) => {
                tracing::warn!(path, reason, "not indexed");
                batch
                    .report
                    .skipped
                    .push((path.to_string(), reason.clone()));
                record.failed = matches!(content_kind, ContentKind::Failed);
                record.skipped = Some(reason);
            }
        }
        batch.upserts.push(record);
        Ok(())
    }

    /// Which root `path` (an index path) is in, and its path there: a folder searched in
    /// place by its name, else the workspace.
    fn where_is(&self, path: &str) -> Option<(usize, String)> {
        let outside = self
            .rules
            .iter()
            .enumerate()
            .skip(1)
            .find_map(|(at, rules)| Some((at, rules.relative_of(path)?.to_string())));
        outside.or_else(|| Some((0, self.rules.first()?.relative_of(path)?.to_string())))
    }

    /// Records a file too large to read as skipped, its old chunks gone.
    fn skip_unread(
        &mut self,
        path: &str,
        source: &Source,
        (size, mtime_ns): (u64, i64),
        reason: String,
        batch: &mut Batch,
    ) {
        let known = self.known.get(path);
        if known.is_some_and(|k| {
            k.skipped.as_deref() == Some(reason.as_str()) && k.mtime_ns == mtime_ns
        }) {
            return;
        }
        if known.is_some() {
            self.writer
                .delete_term(Term::from_field_text(self.shared.fields.path, path));
            batch.index_changed = true;
        }
        tracing::warn!(path, reason, "not indexed");
        batch
            .report
            .skipped
            .push((path.to_string(), reason.clone()));
        batch.upserts.push(FileRecord {
            path: path.to_string(),
            source: source.kind.as_str().to_string(),
            hash: format!("{UNREAD}{size}:{mtime_ns}"),
            size,
            mtime_ns,
            chunks: 0,
            skipped: Some(reason),
            indexed_at: Utc::now().to_rfc3339(),
            failed: false,
            ocr: None,
        });
    }

    fn remove(&mut self, path: &str, batch: &mut Batch) {
        self.writer
            .delete_term(Term::from_field_text(self.shared.fields.path, path));
        batch.index_changed = true;
        batch.report.removed += 1;
        batch.removed.push(path.to_string());
    }

    /// The index's document for `chunk` of `source`, which is about `date` (a daily log's,
    /// a session's).
    fn document(
        &self,
        source: &Source,
        date: Option<chrono::NaiveDate>,
        chunk: &Chunk,
    ) -> TantivyDocument {
        let f = &self.shared.fields;
        let mut doc = TantivyDocument::default();
        doc.add_text(f.path, &source.path);
        doc.add_text(f.source, source.kind.as_str());
        doc.add_text(f.heading, &chunk.heading);
        doc.add_text(f.body, &chunk.text);
        doc.add_u64(f.start_line, chunk.start_line as u64);
        doc.add_u64(f.end_line, chunk.end_line as u64);
        let day = match (source.kind, date) {
            (SourceKind::Daily | SourceKind::Session, Some(date)) => super::day_number(date),
            _ => 0,
        };
        doc.add_i64(f.day, day);
        doc.add_u64(f.page, chunk.page.map_or(0, u64::from));
        doc.add_u64(f.kind, super::schema::kind_bit(source.kind));
        doc.add_u64(
            f.chunk,
            super::vectors::chunk_id(&chunk.heading, &chunk.text),
        );
        doc
    }
}

/// `paths` as notes, documents and pictures, in that order (each sorted).
fn by_reading_cost(paths: BTreeSet<String>) -> [Vec<String>; 3] {
    let mut groups: [Vec<String>; 3] = Default::default();
    for path in paths {
        let name = path.rsplit('/').next().unwrap_or(&path);
        let group = match crate::source::Format::of(name) {
            Some(format) if format.is_picture() => 2,
            Some(format) if format.is_document() => 1,
            _ => 0,
        };
        groups[group].push(path);
    }
    groups
}

/// Two reports of one pass: `later`'s totals, both's changes.
fn merged(earlier: SyncReport, later: SyncReport) -> SyncReport {
    let mut skipped = earlier.skipped;
    skipped.extend(later.skipped);
    SyncReport {
        changed: earlier.changed + later.changed,
        removed: earlier.removed + later.removed,
        skipped,
        took: earlier.took + later.took,
        ..later
    }
}

/// Whether `known` was read under another state of OCR than `stamp`.
fn ocr_is_stale(known: &FileRecord, stamp: &str) -> bool {
    OcrNote::from_json(known.ocr.as_deref()).is_some_and(|note| note.stamp != stamp)
}

fn session_id(path: &str) -> Option<&str> {
    path.strip_prefix("sessions/")?.strip_suffix(".jsonl")
}
