//! Workspace files for the page: the tree, reading and saving with a version check, all
//! through the workspace's safe paths (nothing outside it, nothing in `.cairn/`); and the
//! folders searched in place, listed and read, never written.

use std::path::Path;

use cairn_app::cairn_memory::{Access, Workspace};
use serde::Serialize;
use ts_rs::TS;

use super::error::{AppError, AppResult, ErrorCode};

/// Files larger than this are not opened in the editor.
pub const MAX_EDIT_BYTES: u64 = 4 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct FileNode {
    pub name: String,
    pub path: String,
    pub dir: bool,
    pub children: Vec<FileNode>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct FileText {
    pub path: String,
    pub text: String,
    /// Opaque version of what was read; give it back to `write_file`.
    pub version: String,
    /// In a folder searched in place: shown, never saved.
    pub read_only: bool,
}

/// A folder of `[memory] folders`, as the file tree shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct OutsideFolder {
    /// The name its files go by (`Notes`, as in `Notes/trips/croatia.md`).
    pub name: String,
    /// Where it is on disk.
    pub root: String,
    /// Its files and folders, paths starting with `name/`.
    pub children: Vec<FileNode>,
    /// More entries than the tree lists ([`MAX_FOLDER_NODES`]); search still reaches all.
    pub truncated: bool,
    /// Why it cannot be listed now (missing, unreadable); it is then empty.
    pub problem: Option<String>,
}

/// Entries listed of one folder searched in place (a whole home folder can be one).
pub const MAX_FOLDER_NODES: usize = 5_000;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct SavedFile {
    pub path: String,
    pub version: String,
}

/// The version of a file's bytes: what a save compares to see if the file changed.
pub fn version(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex()[..32].to_string()
}

/// The workspace tree: folders first, then files, by name; hidden entries and `.cairn/`
/// left out.
pub fn tree(workspace: &Workspace) -> AppResult<Vec<FileNode>> {
    let mut unlimited = usize::MAX;
    walk(workspace.root(), "", 0, &mut unlimited)
}

/// The folders searched in place, each listed like the workspace (up to
/// [`MAX_FOLDER_NODES`] entries), then those of the settings that are not there.
pub fn outside_folders(workspace: &Workspace) -> Vec<OutsideFolder> {
    let mut folders: Vec<OutsideFolder> = workspace
        .folders()
        .iter()
        .map(|folder| {
            let mut budget = MAX_FOLDER_NODES;
            let listed = walk(&folder.root, &format!("{}/", folder.name), 0, &mut budget);
            let (children, problem) = match listed {
                Ok(children) => (children, None),
                Err(e) => (Vec::new(), Some(e.message)),
            };
            OutsideFolder {
                name: folder.name.clone(),
                root: folder.root.display().to_string(),
                children,
                truncated: budget == 0,
                problem,
            }
        })
        .collect();
    folders.extend(
        workspace
            .folder_problems()
            .iter()
            .map(|problem| OutsideFolder {
                name: problem.split(':').next().unwrap_or(problem).to_string(),
                root: String::new(),
                children: Vec::new(),
                truncated: false,
                problem: Some(problem.clone()),
            }),
    );
    folders
}

const MAX_DEPTH: usize = 16;

/// Lists `dir`, at most `budget` entries in all (counted down).
fn walk(dir: &Path, prefix: &str, depth: usize, budget: &mut usize) -> AppResult<Vec<FileNode>> {
    let entries = std::fs::read_dir(dir).map_err(|e| AppError::io(dir.display(), e))?;
    let mut nodes = Vec::new();
    for entry in entries.flatten() {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        // Symlinks are listed as files and refused on open when they leave the workspace.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = format!("{prefix}{name}");
        let children = if kind.is_dir() && depth < MAX_DEPTH {
            walk(&entry.path(), &format!("{path}/"), depth + 1, budget)?
        } else {
            Vec::new()
        };
        nodes.push(FileNode {
            name,
            path,
            dir: kind.is_dir(),
            children,
        });
    }
    nodes.sort_by(|a, b| b.dir.cmp(&a.dir).then_with(|| a.name.cmp(&b.name)));
    Ok(nodes)
}

pub fn read(workspace: &Workspace, path: &str) -> AppResult<FileText> {
    let full = workspace.resolve(path, Access::Read)?;
    let read_only = workspace.folder_of(path).is_some();
    let meta = std::fs::metadata(&full).map_err(|e| AppError::io(path, e))?;
    if meta.is_dir() {
        return Err(AppError::invalid(format!("{path} is a folder")));
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(AppError::invalid(format!(
            "{path} is {} MB; files over {} MB are not opened here",
            meta.len() / (1024 * 1024),
            MAX_EDIT_BYTES / (1024 * 1024)
        )));
    }
    // Read beneath the root it belongs to: a link swapped in since the check cannot
    // lead out.
    let (root, rel) = workspace.locate(path);
    let bytes = cairn_app::cairn_memory::beneath::read(root, rel, MAX_EDIT_BYTES)?;
    let version = version(&bytes);
    let text = String::from_utf8(bytes)
        .map_err(|_| AppError::invalid(format!("{path} is not UTF-8 text")))?;
    Ok(FileText {
        path: path.to_string(),
        text,
        version,
        read_only,
    })
}

/// Saves `text` to `path` atomically. With `base_version`, refuses with `conflict` when
/// the file on disk is no longer that version (changed or deleted since it was read).
pub fn write(
    workspace: &Workspace,
    path: &str,
    text: &str,
    base_version: Option<&str>,
) -> AppResult<SavedFile> {
    super::file_ops::not_in_a_folder(workspace, path)?;
    // The version is checked on the file being replaced, at the moment it is replaced: a
    // save from another editor landing at any time before is never overwritten.
    let found = std::cell::RefCell::new(None);
    let check = |on_disk: Option<&[u8]>| {
        let on_disk = on_disk.map(version);
        let same = base_version.is_none_or(|base| on_disk.as_deref() == Some(base));
        *found.borrow_mut() = Some(on_disk);
        same
    };
    let swapped = cairn_app::cairn_memory::beneath::replace_if(
        workspace.root(),
        path,
        text.as_bytes(),
        check,
    )?;
    if swapped == cairn_app::cairn_memory::beneath::Swap::Kept {
        let what = match found.into_inner() {
            Some(Some(_)) => "changed on disk",
            _ => "was deleted",
        };
        return Err(AppError::new(
            ErrorCode::Conflict,
            format!("{path} {what} since it was opened"),
        ));
    }
    Ok(SavedFile {
        path: path.to_string(),
        version: version(text.as_bytes()),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;

    /// A fresh workspace in a temp folder (kept while the guard lives).
    pub(crate) fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::open_or_create(dir.path()).unwrap();
        (dir, workspace)
    }

    #[test]
    fn a_save_over_a_file_changed_on_disk_is_a_conflict_and_keeps_the_disk_text() {
        let (_dir, ws) = workspace();
        let saved = write(&ws, "knowledge/a.md", "one", None).unwrap();
        let opened = read(&ws, "knowledge/a.md").unwrap();
        assert_eq!(opened.version, saved.version);
        std::fs::write(ws.root().join("knowledge/a.md"), "theirs").unwrap();
        let err = write(&ws, "knowledge/a.md", "mine", Some(&opened.version)).unwrap_err();
        assert_eq!(err.code, ErrorCode::Conflict);
        assert_eq!(read(&ws, "knowledge/a.md").unwrap().text, "theirs");
        // Overwrite on purpose.
        write(&ws, "knowledge/a.md", "mine", None).unwrap();
        assert_eq!(read(&ws, "knowledge/a.md").unwrap().text, "mine");
    }

    #[test]
    fn hostile_paths_are_refused() {
        let (_dir, ws) = workspace();
        for path in ["../outside.md", "/etc/passwd", ".cairn/state.db", ""] {
            let err = write(&ws, path, "x", None).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidPath, "{path}");
        }
        let err = read(&ws, "../../etc/passwd").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidPath);
    }

    #[test]
    fn folders_searched_in_place_are_listed_and_read_but_never_written() {
        let base = tempfile::tempdir().unwrap();
        let notes = base.path().join("Notes");
        std::fs::create_dir_all(notes.join("trips")).unwrap();
        std::fs::create_dir_all(notes.join(".obsidian")).unwrap();
        std::fs::write(notes.join("trips/croatia.md"), "Split in June").unwrap();
        let ws = Workspace::open_or_create(&base.path().join("ws"))
            .unwrap()
            .with_folders(&[notes.clone(), base.path().join("gone")]);
        let folders = outside_folders(&ws);
        assert_eq!(folders.len(), 2, "{folders:?}");
        assert_eq!(folders[0].name, "Notes");
        assert_eq!(folders[0].problem, None);
        let trips = &folders[0].children[0];
        assert_eq!(
            (trips.path.as_str(), trips.children[0].path.as_str()),
            ("Notes/trips", "Notes/trips/croatia.md")
        );
        assert!(!folders[0].children.iter().any(|n| n.name.starts_with('.')));
        assert!(folders[1].problem.as_deref().unwrap().contains("gone"));

        let opened = read(&ws, "Notes/trips/croatia.md").unwrap();
        assert_eq!(
            (opened.text.as_str(), opened.read_only),
            ("Split in June", true)
        );
        assert!(!read(&ws, "AGENTS.md").unwrap().read_only);

        let before = listing(&notes);
        let refused = [
            write(&ws, "Notes/trips/croatia.md", "changed", None).map(|_| ()),
            write(&ws, "Notes/new.md", "x", None).map(|_| ()),
            super::super::file_ops::create_file(&ws, "Notes/a.md").map(|_| ()),
            super::super::file_ops::create_folder(&ws, "Notes/dir"),
            super::super::file_ops::move_path(&ws, "Notes/trips", "trips"),
            super::super::file_ops::move_path(&ws, "AGENTS.md", "Notes/AGENTS.md"),
            super::super::file_ops::trash(&ws, "Notes/trips/croatia.md").map(|_| ()),
        ];
        for (i, result) in refused.into_iter().enumerate() {
            let error = result.unwrap_err();
            assert!(error.message.contains("never writes it"), "{i}: {error:?}");
        }
        assert_eq!(listing(&notes), before);
        assert!(!ws.root().join("Notes").exists());
        assert!(ws.root().join("AGENTS.md").exists());
    }

    /// Every path under `dir` with its bytes.
    fn listing(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut todo = vec![dir.to_path_buf()];
        while let Some(next) = todo.pop() {
            for entry in std::fs::read_dir(&next).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    todo.push(path.clone());
                    out.push((path, Vec::new()));
                } else {
                    out.push((path.clone(), std::fs::read(&path).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn a_large_folder_is_listed_up_to_the_limit() {
        let base = tempfile::tempdir().unwrap();
        let big = base.path().join("big");
        std::fs::create_dir_all(&big).unwrap();
        for i in 0..MAX_FOLDER_NODES + 10 {
            std::fs::write(big.join(format!("{i}.md")), "").unwrap();
        }
        let ws = Workspace::open_or_create(&base.path().join("ws"))
            .unwrap()
            .with_folders(&[big]);
        let folders = outside_folders(&ws);
        assert!(folders[0].truncated);
        assert_eq!(folders[0].children.len(), MAX_FOLDER_NODES);
    }

    #[test]
    fn the_tree_lists_folders_first_and_hides_private_state() {
        let (_dir, ws) = workspace();
        write(&ws, "knowledge/b.md", "b", None).unwrap();
        write(&ws, "zeta.md", "z", None).unwrap();
        let nodes = tree(&ws).unwrap();
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        assert!(!names.contains(&".cairn"), "{names:?}");
        let first_file = nodes.iter().position(|n| !n.dir).unwrap();
        assert!(nodes[..first_file].iter().all(|n| n.dir));
        let knowledge = nodes.iter().find(|n| n.name == "knowledge").unwrap();
        assert!(knowledge
            .children
            .iter()
            .any(|c| c.path == "knowledge/b.md"));
    }
}
