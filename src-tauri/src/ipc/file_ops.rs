//! The workspace pane's changes to the tree: a new file or folder, a move (rename), a
//! delete (into `.cairn/trash/`, restorable); and reverting what the agent changed. All of it obeys a tool's write rules: nothing
//! outside the workspace, nothing in `.cairn/` or `sessions/`, no link followed out.

use cairn_app::cairn_memory::changes::{self, Change, ChangeError};
use cairn_app::cairn_memory::trash::{self, TrashError, Trashed};
use cairn_app::cairn_memory::{beneath, Workspace};

use super::error::{AppError, AppResult, ErrorCode};
use super::files::{self, SavedFile};

impl From<TrashError> for AppError {
    fn from(e: TrashError) -> Self {
        match e {
            TrashError::Memory(e) => e.into(),
            TrashError::Missing(_) | TrashError::Unknown(_) => {
                Self::new(ErrorCode::NotFound, e.to_string())
            }
            TrashError::Occupied(_) => Self::new(ErrorCode::Conflict, e.to_string()),
        }
    }
}

fn taken(path: &str) -> AppError {
    AppError::new(
        ErrorCode::Conflict,
        format!("{path} already exists; choose another name"),
    )
}

/// Makes an empty file; refuses when something is already there.
/// Refuses a path in a folder searched in place (read-only) with the reason; the rest is
/// checked where it is written.
pub fn not_in_a_folder(workspace: &Workspace, path: &str) -> AppResult<()> {
    if workspace.folder_of(path).is_some() {
        workspace.resolve(path, cairn_app::cairn_memory::Access::Write)?;
    }
    Ok(())
}

pub fn create_file(workspace: &Workspace, path: &str) -> AppResult<SavedFile> {
    not_in_a_folder(workspace, path)?;
    let absent = |on_disk: Option<&[u8]>| on_disk.is_none();
    if beneath::replace_if(workspace.root(), path, b"", absent)? == beneath::Swap::Kept {
        return Err(taken(path));
    }
    Ok(SavedFile {
        path: path.to_string(),
        version: files::version(b""),
    })
}

/// Makes a folder (and the folders above it); refuses when something is already there.
pub fn create_folder(workspace: &Workspace, path: &str) -> AppResult<()> {
    not_in_a_folder(workspace, path)?;
    if beneath::exists(workspace.root(), path)? {
        return Err(taken(path));
    }
    beneath::create_dir_all(workspace.root(), path)?;
    Ok(())
}

/// Moves (or renames) a file or folder; refuses when something is at the destination
/// (judged by the rename itself, so a file saved there a moment before stays).
pub fn move_path(workspace: &Workspace, from: &str, to: &str) -> AppResult<()> {
    let (from, to) = (from.trim_end_matches('/'), to.trim_end_matches('/'));
    not_in_a_folder(workspace, from)?;
    not_in_a_folder(workspace, to)?;
    if to == from || to.starts_with(&format!("{from}/")) {
        return Err(AppError::invalid(format!(
            "{from} cannot be moved into itself"
        )));
    }
    beneath::rename(workspace.root(), from, to).map_err(|e| match e.io_kind() {
        Some(std::io::ErrorKind::AlreadyExists) => taken(to),
        Some(std::io::ErrorKind::NotFound) => {
            AppError::new(ErrorCode::NotFound, format!("{from} does not exist"))
        }
        _ => e.into(),
    })
}

pub fn trash(workspace: &Workspace, path: &str) -> AppResult<Trashed> {
    not_in_a_folder(workspace, path)?;
    Ok(trash::trash(workspace, path, chrono::Utc::now())?)
}

pub fn list_trash(workspace: &Workspace) -> AppResult<Vec<Trashed>> {
    Ok(trash::list(workspace)?)
}

pub fn restore(workspace: &Workspace, id: &str) -> AppResult<Trashed> {
    Ok(trash::restore(workspace, id)?)
}

impl From<ChangeError> for AppError {
    fn from(e: ChangeError) -> Self {
        match e {
            ChangeError::Memory(e) => e.into(),
            ChangeError::Unknown(_) => Self::new(ErrorCode::NotFound, e.to_string()),
            ChangeError::Reverted(_) | ChangeError::ChangedSince(_) | ChangeError::Gap(_) => {
                Self::new(ErrorCode::Conflict, e.to_string())
            }
            ChangeError::Mixed | ChangeError::Nothing => Self::invalid(e.to_string()),
        }
    }
}

/// The changes the agent made to files in a session, oldest first.
pub fn list_changes(workspace: &Workspace, session_id: &str) -> AppResult<Vec<Change>> {
    Ok(changes::list(workspace, session_id)?)
}

/// Reverts one change, or a run's changes to one file; returns the file's path.
pub fn revert_changes(
    workspace: &Workspace,
    session_id: &str,
    ids: &[String],
) -> AppResult<String> {
    Ok(changes::revert(
        workspace,
        session_id,
        ids,
        chrono::Utc::now(),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipc::files::tests::workspace;
    use pretty_assertions::assert_eq;

    #[test]
    fn new_files_and_folders_never_overwrite() {
        let (_dir, ws) = workspace();
        create_folder(&ws, "knowledge/trips").unwrap();
        create_file(&ws, "knowledge/trips/rome.md").unwrap();
        std::fs::write(ws.root().join("knowledge/trips/rome.md"), "kept").unwrap();
        let err = create_file(&ws, "knowledge/trips/rome.md").unwrap_err();
        assert_eq!(err.code, ErrorCode::Conflict);
        assert_eq!(
            files::read(&ws, "knowledge/trips/rome.md").unwrap().text,
            "kept"
        );
        assert_eq!(
            create_folder(&ws, "knowledge/trips").unwrap_err().code,
            ErrorCode::Conflict
        );
        for path in [".cairn/x.md", "sessions/x.jsonl", "../x.md", "/tmp/x.md"] {
            assert!(create_file(&ws, path).is_err(), "{path}");
            assert!(create_folder(&ws, path).is_err(), "{path}");
        }
    }

    #[test]
    fn moves_keep_what_is_at_the_destination_and_stay_in_the_workspace() {
        let (_dir, ws) = workspace();
        files::write(&ws, "knowledge/a.md", "a", None).unwrap();
        files::write(&ws, "knowledge/b.md", "b", None).unwrap();
        assert_eq!(
            move_path(&ws, "knowledge/a.md", "knowledge/b.md")
                .unwrap_err()
                .code,
            ErrorCode::Conflict
        );
        assert_eq!(files::read(&ws, "knowledge/b.md").unwrap().text, "b");
        move_path(&ws, "knowledge/a.md", "archive/2026/a.md").unwrap();
        assert_eq!(files::read(&ws, "archive/2026/a.md").unwrap().text, "a");
        move_path(&ws, "archive", "old").unwrap();
        assert_eq!(files::read(&ws, "old/2026/a.md").unwrap().text, "a");
        assert!(move_path(&ws, "old", "old/inside").is_err());
        for to in ["../a.md", ".cairn/a.md", "sessions/a.md"] {
            assert!(move_path(&ws, "knowledge/b.md", to).is_err(), "{to}");
        }
        assert!(move_path(&ws, "sessions", "s2").is_err());
        assert_eq!(
            move_path(&ws, "knowledge/none.md", "x.md")
                .unwrap_err()
                .code,
            ErrorCode::NotFound
        );
    }

    #[test]
    fn a_deleted_file_goes_to_the_trash_and_comes_back() {
        let (_dir, ws) = workspace();
        files::write(&ws, "knowledge/a.md", "precious", None).unwrap();
        let item = trash(&ws, "knowledge/a.md").unwrap();
        assert!(files::read(&ws, "knowledge/a.md").is_err());
        assert_eq!(list_trash(&ws).unwrap(), vec![item.clone()]);
        files::write(&ws, "knowledge/a.md", "newer", None).unwrap();
        assert_eq!(
            restore(&ws, &item.id).unwrap_err().code,
            ErrorCode::Conflict
        );
        trash(&ws, "knowledge/a.md").unwrap();
        restore(&ws, &item.id).unwrap();
        assert_eq!(files::read(&ws, "knowledge/a.md").unwrap().text, "precious");
        assert_eq!(restore(&ws, "nope").unwrap_err().code, ErrorCode::NotFound);
    }
}
