//! Searches find the right chunk and rank it as a reader would.

use super::*;

#[test]
fn finds_the_right_chunk_with_lines_snippet_and_citation() {
    let (_dir, ws) = fixture();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let report = index.sync().unwrap();
    assert_eq!(report.files, FIXTURE_FILES);
    assert!(report.chunks >= 7);

    let results = index.search(&query("watering can")).unwrap();
    assert!(!results.stale);
    let top = &results.results[0];
    assert_eq!(top.path, "knowledge/garden.md");
    assert_eq!((top.start_line, top.end_line), (5, 7));
    assert_eq!(top.citation, "knowledge/garden.md#L5-L7");
    assert_eq!(top.heading, "Garden > Watering");
    assert_eq!(top.source, "knowledge");
    assert!(
        top.marked("[", "]").contains("[watering] [can]"),
        "{}",
        top.marked("[", "]")
    );
    let file = fs::read_to_string(ws.root().join("knowledge/garden.md")).unwrap();
    let lines: Vec<&str> = file.lines().collect();
    assert!(lines[top.start_line - 1..top.end_line]
        .iter()
        .any(|l| l.contains("watering can")));
}

#[test]
fn stems_and_case_do_not_matter() {
    let (_dir, ws) = fixture();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    let hits = index.search(&query("TOMATO")).unwrap().results;
    assert_eq!(paths(&hits), ["knowledge/garden.md", "knowledge/garden.md"]);
    let hits = index
        .search(&query("appointments dentists"))
        .unwrap()
        .results;
    assert_eq!(hits[0].path, "memory/2026-03-01.md");
}

#[test]
fn the_phrase_beats_scattered_words() {
    let (_dir, ws) = fixture();
    write(
        ws.root(),
        "knowledge/scattered.md",
        "# Notes\nThe budget was blue. A draft of it, quarterly, maybe.\n",
    );
    write(
        ws.root(),
        "knowledge/phrase.md",
        "# Plans\nThe quarterly budget draft is due on Friday, says the finance team.\n",
    );
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    let hits = index
        .search(&SearchQuery {
            corpus: Corpus::Knowledge,
            ..query("quarterly budget draft")
        })
        .unwrap()
        .results;
    assert_eq!(
        paths(&hits),
        ["knowledge/phrase.md", "knowledge/scattered.md"]
    );
}

#[test]
fn recent_daily_logs_rank_above_old_ones_and_memory_does_not_age() {
    let (_dir, ws) = fixture();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    let hits = index.search(&query("quarterly report")).unwrap().results;
    let order = paths(&hits);
    let newer = order
        .iter()
        .position(|p| *p == "memory/2026-01-02.md")
        .unwrap();
    let older = order
        .iter()
        .position(|p| *p == "memory/2025-06-02.md")
        .unwrap();
    assert!(newer < older, "{order:?}");
    // Ten years later, MEMORY.md still scores as it did.
    let now = index.search(&query("Ana project lead")).unwrap().results;
    let later = index
        .search(&SearchQuery {
            today: NaiveDate::from_ymd_opt(2036, 1, 1),
            ..query("Ana project lead")
        })
        .unwrap()
        .results;
    assert_eq!(now[0].path, "MEMORY.md");
    assert_eq!(later[0].path, "MEMORY.md");
    assert_eq!(now[0].score, later[0].score);
}

#[test]
fn corpus_filters() {
    let (_dir, ws) = fixture();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    let search = |text: &str, corpus| {
        index
            .search(&SearchQuery {
                corpus,
                ..query(text)
            })
            .unwrap()
            .results
    };
    let sessions = search("bicycle library", Corpus::Sessions);
    assert_eq!(paths(&sessions), ["sessions/0001.jsonl"]);
    assert_eq!(sessions[0].citation, "sessions/0001.jsonl#L2-L3");
    assert!(search("bicycle", Corpus::Memory).is_empty());
    assert!(search("tomatoes", Corpus::Memory).is_empty());
    assert_eq!(search("tomatoes", Corpus::Knowledge)[0].source, "knowledge");
    assert_eq!(search("Bruno email", Corpus::Memory)[0].path, "MEMORY.md");
    assert!(index.search(&query("   ")).unwrap().results.is_empty());
}
