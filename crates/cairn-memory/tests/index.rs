//! The memory index on real workspaces in temp folders: relevance, recency, filters,
//! incremental updates, the watcher, and recovery from damaged state.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use cairn_memory::{
    Corpus, IndexOptions, MemoryIndex, OpenNotice, SearchHit, SearchQuery, Workspace,
};
use chrono::NaiveDate;

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// The files of [`fixture`] the index holds: the seven it writes, and the new
/// workspace's own notes (AGENTS.md, and the example skill and subagent among them).
const FIXTURE_FILES: u64 = 12;

/// A workspace with memory, daily logs, knowledge and a session.
fn fixture() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
    let root = ws.root();
    write(
        root,
        "MEMORY.md",
        "# Memory\n\n## People\n- Ana is the project lead.\n- Bruno prefers email over calls.\n\n## Preferences\n- Answers in British English.\n",
    );
    write(
        root,
        "memory/2026-03-01.md",
        "# 2026-03-01\n\n## 09:10\n- Booked the dentist appointment for March 14.\n",
    );
    write(
        root,
        "memory/2026-01-02.md",
        "# 2026-01-02\n\n## 10:00\n- Quarterly report draft sent to Ana.\n",
    );
    write(
        root,
        "memory/2025-06-02.md",
        "# 2025-06-02\n\n## 10:00\n- Quarterly report draft sent to Ana.\n",
    );
    write(
        root,
        "knowledge/garden.md",
        "# Garden\n\nTomatoes need sun.\n\n## Watering\nWater the tomatoes every morning in July.\nThe blue watering can is in the shed.\n",
    );
    write(
        root,
        "knowledge/rust/async.md",
        "# Async Rust\n\nTokio runs futures on a thread pool.\nA blocking call stalls the executor; use spawn_blocking.\n",
    );
    write(
        root,
        "sessions/0001.jsonl",
        concat!(
            r#"{"type":"session","version":1,"id":"0001","created_at":"2026-03-02T10:00:00.000Z"}"#,
            "\n",
            r#"{"type":"message","id":"a","parent_id":null,"ts":"t","message":{"role":"user","content":[{"type":"text","text":"Where did I park the bicycle?"}]}}"#,
            "\n",
            r#"{"type":"message","id":"b","parent_id":"a","ts":"t","message":{"role":"assistant","content":[{"type":"text","text":"By the library, level two."}],"stop_reason":"end_turn"}}"#,
            "\n"
        ),
    );
    (dir, ws)
}

fn options() -> IndexOptions {
    IndexOptions {
        debounce: Duration::from_millis(100),
        ..IndexOptions::default()
    }
}

fn query(text: &str) -> SearchQuery {
    SearchQuery {
        today: NaiveDate::from_ymd_opt(2026, 3, 20),
        ..SearchQuery::new(text)
    }
}

fn paths(hits: &[SearchHit]) -> Vec<&str> {
    hits.iter().map(|h| h.path.as_str()).collect()
}

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
        "# Notes\nThe report was blue. A draft of it, quarterly, maybe.\n",
    );
    write(
        ws.root(),
        "knowledge/phrase.md",
        "# Plans\nThe quarterly report draft is due on Friday, says the finance team.\n",
    );
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    let hits = index
        .search(&SearchQuery {
            corpus: Corpus::Knowledge,
            ..query("quarterly report draft")
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

#[test]
fn only_changed_files_are_indexed_again_and_deleted_files_leave() {
    let (_dir, ws) = fixture();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let first = index.sync().unwrap();
    assert_eq!(first.changed, FIXTURE_FILES);
    let again = index.sync().unwrap();
    assert_eq!((again.changed, again.removed), (0, 0));
    assert_eq!(again.chunks, first.chunks);

    write(
        ws.root(),
        "knowledge/garden.md",
        "# Garden\nCucumbers climb the fence.\n",
    );
    fs::remove_file(ws.root().join("knowledge/rust/async.md")).unwrap();
    let report = index.sync().unwrap();
    assert_eq!((report.changed, report.removed), (1, 1));
    assert!(index.search(&query("tomatoes")).unwrap().results.is_empty());
    assert!(index
        .search(&query("spawn_blocking tokio"))
        .unwrap()
        .results
        .is_empty());
    assert_eq!(index.search(&query("cucumbers")).unwrap().results.len(), 1);

    // A new handle on the same workspace starts from the catalog: nothing to redo.
    drop(index);
    let reopened = MemoryIndex::open(&ws, options()).unwrap();
    assert!(reopened.notices().is_empty());
    assert_eq!(reopened.sync().unwrap().changed, 0);
    assert_eq!(
        reopened.search(&query("cucumbers")).unwrap().results.len(),
        1
    );
}

#[test]
fn a_sparse_terabyte_file_is_skipped_unread() {
    let (_dir, ws) = fixture();
    let huge = fs::File::create(ws.root().join("knowledge/huge.md")).unwrap();
    huge.set_len(1 << 40).unwrap();
    drop(huge);
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let report = index.sync().unwrap();
    assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
    let (path, why) = &report.skipped[0];
    assert_eq!(path, "knowledge/huge.md");
    assert!(why.contains("too large to index (1048576 MB"), "{why}");
    assert_eq!(index.search(&query("tomatoes")).unwrap().results.len(), 2);
    assert_eq!(index.sync().unwrap().skipped.len(), 0, "judged once");
}

#[test]
fn binary_and_non_utf8_files_are_skipped_and_reported() {
    let (_dir, ws) = fixture();
    fs::write(ws.root().join("knowledge/latin1.md"), b"caf\xe9 au lait\n").unwrap();
    fs::write(
        ws.root().join("knowledge/blob.md"),
        b"PK\x03\x04\x00\x00binary",
    )
    .unwrap();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let report = index.sync().unwrap();
    let skipped: Vec<&str> = report.skipped.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(skipped, ["knowledge/blob.md", "knowledge/latin1.md"]);
    assert!(report.skipped[1].1.contains("UTF-8"));
    assert_eq!(report.files, FIXTURE_FILES);
    assert_eq!(index.search(&query("tomatoes")).unwrap().results.len(), 2);

    assert_eq!(report.not_indexed, report.skipped);

    // A later sync, and a later process, still list them until they change.
    let again = index.sync().unwrap();
    assert_eq!(
        (again.skipped.len(), &again.not_indexed),
        (0, &report.skipped)
    );
    drop(index);
    let index = MemoryIndex::open(&ws, options()).unwrap();
    assert_eq!(index.sync().unwrap().not_indexed, report.skipped);
    fs::write(ws.root().join("knowledge/latin1.md"), "café au lait\n").unwrap();
    let left_out = index.sync().unwrap().not_indexed;
    assert_eq!(left_out.len(), 1);
    assert_eq!(left_out[0].0, "knowledge/blob.md");
}

#[test]
fn hostile_paths_are_ignored() {
    let (dir, ws) = fixture();
    let outside = dir.path().join("secret.md");
    fs::write(&outside, "# Secret\nlaunch codes\n").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, ws.root().join("knowledge/link.md")).unwrap();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    index
        .changed(&[
            Path::new("../secret.md"),
            Path::new("knowledge/../../secret.md"),
            outside.as_path(),
            Path::new("knowledge/link.md"),
        ])
        .unwrap();
    assert!(index.wait_current(Duration::from_secs(10)));
    assert!(index
        .search(&query("launch codes"))
        .unwrap()
        .results
        .is_empty());
}

#[test]
fn outside_edits_are_found_through_the_watcher() {
    let (_dir, ws) = fixture();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let _watch = index.watch().unwrap();
    index.sync().unwrap();
    write(
        ws.root(),
        "knowledge/new/zeppelin.md",
        "# Zeppelin\nThe airship leaves at dawn.\n",
    );
    fs::write(
        ws.root().join("MEMORY.md"),
        "# Memory\n- Ana moved to Lisbon.\n",
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let airship = index.search(&query("airship")).unwrap().results;
        let lisbon = index.search(&query("Lisbon")).unwrap().results;
        if airship.len() == 1 && lisbon.len() == 1 {
            assert_eq!(airship[0].path, "knowledge/new/zeppelin.md");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the edits never became searchable"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(index.search(&query("Bruno")).unwrap().results.is_empty());
    // A deleted folder leaves the index too.
    fs::remove_dir_all(ws.root().join("knowledge/new")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !index.search(&query("airship")).unwrap().results.is_empty() {
        assert!(
            Instant::now() < deadline,
            "the deleted folder stayed in the index"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_corrupt_index_is_rebuilt_from_the_files() {
    let (_dir, ws) = fixture();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    drop(index);
    fs::write(ws.state_dir().join("index/meta.json"), "{ not json").unwrap();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    assert!(matches!(index.notices(), [OpenNotice::Corrupt(_)]));
    assert_eq!(index.sync().unwrap().changed, FIXTURE_FILES);
    assert_eq!(index.search(&query("tomatoes")).unwrap().results.len(), 2);
}

#[test]
fn a_deleted_index_folder_is_rebuilt() {
    let (_dir, ws) = fixture();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let chunks = index.sync().unwrap().chunks;
    drop(index);
    fs::remove_dir_all(ws.state_dir().join("index")).unwrap();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let report = index.sync().unwrap();
    assert_eq!((report.changed, report.chunks), (FIXTURE_FILES, chunks));
}

#[test]
fn an_index_of_another_schema_version_is_rebuilt() {
    let (_dir, ws) = fixture();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    drop(index);
    let catalog = cairn_memory::catalog::Catalog::open(&ws.state_dir().join("state.db")).unwrap();
    catalog.set_meta("index_schema_version", "0").unwrap();
    drop(catalog);
    let index = MemoryIndex::open(&ws, options()).unwrap();
    assert!(matches!(
        index.notices(),
        [OpenNotice::SchemaChanged { from: Some(v) }] if v == "0"
    ));
    assert_eq!(index.sync().unwrap().changed, FIXTURE_FILES);
}

#[test]
fn a_crash_between_commit_and_catalog_indexes_again_without_doubles() {
    let (_dir, ws) = fixture();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let chunks = index.sync().unwrap().chunks;
    drop(index);
    // The index has everything; the catalog lost its record of it.
    let catalog = cairn_memory::catalog::Catalog::open(&ws.state_dir().join("state.db")).unwrap();
    catalog.clear_files().unwrap();
    drop(catalog);
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let report = index.sync().unwrap();
    assert_eq!(report.changed, FIXTURE_FILES);
    assert_eq!(report.chunks, chunks, "chunks were indexed twice");
    assert_eq!(index.search(&query("tomatoes")).unwrap().results.len(), 2);
}

#[test]
fn a_rebuild_holds_each_chunk_once() {
    let (_dir, ws) = fixture();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let chunks = index.sync().unwrap().chunks;
    // A rebuild adds every file again to an index that still holds them until it commits.
    let rebuilt = index.rebuild().unwrap();
    assert_eq!(rebuilt.changed, FIXTURE_FILES);
    assert_eq!(rebuilt.chunks, chunks, "a rebuild doubled the chunks");
    assert_eq!(index.search(&query("tomatoes")).unwrap().results.len(), 2);
    // And the next change to a file replaces its chunks.
    write(
        ws.root(),
        "knowledge/garden.md",
        "# Garden\n\nTomatoes need sun.\n",
    );
    assert_eq!(index.sync().unwrap().chunks, chunks - 1);
    assert_eq!(index.search(&query("tomatoes")).unwrap().results.len(), 1);
}

/// Copies the folder `from` (recursively) to `to`.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn files_left_by_a_commit_cut_short_do_not_block_the_next_one() {
    let (dir, ws) = fixture();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    drop(index);
    let state = ws.state_dir();
    let before = dir.path().join("before");
    copy_tree(&state, &before);

    // A change whose commit writes a delete file for the chunks it replaces.
    write(
        ws.root(),
        "knowledge/garden.md",
        "# Garden\nCucumbers climb the fence.\n",
    );
    let index = MemoryIndex::open(&ws, options()).unwrap();
    assert_eq!(index.sync().unwrap().changed, 1);
    drop(index);

    // The process is killed just before meta.json names that commit's files: they are on
    // disk (and known to the index folder), the index and the catalog are as before.
    let after = dir.path().join("after");
    copy_tree(&state.join("index"), &after);
    fs::remove_dir_all(&state).unwrap();
    copy_tree(&before, &state);
    let mut left = 0;
    for entry in fs::read_dir(&after).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        let target = state.join("index").join(&name);
        if !target.exists() || name == ".managed.json" {
            left += usize::from(!target.exists());
            fs::copy(entry.path(), target).unwrap();
        }
    }
    assert!(left > 0, "the commit wrote no files");

    // The same change again: its commit needs the same file names.
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let report = index.sync().unwrap();
    assert_eq!(report.changed, 1);
    assert_eq!(index.search(&query("cucumbers")).unwrap().results.len(), 1);
    assert!(index.search(&query("tomatoes")).unwrap().results.is_empty());
}

#[test]
fn an_index_another_process_writes_is_never_rebuilt_from_under_it() {
    let (_dir, ws) = fixture();
    let writer = MemoryIndex::open(&ws, options()).unwrap();
    writer.sync().unwrap();
    // A process of another version finds a schema it does not know.
    let catalog = cairn_memory::catalog::Catalog::open(&ws.state_dir().join("state.db")).unwrap();
    catalog.set_meta("index_schema_version", "0").unwrap();
    drop(catalog);
    let refused = MemoryIndex::open(&ws, options()).err().unwrap();
    assert!(
        refused
            .to_string()
            .contains("another Cairn process writes the memory index"),
        "{refused}"
    );
    // The writer's index is untouched and still takes changes.
    assert_eq!(writer.search(&query("tomatoes")).unwrap().results.len(), 2);
    write(
        ws.root(),
        "knowledge/new.md",
        "# New\n\nCucumbers climb the trellis.\n",
    );
    assert_eq!(writer.sync().unwrap().changed, 1);
    assert_eq!(writer.search(&query("cucumbers")).unwrap().results.len(), 1);
    drop(writer);
    // Once it is gone, the next process rebuilds.
    let index = MemoryIndex::open(&ws, options()).unwrap();
    assert!(matches!(
        index.notices(),
        [OpenNotice::SchemaChanged { .. }]
    ));
}

#[test]
fn a_reader_takes_over_writing_when_the_writer_has_gone() {
    let (_dir, ws) = fixture();
    let writer = MemoryIndex::open(&ws, options()).unwrap();
    writer.sync().unwrap();
    let reader = MemoryIndex::open(&ws, options()).unwrap();
    assert!(reader.is_read_only());
    assert!(!reader.take_over().unwrap(), "the writer is still there");
    drop(writer);
    // Saved while nobody wrote the index.
    write(
        ws.root(),
        "memory/2026-03-02.md",
        "# 2026-03-02\n\n- Planted the cucumbers.\n",
    );
    let clone = reader.clone();
    // It writes the index now (catching up first with what changed meanwhile).
    reader.sync().unwrap();
    assert!(!clone.is_read_only(), "its clones too");
    assert_eq!(reader.search(&query("cucumbers")).unwrap().results.len(), 1);
}

#[test]
fn a_second_handle_in_another_role_reads_only() {
    let (_dir, ws) = fixture();
    let writer = MemoryIndex::open(&ws, options()).unwrap();
    writer.sync().unwrap();
    let reader = MemoryIndex::open(&ws, options()).unwrap();
    assert!(reader.is_read_only());
    assert!(reader.status().read_only);
    assert_eq!(reader.search(&query("tomatoes")).unwrap().results.len(), 2);
    assert!(reader.sync().is_err());
}

#[test]
fn a_search_during_a_long_catch_up_says_it_is_stale() {
    let (_dir, ws) = fixture();
    for i in 0..400 {
        write(
            ws.root(),
            &format!("knowledge/bulk/{i}.md"),
            &format!(
                "# Note {i}\n{}\n",
                "lorem ipsum dolor sit amet ".repeat(200)
            ),
        );
    }
    let index = MemoryIndex::open(
        &ws,
        IndexOptions {
            catch_up_wait: Duration::ZERO,
            ..options()
        },
    )
    .unwrap();
    index.sync_in_background().unwrap();
    let results = index.search(&query("tomatoes")).unwrap();
    assert!(results.stale);
    assert!(index.status().catching_up);
    assert!(index.wait_current(Duration::from_secs(60)));
    let results = index.search(&query("tomatoes")).unwrap();
    assert!(!results.stale);
    assert_eq!(results.results.len(), 2);
    assert_eq!(index.status().files, 400 + FIXTURE_FILES);
}

/// Files deleted while a rebuild reads the workspace are not found once it is done, with
/// no watcher to report them. The rebuild reads in path order while files are deleted
/// from the other end, so most deletions land on files it has already read.
#[test]
fn files_deleted_during_a_rebuild_leave_no_stale_hits() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;
    const FILES: usize = 1200;
    let (_dir, ws) = fixture();
    let root = ws.root().to_path_buf();
    for n in 0..FILES {
        write(
            &root,
            &format!("knowledge/bulk/n{n:04}.md"),
            &format!("# Note {n}\n\nThe zanzibarite ledger, entry {n}.\n"),
        );
    }
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let deleter = std::thread::spawn({
        let done = done.clone();
        move || {
            let mut deleted = Vec::new();
            for n in (0..FILES).rev() {
                if done.load(Ordering::Relaxed) {
                    break;
                }
                let path = format!("knowledge/bulk/n{n:04}.md");
                fs::remove_file(root.join(&path)).unwrap();
                deleted.push((path, Instant::now()));
                std::thread::sleep(Duration::from_micros(30));
            }
            deleted
        }
    });
    let started = Instant::now();
    let report = index.rebuild().unwrap();
    let ended = Instant::now();
    done.store(true, Ordering::Relaxed);
    let deleted = deleter.join().unwrap();
    // Deletions in the last moments may follow the rebuild's last look: those are the
    // watcher's to report.
    let margin = ((ended - started) / 4).max(Duration::from_millis(20));
    let found = index
        .search(&SearchQuery {
            limit: 2 * FILES,
            ..query("zanzibarite")
        })
        .unwrap();
    let hits = paths(&found.results);
    let stale: Vec<&str> = deleted
        .iter()
        .filter(|(_, when)| *when + margin < ended)
        .map(|(path, _)| path.as_str())
        .filter(|path| hits.contains(path))
        .collect();
    assert_eq!(stale, Vec::<&str>::new(), "{report:?}");
}
