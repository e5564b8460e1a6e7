//! Workspace files: the tree, reading, saving (with the version check).

use super::DesktopState;
use crate::ipc::error::AppResult;
use crate::ipc::files::{self, FileNode, FileText, SavedFile};

#[tauri::command(rename_all = "snake_case")]
pub async fn list_files(desktop: DesktopState<'_>) -> AppResult<Vec<FileNode>> {
    files::tree(&desktop.workspace)
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
