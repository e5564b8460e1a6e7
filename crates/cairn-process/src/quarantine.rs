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

use crate::protected::{protected_entries, GIT_HEAD};
use crate::sandbox::Sandbox;

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

impl Sandbox {
    /// The workspace as it is before a call.
    pub fn before_call(&self) -> Before {
        let entries: HashSet<PathBuf> = protected_entries(self.workspace(), &self.rules())
            .into_iter()
            .map(|e| e.path)
            .collect();
        let repositories = repositories(&entries);
        Before {
            entries,
            repositories,
        }
    }

    /// Moves into `.cairn/quarantine/` every git repository and tool's settings made
    /// since `before`, and says what was moved.
    pub fn undo_new_tool_entries(&self, before: &Before) -> Vec<Quarantined> {
        let root = self.workspace();
        let after = self.before_call();
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
        found.sort();
        let stamp = format!(
            "{}-{}",
            stamp(),
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        found
            .into_iter()
            .filter_map(|(path, why)| {
                let rel = path.strip_prefix(root).ok()?.to_path_buf();
                let to = Path::new(".cairn").join(FOLDER).join(&stamp).join(&rel);
                let moved = move_aside(&path, &root.join(&to)).ok().map(|()| to);
                Some(Quarantined {
                    path: rel,
                    moved_to: moved,
                    why,
                })
            })
            .collect()
    }
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

/// Renames `from` to `to`, making `to`'s folders.
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
