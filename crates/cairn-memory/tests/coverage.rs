//! What the index reaches: every note in the workspace wherever it is, minus what the
//! ignore files and `[memory] exclude` leave out, within the size limits, kept current by
//! the watcher (shared with other subscribers).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cairn_memory::index::LONG_PASS;
use cairn_memory::watch::{Batch, Change};
use cairn_memory::{
    Corpus, FolderWatch, IndexError, IndexOptions, MemoryIndex, SearchMode, SearchQuery, Workspace,
};
use cairn_testkit::write;

#[path = "support/pause.rs"]
mod pause;

use pause::Pause;

fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
    (dir, ws)
}

fn options() -> IndexOptions {
    IndexOptions {
        debounce: Duration::from_millis(50),
        ..IndexOptions::default()
    }
}

fn found(index: &MemoryIndex, text: &str) -> Vec<String> {
    let mut paths: Vec<String> = index
        .search(&SearchQuery::new(text))
        .unwrap()
        .results
        .into_iter()
        .map(|h| h.path)
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Waits until `text` finds exactly `paths`.
fn eventually(index: &MemoryIndex, text: &str, paths: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = found(index, text);
        if now == paths {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "`{text}` finds {now:?}, not {paths:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn notes_anywhere_in_the_workspace_are_found_as_notes() {
    let (_dir, ws) = workspace();
    let root = ws.root();
    write(
        root,
        "projects/garden.md",
        "# Garden\nPlant the quince by the wall.\n",
    );
    write(root, "todo.txt", "Call the quince nursery.\n");
    write(root, "projects/site/app.rs", "// quince\n");
    write(root, ".obsidian/cache.md", "quince\n");
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    assert_eq!(found(&index, "quince"), ["projects/garden.md", "todo.txt"]);
    let hit = &index
        .search(&SearchQuery::new("quince wall"))
        .unwrap()
        .results[0];
    assert_eq!(hit.source, "note");
    // Notes are in the knowledge corpus, not in memory.
    let memory = index
        .search(&SearchQuery {
            corpus: Corpus::Memory,
            ..SearchQuery::new("quince")
        })
        .unwrap();
    assert!(memory.results.is_empty());
}

#[test]
fn ignore_files_and_exclude_leave_files_out_but_never_the_layout() {
    let (_dir, ws) = workspace();
    let root = ws.root();
    write(root, ".gitignore", "sessions/\nMEMORY.md\nbuild/\n");
    write(
        root,
        "MEMORY.md",
        "# Memory\n- The heron nests by the pond.\n",
    );
    write(root, "build/out.md", "heron build output\n");
    write(root, "notes/heron.md", "A heron stood still.\n");
    write(root, "notes/.cairnignore", "private-*.md\n");
    write(root, "notes/private-diary.md", "The heron again.\n");
    write(root, "drafts/heron.md", "Draft about a heron.\n");
    let index = MemoryIndex::open(
        &ws,
        IndexOptions {
            exclude: vec!["drafts/".into()],
            ..options()
        },
    )
    .unwrap();
    let report = index.sync().unwrap();
    assert_eq!(found(&index, "heron"), ["MEMORY.md", "notes/heron.md"]);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
}

#[test]
fn a_bad_exclude_pattern_is_refused_clearly() {
    let (_dir, ws) = workspace();
    let error = MemoryIndex::open(
        &ws,
        IndexOptions {
            exclude: vec!["notes/{a,b".into()],
            ..options()
        },
    )
    .err()
    .unwrap();
    assert!(matches!(error, IndexError::Settings(_)), "{error}");
    assert!(error.to_string().contains("notes/{a,b"), "{error}");
}

#[test]
fn the_watcher_follows_notes_anywhere_and_ignore_file_edits() {
    let (_dir, ws) = workspace();
    let root = ws.root();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let _watch = index.watch().unwrap();
    index.sync().unwrap();
    write(
        root,
        "trips/croatia.md",
        "# Croatia\nThe ferry to Hvar leaves at nine.\n",
    );
    eventually(&index, "ferry", &["trips/croatia.md"]);
    // An ignore file written later takes the note out; removing it brings it back.
    write(root, "trips/.ignore", "croatia.md\n");
    eventually(&index, "ferry", &[]);
    fs::remove_file(root.join("trips/.ignore")).unwrap();
    eventually(&index, "ferry", &["trips/croatia.md"]);
    // A folder moved away takes its notes with it.
    fs::rename(root.join("trips"), root.join(".trips-old")).unwrap();
    eventually(&index, "ferry", &[]);
}

#[test]
fn notes_over_the_size_limit_are_skipped_unread_with_the_reason() {
    let (_dir, ws) = workspace();
    let root = ws.root();
    let line = "The lighthouse keeper logs the weather every hour.\n";
    write(root, "logs/big.md", &line.repeat(120_000)); // about 6 MB
    write(root, "logs/small.md", line);
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let report = index.sync().unwrap();
    assert_eq!(found(&index, "lighthouse"), ["logs/small.md"]);
    let (path, why) = &report.not_indexed[0];
    assert_eq!(path, "logs/big.md");
    assert!(why.contains("too large") && why.contains("5 MB"), "{why}");
    drop(index);
    let index = MemoryIndex::open(
        &ws,
        IndexOptions {
            max_text_bytes: 10 << 20,
            ..options()
        },
    )
    .unwrap();
    let report = index.sync().unwrap();
    assert!(report.not_indexed.is_empty(), "{:?}", report.not_indexed);
    assert!(found(&index, "lighthouse").contains(&"logs/big.md".to_string()));
}

#[test]
fn documents_are_searched_with_their_pages_and_broken_ones_say_why() {
    use cairn_testkit::documents;
    let (_dir, ws) = workspace();
    let root = ws.root();
    let put = |path: &str, bytes: Vec<u8>| {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    };
    put(
        "papers/quinces.pdf",
        documents::pdf(&["Orchard notes", "Quince trees need a frost to set fruit."]),
    );
    put(
        "knowledge/plan.docx",
        documents::docx(&[(Some(1), "Plan"), (None, "Prune the medlar in February.")]),
    );
    put(
        "books/sea.epub",
        documents::epub(&[("Harbour", "The cormorant dries its wings.")]),
    );
    write(
        root,
        "site/trip.html",
        "<html><body><p>The ferry to Vis leaves at noon.</p></body></html>",
    );
    put("papers/broken.pdf", b"%PDF-1.7\nnot a real pdf".to_vec());
    put("papers/scan.pdf", documents::pdf(&["", ""]));
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let report = index.sync().unwrap();
    let hit = |text: &str| index.search(&SearchQuery::new(text)).unwrap().results;
    let quince = hit("frost quince");
    assert_eq!(quince[0].path, "papers/quinces.pdf");
    assert_eq!(quince[0].page, Some(2));
    assert_eq!(quince[0].citation, "papers/quinces.pdf#page=2");
    assert_eq!(hit("medlar")[0].path, "knowledge/plan.docx");
    assert_eq!(hit("medlar")[0].heading, "Plan");
    assert_eq!(hit("cormorant")[0].path, "books/sea.epub");
    assert_eq!(hit("cormorant")[0].heading, "Harbour");
    assert_eq!(hit("ferry Vis")[0].path, "site/trip.html");
    let reasons: std::collections::HashMap<_, _> = report.not_indexed.iter().cloned().collect();
    assert!(
        reasons["papers/broken.pdf"].contains("cannot be read"),
        "{reasons:?}"
    );
    assert!(
        reasons["papers/scan.pdf"].contains("no text layer"),
        "{reasons:?}"
    );
    // Touched but unchanged, nothing is read again after a restart.
    drop(index);
    for path in [
        "papers/quinces.pdf",
        "knowledge/plan.docx",
        "papers/broken.pdf",
    ] {
        let file = fs::File::options()
            .append(true)
            .open(root.join(path))
            .unwrap();
        file.set_modified(std::time::SystemTime::now() + Duration::from_secs(5))
            .unwrap();
    }
    let index = MemoryIndex::open(&ws, options()).unwrap();
    assert_eq!(index.sync().unwrap().changed, 0);
    assert_eq!(
        index
            .search(&SearchQuery::new("medlar"))
            .unwrap()
            .results
            .len(),
        1
    );
}

/// Every entry under `dir`, hidden ones too, with its size.
fn listing(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).unwrap().flatten() {
            let meta = fs::symlink_metadata(entry.path()).unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            }
            out.push((entry.path().display().to_string(), meta.len()));
        }
    }
    out.sort();
    out
}

#[test]
fn a_folder_outside_is_searched_in_place_and_never_changed() {
    let (dir, ws) = workspace();
    let notes = dir.path().join("Notes");
    write(
        &notes,
        "trips/croatia.md",
        "# Croatia\nThe ferry to Hvar leaves at nine.\n",
    );
    write(&notes, "trips/.gitignore", "private.md\n");
    write(&notes, "trips/private.md", "The ferry diary.\n");
    write(&notes, ".obsidian/workspace.md", "ferry\n");
    let secret = dir.path().join("secret");
    write(&secret, "ferry-codes.md", "The ferry codes are 1234.\n");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&secret, notes.join("linked")).unwrap();
        std::os::unix::fs::symlink(secret.join("ferry-codes.md"), notes.join("codes.md")).unwrap();
    }
    let before = listing(&notes);
    let ws = ws.with_folders(&[notes.clone(), dir.path().join("Gone")]);
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let _watch = index.watch().unwrap();
    index.sync().unwrap();
    let hits = index.search(&SearchQuery::new("ferry")).unwrap().results;
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].path, "Notes/trips/croatia.md");
    assert_eq!(hits[0].source, "note");
    assert_eq!(
        hits[0].folder.as_deref(),
        Some(&*notes.canonicalize().unwrap().to_string_lossy())
    );
    // A folder that is not there is told, not fatal.
    let status = index.status();
    assert_eq!(status.folders_unavailable.len(), 1, "{status:?}");
    assert!(status.folders_unavailable[0].contains("Gone: it does not exist"));
    // Edits in the folder are followed.
    write(&notes, "trips/vis.md", "The ferry to Vis leaves at noon.\n");
    eventually(
        &index,
        "ferry",
        &["Notes/trips/croatia.md", "Notes/trips/vis.md"],
    );
    fs::remove_file(notes.join("trips/vis.md")).unwrap();
    eventually(&index, "ferry", &["Notes/trips/croatia.md"]);
    // The report names the folder's files under its name.
    let report = index.files_report().unwrap();
    let paths: Vec<&str> = report.files.iter().map(|f| f.path.as_str()).collect();
    assert!(paths.contains(&"Notes/trips/croatia.md"), "{paths:?}");
    assert!(paths.contains(&"Notes/linked"), "{paths:?}");
    drop(_watch);
    drop(index);
    // Nothing was made or changed inside it.
    assert_eq!(listing(&notes), before);
}

/// The batches `rx` has until each of `paths` was named, keeping the one that named it.
fn batches_naming(rx: &mpsc::Receiver<Batch>, paths: &[&str]) -> Vec<Batch> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut named: Vec<Option<Batch>> = vec![None; paths.len()];
    while named.iter().any(Option::is_none) {
        let left = deadline.saturating_duration_since(Instant::now());
        let batch = rx.recv_timeout(left).expect("no batch named the files");
        for (path, slot) in paths.iter().zip(&mut named) {
            if batch.changes.iter().any(|c| c.path == *path) {
                *slot = Some(batch.clone());
            }
        }
    }
    named.into_iter().flatten().collect()
}

#[test]
fn one_folder_watch_feeds_the_index_and_another_subscriber_until_it_unsubscribes() {
    let (dir, ws) = workspace();
    let notes = dir.path().join("Notes");
    fs::create_dir_all(&notes).unwrap();
    // A file written at once into a folder just made may come before its watch does.
    fs::create_dir_all(ws.root().join("trips")).unwrap();
    let ws = ws.with_folders(std::slice::from_ref(&notes));
    let notes = ws.folders()[0].root.clone();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    let watcher = FolderWatch::start(ws.root(), ws.folders(), Duration::from_millis(50)).unwrap();
    let _follow = index.follow(&watcher);
    index.sync().unwrap();
    let (tx, rx) = mpsc::channel();
    let page = watcher.subscribe(move |batch| {
        let _ = tx.send(batch.clone());
    });
    write(
        ws.root(),
        "trips/croatia.md",
        "The ferry to Hvar leaves at nine.\n",
    );
    write(&notes, "vis.md", "The ferry to Vis leaves at noon.\n");
    eventually(&index, "ferry", &["Notes/vis.md", "trips/croatia.md"]);
    let named = batches_naming(&rx, &["trips/croatia.md", "Notes/vis.md"]);
    assert_eq!(named[0].folder, None);
    assert_eq!(named[1].folder.as_deref(), Some("Notes"));
    let change = named[1].changes.iter().find(|c| c.path == "Notes/vis.md");
    assert_eq!(
        change,
        Some(&Change {
            path: "Notes/vis.md".into(),
            file: notes.join("vis.md"),
            removed_folder: false,
        })
    );
    // Unsubscribed: the index still follows, the other subscriber hears nothing more.
    drop(page);
    write(
        ws.root(),
        "trips/lastovo.md",
        "The ferry to Lastovo is late.\n",
    );
    eventually(
        &index,
        "ferry",
        &["Notes/vis.md", "trips/croatia.md", "trips/lastovo.md"],
    );
    let after: Vec<Batch> = rx.try_iter().collect();
    assert!(
        after
            .iter()
            .all(|b| b.changes.iter().all(|c| !c.path.contains("lastovo"))),
        "{after:?}"
    );
    // Its subscriber is gone with it (its end of the channel was dropped).
    assert_eq!(rx.try_recv(), Err(mpsc::TryRecvError::Disconnected));
}

/// A search made while a whole pass has run a while (a large folder's first index)
/// answers from what is indexed so far, saying it is stale; it does not sit out the
/// catch-up wait, meant for a few files just saved.
#[test]
fn a_search_during_a_long_whole_pass_answers_without_waiting_for_it() {
    let (_dir, ws) = workspace();
    for i in 0..200 {
        write(
            ws.root(),
            &format!("notes/{}/n{i}.md", i / 100),
            &format!("# Note {i}\n\nharbour tide {i}\n"),
        );
    }
    let pause = Pause::at_line("harbour tide 150");
    let catch_up_wait = Duration::from_secs(30);
    let index = MemoryIndex::open(
        &ws,
        IndexOptions {
            catch_up_wait,
            embedder: Some(pause.embedder()),
            ..options()
        },
    )
    .unwrap();
    let paused = pause.arm();
    index.sync_in_background().unwrap();
    // The pass is held halfway through its files, however long the search takes to come.
    paused.wait();
    std::thread::sleep(LONG_PASS);
    let harbour = SearchQuery {
        mode: Some(SearchMode::Keyword),
        ..SearchQuery::new("harbour")
    };
    let asked = Instant::now();
    let results = index.search(&harbour).unwrap();
    let waited = asked.elapsed();
    assert!(results.stale, "the search waited for the whole pass");
    assert!(
        waited < catch_up_wait,
        "the search sat out the catch-up wait ({waited:?})"
    );
    paused.resume();
    assert!(index.wait_current(Duration::from_secs(120)));
    let results = index.search(&harbour).unwrap();
    assert!(!results.stale);
    assert_eq!(results.results.len(), 10, "the pass indexed the notes");
}
