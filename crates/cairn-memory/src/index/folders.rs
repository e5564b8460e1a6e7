//! Folders searched in place (`[memory] folders`): indexed and watched like the
//! workspace, never written. Each is known in the index by a name, its last component
//! (`~/Notes` is `Notes`), so its files' paths read `Notes/trips/croatia.md`; a name that
//! another folder or an entry at the workspace's top already has gets `-2`, `-3` (decided
//! at open). Everything the index keeps of them (index, vectors, catalog) stays in the
//! workspace's `.cairn/`.

use std::path::{Path, PathBuf};

/// A folder searched in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    /// The first part of its files' paths in the index.
    pub name: String,
    /// Where it is (as given, made absolute; canonical when it exists).
    pub root: PathBuf,
}

impl Folder {
    /// The path within this folder of the index path `path`, when it is this folder's.
    pub fn relative_of<'a>(&self, path: &'a str) -> Option<&'a str> {
        path.strip_prefix(self.name.as_str())?.strip_prefix('/')
    }
}

/// The folders of the settings, named; a folder that is the workspace, is inside it or
/// holds it is left out with why (told as a problem), as is one listed twice.
pub fn name_folders(workspace: &Path, roots: &[PathBuf]) -> (Vec<Folder>, Vec<String>) {
    let mut folders: Vec<Folder> = Vec::new();
    let mut problems = Vec::new();
    for given in roots {
        let root = given.canonicalize().unwrap_or_else(|_| given.clone());
        if root.starts_with(workspace) || workspace.starts_with(&root) {
            problems.push(format!(
                "{}: a folder searched in place cannot be the workspace, inside it or around it",
                given.display()
            ));
            continue;
        }
        if folders.iter().any(|f| f.root == root) {
            continue;
        }
        let base = root
            .file_name()
            .map(|n| n.to_string_lossy().replace('/', "_"))
            .filter(|n| !n.is_empty() && !n.starts_with('.'))
            .unwrap_or_else(|| "folder".into());
        let taken =
            |name: &str| folders.iter().any(|f| f.name == name) || workspace.join(name).exists();
        let mut name = base.clone();
        let mut n = 2;
        while taken(&name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        folders.push(Folder { name, root });
    }
    (folders, problems)
}

/// Why `folder` cannot be searched now (missing, not a folder, unreadable), if it cannot.
pub fn unavailable(folder: &Folder) -> Option<String> {
    match std::fs::read_dir(&folder.root) {
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("it does not exist".into()),
        Err(e) => Some(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_named_by_their_last_part_without_clashes() {
        let base = tempfile::tempdir().unwrap();
        let ws = base.path().join("ws");
        for dir in ["ws/Notes", "a/Notes", "b/Notes", "c/papers"] {
            std::fs::create_dir_all(base.path().join(dir)).unwrap();
        }
        let ws = ws.canonicalize().unwrap();
        let roots: Vec<PathBuf> = [
            "a/Notes", "b/Notes", "c/papers", "c/papers", "ws/Notes", ".",
        ]
        .iter()
        .map(|d| base.path().join(d))
        .collect();
        let (folders, problems) = name_folders(&ws, &roots);
        let names: Vec<&str> = folders.iter().map(|f| f.name.as_str()).collect();
        // `Notes` is a folder of the workspace's own.
        assert_eq!(names, ["Notes-2", "Notes-3", "papers"]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(folders[2].relative_of("papers/x/y.pdf"), Some("x/y.pdf"));
        assert_eq!(folders[2].relative_of("papersx/y.pdf"), None);
    }
}
