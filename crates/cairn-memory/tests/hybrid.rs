//! Search by meaning and hybrid search through the real index, with a deterministic
//! embedder that knows which words mean the same thing: vectors are made in the
//! background and kept in step with the chunks, a model change makes them again, a
//! reading process follows the writer's vectors, and failures leave keyword search
//! working.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_memory::catalog::Catalog;
use cairn_memory::index::{Embedder, SearchMode};
use cairn_memory::{IndexError, IndexOptions, MemoryIndex, SearchQuery, Workspace};

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

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
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

#[test]
fn a_paraphrase_is_found_by_meaning_where_the_words_miss() {
    let (_dir, ws) = fixture();
    let embedder = Concepts::new("concepts-a");
    let index = open(&ws, Some(embedder.clone()));
    index.sync().unwrap();
    let status = index.wait_embedded(|_, _| {});
    // The four notes and the new workspace's own files.
    assert!(
        status.to_embed > 4 && status.embedded == status.to_embed,
        "{status:?}"
    );
    assert_eq!(status.embedding_model.as_deref(), Some("concepts-a"));

    let asked = "automobile verdict";
    // The words: nothing.
    let keyword = search(&index, asked, Some(SearchMode::Keyword));
    assert!(
        !keyword.contains(&"knowledge/sale.md".to_string()),
        "{keyword:?}"
    );
    // The meaning: the sale of the vehicle, first.
    let semantic = search(&index, asked, Some(SearchMode::Semantic));
    assert_eq!(
        semantic.first().map(String::as_str),
        Some("knowledge/sale.md")
    );
    let results = index.search(&SearchQuery::new(asked)).unwrap();
    assert_eq!(
        results.mode,
        Some(SearchMode::Hybrid),
        "hybrid is the default"
    );
    assert_eq!(results.results[0].path, "knowledge/sale.md");
    let coverage = results.coverage.unwrap();
    assert_eq!(
        (coverage.embedded, coverage.chunks),
        (status.to_embed, status.chunks)
    );
    // Exact words still win in hybrid.
    let exact = search(&index, "Elm Street car wash", None);
    assert_eq!(
        exact.first().map(String::as_str),
        Some("knowledge/car-wash.md")
    );
}

#[test]
fn vectors_follow_the_chunks_as_files_change() {
    let (_dir, ws) = fixture();
    let embedder = Concepts::new("concepts-a");
    let index = open(&ws, Some(embedder.clone()));
    index.sync().unwrap();
    let first = index.wait_embedded(|_, _| {});
    assert_eq!(stored_vectors(&ws).len() as u64, first.to_embed);

    // The sale note now speaks of the garden; the dentist note is gone.
    write(
        ws.root(),
        "knowledge/sale.md",
        "# Sale\n\nWe sold the plants from the garden.\n",
    );
    fs::remove_file(ws.root().join("knowledge/dentist.md")).unwrap();
    index.sync().unwrap();
    let status = index.wait_embedded(|_, _| {});
    assert_eq!(status.to_embed, first.to_embed - 1);
    assert_eq!(status.embedded, status.to_embed);
    assert_eq!(
        stored_vectors(&ws).len() as u64,
        status.to_embed,
        "vectors of gone chunks are swept"
    );
    let found = search(
        &index,
        "which automobile did we choose",
        Some(SearchMode::Semantic),
    );
    assert!(
        !found.contains(&"knowledge/sale.md".to_string()),
        "{found:?}"
    );
    assert!(search(&index, "teeth", Some(SearchMode::Semantic)).is_empty());

    // Reopened, nothing is embedded twice (one text checks the model's length).
    drop(index);
    let before = embedder.calls.load(Ordering::SeqCst);
    let index = open(&ws, Some(embedder.clone()));
    index.sync().unwrap();
    let again = index.wait_embedded(|_, _| {});
    assert_eq!(
        (again.embedded, again.to_embed),
        (status.to_embed, status.to_embed)
    );
    assert_eq!(embedder.calls.load(Ordering::SeqCst), before + 1);
}

#[test]
fn another_model_makes_the_vectors_again_and_replaces_the_old() {
    let (_dir, ws) = fixture();
    let index = open(&ws, Some(Concepts::new("concepts-a")));
    index.sync().unwrap();
    index.wait_embedded(|_, _| {});
    drop(index);
    let b = Concepts::new("concepts-b");
    let index = open(&ws, Some(b.clone()));
    index.sync().unwrap();
    let mut seen = Vec::new();
    let status = index.wait_embedded(|done, of| seen.push((done, of)));
    let all = status.to_embed;
    assert_eq!(status.embedded, all);
    assert_eq!(b.calls.load(Ordering::SeqCst) as u64, all);
    let catalog = Catalog::open(&ws.state_dir().join("state.db")).unwrap();
    assert!(catalog.vectors_since("concepts-a", 0).unwrap().is_empty());
    assert_eq!(
        catalog.vectors_since("concepts-b", 0).unwrap().len() as u64,
        all
    );
    assert_eq!(seen.last(), Some(&(all, all)));
}

#[test]
fn until_embedding_catches_up_search_says_how_much_it_saw() {
    let (_dir, ws) = fixture();
    let embedder = Concepts::new("concepts-a");
    let gate = embedder.gate.lock().unwrap();
    let index = open(&ws, Some(embedder.clone()));
    index.sync().unwrap();
    // Embedding is held: the words still find, and the results say meaning saw nothing.
    let results = index
        .search(&SearchQuery::new("dentist appointment"))
        .unwrap();
    assert_eq!(results.results[0].path, "knowledge/dentist.md");
    let coverage = results.coverage.unwrap();
    assert_eq!(coverage.embedded, 0);
    assert!(coverage.chunks > 4);
    assert!(!index.status().embedding_current());
    drop(gate);
    let status = index.wait_embedded(|_, _| {});
    assert!(status.embedding_current(), "{status:?}");
}

#[test]
fn a_failing_embedder_leaves_keyword_search_and_says_why() {
    let (_dir, ws) = fixture();
    let embedder = Arc::new(Concepts {
        fail: true,
        ..Arc::into_inner(Concepts::new("concepts-a")).unwrap()
    });
    let index = open(&ws, Some(embedder));
    index.sync().unwrap();
    let status = index.wait_embedded(|_, _| {});
    assert_eq!(
        status.embed_error.as_deref(),
        Some("the model file is damaged")
    );
    assert_eq!(status.embedded, 0);
    assert_eq!(
        search(&index, "dentist", None),
        vec!["knowledge/dentist.md"]
    );
}

/// A model that panics on every input.
struct Panics;

impl Embedder for Panics {
    fn model(&self) -> String {
        "panics".into()
    }

    fn embed(&self, _texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        panic!("index out of range in the attention mask")
    }
}

#[test]
fn a_panicking_embedder_stops_embedding_not_the_index() {
    let (_dir, ws) = fixture();
    let index = open(&ws, Some(Arc::new(Panics)));
    index.sync().unwrap();
    // Returns (the writer did not die with the model), and says why.
    let status = index.wait_embedded(|_, _| {});
    let error = status.embed_error.unwrap_or_default();
    assert!(
        error.contains("crashed") && error.contains("attention mask"),
        "{error}"
    );
    // The writer still indexes what changes.
    write(
        ws.root(),
        "knowledge/kite.md",
        "# Kite\n\nThe red kite flies at noon.\n",
    );
    index.changed(&["knowledge/kite.md"]).unwrap();
    assert!(index.wait_current(Duration::from_secs(10)));
    assert_eq!(search(&index, "kite", None), vec!["knowledge/kite.md"]);
}

#[test]
fn without_an_embedder_search_is_by_keyword_and_meaning_is_refused() {
    let (_dir, ws) = fixture();
    let index = open(&ws, None);
    index.sync().unwrap();
    let results = index.search(&SearchQuery::new("dentist")).unwrap();
    assert_eq!(results.mode, Some(SearchMode::Keyword));
    assert_eq!(results.coverage, None);
    for mode in [SearchMode::Semantic, SearchMode::Hybrid] {
        let err = index
            .search(&SearchQuery {
                mode: Some(mode),
                ..SearchQuery::new("dentist")
            })
            .unwrap_err();
        assert!(matches!(err, IndexError::NoEmbedder), "{err}");
        assert!(err.to_string().contains("scripts/fetch-model.sh"), "{err}");
    }
    assert!(index.status().embedding_current());
}

#[test]
fn a_reading_process_uses_the_vectors_the_writer_makes() {
    let (_dir, ws) = fixture();
    let embedder = Concepts::new("concepts-a");
    let writer = open(&ws, Some(embedder.clone()));
    writer.sync().unwrap();
    let reader = open(&ws, Some(embedder.clone()));
    assert!(reader.is_read_only());
    writer.wait_embedded(|_, _| {});
    let results = reader
        .search(&SearchQuery {
            mode: Some(SearchMode::Semantic),
            ..SearchQuery::new("the automobile decision")
        })
        .unwrap();
    assert_eq!(results.results[0].path, "knowledge/sale.md");
    let coverage = results.coverage.unwrap();
    assert!(
        coverage.embedded > 4 && coverage.embedded == coverage.chunks,
        "{coverage:?}"
    );
}

#[test]
fn near_copies_do_not_crowd_out_the_rest() {
    let (_dir, ws) = fixture();
    for n in 0..5 {
        write(
            ws.root(),
            &format!("knowledge/copy-{n}.md"),
            &format!("# Copy {n}\n\nWe chose to sell the vehicle, note {n}.\n"),
        );
    }
    let index = open(&ws, Some(Concepts::new("concepts-a")));
    index.sync().unwrap();
    index.wait_embedded(|_, _| {});
    let results = index
        .search(&SearchQuery {
            limit: 4,
            ..SearchQuery::new("decision about the car")
        })
        .unwrap();
    let paths: Vec<&str> = results.results.iter().map(|h| h.path.as_str()).collect();
    let copies = paths
        .iter()
        .filter(|p| p.contains("copy-") || p.contains("sale"))
        .count();
    assert!(
        copies <= 2,
        "near-identical notes took most places: {paths:?}"
    );
    assert!(paths.contains(&"knowledge/car-wash.md"), "{paths:?}");
}

/// The same model name, but vectors of another length (a catalog copied from elsewhere,
/// or damaged): the stored ones give way and everything is embedded again.
struct Longer(Arc<Concepts>);

impl Embedder for Longer {
    fn model(&self) -> String {
        self.0.model()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        let mut vectors = self.0.embed(texts)?;
        vectors.iter_mut().for_each(|v| v.extend([0.0; 8]));
        Ok(vectors)
    }
}

#[test]
fn stored_vectors_of_another_length_are_made_again() {
    let (_dir, ws) = fixture();
    let index = open(&ws, Some(Concepts::new("concepts-a")));
    index.sync().unwrap();
    let first = index.wait_embedded(|_, _| {});
    drop(index);
    let index = open(&ws, Some(Arc::new(Longer(Concepts::new("concepts-a")))));
    index.sync().unwrap();
    let status = index.wait_embedded(|_, _| {});
    assert!(status.embedding_current(), "{status:?}");
    assert_eq!(status.to_embed, first.to_embed);
    assert_eq!(status.embed_error, None);
    let stored = stored_vectors(&ws);
    assert_eq!(stored.len() as u64, status.to_embed);
    assert!(stored
        .iter()
        .all(|(_, _, bytes)| bytes.len() == 4 + CONCEPTS.len() + HASHED + 8));
    let found = search(&index, "automobile verdict", Some(SearchMode::Semantic));
    assert_eq!(found.first().map(String::as_str), Some("knowledge/sale.md"));
}

#[test]
fn the_signs_shortlist_finds_what_the_exact_scan_finds() {
    let (_dir, ws) = fixture();
    let embedder = Concepts::new("concepts-a");
    let exact = open(&ws, Some(embedder.clone()));
    exact.sync().unwrap();
    exact.wait_embedded(|_, _| {});
    let shortlisted = MemoryIndex::open(
        &ws,
        IndexOptions {
            embedder: Some(embedder),
            exact_search_up_to: 0,
            ..IndexOptions::default()
        },
    )
    .unwrap();
    for asked in ["automobile verdict", "teeth", "plants in the garden"] {
        let a = search(&exact, asked, Some(SearchMode::Semantic));
        let b = search(&shortlisted, asked, Some(SearchMode::Semantic));
        assert_eq!(a, b, "{asked}");
        assert!(!a.is_empty(), "{asked}");
    }
}

#[test]
fn the_embedder_changes_while_the_index_is_open() {
    let (_dir, ws) = fixture();
    let index = open(&ws, Some(Concepts::new("concepts-a")));
    index.sync().unwrap();
    let first = index.wait_embedded(|_, _| {});
    assert!(first.embedding_current() && first.embedded > 0, "{first:?}");

    // Off: keyword only, and asking for meaning is refused.
    index.set_embedder(None).unwrap();
    assert_eq!(index.status().embedding_model, None);
    let results = index.search(&SearchQuery::new("dentist")).unwrap();
    assert_eq!(results.mode, Some(SearchMode::Keyword));
    let err = index
        .search(&SearchQuery {
            mode: Some(SearchMode::Semantic),
            ..SearchQuery::new("dentist")
        })
        .unwrap_err();
    assert!(matches!(err, IndexError::NoEmbedder), "{err}");

    // Another model: everything is embedded again by it, and the old model's vectors go.
    let b = Concepts::new("concepts-b");
    index.set_embedder(Some(b.clone())).unwrap();
    let status = index.wait_embedded(|_, _| {});
    assert_eq!(status.embedding_model.as_deref(), Some("concepts-b"));
    assert!(status.embedding_current(), "{status:?}");
    assert_eq!(status.embedded, first.embedded);
    assert!(b.calls.load(Ordering::SeqCst) as u64 >= first.embedded);
    let catalog = Catalog::open(&ws.state_dir().join("state.db")).unwrap();
    assert!(catalog.vectors_since("concepts-a", 0).unwrap().is_empty());
    let found = search(&index, "automobile verdict", Some(SearchMode::Semantic));
    assert_eq!(found.first().map(String::as_str), Some("knowledge/sale.md"));

    // Edits after the switch are embedded by the new model.
    write(
        ws.root(),
        "knowledge/bike.md",
        "# Bike\n\nThe bicycle needs new brakes.\n",
    );
    index.changed(&["knowledge/bike.md"]).unwrap();
    assert!(index.wait_current(Duration::from_secs(10)));
    let status = index.wait_embedded(|_, _| {});
    assert_eq!(status.embedded, first.embedded + 1, "{status:?}");
}

#[test]
fn a_query_vector_of_another_length_finds_nothing_by_meaning_and_does_not_fail() {
    let (_dir, ws) = fixture();
    let index = open(&ws, Some(Concepts::new("concepts-a")));
    index.sync().unwrap();
    index.wait_embedded(|_, _| {});
    // The server now answers with longer vectors under the same model name; the writer
    // is held so the stored vectors are still the old length when the query comes.
    let longer = Concepts::new("concepts-a");
    let _held = longer.gate.lock().unwrap();
    index
        .set_embedder(Some(Arc::new(Longer(longer.clone()))))
        .unwrap();
    // The writer has taken the switch and loaded the stored (shorter) vectors again.
    assert!(index.wait_current(Duration::from_secs(10)));
    let results = index
        .search(&SearchQuery::new("dentist appointment"))
        .unwrap();
    assert_eq!(results.results[0].path, "knowledge/dentist.md");
    let semantic = index
        .search(&SearchQuery {
            mode: Some(SearchMode::Semantic),
            ..SearchQuery::new("automobile verdict")
        })
        .unwrap();
    assert!(semantic.results.is_empty(), "{:?}", semantic.results);
    // And it says so: none of the vectors held can be compared with the question.
    assert_eq!(semantic.coverage.unwrap().embedded, 0);
}

/// The app switched models in one process while a second one (read-only) still searches:
/// the reader keeps answering on the old model until it is told, then follows the writer's
/// new vectors without embedding anything itself.
#[test]
fn a_reading_process_follows_a_switch_of_model() {
    let (_dir, ws) = fixture();
    let a = Concepts::new("concepts-a");
    let writer = open(&ws, Some(a.clone()));
    writer.sync().unwrap();
    writer.wait_embedded(|_, _| {});
    let reader = open(&ws, Some(a.clone()));
    assert!(reader.is_read_only());
    let by_meaning = |index: &MemoryIndex| {
        index
            .search(&SearchQuery {
                mode: Some(SearchMode::Semantic),
                ..SearchQuery::new("the automobile decision")
            })
            .unwrap()
    };
    assert_eq!(by_meaning(&reader).results[0].path, "knowledge/sale.md");

    let b = Concepts::new("concepts-b");
    writer.set_embedder(Some(b.clone())).unwrap();
    let status = writer.wait_embedded(|_, _| {});
    assert_eq!(status.embedding_model.as_deref(), Some("concepts-b"));
    // The old model's rows are gone from the catalog; the reader, not told yet, still
    // answers (from the vectors it holds) and does not fail.
    let stale = by_meaning(&reader);
    assert_eq!(stale.results[0].path, "knowledge/sale.md");

    let calls_before = b.calls.load(Ordering::SeqCst);
    reader.set_embedder(Some(b.clone())).unwrap();
    let results = by_meaning(&reader);
    assert_eq!(results.results[0].path, "knowledge/sale.md");
    let coverage = results.coverage.unwrap();
    assert!(
        coverage.embedded > 4 && coverage.embedded == coverage.chunks,
        "the reader loaded the writer's vectors of the new model: {coverage:?}"
    );
    // Only the query was embedded by the reader; the chunks' vectors came from the writer.
    assert_eq!(b.calls.load(Ordering::SeqCst), calls_before + 1);
    assert_eq!(
        reader.status().embedding_model.as_deref(),
        Some("concepts-b")
    );
}
