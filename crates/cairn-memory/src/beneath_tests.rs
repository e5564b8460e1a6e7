//! Tests of [`super`]: links planted in a workspace never take a read or a write out.

#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::*;

struct Planted {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: tempfile::TempDir,
}

impl Planted {
    /// A workspace with `notes/a.md`, and a folder outside it holding `secret`.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("notes")).unwrap();
        fs::write(root.join("notes/a.md"), "a\n").unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), "top secret\n").unwrap();
        Self {
            _dir: dir,
            root,
            outside,
        }
    }

    fn link(&self, target: impl AsRef<Path>, at: &str) {
        let at = self.root.join(at);
        fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, at).unwrap();
    }

    fn secret(&self) -> PathBuf {
        self.outside.path().join("secret")
    }

    fn secret_text(&self) -> String {
        fs::read_to_string(self.secret()).unwrap()
    }
}

fn escape(rel: &str) -> String {
    PathError::SymlinkEscape(rel.into()).to_string()
}

#[test]
fn reads_follow_links_inside_and_refuse_links_out() {
    let ws = Planted::new();
    ws.link("notes/a.md", "relative.md");
    ws.link(ws.root.join("notes/a.md"), "absolute.md");
    ws.link(ws.root.join("notes"), "inner");
    ws.link(ws.secret(), "MEMORY.md");
    ws.link(ws.outside.path(), "memory");
    for rel in ["notes/a.md", "relative.md", "absolute.md", "inner/a.md"] {
        assert_eq!(read_to_string(&ws.root, rel, 100).unwrap(), "a\n", "{rel}");
    }
    for rel in ["MEMORY.md", "memory/secret"] {
        let error = read(&ws.root, rel, 100).unwrap_err();
        assert_eq!(error.to_string(), escape(rel));
    }
    assert!(read(&ws.root, "notes/none.md", 100)
        .unwrap_err()
        .is_not_found());
    let error = entries(&ws.root, "memory").unwrap_err();
    assert_eq!(error.to_string(), escape("memory"));
}

#[test]
fn a_link_swapped_in_after_the_check_is_refused_at_open() {
    // What the resolver passed is opened through the root's capability: a folder that has
    // become a link out by then is not crossed.
    let ws = Planted::new();
    ws.link(ws.outside.path(), "swapped");
    let mut options = OpenOptions::new();
    options.read(true);
    let error = open_regular(&ws.root, "x", Path::new("swapped/secret"), &options).unwrap_err();
    assert_eq!(error.to_string(), escape("x"));
    let error = replace(&ws.root, "x", Path::new("swapped/secret"), b"owned").unwrap_err();
    assert_eq!(error.to_string(), escape("x"));
    assert_eq!(ws.secret_text(), "top secret\n");
}

#[test]
fn reads_take_regular_files_within_the_size_given() {
    let ws = Planted::new();
    let fifo = ws.root.join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    // Opening a pipe with no writer would block without O_NONBLOCK.
    let (tx, rx) = std::sync::mpsc::channel();
    let root = ws.root.clone();
    std::thread::spawn(move || {
        let _ = tx.send(read(&root, "pipe", 100).map(|_| ()));
    });
    let result = rx.recv_timeout(std::time::Duration::from_secs(10));
    assert!(
        matches!(result, Ok(Err(MemoryError::NotAFile(ref p))) if p == "pipe"),
        "{result:?}"
    );
    assert!(matches!(
        append(&ws.root, "pipe", b"x"),
        Err(MemoryError::NotAFile(_))
    ));
    assert!(matches!(
        read(&ws.root, "notes", 100),
        Err(MemoryError::NotAFile(_))
    ));
    let error = read(&ws.root, "notes/a.md", 1).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`notes/a.md` is too large: 2 bytes, more than the 1 read at most"
    );
    fs::write(ws.root.join("latin1.md"), b"caf\xe9").unwrap();
    let error = read_to_string(&ws.root, "latin1.md", 100).unwrap_err();
    assert_eq!(error.io_kind(), Some(io::ErrorKind::InvalidData));
}

#[test]
fn appends_create_the_file_and_never_reach_out() {
    let ws = Planted::new();
    append(&ws.root, "memory/2026-01-02.md", b"one\n").unwrap();
    let mut log = open_append(&ws.root, "memory/2026-01-02.md").unwrap();
    assert_eq!(log.existing(100).unwrap(), b"one\n");
    log.append(b"two\n").unwrap();
    assert_eq!(
        fs::read_to_string(ws.root.join("memory/2026-01-02.md")).unwrap(),
        "one\ntwo\n"
    );
    ws.link(ws.secret(), "memory/2026-01-03.md");
    ws.link(ws.outside.path(), "logs");
    for rel in ["memory/2026-01-03.md", "logs/secret", "logs/new.md"] {
        let error = append(&ws.root, rel, b"owned\n").unwrap_err();
        assert_eq!(error.to_string(), escape(rel));
    }
    assert_eq!(ws.secret_text(), "top secret\n");
    assert!(!ws.outside.path().join("new.md").exists());
    assert!(matches!(
        append(&ws.root, ".cairn/x.log", b"x"),
        Err(MemoryError::Path(PathError::Private(_)))
    ));
}

#[test]
fn atomic_writes_replace_where_a_link_inside_leads() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Planted::new();
    fs::set_permissions(
        ws.root.join("notes/a.md"),
        fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    ws.link("notes/a.md", "MEMORY.md");
    write_atomic(&ws.root, "MEMORY.md", b"new\n").unwrap();
    assert!(fs::symlink_metadata(ws.root.join("MEMORY.md"))
        .unwrap()
        .is_symlink());
    let target = ws.root.join("notes/a.md");
    assert_eq!(fs::read_to_string(&target).unwrap(), "new\n");
    assert_eq!(
        fs::metadata(&target).unwrap().permissions().mode() & 0o777,
        0o600
    );
    write_atomic(&ws.root, "memory/archive/x.md", b"kept").unwrap();
    let names: Vec<_> = fs::read_dir(ws.root.join("notes")).unwrap().collect();
    assert_eq!(names.len(), 1, "no temp file is left");
    ws.link(ws.secret(), "credentials.md");
    let error = write_atomic(&ws.root, "credentials.md", b"owned").unwrap_err();
    assert_eq!(error.to_string(), escape("credentials.md"));
    assert_eq!(ws.secret_text(), "top secret\n");
    assert!(matches!(
        write_atomic(&ws.root, ".cairn/x", b"x"),
        Err(MemoryError::Path(PathError::Private(_)))
    ));
}

#[test]
fn private_writes_stay_in_cairn_state() {
    let ws = Planted::new();
    assert!(!exists(&ws.root, ".cairn/tool-results/c1.txt").unwrap());
    write_private_atomic(&ws.root, ".cairn/tool-results/c1.txt", b"whole").unwrap();
    assert!(exists(&ws.root, ".cairn/tool-results/c1.txt").unwrap());
    assert_eq!(
        fs::read_to_string(ws.root.join(".cairn/tool-results/c1.txt")).unwrap(),
        "whole"
    );
    assert!(matches!(
        write_private_atomic(&ws.root, "notes/b.md", b"x"),
        Err(MemoryError::NotPrivate(_))
    ));
    fs::remove_dir_all(ws.root.join(".cairn/tool-results")).unwrap();
    ws.link(ws.outside.path(), ".cairn/tool-results");
    let rel = ".cairn/tool-results/c2.txt";
    let error = write_private_atomic(&ws.root, rel, b"x").unwrap_err();
    assert_eq!(error.to_string(), escape(rel));
    assert!(!ws.outside.path().join("c2.txt").exists());
    ws.link(ws.root.join("notes"), ".cairn/elsewhere");
    assert!(matches!(
        write_private_atomic(&ws.root, ".cairn/elsewhere/x.md", b"x"),
        Err(MemoryError::NotPrivate(_))
    ));
}

#[test]
fn renames_and_listings_stay_inside() {
    let ws = Planted::new();
    fs::create_dir_all(ws.root.join("memory")).unwrap();
    fs::write(ws.root.join("memory/2026-01-01.md"), "log").unwrap();
    ws.link("../notes/a.md", "memory/link.md");
    let mut listed = entries(&ws.root, "memory").unwrap();
    listed.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(
        listed,
        [
            Entry {
                name: "2026-01-01.md".into(),
                kind: EntryKind::File
            },
            Entry {
                name: "link.md".into(),
                kind: EntryKind::Symlink
            }
        ]
    );
    rename(
        &ws.root,
        "memory/2026-01-01.md",
        "memory/archive/2026-01-01.md",
    )
    .unwrap();
    assert!(exists(&ws.root, "memory/archive/2026-01-01.md").unwrap());
    assert!(!exists(&ws.root, "memory/2026-01-01.md").unwrap());
    ws.link(ws.outside.path(), "memory/out");
    let error = rename(&ws.root, "memory/archive/2026-01-01.md", "memory/out/x.md").unwrap_err();
    assert_eq!(error.to_string(), escape("memory/out/x.md"));
    assert!(exists(&ws.root, "memory/archive/2026-01-01.md").unwrap());
    ws.link(ws.secret(), "memory/secret-link.md");
    remove_file(&ws.root, "memory/secret-link.md").unwrap();
    assert!(!exists(&ws.root, "memory/secret-link.md").unwrap());
    let error = remove_file(&ws.root, "memory/out/secret").unwrap_err();
    assert_eq!(error.to_string(), escape("memory/out/secret"));
    assert_eq!(ws.secret_text(), "top secret\n");
    create_dir_all(&ws.root, "knowledge/deep/er").unwrap();
    assert!(ws.root.join("knowledge/deep/er").is_dir());
}

#[test]
fn a_move_never_replaces_what_is_at_its_destination() {
    let ws = Planted::new();
    fs::write(ws.root.join("notes/b.md"), "b, saved by the user\n").unwrap();
    let error = rename(&ws.root, "notes/a.md", "notes/b.md").unwrap_err();
    assert_eq!(
        error.io_kind(),
        Some(io::ErrorKind::AlreadyExists),
        "{error}"
    );
    assert_eq!(
        fs::read_to_string(ws.root.join("notes/a.md")).unwrap(),
        "a\n"
    );
    assert_eq!(
        fs::read_to_string(ws.root.join("notes/b.md")).unwrap(),
        "b, saved by the user\n"
    );
    // Nor a folder, nor a file in the trash's place on the way back.
    fs::create_dir_all(ws.root.join("notes/sub")).unwrap();
    assert!(rename(&ws.root, "notes/a.md", "notes/sub").is_err());
    fs::create_dir_all(ws.root.join(".cairn/trash/t1")).unwrap();
    fs::write(ws.root.join(".cairn/trash/t1/b.md"), "old b\n").unwrap();
    let error = rename_private(&ws.root, ".cairn/trash/t1/b.md", "notes/b.md").unwrap_err();
    assert_eq!(
        error.io_kind(),
        Some(io::ErrorKind::AlreadyExists),
        "{error}"
    );
    assert_eq!(
        fs::read_to_string(ws.root.join("notes/b.md")).unwrap(),
        "b, saved by the user\n"
    );
    rename(&ws.root, "notes/a.md", "notes/c.md").unwrap();
    assert_eq!(
        fs::read_to_string(ws.root.join("notes/c.md")).unwrap(),
        "a\n"
    );
}
