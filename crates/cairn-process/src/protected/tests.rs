//! What is found, by both ways of finding it (watching and walking), each in a workspace
//! of its own; changes are made right before a look, with no pause.

use super::*;
use pretty_assertions::assert_eq;

/// One way of finding the entries of one workspace, with its memory.
struct Look {
    _dir: tempfile::TempDir,
    root: PathBuf,
    finder: Finder,
}

impl Look {
    /// The protected entries now, relative to the root; a watch must still be watching.
    fn names(&mut self) -> Vec<String> {
        let rules = self.finder.rules.clone();
        let entries = self.finder.entries(&self.root, &rules);
        if let How::Walking(_, why) = &self.finder.how {
            assert_eq!(why, "asked", "the watch gave up");
        }
        entries
            .iter()
            .map(|e| {
                e.path
                    .strip_prefix(&self.root)
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect()
    }

    fn has(&mut self, name: &str) -> bool {
        self.names().iter().any(|n| n == name)
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn make(&self, folders: &[&str], files: &[&str]) {
        for folder in folders {
            std::fs::create_dir_all(self.path(folder)).unwrap();
        }
        for file in files {
            std::fs::write(self.path(file), "x").unwrap();
        }
    }

    fn chmod(&self, rel: &str, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(self.path(rel), std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

/// A fresh workspace for each way of finding its entries under `rules`.
fn ways(rules: &Rules) -> Vec<Look> {
    let look = |how: How| {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let finder = Finder {
            rules: rules.clone(),
            how,
        };
        Look {
            _dir: dir,
            root,
            finder,
        }
    };
    let mut all = vec![look(How::Walking(walk::Walk::default(), "asked".into()))];
    #[cfg(target_os = "linux")]
    all.push(look(How::Unknown));
    all
}

fn executables() -> Rules {
    Rules::new(&[], true).unwrap()
}

#[test]
fn dot_entries_at_any_depth_and_the_named_ones_at_the_root() {
    for mut look in ways(&Rules::default()) {
        look.make(
            &[
                ".git/objects",
                "projects/app/.git/hooks",
                "projects/app/src",
                "notes/deep/er",
                "sessions/x",
                "Skills",
                "notes/skills",
            ],
            &[
                "AGENTS.md",
                "notes/deep/er/.envrc",
                "notes/AGENTS.md",
                "notes/a.md",
            ],
        );
        let expected = [
            ".git",
            "AGENTS.md",
            "Skills",
            "notes/deep/er/.envrc",
            "projects/app/.git",
            "sessions",
        ];
        assert_eq!(look.names(), expected);
        // Remembered, and a new one is still found by the next look.
        look.make(&[], &["projects/app/src/.env"]);
        assert!(look.has("projects/app/src/.env"));
        std::fs::remove_dir_all(look.path("projects")).unwrap();
        assert_eq!(
            look.names(),
            [
                ".git",
                "AGENTS.md",
                "Skills",
                "notes/deep/er/.envrc",
                "sessions"
            ]
        );
    }
}

#[test]
fn executables_anywhere_when_asked_and_not_inside_what_is_bound_whole() {
    for mut look in ways(&executables()) {
        look.make(
            &["tools/deep/er", ".git/hooks", "notes"],
            &[
                "tools/deep/er/run",
                ".git/hooks/pre-commit",
                "notes/a.md",
                "build.sh",
            ],
        );
        look.chmod("tools/deep/er/run", 0o700);
        look.chmod(".git/hooks/pre-commit", 0o755);
        look.chmod("build.sh", 0o755);
        std::os::unix::fs::symlink("build.sh", look.path("notes/link")).unwrap();
        assert_eq!(look.names(), [".git", "build.sh", "tools/deep/er/run"]);
    }
    for mut look in ways(&Rules::default()) {
        look.make(&[], &["build.sh"]);
        look.chmod("build.sh", 0o755);
        assert_eq!(look.names(), Vec::<String>::new());
    }
}

#[test]
fn a_chmod_just_before_a_look_is_seen() {
    for mut look in ways(&executables()) {
        look.make(&["a/b/c"], &["a/b/c/tool", "a/b/c/note.md"]);
        assert_eq!(look.names(), Vec::<String>::new());
        for _ in 0..50 {
            look.chmod("a/b/c/tool", 0o755);
            assert_eq!(look.names(), ["a/b/c/tool"]);
            look.chmod("a/b/c/tool", 0o644);
            assert_eq!(look.names(), Vec::<String>::new());
        }
    }
}

#[test]
fn a_file_made_executable_under_another_name_is_seen_under_both() {
    for mut look in ways(&executables()) {
        look.make(&["sub"], &["tool"]);
        std::fs::hard_link(look.path("tool"), look.path("sub/alias")).unwrap();
        assert_eq!(look.names(), Vec::<String>::new());
        look.chmod("sub/alias", 0o755);
        assert_eq!(look.names(), ["sub/alias", "tool"]);
    }
}

#[test]
fn entries_made_or_renamed_just_before_a_look_are_seen() {
    let outside = tempfile::tempdir().unwrap();
    for (way, mut look) in ways(&executables()).into_iter().enumerate() {
        look.make(&["notes"], &["notes/x.md"]);
        assert_eq!(look.names(), Vec::<String>::new());
        for n in 0..30 {
            // A new folder tree with a dot entry at its bottom.
            look.make(&[&format!("new{n}/a/b")], &[&format!("new{n}/a/b/.envrc")]);
            assert!(look.has(&format!("new{n}/a/b/.envrc")), "round {n}");
            // Renamed to a dot name, and back.
            std::fs::rename(look.path("notes/x.md"), look.path("notes/.x.md")).unwrap();
            assert!(look.has("notes/.x.md"), "round {n}");
            std::fs::rename(look.path("notes/.x.md"), look.path("notes/x.md")).unwrap();
            assert!(!look.has("notes/.x.md"), "round {n}");
        }
        // A folder moved in from outside, moved within, and moved out.
        let repo = outside.path().join(format!("repo-{way}"));
        std::fs::create_dir_all(repo.join("src/.git")).unwrap();
        std::fs::rename(&repo, look.path("notes/repo")).unwrap();
        assert!(look.has("notes/repo/src/.git"));
        std::fs::rename(look.path("notes"), look.path("moved")).unwrap();
        let names = look.names();
        assert!(
            names.contains(&"moved/repo/src/.git".to_string()),
            "{names:?}"
        );
        assert!(!names.iter().any(|n| n.starts_with("notes")), "{names:?}");
        std::fs::rename(look.path("moved/repo"), &repo).unwrap();
        assert!(!look.has("moved/repo/src/.git"));
        // Made in the folder that was moved out: not the workspace's any more.
        std::fs::write(repo.join(".late"), "x").unwrap();
        assert!(!look.names().iter().any(|n| n.ends_with(".late")));
    }
}

#[test]
fn globs_bind_a_folder_for_its_contents_and_files_where_they_match() {
    let globs = ["knowledge/private/**".to_string(), "**/*.key".to_string()];
    for mut look in ways(&Rules::new(&globs, false).unwrap()) {
        look.make(
            &["Knowledge/Private/deep", "knowledge2/private", "a/b"],
            &[
                "Knowledge/Private/deep/x.md",
                "a/b/id.KEY",
                "a/b/id.pub",
                "top.key",
            ],
        );
        assert_eq!(look.names(), ["Knowledge/Private", "a/b/id.KEY", "top.key"]);
        look.make(&["a/b/c"], &["a/b/c/new.key"]);
        assert!(look.has("a/b/c/new.key"));
    }
}

#[cfg(target_os = "linux")]
#[test]
fn the_watch_is_rebuilt_after_its_queue_overflowed_and_misses_nothing() {
    let mut look = ways(&Rules::default()).pop().unwrap();
    look.make(&["flood"], &[]);
    assert_eq!(look.names(), Vec::<String>::new());
    // More events than the queue holds (16,384 by default), a dot entry among them.
    let queue: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .map_or(16_384, |s| s.trim().parse().unwrap());
    for n in 0..queue + 100 {
        std::fs::write(look.path(&format!("flood/{n}")), "").unwrap();
    }
    // Made after the queue was full: no event tells of it.
    look.make(&["flood/d"], &["flood/d/.env"]);
    assert_eq!(look.names(), ["flood/d/.env"]);
}

#[cfg(target_os = "linux")]
#[test]
fn a_root_put_back_anew_is_watched_anew() {
    let mut look = ways(&Rules::default()).pop().unwrap();
    look.make(&[".git"], &[]);
    assert_eq!(look.names(), [".git"]);
    let aside = look.root.with_extension("aside");
    std::fs::rename(&look.root, &aside).unwrap();
    assert_eq!(look.names(), Vec::<String>::new());
    std::fs::create_dir(&look.root).unwrap();
    look.make(&["x"], &["x/.env"]);
    assert_eq!(look.names(), ["x/.env"]);
    std::fs::remove_dir_all(aside).unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn a_workspace_is_watched_where_it_can_be() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(root.join(".git")).unwrap();
    let found = protected_entries(&root, &Rules::default());
    assert_eq!(found.len(), 1);
    assert_eq!(walked_because(&root), None);
}

#[test]
fn only_the_outermost_of_nested_paths_is_kept() {
    let paths = ["a", "a/b", "a/b/c", "a.txt", "b/x", "b/y"].map(PathBuf::from);
    assert_eq!(
        outermost(paths.to_vec()),
        ["a", "a.txt", "b/x", "b/y"].map(PathBuf::from)
    );
}
