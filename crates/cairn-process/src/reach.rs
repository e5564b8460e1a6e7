//! What a sandboxed command may touch beyond the defaults, as the user set it
//! (`[tools.bash] hide`, `read_only`, `writable`), and the one list of mounts every call
//! gets: the workspace, its protected entries, the hidden paths and the user's own, ordered
//! so that a deeper path is mounted over a shallower one.
//!
//! No setting opens Cairn's own: a `read_only` or `writable` path that is, lies inside or
//! (for `writable`) holds Cairn's config folder or key file, or the workspace's `.cairn/`
//! and `sessions/`, is left out with why.

use std::path::{Component, Path, PathBuf};

/// The user's widening and narrowing of the sandbox. Relative paths are taken from the
/// workspace root; `~` is expanded by whoever reads the settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    /// Hidden besides the credential stores (an empty folder or file in their place).
    pub hide: Vec<PathBuf>,
    /// Readable, not writable: inside the workspace this narrows it; a credential store
    /// named here exactly is readable again.
    pub read_only: Vec<PathBuf>,
    /// Writable: outside the workspace (e.g. `~/.cache/pip` for a build), or a protected
    /// entry inside it (e.g. `.venv`).
    pub writable: Vec<PathBuf>,
}

impl Reach {
    pub fn is_empty(&self) -> bool {
        self.hide.is_empty() && self.read_only.is_empty() && self.writable.is_empty()
    }
}

/// How one path is mounted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mount {
    Writable,
    ReadOnly,
    /// An empty folder, or `/dev/null` for a file.
    Hidden,
}

/// Everything [`plan`] needs, each path list as absolute paths (resolved or not).
pub(crate) struct Plan<'a> {
    pub workspace: &'a Path,
    /// Cairn's config folder and key file: hidden, and never opened by a setting.
    pub own: &'a [PathBuf],
    /// The credential stores and session sockets: hidden unless a setting names them.
    pub secrets: Vec<PathBuf>,
    /// The workspace's protected entries (already resolved, inside it).
    pub protected: Vec<PathBuf>,
    pub reach: &'a Reach,
}

/// Why `reach`'s paths that would open Cairn's own are left out, one line each.
pub(crate) fn refusals(workspace: &Path, own: &[PathBuf], reach: &Reach) -> Vec<String> {
    let own = closed(workspace, own);
    let mut why = Vec::new();
    for (key, paths, writable) in [
        ("read_only", &reach.read_only, false),
        ("writable", &reach.writable, true),
    ] {
        for path in paths {
            let real = resolve(workspace, path);
            if let Some(reason) = opens(&real, &own, writable) {
                why.push(format!(
                    "[tools.bash] {key}: `{}` is left out: {reason}",
                    path.display()
                ));
            }
        }
    }
    for path in &reach.hide {
        if workspace.starts_with(resolve(workspace, path)) {
            why.push(format!(
                "[tools.bash] hide: `{}` is left out: it holds the workspace, which commands \
                 work in",
                path.display()
            ));
        }
    }
    why
}

/// Where a mount comes from, highest priority first: the first mount named for a path
/// is the one kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Origin {
    Workspace,
    Own,
    UserHide,
    UserReadOnly,
    UserWritable,
    Secret,
    Protected,
}

/// The mounts of one call, shallower paths first, at most one per path (the safest
/// named: Cairn's own hidden, then the user's `hide`, `read_only`, `writable`, then the
/// defaults). Nothing is mounted beneath a hidden path, except a path the user opened
/// inside a credential store. Paths that do not exist are left out (only what exists can be
/// bound), and so are those [`refusals`] names.
pub(crate) fn plan(p: Plan<'_>) -> Vec<(PathBuf, Mount)> {
    let workspace = p.workspace;
    let own = closed(workspace, p.own);
    let user = |paths: &[PathBuf], writable: bool| -> Vec<PathBuf> {
        paths
            .iter()
            .map(|path| resolve(workspace, path))
            .filter(|real| real.exists() && opens(real, &own, writable).is_none())
            .collect()
    };
    let hidden = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
        paths
            .into_iter()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            // /tmp and /run are empty inside already, but for the workspace.
            .filter(|p| {
                p.starts_with(workspace) || !(p.starts_with("/tmp") || p.starts_with("/run"))
            })
            .filter(|p| !workspace.starts_with(p))
            .collect()
    };
    let user_hide = p.reach.hide.iter().map(|h| resolve(workspace, h)).collect();
    let ranked = [
        (vec![workspace.to_path_buf()], Origin::Workspace),
        (hidden(p.own.to_vec()), Origin::Own),
        (hidden(user_hide), Origin::UserHide),
        (user(&p.reach.read_only, false), Origin::UserReadOnly),
        (user(&p.reach.writable, true), Origin::UserWritable),
        (hidden(p.secrets), Origin::Secret),
        (p.protected, Origin::Protected),
    ];
    let mut named: Vec<(PathBuf, Origin)> = Vec::new();
    for (paths, origin) in ranked {
        for path in paths {
            if !named.iter().any(|(known, _)| *known == path) {
                named.push((path, origin));
            }
        }
    }
    let kept: Vec<(PathBuf, Mount)> = named
        .iter()
        .filter(|(path, origin)| !beneath_hidden(path, *origin, &named))
        .map(|(path, origin)| (path.clone(), mount_of(*origin)))
        .collect();
    let mut mounts = pinned(kept);
    // A stable sort: shallower first, so a deeper mount lands on top of its parent's.
    mounts.sort_by_key(|(path, _)| path.components().count());
    mounts
}

fn mount_of(origin: Origin) -> Mount {
    match origin {
        Origin::Workspace | Origin::UserWritable => Mount::Writable,
        Origin::UserReadOnly | Origin::Protected => Mount::ReadOnly,
        Origin::Own | Origin::UserHide | Origin::Secret => Mount::Hidden,
    }
}

/// Whether `path` lies beneath a hidden path and must not be mounted there (which would
/// show it again), the user's own opening of a path inside a credential store aside.
fn beneath_hidden(path: &Path, origin: Origin, named: &[(PathBuf, Origin)]) -> bool {
    named.iter().any(|(other, by)| {
        mount_of(*by) == Mount::Hidden
            && path != other
            && path.starts_with(other)
            && !(*by == Origin::Secret
                && matches!(origin, Origin::UserReadOnly | Origin::UserWritable))
    })
}

/// `mounts` and, for each mount that is not writable, every folder between it and the
/// writable mount holding it, bound onto itself: a mount point cannot be renamed or removed,
/// so a command cannot move a protected `.git/` aside with its parent and put one of its
/// own where it was.
fn pinned(mut mounts: Vec<(PathBuf, Mount)>) -> Vec<(PathBuf, Mount)> {
    let mut pins: Vec<PathBuf> = Vec::new();
    for (path, mount) in &mounts {
        if *mount == Mount::Writable {
            continue;
        }
        let mut between = Vec::new();
        for dir in path.ancestors().skip(1) {
            match mounts.iter().find(|(known, _)| known == dir) {
                Some((_, Mount::Writable)) => {
                    pins.append(&mut between);
                    break;
                }
                Some(_) => break,
                None => between.push(dir.to_path_buf()),
            }
        }
    }
    pins.sort();
    pins.dedup();
    mounts.extend(pins.into_iter().map(|dir| (dir, Mount::Writable)));
    mounts
}

/// What no setting may open: `own` where it leads, and the workspace's `.cairn/` and
/// `sessions/`.
fn closed(workspace: &Path, own: &[PathBuf]) -> Vec<PathBuf> {
    own.iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .chain([workspace.join(".cairn"), workspace.join("sessions")])
        .collect()
}

/// Why opening `path` would open one of `closed`, if it would.
fn opens(path: &Path, closed: &[PathBuf], writable: bool) -> Option<String> {
    closed.iter().find_map(|own| {
        if path.starts_with(own) {
            Some(format!(
                "it is Cairn's own ({}): commands never read or change its settings, keys \
                 or sessions",
                own.display()
            ))
        } else if writable && own.starts_with(path) {
            Some(format!(
                "it holds Cairn's own ({}): a command could move it aside and put settings \
                 of its own in its place",
                own.display()
            ))
        } else {
            None
        }
    })
}

/// `path` from the workspace root when relative, where it leads when it exists, with `.`
/// and `..` taken out when it does not.
fn resolve(workspace: &Path, path: &Path) -> PathBuf {
    let joined = workspace.join(path);
    if let Ok(real) = std::fs::canonicalize(&joined) {
        return real;
    }
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    struct Tree {
        _dir: tempfile::TempDir,
        root: PathBuf,
    }

    impl Tree {
        /// A home with a config folder, a key file, a credential store and a workspace.
        fn new() -> Self {
            // Not under /tmp, which is empty inside the sandbox and so never bound.
            let dir = tempfile::tempdir_in("/var/tmp").unwrap();
            let root = std::fs::canonicalize(dir.path()).unwrap();
            for sub in [
                ".config/cairn",
                ".aws",
                ".cache/pip",
                "ws/.cairn",
                "ws/sessions",
                "ws/notes/deep",
                "ws/app/.git",
            ] {
                std::fs::create_dir_all(root.join(sub)).unwrap();
            }
            std::fs::write(root.join("keys.toml"), "k").unwrap();
            Self { _dir: dir, root }
        }

        fn own(&self) -> Vec<PathBuf> {
            vec![self.root.join(".config/cairn"), self.root.join("keys.toml")]
        }

        fn plan(&self, reach: &Reach) -> Vec<(String, Mount)> {
            let ws = self.root.join("ws");
            let own = self.own();
            plan(Plan {
                workspace: &ws,
                own: &own,
                secrets: vec![self.root.join(".aws"), self.root.join(".nope")],
                protected: vec![ws.join(".cairn"), ws.join("app/.git"), ws.join("sessions")],
                reach,
            })
            .into_iter()
            .map(|(p, m)| (p.strip_prefix(&self.root).unwrap().display().to_string(), m))
            .collect()
        }
    }

    #[test]
    fn defaults_mount_the_workspace_then_what_is_in_it() {
        let tree = Tree::new();
        use Mount::*;
        let want: Vec<(String, Mount)> = [
            ("ws", Writable),
            ("keys.toml", Hidden),
            (".aws", Hidden),
            (".config/cairn", Hidden),
            ("ws/.cairn", ReadOnly),
            ("ws/sessions", ReadOnly),
            // Its parent, pinned: it cannot be moved aside with the .git/ in it.
            ("ws/app", Writable),
            ("ws/app/.git", ReadOnly),
        ]
        .into_iter()
        .map(|(p, m)| (p.to_string(), m))
        .collect();
        assert_eq!(tree.plan(&Reach::default()), want);
    }

    #[test]
    fn settings_widen_and_narrow_deeper_paths_on_top() {
        let tree = Tree::new();
        let reach = Reach {
            hide: vec!["notes/deep".into()],
            read_only: vec!["notes".into(), tree.root.join(".aws")],
            writable: vec![tree.root.join(".cache/pip"), "app/.git".into()],
        };
        let plan = tree.plan(&reach);
        let find = |p: &str| plan.iter().find(|(path, _)| path == p).map(|(_, m)| *m);
        assert_eq!(find("ws/notes"), Some(Mount::ReadOnly));
        assert_eq!(find("ws/notes/deep"), Some(Mount::Hidden));
        assert_eq!(
            find(".aws"),
            Some(Mount::ReadOnly),
            "named exactly: readable"
        );
        assert_eq!(find(".cache/pip"), Some(Mount::Writable));
        assert_eq!(find("ws/app/.git"), Some(Mount::Writable));
        let depth = |p: &str| plan.iter().position(|(path, _)| path == p).unwrap();
        assert!(depth("ws/notes") < depth("ws/notes/deep"));
    }

    #[test]
    fn nothing_opens_cairns_own() {
        let tree = Tree::new();
        let ws = tree.root.join("ws");
        let reach = Reach {
            hide: vec![tree.root.clone()],
            read_only: vec![
                tree.root.join(".config/cairn/config.toml"),
                "sessions".into(),
            ],
            writable: vec![
                tree.root.join(".config"),
                tree.root.join("keys.toml"),
                "../ws/.cairn/index".into(),
                tree.root.join(".cache"),
            ],
        };
        let why = refusals(&ws, &tree.own(), &reach);
        assert_eq!(why.len(), 6, "{why:#?}");
        assert!(
            why[0].contains("config.toml` is left out: it is Cairn's own"),
            "{why:#?}"
        );
        assert!(
            why[2].contains("`") && why[2].contains("holds Cairn's own"),
            "{why:#?}"
        );
        assert!(why[5].starts_with("[tools.bash] hide:"), "{why:#?}");
        let plan = tree.plan(&reach);
        let find = |p: &str| plan.iter().find(|(path, _)| path == p).map(|(_, m)| *m);
        assert_eq!(find(".config/cairn"), Some(Mount::Hidden));
        assert_eq!(find("keys.toml"), Some(Mount::Hidden));
        assert_eq!(find(".config"), None);
        assert_eq!(find("ws/sessions"), Some(Mount::ReadOnly));
        assert_eq!(find(".cache"), Some(Mount::Writable));
        assert_eq!(
            find(""),
            None,
            "the folder holding the workspace is not hidden"
        );
    }
}
