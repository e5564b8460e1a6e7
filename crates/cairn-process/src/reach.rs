//! What a sandboxed command may touch beyond the defaults, as the user set it
//! (`[tools.bash] hide`, `read_only`, `writable`), and the one list of mounts every call
//! gets: the homes hidden whole, the toolchains in them, the workspace, its protected
//! entries, the hidden paths and the user's own, ordered so that a deeper path is mounted
//! over a shallower one.
//!
//! No setting opens Cairn's own: a `read_only` or `writable` path that is, lies inside or
//! (for `writable`) holds Cairn's config folder or key file, or the workspace's `.cairn/`
//! and `sessions/`, is left out with why; so is one that is or lies inside a credential
//! store (`HOME_SECRETS`), which a home hidden whole would otherwise give back.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

/// The user's widening and narrowing of the sandbox. Relative paths are taken from the
/// workspace root; `~` is expanded by whoever reads the settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    /// Hidden besides the credential stores (an empty folder or file in their place).
    pub hide: Vec<PathBuf>,
    /// Readable, not writable: inside the workspace this narrows it; outside, it shows a
    /// path of the hidden home again (never a credential store).
    pub read_only: Vec<PathBuf>,
    /// Writable: outside the workspace (e.g. `~/.cache/pip` for a build), or a protected
    /// entry inside it (e.g. `.venv`); never a credential store.
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
    /// The credential stores and the sockets of the host's services: hidden, and never
    /// opened by a setting.
    pub secrets: Vec<PathBuf>,
    /// Folders hidden whole (the user's home, `/home`, `/root`): what a call needs of them
    /// is mounted on top (the workspace, `tools`, the user's own paths).
    pub homes: Vec<PathBuf>,
    /// The toolchains in the home, read-only (see `HOME_TOOLS`).
    pub tools: Vec<PathBuf>,
    /// The workspace's protected entries (already resolved, inside it).
    pub protected: Vec<PathBuf>,
    /// Files inside it bound read-only for their execute bit alone: the first left out
    /// past the budget.
    pub executables: Vec<PathBuf>,
    pub reach: &'a Reach,
}

/// Why `reach`'s paths that would open Cairn's own or a credential store (of `secrets`)
/// are left out, one line each.
pub(crate) fn refusals(
    workspace: &Path,
    own: &[PathBuf],
    secrets: &[PathBuf],
    reach: &Reach,
) -> Vec<String> {
    let own = closed(workspace, own);
    let mut why = Vec::new();
    for (key, paths, writable) in [
        ("read_only", &reach.read_only, false),
        ("writable", &reach.writable, true),
    ] {
        for path in paths {
            let real = resolve(workspace, path);
            let reason = opens(&real, &own, writable).or_else(|| reveals(&real, secrets));
            if let Some(reason) = reason {
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

/// Mounts beyond which a call leaves out files bound for their execute bit, then the pins
/// of protected entries: bubblewrap sets up each mount in a time that grows with the mounts
/// made before it (about 13 ms for 50, 30 ms for 100, 200 ms for 400, 1.2 s for 1,000), and
/// refuses more than about 3,000. At this many a call costs about 15 ms more than with none.
pub(crate) const MOUNT_BUDGET: usize = 64;

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
    Home,
    Tool,
    Executable,
}

/// A call's mounts, and what the budget left out.
#[derive(Debug, Default)]
pub(crate) struct Planned {
    pub mounts: Vec<(PathBuf, Mount)>,
    /// Executable files left writable.
    pub executables_left: usize,
    /// Protected entries whose folders were not pinned.
    pub pins_left: usize,
}

impl Planned {
    /// What a command's output says about what was left out, if anything was.
    pub(crate) fn note(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.executables_left > 0 {
            parts.push(format!(
                "{} executable files are writable in this call",
                self.executables_left
            ));
        }
        if self.pins_left > 0 {
            parts.push(format!(
                "the folders holding {} protected entries can be renamed",
                self.pins_left
            ));
        }
        (!parts.is_empty()).then(|| {
            format!(
                "[sandbox: {}: the workspace has more protected paths than one call binds \
                 ({MOUNT_BUDGET})]",
                parts.join("; ")
            )
        })
    }
}

/// The mounts of one call, shallower paths first, at most one per path (the safest
/// named: Cairn's own hidden, then the user's `hide`, `read_only`, `writable`, then the
/// defaults). Nothing is mounted beneath a hidden path, except a path the user opened
/// inside a credential store. Paths that do not exist are left out (only what exists can be
/// bound), and so are those [`refusals`] names. Past [`MOUNT_BUDGET`], executable files
/// (deepest first) and then pins are left out, and counted.
pub(crate) fn plan(p: Plan<'_>) -> Planned {
    let workspace = p.workspace;
    let own = closed(workspace, p.own);
    let user = |paths: &[PathBuf], writable: bool| -> Vec<PathBuf> {
        paths
            .iter()
            .map(|path| resolve(workspace, path))
            .filter(|real| {
                real.exists()
                    && opens(real, &own, writable).is_none()
                    && reveals(real, &p.secrets).is_none()
            })
            .collect()
    };
    let existing = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
        paths
            .into_iter()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .filter(|p| !(p.starts_with("/tmp") || p.starts_with("/run")))
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
    let mut executables = p.executables;
    executables.sort_by_key(|path| path.components().count());
    let ranked = [
        (vec![workspace.to_path_buf()], Origin::Workspace),
        (hidden(p.own.to_vec()), Origin::Own),
        (hidden(user_hide), Origin::UserHide),
        (user(&p.reach.read_only, false), Origin::UserReadOnly),
        (user(&p.reach.writable, true), Origin::UserWritable),
        (hidden(p.secrets), Origin::Secret),
        (p.protected, Origin::Protected),
        (existing(p.homes), Origin::Home),
        (existing(p.tools), Origin::Tool),
        (executables, Origin::Executable),
    ];
    let mut seen = HashSet::new();
    let mut named: Vec<(PathBuf, Origin)> = Vec::new();
    for (paths, origin) in ranked {
        for path in paths {
            if seen.insert(path.clone()) {
                named.push((path, origin));
            }
        }
    }
    let hides: Vec<(PathBuf, Origin)> = named
        .iter()
        .filter(|(_, origin)| mount_of(*origin) == Mount::Hidden)
        .cloned()
        .collect();
    let shown: Vec<PathBuf> = named
        .iter()
        .filter(|(_, origin)| mount_of(*origin) != Mount::Hidden)
        .map(|(path, _)| path.clone())
        .collect();
    let (mut mounts, executables): (Vec<_>, Vec<_>) = named
        .into_iter()
        .filter(|(path, origin)| !beneath_hidden(path, *origin, &hides, &shown))
        .partition(|(_, origin)| *origin != Origin::Executable);
    let room = MOUNT_BUDGET.saturating_sub(mounts.len());
    let executables_left = executables.len().saturating_sub(room);
    mounts.extend(executables.into_iter().take(room));
    let mut planned = pinned(mounts);
    planned.executables_left = executables_left;
    // A stable sort: shallower first, so a deeper mount lands on top of its parent's.
    planned
        .mounts
        .sort_by_key(|(path, _)| path.components().count());
    planned
}

fn mount_of(origin: Origin) -> Mount {
    match origin {
        Origin::Workspace | Origin::UserWritable => Mount::Writable,
        Origin::UserReadOnly | Origin::Protected | Origin::Tool | Origin::Executable => {
            Mount::ReadOnly
        }
        Origin::Own | Origin::UserHide | Origin::Secret | Origin::Home => Mount::Hidden,
    }
}

/// Whether `path` lies beneath one of the hidden paths `hides` and must not be mounted
/// there. Beneath a path hidden for itself, nothing is (it would show it again); beneath a
/// home hidden whole, what a call is given is mounted on top, and a hidden path only where
/// something of `shown` holds it (elsewhere the home's hiding covers it already).
fn beneath_hidden(
    path: &Path,
    origin: Origin,
    hides: &[(PathBuf, Origin)],
    shown: &[PathBuf],
) -> bool {
    hides.iter().any(|(other, by)| {
        if path == other || !path.starts_with(other) {
            return false;
        }
        match by {
            Origin::Home if mount_of(origin) == Mount::Hidden => !shown
                .iter()
                .any(|s| path.starts_with(s) && s.starts_with(other) && s != other),
            Origin::Home => false,
            _ => true,
        }
    })
}

/// `mounts` (mount origins) and, for each mount that is not writable, every folder between
/// it and the writable mount holding it, bound onto itself: a mount point cannot be renamed
/// or removed, so a command cannot move a protected `.git/` aside with its parent and put
/// one of its own where it was. An entry's pins are left out whole when they would pass
/// the budget (shallower entries first).
fn pinned(named: Vec<(PathBuf, Origin)>) -> Planned {
    let modes: HashMap<PathBuf, Mount> = named
        .iter()
        .map(|(path, origin)| (path.clone(), mount_of(*origin)))
        .collect();
    let mut order: Vec<&PathBuf> = named
        .iter()
        .filter(|(_, origin)| mount_of(*origin) != Mount::Writable)
        .map(|(path, _)| path)
        .collect();
    order.sort_by_key(|path| path.components().count());
    let mut pins: HashSet<PathBuf> = HashSet::new();
    let mut pins_left = 0;
    for path in order {
        let mut between = Vec::new();
        let mut held_by_writable = false;
        for dir in path.ancestors().skip(1) {
            match modes.get(dir) {
                Some(Mount::Writable) => {
                    held_by_writable = true;
                    break;
                }
                Some(_) => break,
                None => between.push(dir.to_path_buf()),
            }
        }
        between.retain(|dir| !pins.contains(dir));
        if !held_by_writable || between.is_empty() {
            continue;
        }
        if modes.len() + pins.len() + between.len() > MOUNT_BUDGET {
            pins_left += 1;
            continue;
        }
        pins.extend(between);
    }
    let mut pins: Vec<PathBuf> = pins.into_iter().collect();
    pins.sort();
    let mut mounts: Vec<(PathBuf, Mount)> = named
        .into_iter()
        .map(|(path, origin)| (path, mount_of(origin)))
        .collect();
    mounts.extend(pins.into_iter().map(|dir| (dir, Mount::Writable)));
    Planned {
        mounts,
        pins_left,
        ..Planned::default()
    }
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

/// Why opening `path` would show a credential store of `secrets` again, if it would.
fn reveals(path: &Path, secrets: &[PathBuf]) -> Option<String> {
    secrets.iter().find_map(|secret| {
        let secret = std::fs::canonicalize(secret).unwrap_or_else(|_| secret.clone());
        path.starts_with(&secret).then(|| {
            format!(
                "it is a credential store ({}): commands never read keys, tokens or histories",
                secret.display()
            )
        })
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
#[path = "reach_tests.rs"]
mod tests;
