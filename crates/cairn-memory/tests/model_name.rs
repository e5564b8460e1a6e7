//! An embedder that knows which model it runs only once it is loaded (the bundled one may
//! fall back to another precision or engine): vectors are recorded under the model that
//! made them, whatever it said before.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cairn_memory::catalog::Catalog;
use cairn_memory::index::{Embedder, SearchMode};
use cairn_memory::{IndexOptions, MemoryIndex, SearchQuery, Workspace};

const SAID: &str = "minilm (int8)";
const RUNS: &str = "minilm (f32)";

/// Says int8 until its first use, then f32. Texts about boats point one way, the rest
/// another.
#[derive(Default)]
struct FallsBack {
    loaded: AtomicBool,
}

impl Embedder for FallsBack {
    fn model(&self) -> String {
        if self.loaded.load(Ordering::SeqCst) {
            RUNS.into()
        } else {
            SAID.into()
        }
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        self.loaded.store(true, Ordering::SeqCst);
        Ok(texts
            .iter()
            .map(|t| {
                let boat = ["boat", "sailing", "harbour"]
                    .iter()
                    .any(|w| t.to_lowercase().contains(w));
                if boat {
                    vec![1.0, 0.0]
                } else {
                    vec![0.0, 1.0]
                }
            })
            .collect())
    }
}

fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
    std::fs::create_dir_all(ws.root().join("knowledge")).unwrap();
    std::fs::write(
        ws.root().join("knowledge/harbour.md"),
        "# Harbour\n\nThe boat is moored at pier four.\n",
    )
    .unwrap();
    std::fs::write(
        ws.root().join("knowledge/tax.md"),
        "# Tax\n\nThe return is due in April.\n",
    )
    .unwrap();
    (dir, ws)
}

fn open(ws: &Workspace, embedder: Arc<dyn Embedder>) -> MemoryIndex {
    let index = MemoryIndex::open(
        ws,
        IndexOptions {
            embedder: Some(embedder),
            debounce: Duration::from_millis(50),
            ..IndexOptions::default()
        },
    )
    .unwrap();
    index.sync().unwrap();
    index
}

#[test]
fn vectors_are_recorded_under_the_model_that_made_them() {
    let (_dir, ws) = workspace();
    let index = open(&ws, Arc::new(FallsBack::default()));
    let status = index.wait_embedded(|_, _| {});
    assert!(status.embedding_current(), "{status:?}");
    assert_eq!(status.embed_error, None);
    let catalog = Catalog::open(&ws.state_dir().join("state.db")).unwrap();
    assert_eq!(catalog.vectors_since(SAID, 0).unwrap().len(), 0);
    assert_eq!(
        catalog.vectors_since(RUNS, 0).unwrap().len() as u64,
        status.to_embed
    );
    // Search by meaning uses them.
    let found = index
        .search(&SearchQuery {
            mode: Some(SearchMode::Semantic),
            ..SearchQuery::new("sailing")
        })
        .unwrap();
    assert_eq!(found.results[0].path, "knowledge/harbour.md");
    let coverage = found.coverage.unwrap();
    assert_eq!(coverage.embedded, coverage.chunks);
}

/// A reading process whose embedder, too, names another model once it runs follows the
/// writer's vectors under that name.
#[test]
fn a_reading_process_finds_the_vectors_under_the_model_that_made_them() {
    let (_dir, ws) = workspace();
    let writer = open(&ws, Arc::new(FallsBack::default()));
    let status = writer.wait_embedded(|_, _| {});
    assert!(status.embedding_current(), "{status:?}");
    let reader = MemoryIndex::open(
        &ws,
        IndexOptions {
            embedder: Some(Arc::new(FallsBack::default())),
            ..IndexOptions::default()
        },
    )
    .unwrap();
    assert!(reader.is_read_only());
    let found = reader
        .search(&SearchQuery {
            mode: Some(SearchMode::Semantic),
            ..SearchQuery::new("sailing")
        })
        .unwrap();
    let coverage = found.coverage.unwrap();
    assert_eq!(coverage.embedded, coverage.chunks, "{coverage:?}");
    assert_eq!(found.results[0].path, "knowledge/harbour.md");
}

/// Names another model after every batch.
#[derive(Default)]
struct Flips {
    calls: AtomicUsize,
}

impl Embedder for Flips {
    fn model(&self) -> String {
        format!("flips-{}", self.calls.load(Ordering::SeqCst) % 2)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
    }
}

/// A name that changes again is told as an error; embedding stops instead of making and
/// dropping batches without end, and keyword search goes on.
#[test]
fn a_model_name_that_keeps_changing_stops_embedding_with_an_error() {
    let (_dir, ws) = workspace();
    let index = open(&ws, Arc::new(Flips::default()));
    let status = index.wait_embedded(|_, _| {});
    let error = status.embed_error.unwrap_or_default();
    assert!(error.contains("keeps changing"), "{error:?}");
    let found = index.search(&SearchQuery::new("moored")).unwrap();
    assert_eq!(found.results[0].path, "knowledge/harbour.md");
}
