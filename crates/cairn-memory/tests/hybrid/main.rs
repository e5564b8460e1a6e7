//! Search by meaning and hybrid search through the real index, with a deterministic
//! embedder that knows which words mean the same thing: vectors are made in the
//! background and kept in step with the chunks, a model change makes them again, a
//! reading process follows the writer's vectors, and failures leave keyword search
//! working.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod embedding;
mod search;

use std::fs;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_memory::catalog::Catalog;
use cairn_memory::index::{Embedder, SearchMode};
use cairn_memory::{IndexError, IndexOptions, MemoryIndex, SearchQuery, Workspace};
use cairn_testkit::write;

/// Words that mean the same thing share a dimension; other words land in hashed
/// dimensions of their own.
const CONCEPTS: &[&[&str]] = &[
    &["car", "vehicle", "automobile", "sedan"],
    &[
        "decide", "decided", "decision", "chose", "choose", "verdict",
    ],
    &["garden", "plants", "tomatoes", "watering"],
    &["dentist", "teeth", "appointment"],
];
const HASHED: usize = 32;

struct Concepts {
    name: String,
    calls: AtomicUsize,
    /// While held, the index's writer thread cannot embed (queries still can).
    gate: Arc<Mutex<()>>,
    fail: bool,
}

impl Concepts {
    fn new(name: &str) -> Arc<Self> {
        Arc::new(Self {
            name: name.into(),
            calls: AtomicUsize::new(0),
            gate: Arc::new(Mutex::new(())),
            fail: false,
        })
    }

    fn vector(text: &str) -> Vec<f32> {
        let mut v = vec![0f32; CONCEPTS.len() + HASHED];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 2)
        {
            let word = word.to_lowercase();
            match CONCEPTS.iter().position(|c| c.contains(&word.as_str())) {
                Some(i) => v[i] += 3.0,
                None => {
                    let h = word
                        .bytes()
                        .fold(7usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
                    v[CONCEPTS.len() + h % HASHED] += 0.5;
                }
            }
        }
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
        v.iter().map(|x| x / n).collect()
    }
}

impl Embedder for Concepts {
    fn model(&self) -> String {
        self.name.clone()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        if std::thread::current().name() == Some("cairn-index-writer") {
            let _held = self.gate.lock().unwrap();
            if self.fail {
                return Err("the model file is damaged".into());
            }
        }
        self.calls.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts.iter().map(|t| Self::vector(t)).collect())
    }
}

fn fixture() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
    let root = ws.root();
    write(
        root,
        "knowledge/sale.md",
        "# Sale\n\nWe chose to sell the old vehicle in spring.\n",
    );
    write(
        root,
        "knowledge/garden.md",
        "# Garden\n\nTomatoes need sun and watering every morning.\n",
    );
    write(
        root,
        "knowledge/dentist.md",
        "# Teeth\n\nThe dentist appointment is on March 14.\n",
    );
    write(
        root,
        "knowledge/car-wash.md",
        "# Chores\n\nThe car wash on Elm Street opens at eight.\n",
    );
    (dir, ws)
}

fn open(ws: &Workspace, embedder: Option<Arc<dyn Embedder>>) -> MemoryIndex {
    MemoryIndex::open(
        ws,
        IndexOptions {
            embedder,
            debounce: Duration::from_millis(50),
            ..IndexOptions::default()
        },
    )
    .unwrap()
}

fn search(index: &MemoryIndex, text: &str, mode: Option<SearchMode>) -> Vec<String> {
    let results = index
        .search(&SearchQuery {
            mode,
            limit: 3,
            ..SearchQuery::new(text)
        })
        .unwrap();
    results.results.into_iter().map(|h| h.path).collect()
}

fn stored_vectors(ws: &Workspace) -> Vec<(i64, u64, Vec<u8>)> {
    let catalog = Catalog::open(&ws.state_dir().join("state.db")).unwrap();
    let mut all = Vec::new();
    for model in ["concepts-a", "concepts-b"] {
        all.extend(catalog.vectors_since(model, 0).unwrap());
    }
    all
}
