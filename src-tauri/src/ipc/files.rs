//! Workspace files for the page: the tree, reading and saving with a version check, all
//! through the workspace's safe paths (nothing outside it, nothing in `.cairn/`).

use std::path::Path;

use cairn_memory::{Access, Workspace};
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
}

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
    walk(workspace.root(), "", 0)
}

const MAX_DEPTH: usize = 16;

fn walk(dir: &Path, prefix: &str, depth: usize) -> AppResult<Vec<FileNode>> {
    let entries = std::fs::read_dir(dir).map_err(|e| AppError::io(dir.display(), e))?;
    let mut nodes = Vec::new();
    for entry in entries.flatten() {
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
            walk(&entry.path(), &format!("{path}/"), depth + 1)?
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
    let bytes = std::fs::read(&full).map_err(|e| AppError::io(path, e))?;
    let version = version(&bytes);
    let text = String::from_utf8(bytes)
        .map_err(|_| AppError::invalid(format!("{path} is not UTF-8 text")))?;
    Ok(FileText {
        path: path.to_string(),
        text,
        version,
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
    // The version is checked on the file being replaced, at the moment it is replaced: a
    // save from another editor landing at any time before is never overwritten.
    let found = std::cell::RefCell::new(None);
    let check = |on_disk: Option<&[u8]>| {
        let on_disk = on_disk.map(version);
        let same = base_version.is_none_or(|base| on_disk.as_deref() == Some(base));
        *found.borrow_mut() = Some(on_disk);
        same
    };
    let swapped =
        cairn_memory::beneath::replace_if(workspace.root(), path, text.as_bytes(), check)?;
    if swapped == cairn_memory::beneath::Swap::Kept {
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
