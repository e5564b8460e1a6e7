//! The workspace folder and the template a new one starts from.

use std::fs;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use crate::attachments::Attachments;
use crate::error::MemoryError;
use crate::index::folders::{name_folders, Folder};
use crate::paths::{self, Access, PathError, PRIVATE_DIR};

include!(concat!(env!("OUT_DIR"), "/templates.rs"));

/// The language pictures' text is read in unless the settings say others.
pub const DEFAULT_OCR_LANGUAGE: &str = "eng";

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
    /// Folders searched in place (`[memory] folders`), by name: read through the
    /// workspace's paths (`Notes/trips/croatia.md`), never written.
    folders: Arc<Vec<Folder>>,
    /// Folders of the settings left out, each with why.
    folder_problems: Arc<Vec<String>>,
    /// The pictures of the conversation (`.cairn/attachments/`).
    attachments: Attachments,
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
        Ok(Self {
            attachments: Attachments::new(&root, vec![DEFAULT_OCR_LANGUAGE.to_string()]),
            root,
            folders: Arc::default(),
            folder_problems: Arc::default(),
        })
    }

    /// This workspace with pictures' text read in `languages` (Tesseract's names; none:
    /// pictures are not read).
    pub fn with_ocr(mut self, languages: Vec<String>) -> Self {
        self.attachments = Attachments::new(&self.root, languages);
        self
    }

    /// The pictures of the conversation, kept in this workspace.
    pub fn attachments(&self) -> &Attachments {
        &self.attachments
    }

    /// This workspace with the folders searched in place that `roots` lists (named as
    /// [`name_folders`] names them).
    pub fn with_folders(mut self, roots: &[PathBuf]) -> Self {
        let (folders, problems) = name_folders(&self.root, roots);
        self.folders = Arc::new(folders);
        self.folder_problems = Arc::new(problems);
        self
    }

    /// The folders searched in place.
    pub fn folders(&self) -> &[Folder] {
        &self.folders
    }

    /// Folders of the settings that were left out, each with why.
    pub fn folder_problems(&self) -> &[String] {
        &self.folder_problems
    }

    /// The folder searched in place that the workspace path `input` is in, and the path
    /// within it.
    pub fn folder_of<'a>(&self, input: &'a str) -> Option<(&Folder, &'a str)> {
        let input = input.trim_start_matches("./");
        self.folders.iter().find_map(|folder| {
            let rest = input.strip_prefix(folder.name.as_str())?;
            match rest {
                "" | "/" => Some((folder, ".")),
                rest => Some((folder, rest.strip_prefix('/')?)),
            }
        })
    }

    /// Where the workspace path `shown` is read from: the root (the workspace's, or a
    /// folder searched in place) and the path beneath it.
    pub fn locate<'a>(&self, shown: &'a str) -> (&Path, &'a str) {
        match self.folder_of(shown) {
            Some((folder, rest)) => (&folder.root, rest),
            None => (&self.root, shown),
        }
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

    /// Resolves a user- or model-supplied path inside the workspace (see [`paths::resolve`]),
    /// or inside a folder searched in place when it starts with that folder's name: read
    /// only, beneath that folder.
    pub fn resolve(&self, input: &str, access: Access) -> Result<PathBuf, PathError> {
        match self.folder_of(input) {
            Some(_) if access == Access::Write => Err(PathError::ReadOnlyFolder(input.into())),
            Some((folder, rest)) => paths::resolve(&folder.root, rest, Access::Read),
            None => paths::resolve(&self.root, input, access),
        }
    }

    /// `path` relative to the root, with forward slashes (a file of a folder searched in
    /// place under the folder's name).
    pub fn relative(&self, path: &Path) -> String {
        for folder in self.folders.iter() {
            if path.starts_with(&folder.root) {
                return match paths::display_relative(&folder.root, path).as_str() {
                    "." => folder.name.clone(),
                    rest => format!("{}/{rest}", folder.name),
                };
            }
        }
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
    fn a_folder_searched_in_place_is_read_by_its_name_and_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("Notes");
        fs::create_dir_all(notes.join("trips")).unwrap();
        fs::write(notes.join("trips/croatia.md"), "x").unwrap();
        let ws = Workspace::open_or_create(&dir.path().join("ws"))
            .unwrap()
            .with_folders(std::slice::from_ref(&notes));
        let notes = notes.canonicalize().unwrap();
        let read = ws.resolve("Notes/trips/croatia.md", Access::Read).unwrap();
        assert_eq!(read, notes.join("trips/croatia.md"));
        assert_eq!(ws.relative(&read), "Notes/trips/croatia.md");
        let error = ws.resolve("Notes/trips/new.md", Access::Write).unwrap_err();
        assert!(error.to_string().contains("never writes it"), "{error}");
        assert!(ws.resolve("Notes/../../etc/passwd", Access::Read).is_err());
        assert_eq!(
            ws.locate("Notes/trips/croatia.md"),
            (notes.as_path(), "trips/croatia.md")
        );
        assert_eq!(ws.locate("MEMORY.md"), (ws.root(), "MEMORY.md"));
        // A workspace path that only starts with the same letters is the workspace's.
        assert_eq!(ws.locate("Notes2/a.md").1, "Notes2/a.md");
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
