//! An index that is corrupt, deleted, of another version, cut short by a crash or shared with another process.

use super::*;

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

/// Files deleted while a rebuild reads the workspace, after it read them, are not found
/// once it is done, with no watcher to report them. The rebuild is held while it reads
/// one file (those before it in path order are read), the files up to that one are
/// deleted, and it goes on.
#[test]
fn files_deleted_during_a_rebuild_leave_no_stale_hits() {
    const FILES: usize = 40;
    /// The file the rebuild is reading when the files are deleted.
    const READING: usize = 20;
    let (_dir, ws) = fixture();
    let root = ws.root().to_path_buf();
    let path = |n: usize| format!("knowledge/bulk/n{n:02}.md");
    let line = |n: usize| format!("The zanzibarite ledger, entry {n}.");
    for n in 0..FILES {
        write(&root, &path(n), &format!("# Note {n}\n\n{}\n", line(n)));
    }
    let pause = Pause::at_line(&line(READING));
    let index = MemoryIndex::open(
        &ws,
        IndexOptions {
            embedder: Some(pause.embedder()),
            ..options()
        },
    )
    .unwrap();
    index.sync().unwrap();
    let paused = pause.arm();
    let rebuild = std::thread::spawn({
        let index = index.clone();
        move || index.rebuild()
    });
    paused.wait();
    let deleted: Vec<String> = (0..=READING).map(path).collect();
    for path in &deleted {
        fs::remove_file(root.join(path)).unwrap();
    }
    assert!(
        !rebuild.is_finished(),
        "the rebuild ended before the deletions"
    );
    paused.resume();
    let report = rebuild.join().unwrap().unwrap();
    let found = index
        .search(&SearchQuery {
            limit: 2 * FILES,
            mode: Some(SearchMode::Keyword),
            ..query("zanzibarite")
        })
        .unwrap();
    let mut hits = paths(&found.results);
    hits.sort_unstable();
    hits.dedup();
    let stale: Vec<&str> = hits
        .iter()
        .copied()
        .filter(|hit| deleted.iter().any(|path| path == hit))
        .collect();
    assert_eq!(
        stale,
        Vec::<&str>::new(),
        "deleted during the rebuild, still found"
    );
    let kept: Vec<String> = (READING + 1..FILES).map(path).collect();
    assert_eq!(hits, kept);
    assert_eq!(
        report.files,
        FIXTURE_FILES + kept.len() as u64,
        "{report:?}"
    );
}
