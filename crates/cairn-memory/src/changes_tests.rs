use super::*;
use std::fs;

fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open_or_create(dir.path()).unwrap();
    (dir, ws)
}

fn scope(run: &str) -> ChangeScope {
    ChangeScope {
        session_id: "s1".into(),
        run_id: run.into(),
    }
}

/// Records a change of `path` to `after` and makes it, as a tool does.
fn change(ws: &Workspace, run: &str, call: &str, path: &str, after: &str) -> ChangeNote {
    let full = ws.root().join(path);
    let before = fs::read(&full).ok();
    let made = Made {
        call_id: call,
        tool: "write_file",
        path,
        before: before.as_deref(),
        after: after.as_bytes(),
    };
    let note = record(ws, &scope(run), &made, Utc::now()).unwrap().unwrap();
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(full, after).unwrap();
    note
}

fn read(ws: &Workspace, path: &str) -> String {
    fs::read_to_string(ws.root().join(path)).unwrap()
}

#[test]
fn a_change_is_listed_with_its_texts_and_reverted() {
    let (_dir, ws) = workspace();
    fs::write(ws.root().join("knowledge/car.md"), "old text\n").unwrap();
    let note = change(&ws, "r1", "c1", "knowledge/car.md", "new text\n");

    let listed = list(&ws, "s1").unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].note, note);
    assert_eq!(listed[0].before.as_deref(), Some("old text\n"));
    assert_eq!(listed[0].after, "new text\n");
    assert_eq!(listed[0].state, ChangeState::Applied);

    let path = revert(&ws, "s1", std::slice::from_ref(&note.id), Utc::now()).unwrap();
    assert_eq!(path, "knowledge/car.md");
    assert_eq!(read(&ws, "knowledge/car.md"), "old text\n");
    assert_eq!(list(&ws, "s1").unwrap()[0].state, ChangeState::Reverted);
    // Twice is refused, and the file stays as it is.
    let err = revert(&ws, "s1", &[note.id], Utc::now()).unwrap_err();
    assert!(matches!(err, ChangeError::Reverted(_)), "{err}");
    assert_eq!(read(&ws, "knowledge/car.md"), "old text\n");
}

#[test]
fn a_file_edited_since_is_never_overwritten() {
    let (_dir, ws) = workspace();
    fs::write(ws.root().join("MEMORY.md"), "one\n").unwrap();
    let note = change(&ws, "r1", "c1", "MEMORY.md", "two\n");
    fs::write(ws.root().join("MEMORY.md"), "two\nthe user's line\n").unwrap();

    assert_eq!(list(&ws, "s1").unwrap()[0].state, ChangeState::ChangedSince);
    let err = revert(&ws, "s1", std::slice::from_ref(&note.id), Utc::now()).unwrap_err();
    assert!(matches!(err, ChangeError::ChangedSince(_)), "{err}");
    assert!(err.to_string().contains("changed since"), "{err}");
    assert_eq!(read(&ws, "MEMORY.md"), "two\nthe user's line\n");

    // Removed since: also refused, nothing comes back from the dead.
    fs::remove_file(ws.root().join("MEMORY.md")).unwrap();
    let err = revert(&ws, "s1", &[note.id], Utc::now()).unwrap_err();
    assert!(matches!(err, ChangeError::ChangedSince(_)), "{err}");
    assert!(!ws.root().join("MEMORY.md").exists());
}

#[test]
fn changes_of_a_run_revert_together_or_newest_first() {
    let (_dir, ws) = workspace();
    fs::write(ws.root().join("knowledge/a.md"), "v0").unwrap();
    let first = change(&ws, "r1", "c1", "knowledge/a.md", "v1");
    let second = change(&ws, "r1", "c2", "knowledge/a.md", "v2");

    // The older one alone would undo the newer one too: refused.
    let err = revert(&ws, "s1", std::slice::from_ref(&first.id), Utc::now()).unwrap_err();
    assert!(matches!(err, ChangeError::ChangedSince(_)), "{err}");
    assert_eq!(read(&ws, "knowledge/a.md"), "v2");

    // Both at once: back to before the first.
    let ids = [second.id.clone(), first.id.clone()];
    revert(&ws, "s1", &ids, Utc::now()).unwrap();
    assert_eq!(read(&ws, "knowledge/a.md"), "v0");
    assert!(list(&ws, "s1")
        .unwrap()
        .iter()
        .all(|c| c.state == ChangeState::Reverted));
}

#[test]
fn an_edit_between_two_changes_stops_reverting_them_together() {
    let (_dir, ws) = workspace();
    fs::write(ws.root().join("knowledge/a.md"), "v0").unwrap();
    let first = change(&ws, "r1", "c1", "knowledge/a.md", "v1");
    fs::write(ws.root().join("knowledge/a.md"), "v1 and the user's edit").unwrap();
    let second = change(&ws, "r1", "c2", "knowledge/a.md", "v2");

    let err = revert(&ws, "s1", &[first.id, second.id.clone()], Utc::now()).unwrap_err();
    assert!(matches!(err, ChangeError::Gap(_)), "{err}");
    assert_eq!(read(&ws, "knowledge/a.md"), "v2");
    // One at a time, newest first, keeps the user's edit.
    revert(&ws, "s1", &[second.id], Utc::now()).unwrap();
    assert_eq!(read(&ws, "knowledge/a.md"), "v1 and the user's edit");
}

#[test]
fn a_new_file_is_reverted_into_the_trash() {
    let (_dir, ws) = workspace();
    let note = change(&ws, "r1", "c1", "knowledge/new/idea.md", "# Idea\n");
    assert_eq!(list(&ws, "s1").unwrap()[0].before, None);
    revert(&ws, "s1", &[note.id], Utc::now()).unwrap();
    assert!(!ws.root().join("knowledge/new/idea.md").exists());
    let trashed = trash::list(&ws).unwrap();
    assert_eq!(trashed.len(), 1);
    assert_eq!(trashed[0].path, "knowledge/new/idea.md");
}

#[test]
fn bytes_that_are_not_text_come_back_exactly() {
    let (_dir, ws) = workspace();
    let bytes = [0xff_u8, 0x00, 0xfe, b'\n', 0x80];
    fs::write(ws.root().join("knowledge/blob.bin"), bytes).unwrap();
    let note = change(&ws, "r1", "c1", "knowledge/blob.bin", "text now");
    assert!(list(&ws, "s1").unwrap()[0].before.is_some());
    revert(&ws, "s1", &[note.id], Utc::now()).unwrap();
    assert_eq!(
        fs::read(ws.root().join("knowledge/blob.bin")).unwrap(),
        bytes
    );
}

#[test]
fn forged_notes_and_ids_are_refused() {
    let (_dir, ws) = workspace();
    let dir = ws.root().join(CHANGES_DIR).join("s1");
    fs::create_dir_all(&dir).unwrap();
    // A note planted to "revert" the catalog, and one filed under another id.
    let forged = |id: &str, path: &str| {
        format!(
            r#"{{"id":"{id}","session_id":"s1","run_id":"r","call_id":"c","tool":"write_file",
            "path":"{path}","existed":true,"made_at":"2026-01-01T00:00:00Z"}}"#
        )
    };
    fs::write(dir.join("x1.json"), forged("x1", ".cairn/state.db")).unwrap();
    fs::write(dir.join("x1.before"), "evil").unwrap();
    fs::write(dir.join("x1.after"), "").unwrap();
    fs::write(dir.join("x2.json"), forged("x3", "MEMORY.md")).unwrap();
    for (session, id) in [("s1", "x1"), ("s1", "x2"), ("s1", "../x1"), ("..", "x1")] {
        let err = revert(&ws, session, &[id.to_string()], Utc::now()).unwrap_err();
        assert!(
            matches!(err, ChangeError::Unknown(_)),
            "{session}/{id}: {err}"
        );
    }
    assert!(list(&ws, "s1").unwrap().is_empty());
    assert!(list(&ws, "../s1").unwrap().is_empty());
    let err = revert(&ws, "s1", &[], Utc::now()).unwrap_err();
    assert!(matches!(err, ChangeError::Nothing), "{err}");
}

#[test]
fn changes_to_two_files_are_not_reverted_as_one() {
    let (_dir, ws) = workspace();
    let a = change(&ws, "r1", "c1", "knowledge/a.md", "a");
    let b = change(&ws, "r1", "c2", "knowledge/b.md", "b");
    let err = revert(&ws, "s1", &[a.id, b.id], Utc::now()).unwrap_err();
    assert!(matches!(err, ChangeError::Mixed), "{err}");
    assert_eq!(read(&ws, "knowledge/a.md"), "a");
}

#[test]
fn texts_too_large_are_not_kept() {
    let (_dir, ws) = workspace();
    let big = vec![b'x'; MAX_KEPT_BYTES + 1];
    let made = Made {
        call_id: "c1",
        tool: "write_file",
        path: "knowledge/big.txt",
        before: None,
        after: &big,
    };
    assert_eq!(record(&ws, &scope("r1"), &made, Utc::now()).unwrap(), None);
    assert!(list(&ws, "s1").unwrap().is_empty());
}

#[test]
fn changes_older_than_the_kept_days_are_forgotten_and_the_rest_stay() {
    let (_dir, ws) = workspace();
    let old = change(&ws, "r1", "c1", "knowledge/old.md", "old\n");
    let new = change(&ws, "r2", "c2", "knowledge/new.md", "new\n");
    // The first was made 40 days ago.
    let mut aged = old.clone();
    aged.made_at = Utc::now() - chrono::Duration::days(40);
    write_note(&ws, &aged).unwrap();
    assert_eq!(prune(&ws, KEEP_DAYS, Utc::now()).unwrap(), 1);
    let left: Vec<String> = list(&ws, "s1")
        .unwrap()
        .into_iter()
        .map(|c| c.note.id)
        .collect();
    assert_eq!(left, vec![new.id]);
    for suffix in ["json", "after"] {
        assert!(
            !ws.root().join(part("s1", &old.id, suffix)).exists(),
            "{suffix}"
        );
    }
    // The files themselves are the user's: untouched.
    assert_eq!(read(&ws, "knowledge/old.md"), "old\n");
    assert_eq!(prune(&ws, KEEP_DAYS, Utc::now()).unwrap(), 0);
}
