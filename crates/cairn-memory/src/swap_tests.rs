//! Tests of [`super::replace_if`]: a save made by someone else is never overwritten by a
//! replacement made from an older text.

#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;

fn root() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    fs::write(root.join("MEMORY.md"), "v1\n").unwrap();
    (dir, root)
}

/// Only MEMORY.md is left: no temp file, no displaced copy.
fn only_memory(root: &Path) {
    let names: Vec<String> = fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["MEMORY.md"]);
}

#[test]
fn an_unchanged_file_is_replaced_and_a_changed_one_kept() {
    let (_dir, root) = root();
    let swapped = replace_if(&root, "MEMORY.md", b"v2\n", |old| old == Some(b"v1\n")).unwrap();
    assert_eq!(swapped, Swap::Replaced);
    assert_eq!(fs::read_to_string(root.join("MEMORY.md")).unwrap(), "v2\n");
    let kept = replace_if(&root, "MEMORY.md", b"v3\n", |old| old == Some(b"v1\n")).unwrap();
    assert_eq!(kept, Swap::Kept);
    assert_eq!(fs::read_to_string(root.join("MEMORY.md")).unwrap(), "v2\n");
    only_memory(&root);
}

/// Runs `save` when the check is called the second time: after the names are exchanged,
/// while the old file is judged.
fn during_judgement<'a>(
    expected: &'a [u8],
    save: impl Fn() + 'a,
) -> impl Fn(Option<&[u8]>) -> bool + 'a {
    let calls = std::cell::Cell::new(0);
    move |old| {
        calls.set(calls.get() + 1);
        if calls.get() == 2 {
            save();
        }
        old == Some(expected)
    }
}

/// The moment the old code lost edits: a save landing after the check and before the
/// rename. Here the check runs on the file that was replaced, so a save landing while it
/// runs is made over the new file and stays.
#[test]
fn a_save_landing_while_the_replacement_is_judged_is_not_lost() {
    let (_dir, root) = root();
    let path = root.join("MEMORY.md");
    let in_place = || fs::write(&path, "the user's edit, in place\n").unwrap();
    let swapped = replace_if(
        &root,
        "MEMORY.md",
        b"consolidated\n",
        during_judgement(b"v1\n", in_place),
    )
    .unwrap();
    assert_eq!(swapped, Swap::Replaced);
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "the user's edit, in place\n"
    );

    // An editor that saves by renaming a file of its own over MEMORY.md.
    let renamed = || {
        fs::write(root.join(".edit.tmp"), "the user's edit, renamed\n").unwrap();
        fs::rename(root.join(".edit.tmp"), &path).unwrap();
    };
    let swapped = replace_if(
        &root,
        "MEMORY.md",
        b"consolidated\n",
        during_judgement(b"the user's edit, in place\n", renamed),
    )
    .unwrap();
    assert_eq!(swapped, Swap::Replaced);
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "the user's edit, renamed\n"
    );
    only_memory(&root);
}

/// A program that opened the old file before the exchange and writes to it after it was
/// judged: the old file, with that write, gets its name back.
#[test]
fn a_save_written_into_the_old_file_after_the_judgement_gets_its_name_back() {
    use std::io::Write;
    let (_dir, root) = root();
    let path = root.join("MEMORY.md");
    let editor = std::cell::RefCell::new(fs::OpenOptions::new().write(true).open(&path).unwrap());
    let late = || {
        let mut file = editor.borrow_mut();
        file.write_all(b"v1 and the user's late edit\n").unwrap();
    };
    let swapped = replace_if(
        &root,
        "MEMORY.md",
        b"consolidated\n",
        during_judgement(b"v1\n", late),
    )
    .unwrap();
    assert_eq!(swapped, Swap::Kept);
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "v1 and the user's late edit\n"
    );
    only_memory(&root);
}

#[test]
fn a_missing_file_is_made_only_when_none_was_expected() {
    let (_dir, root) = root();
    fs::remove_file(root.join("MEMORY.md")).unwrap();
    let kept = replace_if(&root, "MEMORY.md", b"x\n", |old| old == Some(b"v1\n")).unwrap();
    assert_eq!(kept, Swap::Kept);
    assert!(!root.join("MEMORY.md").exists());
    let made = replace_if(&root, "MEMORY.md", b"new\n", |old| old.is_none()).unwrap();
    assert_eq!(made, Swap::Replaced);
    assert_eq!(fs::read_to_string(root.join("MEMORY.md")).unwrap(), "new\n");
    only_memory(&root);
}

#[test]
fn the_old_files_permissions_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, root) = root();
    let path = root.join("MEMORY.md");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    replace_if(&root, "MEMORY.md", b"v2\n", |_| true).unwrap();
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o640
    );
}
