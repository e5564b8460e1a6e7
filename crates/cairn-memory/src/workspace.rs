//! The workspace folder and the template a new one starts from.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::MemoryError;
use crate::paths::{self, Access, PathError, PRIVATE_DIR};

include!(concat!(env!("OUT_DIR"), "/templates.rs"));

/// Folders every workspace has, created when missing.
const STANDARD_DIRS: &[&str] = &[
    "memory",
    "knowledge",
    "skills",
    "subagents",
    "sessions",
    PRIVATE_DIR,
];

/// An opened workspace. The root is canonical, so every path handed out is absolute.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Opens the workspace at `dir`. A missing or empty folder is filled from the template;
    /// an existing one is used as it is (only missing standard folders are added, nothing is
    /// overwritten).
    pub fn open_or_create(dir: &Path) -> Result<Self, MemoryError> {
        if dir.exists() && !dir.is_dir() {
            return Err(MemoryError::NotADirectory(dir.to_path_buf()));
        }
        let fresh = !dir.exists() || is_empty_dir(dir)?;
        fs::create_dir_all(dir).map_err(|e| MemoryError::io(dir, e))?;
        let root = dir.canonicalize().map_err(|e| MemoryError::io(dir, e))?;
        if fresh {
            write_template(&root)?;
        }
        for sub in STANDARD_DIRS {
            let path = root.join(sub);
            fs::create_dir_all(&path).map_err(|e| MemoryError::io(&path, e))?;
        }
        Ok(Self { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("sessions")
    }

    /// `.cairn/`: derived or private state (index, catalog, tool results, locks).
    pub fn state_dir(&self) -> PathBuf {
        self.root.join(PRIVATE_DIR)
    }

    /// Resolves a user- or model-supplied path inside the workspace (see [`paths::resolve`]).
    pub fn resolve(&self, input: &str, access: Access) -> Result<PathBuf, PathError> {
        paths::resolve(&self.root, input, access)
    }

    /// `path` relative to the root, with forward slashes.
    pub fn relative(&self, path: &Path) -> String {
        paths::display_relative(&self.root, path)
    }

    /// The files a new workspace starts with: (relative path, contents).
    pub fn template_files() -> &'static [(&'static str, &'static str)] {
        TEMPLATE_FILES
    }
}

fn is_empty_dir(dir: &Path) -> Result<bool, MemoryError> {
    let mut entries = fs::read_dir(dir).map_err(|e| MemoryError::io(dir, e))?;
    Ok(entries.next().is_none())
}

fn write_template(root: &Path) -> Result<(), MemoryError> {
    for (rel, contents) in TEMPLATE_FILES {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| MemoryError::io(parent, e))?;
        }
        if !path.exists() {
            fs::write(&path, contents).map_err(|e| MemoryError::io(&path, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_folder_gets_the_template() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open_or_create(&dir.path().join("new")).unwrap();
        for (rel, contents) in Workspace::template_files() {
            assert_eq!(&fs::read_to_string(ws.root().join(rel)).unwrap(), contents);
        }
        assert!(ws.root().join("AGENTS.md").is_file());
        assert!(ws.root().join("MEMORY.md").is_file());
        assert!(ws.sessions_dir().is_dir());
        assert!(ws.state_dir().is_dir());
    }

    #[test]
    fn an_existing_workspace_is_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("AGENTS.md"), "mine").unwrap();
        let ws = Workspace::open_or_create(dir.path()).unwrap();
        assert_eq!(
            fs::read_to_string(ws.root().join("AGENTS.md")).unwrap(),
            "mine"
        );
        assert!(!ws.root().join("MEMORY.md").exists());
        assert!(ws.sessions_dir().is_dir());
    }

    #[test]
    fn a_file_is_not_a_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, "x").unwrap();
        assert!(matches!(
            Workspace::open_or_create(&file),
            Err(MemoryError::NotADirectory(_))
        ));
    }

    #[test]
    fn the_template_has_the_documented_files() {
        let names: Vec<_> = Workspace::template_files()
            .iter()
            .map(|(p, _)| *p)
            .collect();
        for expected in ["AGENTS.md", "MEMORY.md", "README.md"] {
            assert!(names.contains(&expected), "{names:?}");
        }
        assert!(names
            .iter()
            .any(|n| n.starts_with("skills/") && n.ends_with("/SKILL.md")));
        assert!(names.iter().any(|n| n.starts_with("knowledge/")));
    }
}
