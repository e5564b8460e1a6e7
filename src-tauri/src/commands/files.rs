//! Workspace files: the tree, reading, saving (with the version check), and changes to
//! the tree (new, move, delete into the trash and back, reveal).

use cairn_app::cairn_memory::changes::Change;
use cairn_app::cairn_memory::trash::Trashed;
use cairn_app::cairn_memory::Access;

use super::DesktopState;
use crate::ipc::documents::{self, DocumentText};
use crate::ipc::error::{AppError, AppResult, ErrorCode};
use crate::ipc::file_ops;
use crate::ipc::files::{self, FileNode, FileText, OutsideFolder, SavedFile};

#[tauri::command(rename_all = "snake_case")]
pub async fn list_files(desktop: DesktopState<'_>) -> AppResult<Vec<FileNode>> {
    files::tree(&desktop.workspace)
}

/// The folders searched in place (`[memory] folders`), listed read-only.
#[tauri::command(rename_all = "snake_case")]
pub async fn list_folders(desktop: DesktopState<'_>) -> AppResult<Vec<OutsideFolder>> {
    let workspace = desktop.workspace.clone();
    tauri::async_runtime::spawn_blocking(move || files::outside_folders(&workspace))
        .await
        .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))
}

/// A document's text, page by page, as the index reads it (in a child process, with the
/// index's limits on time and memory).
#[tauri::command(rename_all = "snake_case")]
pub async fn read_document(desktop: DesktopState<'_>, path: String) -> AppResult<DocumentText> {
    let workspace = desktop.workspace.clone();
    tauri::async_runtime::spawn_blocking(move || documents::read(&workspace, &path))
        .await
        .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))?
}

/// Opens a document (never any other file) in the system's viewer for its type.
#[tauri::command(rename_all = "snake_case")]
pub async fn open_in_viewer(desktop: DesktopState<'_>, path: String) -> AppResult<()> {
    let target = documents::viewable(&desktop.workspace, &path)?;
    tauri_plugin_opener::open_path(&target, None::<&str>)
        .map_err(|e| AppError::new(ErrorCode::Io, format!("cannot open {path}: {e}")))
}

#[tauri::command(rename_all = "snake_case")]
pub async fn read_file(desktop: DesktopState<'_>, path: String) -> AppResult<FileText> {
    files::read(&desktop.workspace, &path)
}

/// Saves a file; the memory index is told at once rather than when the watcher notices.
#[tauri::command(rename_all = "snake_case")]
pub async fn write_file(
    desktop: DesktopState<'_>,
    path: String,
    text: String,
    base_version: Option<String>,
) -> AppResult<SavedFile> {
    let saved = files::write(&desktop.workspace, &path, &text, base_version.as_deref())?;
    if let Some(index) = desktop.index() {
        if let Err(e) = index.changed(&[path.as_str()]) {
            tracing::warn!("cannot queue {path} for indexing: {e}");
        }
    }
    Ok(saved)
}

/// After a change to the tree: the page lists it again, and the index catches up (a
/// folder's files moved with it, so the whole workspace is compared, which skips what
/// did not change).
fn tree_changed(desktop: &crate::desktop::Desktop) {
    desktop.emit(crate::hub::AppEvent::FilesChanged);
    if let Some(index) = desktop.index() {
        if let Err(e) = index.sync_in_background() {
            tracing::warn!("cannot queue the memory index's catch-up: {e}");
        }
    }
}

#[tauri::command(rename_all = "snake_case")]
pub async fn create_file(desktop: DesktopState<'_>, path: String) -> AppResult<SavedFile> {
    let saved = file_ops::create_file(&desktop.workspace, &path)?;
    tree_changed(&desktop);
    Ok(saved)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn create_folder(desktop: DesktopState<'_>, path: String) -> AppResult<()> {
    file_ops::create_folder(&desktop.workspace, &path)?;
    tree_changed(&desktop);
    Ok(())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn move_path(desktop: DesktopState<'_>, from: String, to: String) -> AppResult<()> {
    file_ops::move_path(&desktop.workspace, &from, &to)?;
    tree_changed(&desktop);
    Ok(())
}

/// Deletes into `.cairn/trash/`, from where [`restore_trash`] puts it back.
#[tauri::command(rename_all = "snake_case")]
pub async fn trash_path(desktop: DesktopState<'_>, path: String) -> AppResult<Trashed> {
    let item = file_ops::trash(&desktop.workspace, &path)?;
    tree_changed(&desktop);
    Ok(item)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_trash(desktop: DesktopState<'_>) -> AppResult<Vec<Trashed>> {
    file_ops::list_trash(&desktop.workspace)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn restore_trash(desktop: DesktopState<'_>, id: String) -> AppResult<Trashed> {
    let item = file_ops::restore(&desktop.workspace, &id)?;
    tree_changed(&desktop);
    Ok(item)
}

/// What the agent changed in files during a session, each with its texts and whether it
/// can still be reverted.
#[tauri::command(rename_all = "snake_case")]
pub async fn list_changes(desktop: DesktopState<'_>, session_id: String) -> AppResult<Vec<Change>> {
    file_ops::list_changes(&desktop.workspace, &session_id)
}

/// Reverts one change of the agent's, or a run's changes to one file; refused when the
/// file changed since. The index and the open editors learn of it at once.
#[tauri::command(rename_all = "snake_case")]
pub async fn revert_changes(
    desktop: DesktopState<'_>,
    session_id: String,
    ids: Vec<String>,
) -> AppResult<String> {
    let path = file_ops::revert_changes(&desktop.workspace, &session_id, &ids)?;
    tree_changed(&desktop);
    Ok(path)
}

/// Shows a workspace file or folder in the system's file manager.
#[tauri::command(rename_all = "snake_case")]
pub async fn reveal_path(desktop: DesktopState<'_>, path: String) -> AppResult<()> {
    let target = if path.is_empty() {
        desktop.workspace.root().to_path_buf()
    } else {
        desktop.workspace.resolve(&path, Access::Read)?
    };
    tauri_plugin_opener::reveal_item_in_dir(&target)
        .map_err(|e| AppError::new(ErrorCode::Io, format!("cannot show {path}: {e}")))
}
