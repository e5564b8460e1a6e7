//! The entries of a workspace that sandboxed commands may read but not write: the named
//! ones at its root (`.cairn/`, `sessions/`, AGENTS.md, `skills/`, `subagents/`) and every
//! dot entry at any depth (`.git/` of a nested repository, `.envrc`, `.vscode/`), which
//! configure tools that may later run outside the sandbox; and, as the sandbox asks
//! ([`Rules`]), every file with an execute bit and the entries matching the user's globs.
//!
//! Finding them means knowing every folder of the workspace before each command. Where
//! it can, that is done once and then kept current by watching every folder with inotify
//! (`watch.rs`), so a call costs only the changes made since the last one; otherwise, or
//! when watching fails, every folder is looked at before each call, listings remembered
//! by modification time (`walk.rs`). What each entry is, is `rules.rs`.
//!
//! What is known is kept per workspace root in the process (the last few roots); asked
//! with other rules than the last time, a root's is found again from the start.

mod rules;
mod walk;
#[cfg(target_os = "linux")]
mod watch;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

pub(crate) use rules::{Kind, Rules, GIT_HEAD};

/// How many workspace roots are remembered (each watched one holds an inotify instance,
/// of which a user has 128 by default).
const KEPT_ROOTS: usize = 8;

/// A protected entry (absolute, beneath the root, symlinks not resolved).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Entry {
    pub(crate) path: PathBuf,
    /// It is a symlink: what it leads to is what must be bound.
    pub(crate) link: bool,
}

/// The roots remembered, the one used last at the end.
static ROOTS: Mutex<Vec<(PathBuf, Arc<Mutex<Finder>>)>> = Mutex::new(Vec::new());

/// The protected entries beneath `root` under `rules`, sorted.
pub(crate) fn protected_entries(root: &Path, rules: &Rules) -> Vec<Entry> {
    let finder = finder_of(root);
    let mut finder = finder.lock().unwrap_or_else(PoisonError::into_inner);
    finder.entries(root, rules)
}

fn finder_of(root: &Path) -> Arc<Mutex<Finder>> {
    let mut roots = ROOTS.lock().unwrap_or_else(PoisonError::into_inner);
    let known = roots.iter().position(|(r, _)| r == root);
    let kept = match known {
        Some(at) => roots.remove(at),
        None => (root.to_path_buf(), Arc::default()),
    };
    let finder = kept.1.clone();
    roots.push(kept);
    if roots.len() > KEPT_ROOTS {
        roots.remove(0);
    }
    finder
}

/// How one root's entries are found, under the rules it was last asked with.
#[derive(Default)]
struct Finder {
    rules: Rules,
    how: How,
}

#[derive(Default)]
enum How {
    #[default]
    Unknown,
    #[cfg(target_os = "linux")]
    Watching(Box<watch::Index>),
    /// Looking at every folder, and why the root is not watched (for tests).
    Walking(walk::Walk, #[cfg_attr(not(test), allow(dead_code))] String),
}

impl Finder {
    fn entries(&mut self, root: &Path, rules: &Rules) -> Vec<Entry> {
        if self.rules != *rules {
            self.rules = rules.clone();
            self.how = How::Unknown;
        }
        #[cfg(target_os = "linux")]
        if let Some(entries) = self.watched(root) {
            return entries;
        }
        if !matches!(self.how, How::Walking(..)) {
            self.how = How::Walking(walk::Walk::default(), "not Linux".into());
        }
        match &mut self.how {
            How::Walking(walk, _) => walk.entries(root, &self.rules),
            _ => Vec::new(),
        }
    }

    /// The entries from the watch, built first if need be; `None` when the root cannot
    /// be watched (from now on).
    #[cfg(target_os = "linux")]
    fn watched(&mut self, root: &Path) -> Option<Vec<Entry>> {
        use watch::Failure;
        if let How::Watching(index) = &mut self.how {
            match index.current() {
                Ok(()) => return Some(index.entries()),
                Err(Failure::Unwatchable(why)) => self.walk_because(why),
                Err(Failure::Rebuild | Failure::RootGone) => self.how = How::Unknown,
            }
        }
        if let How::Unknown = self.how {
            match watch::Index::build(root, &self.rules) {
                Ok(index) => {
                    let entries = index.entries();
                    self.how = How::Watching(Box::new(index));
                    return Some(entries);
                }
                Err(Failure::RootGone) => return Some(Vec::new()),
                Err(Failure::Unwatchable(why)) => self.walk_because(why),
                Err(Failure::Rebuild) => self.walk_because("lost events while built".into()),
            }
        }
        None
    }

    #[cfg(target_os = "linux")]
    fn walk_because(&mut self, why: String) {
        self.how = How::Walking(walk::Walk::default(), why);
    }
}

/// Why `root`'s entries are found by looking at every folder, or `None` when they are
/// watched (for tests).
#[cfg(test)]
pub(crate) fn walked_because(root: &Path) -> Option<String> {
    let finder = finder_of(root);
    let finder = finder.lock().unwrap_or_else(PoisonError::into_inner);
    match &finder.how {
        How::Walking(_, why) => Some(why.clone()),
        How::Unknown => Some("never asked".into()),
        #[cfg(target_os = "linux")]
        How::Watching(_) => None,
    }
}

/// `paths` (sorted) without those inside another of them, which its bind covers.
pub(crate) fn outermost(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut kept: Vec<PathBuf> = Vec::with_capacity(paths.len());
    for path in paths {
        if !kept.last().is_some_and(|outer| path.starts_with(outer)) {
            kept.push(path);
        }
    }
    kept
}
