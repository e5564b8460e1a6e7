//! The entries of a workspace that sandboxed commands may read but not write: the named
//! ones at its root (`.cairn/`, `sessions/`, AGENTS.md, `skills/`, `subagents/`) and every
//! dot entry at any depth (`.git/` of a nested repository, `.envrc`, `.vscode/`), which
//! configure tools that may later run outside the sandbox.
//!
//! Finding dot entries at any depth means looking at every folder of the workspace before
//! each command. A folder's listing is remembered with its modification time, which
//! changes whenever an entry is added, removed or renamed in it, so a later command costs
//! one `stat` per folder and a listing only of the folders that changed. A folder changed
//! in the last two seconds is always listed again (some file systems keep whole seconds).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// Entries at the workspace root that are protected besides the dot entries (compared
/// without regard to case); folders among them are bound whole and not looked into.
const AT_ROOT: [&str; 4] = ["sessions", "agents.md", "skills", "subagents"];

/// A listing younger than this is not trusted to the modification time.
const SETTLE: Duration = Duration::from_secs(2);

/// One folder as last listed.
#[derive(Debug, Clone)]
struct Listing {
    mtime: SystemTime,
    /// Folders to look into (not dot folders, not symlinks).
    folders: Vec<PathBuf>,
    /// Entries to protect.
    protected: Vec<PathBuf>,
}

static LISTINGS: Mutex<Option<HashMap<PathBuf, Listing>>> = Mutex::new(None);

/// The protected entries beneath `root` (absolute, symlinks not resolved), sorted.
pub(crate) fn protected_entries(root: &Path) -> Vec<PathBuf> {
    let mut guard = LISTINGS.lock().unwrap_or_else(PoisonError::into_inner);
    let listings = guard.get_or_insert_with(HashMap::new);
    let mut found = Vec::new();
    let mut visited = HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Some(listing) = listing(listings, &folder, folder == root) else {
            continue;
        };
        found.extend(listing.protected);
        stack.extend(listing.folders);
        visited.insert(folder);
    }
    listings.retain(|path, _| !path.starts_with(root) || visited.contains(path));
    found.sort();
    found
}

/// The folder's listing, from memory when it has not changed since.
fn listing(
    listings: &mut HashMap<PathBuf, Listing>,
    folder: &Path,
    is_root: bool,
) -> Option<Listing> {
    let mtime = std::fs::symlink_metadata(folder).ok()?.modified().ok()?;
    let settled = SystemTime::now()
        .duration_since(mtime)
        .is_ok_and(|age| age > SETTLE);
    if let Some(known) = listings.get(folder).filter(|l| settled && l.mtime == mtime) {
        return Some(known.clone());
    }
    let fresh = list(folder, mtime, is_root)?;
    listings.insert(folder.to_path_buf(), fresh.clone());
    Some(fresh)
}

fn list(folder: &Path, mtime: SystemTime, is_root: bool) -> Option<Listing> {
    let mut listing = Listing {
        mtime,
        folders: Vec::new(),
        protected: Vec::new(),
    };
    for entry in std::fs::read_dir(folder).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().to_lowercase();
        let named = is_root && AT_ROOT.contains(&name.as_str());
        if name.starts_with('.') || named {
            listing.protected.push(entry.path());
        } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
            listing.folders.push(entry.path());
        }
    }
    Some(listing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn names(root: &Path) -> Vec<String> {
        protected_entries(root)
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn dot_entries_at_any_depth_and_the_named_ones_at_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for sub in [
            ".git/objects",
            "projects/app/.git/hooks",
            "projects/app/src",
            "notes/deep/er",
            "sessions/x",
            "Skills",
            "notes/skills",
        ] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        for file in [
            "AGENTS.md",
            "notes/deep/er/.envrc",
            "notes/AGENTS.md",
            "notes/a.md",
        ] {
            std::fs::write(root.join(file), "x").unwrap();
        }
        let expected = [
            ".git",
            "AGENTS.md",
            "Skills",
            "notes/deep/er/.envrc",
            "projects/app/.git",
            "sessions",
        ];
        assert_eq!(names(root), expected);
        // Remembered, and a new one is still found by the next look.
        std::fs::write(root.join("projects/app/src/.env"), "x").unwrap();
        assert!(names(root).contains(&"projects/app/src/.env".to_string()));
        std::fs::remove_dir_all(root.join("projects")).unwrap();
        assert_eq!(names(root).len(), expected.len() - 1);
    }
}
