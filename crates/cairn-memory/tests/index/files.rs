//! Files that change, vanish, are huge, binary or hostile, and edits made outside.

use super::*;

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
