//! Background embedding, run by the index's writer thread between jobs: after every
//! commit it lists the live chunks without a vector of the current model, then embeds
//! them a batch at a time whenever no indexing job is waiting, so keyword indexing never
//! waits more than one batch. Vectors go to the catalog first, then to the in-memory
//! store; vectors of chunks that left the index, and of other models, are swept.

use std::collections::HashSet;
use std::sync::{Arc, PoisonError};

use tantivy::schema::Value;
use tantivy::{DocAddress, Searcher, TantivyDocument};

use super::vectors::{embedding_text, Embedder, Quantized};
use super::worker::Job;
use super::{IndexError, MemoryIndex, Shared};
use crate::catalog::Catalog;

/// Chunks embedded per step: small batches pad less (a batch is as long as its longest
/// chunk) and keep the attention's buffers small, and indexing waits at most one batch.
const BATCH: usize = 8;
/// What a step did.
enum Step {
    /// Vectors added.
    Added(usize),
    /// The vectors held had another length and were dropped: plan again.
    Reset,
    /// The embedder names another model now that it runs (it knows which engine runs only
    /// once loaded): the batch is dropped, and vectors are recorded under this name.
    Renamed(String),
}

pub(super) struct Embedding {
    embedder: Arc<dyn Embedder>,
    model: String,
    /// Live chunks without a vector, by id, with where to read their text.
    pending: Vec<(u64, DocAddress)>,
    searcher: Option<Searcher>,
    /// Vectors of other models are swept once, at the first plan.
    swept_models: bool,
    /// Whether the stored vectors were checked against the model's length (once, before
    /// the first batch).
    checked: bool,
    /// Whether the embedder was found to run another model than it said (once: a name
    /// that changes again is an error, not a loop of batches made and dropped).
    renamed: bool,
}

impl Embedding {
    pub fn new(embedder: Arc<dyn Embedder>, model: String) -> Self {
        Self {
            embedder,
            model,
            pending: Vec::new(),
            searcher: None,
            swept_models: false,
            checked: false,
            renamed: false,
        }
    }

    pub fn has_work(&self) -> bool {
        !self.checked || !self.pending.is_empty()
    }

    /// Learns the model's length (from the embedder, else by embedding one text); stored
    /// vectors of another length (a catalog from elsewhere, or damaged) are dropped and
    /// made again.
    fn check_stored(&mut self, shared: &Shared, catalog: &mut Catalog) {
        self.checked = true;
        self.dimension_checked(shared, catalog);
        shared.progress().checked = true;
        shared.progressed.notify_all();
    }

    fn dimension_checked(&mut self, shared: &Shared, catalog: &mut Catalog) {
        let held = shared.vectors().dimensions();
        if held == 0 {
            return;
        }
        let length = match self.embedder.dimensions() {
            Some(length) => length,
            None => match embed(self.embedder.as_ref(), &["length"]) {
                Ok(mut vectors) => vectors.pop().unwrap_or_default().len(),
                // Told when a batch fails the same way.
                Err(_) => return,
            },
        };
        if length == held {
            return;
        }
        let stale: Vec<u64> = shared.vectors().chunks().collect();
        tracing::warn!(
            vectors = stale.len(),
            "stored vectors have another length than the model's; they are made again"
        );
        if let Err(e) = catalog.remove_vectors(&self.model, &stale) {
            tracing::warn!(error = %e, "cannot drop the stored vectors");
            return;
        }
        shared.vectors_mut().clear();
        self.plan(shared, catalog);
    }

    /// Lists what is left to embed in the index as committed now, and sweeps vectors of
    /// chunks it no longer holds.
    pub fn plan(&mut self, shared: &Shared, catalog: &mut Catalog) {
        if let Err(e) = self.try_plan(shared, catalog) {
            tracing::warn!(error = %e, "cannot plan the embedding of new chunks");
            self.pending.clear();
        }
    }

    fn try_plan(&mut self, shared: &Shared, catalog: &mut Catalog) -> Result<(), String> {
        let searcher = shared.reader.searcher();
        let mut live = HashSet::new();
        let mut pending = Vec::new();
        let gone: Vec<u64> = {
            let store = shared.vectors();
            for (ord, reader) in searcher.segment_readers().iter().enumerate() {
                let ids = reader
                    .fast_fields()
                    .u64("chunk")
                    .map_err(|e| e.to_string())?
                    .first_or_default_col(0);
                let alive = reader.alive_bitset();
                for doc in 0..reader.max_doc() {
                    if alive.is_some_and(|a| !a.is_alive(doc)) {
                        continue;
                    }
                    let id = ids.get_val(doc);
                    if live.insert(id) && !store.contains(id) {
                        pending.push((id, DocAddress::new(ord as u32, doc)));
                    }
                }
            }
            store.chunks().filter(|c| !live.contains(c)).collect()
        };
        if !gone.is_empty() || !self.swept_models {
            catalog
                .remove_vectors(&self.model, &gone)
                .map_err(|e| e.to_string())?;
            self.swept_models = true;
            let mut store = shared.vectors_mut();
            for chunk in &gone {
                store.remove(*chunk);
            }
        }
        // Embedded in index order (pending is popped from the end).
        pending.reverse();
        let mut progress = shared.progress();
        progress.to_embed = live.len() as u64;
        progress.embedded = (live.len() - pending.len()) as u64;
        drop(progress);
        shared.progressed.notify_all();
        self.pending = pending;
        self.searcher = Some(searcher);
        Ok(())
    }

    /// Embeds the next batch. On failure (the model cannot be loaded, the server is
    /// down) the rest waits for the next commit, and the error is shown in the status.
    pub fn step(&mut self, shared: &Shared, catalog: &mut Catalog) {
        if !self.checked {
            self.check_stored(shared, catalog);
            return;
        }
        let Some(searcher) = self.searcher.clone() else {
            self.pending.clear();
            return;
        };
        let start = self.pending.len().saturating_sub(BATCH);
        let batch: Vec<(u64, DocAddress)> = self.pending.split_off(start);
        let result = (|| -> Result<Step, String> {
            let fields = shared.fields;
            let mut texts = Vec::with_capacity(batch.len());
            for (_, address) in &batch {
                let doc: TantivyDocument = searcher.doc(*address).map_err(|e| e.to_string())?;
                let text = |field| {
                    doc.get_first(field)
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                };
                texts.push(embedding_text(&text(fields.heading), &text(fields.body)));
            }
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors = embed(self.embedder.as_ref(), &refs)?;
            let model = self.embedder.model();
            if model != self.model {
                if self.renamed {
                    return Err(format!(
                        "the embedder's model keeps changing ({} after {})",
                        model, self.model
                    ));
                }
                return Ok(Step::Renamed(model));
            }
            if vectors.len() != batch.len() {
                return Err(format!(
                    "the embedder gave {} vectors for {} texts",
                    vectors.len(),
                    batch.len()
                ));
            }
            if vectors.iter().any(Vec::is_empty) {
                return Err("the embedder gave an empty vector".into());
            }
            let quantized: Vec<(u64, Quantized)> = batch
                .iter()
                .zip(&vectors)
                .map(|((id, _), v)| (*id, Quantized::new(v)))
                .collect();
            let rows: Vec<(u64, Vec<u8>)> = quantized
                .iter()
                .map(|(id, q)| (*id, q.to_bytes()))
                .collect();
            let last = catalog
                .add_vectors(&self.model, &rows)
                .map_err(|e| e.to_string())?;
            let mut store = shared.vectors_mut();
            let mut added = 0;
            let mut dropped = Vec::new();
            for (id, vector) in &quantized {
                let (inserted, gone) = store.insert_made(*id, vector);
                added += usize::from(inserted);
                dropped.extend(gone);
            }
            store.last_row = store.last_row.max(last);
            drop(store);
            if !dropped.is_empty() {
                tracing::warn!(
                    vectors = dropped.len(),
                    "stored vectors had another length than the model's; they are made again"
                );
                catalog
                    .remove_vectors(&self.model, &dropped)
                    .map_err(|e| e.to_string())?;
                return Ok(Step::Reset);
            }
            Ok(Step::Added(added))
        })();
        let mut progress = shared.progress();
        match result {
            Ok(Step::Added(added)) => {
                progress.embedded += added as u64;
                progress.embed_error = None;
            }
            Ok(Step::Reset) => {
                drop(progress);
                self.plan(shared, catalog);
                return;
            }
            Ok(Step::Renamed(model)) => {
                drop(progress);
                tracing::info!(said = %self.model, runs = %model, "the embedder runs another model than it said");
                self.model = model.clone();
                self.renamed = true;
                shared.vectors_mut().reset(model);
                self.swept_models = false;
                if let Err(e) = load_new(shared, catalog) {
                    tracing::warn!(error = %e, "cannot load the stored vectors; they are made again");
                }
                self.plan(shared, catalog);
                return;
            }
            Err(error) => {
                tracing::warn!(%error, "embedding failed; search by meaning covers less");
                progress.embed_error = Some(error);
                self.pending.clear();
            }
        }
        drop(progress);
        shared.progressed.notify_all();
    }
}

impl MemoryIndex {
    /// Embeds with `embedder` from now on (the app's settings changed), or with none:
    /// keyword search only. A model the index has not used before embeds every chunk in
    /// the background, as after opening with it; until then search by meaning covers what
    /// it has, and says so.
    pub fn set_embedder(&self, embedder: Option<Arc<dyn Embedder>>) -> Result<(), IndexError> {
        let model = embedder.as_ref().map(|e| e.model()).unwrap_or_default();
        *self
            .shared
            .embedder
            .write()
            .unwrap_or_else(PoisonError::into_inner) = embedder.clone();
        self.shared.vectors_mut().reset(model);
        {
            let mut progress = self.shared.progress();
            progress.embedded = 0;
            progress.to_embed = 0;
            progress.embed_error = None;
            progress.checked = false;
        }
        let writer = self
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match writer {
            Some(thread) => self.send(&thread, Job::Embedder(embedder)),
            // A read-only process loads the new model's vectors at its next search.
            None => Ok(()),
        }
    }
}

/// Loads the vectors of `model` the catalog has beyond what `shared` holds (a read-only
/// process follows the writer's embedding this way).
pub(super) fn load_new(shared: &Shared, catalog: &Catalog) -> Result<usize, String> {
    let (model, after) = {
        let store = shared.vectors();
        (store.model().to_string(), store.last_row)
    };
    let rows = catalog
        .vectors_since(&model, after)
        .map_err(|e| e.to_string())?;
    if rows.is_empty() {
        return Ok(0);
    }
    let mut store = shared
        .vectors
        .write()
        .unwrap_or_else(PoisonError::into_inner);
    let mut loaded = 0;
    for (row, chunk, bytes) in rows {
        if let Some(vector) = Quantized::from_bytes(&bytes) {
            if store.insert(chunk, &vector) {
                loaded += 1;
            }
        }
        store.last_row = store.last_row.max(row);
    }
    Ok(loaded)
}

/// `embedder.embed(texts)`, a panic of the model's caught and told as an error: a model
/// that panics on an input it cannot take stops embedding, not the writer thread (which
/// would leave everyone waiting on it) or a search.
pub(super) fn embed(embedder: &dyn Embedder, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| embedder.embed(texts)))
        .unwrap_or_else(|panic| Err(format!("the embedder crashed: {}", panic_text(&panic))))
}

/// `embedder.embed_query(text)`, a panic caught as in [`embed`].
pub(super) fn embed_query(embedder: &dyn Embedder, text: &str) -> Result<Vec<f32>, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| embedder.embed_query(text)))
        .unwrap_or_else(|panic| Err(format!("the embedder crashed: {}", panic_text(&panic))))
}

/// The tokenizer of `embedding`'s model, if it tells it (a panic of the model's is taken
/// as not).
pub(super) fn tokens_of(embedding: &Embedding) -> Option<Arc<dyn crate::chunk::Tokens>> {
    let embedder = &embedding.embedder;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| embedder.tokens()))
        .ok()
        .flatten()
}

/// The message of a caught panic.
fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}
