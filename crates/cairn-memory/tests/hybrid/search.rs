//! Search by meaning with no embedder, in a reading process, among near copies and across a change of model.

use super::*;

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
