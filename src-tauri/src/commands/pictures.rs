//! Pictures: one pasted into the message box kept for the message, kept ones shown at the
//! size asked for, and a picture file of the workspace read for its view. (Pictures picked
//! in the system's dialog are `exchange::pick_pictures`; dropped ones come with the drop.)

use cairn_protocol::Picture;

use super::DesktopState;
use crate::ipc::error::{AppError, AppResult, ErrorCode};
use crate::ipc::pictures::{self, WorkspacePicture};

/// Runs blocking picture work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> AppResult<T> + Send + 'static,
) -> AppResult<T> {
    tauri::async_runtime::spawn_blocking(work)
        .await
        .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))?
}

/// Keeps a picture the page was given (pasted, or from its file input): `data` is its
/// bytes in base64. Refused, with why, unless it is a PNG, JPEG, WebP or GIF Cairn can
/// read.
#[tauri::command(rename_all = "snake_case")]
pub async fn attach_picture(
    desktop: DesktopState<'_>,
    name: Option<String>,
    data: String,
) -> AppResult<Picture> {
    let attachments = desktop.workspace.attachments().clone();
    blocking(move || pictures::attach(&attachments, name.as_deref(), &data)).await
}

/// A kept picture as a `data:` URL at most `side` pixels on its longest side (4096 at
/// most: the full view's).
#[tauri::command(rename_all = "snake_case")]
pub async fn picture_thumbnail(
    desktop: DesktopState<'_>,
    picture: Picture,
    side: u32,
) -> AppResult<String> {
    let attachments = desktop.workspace.attachments().clone();
    blocking(move || pictures::copy_of(&attachments, &picture, side)).await
}

/// A picture file of the workspace for its view: the picture, its size and its text.
#[tauri::command(rename_all = "snake_case")]
pub async fn read_picture(desktop: DesktopState<'_>, path: String) -> AppResult<WorkspacePicture> {
    let workspace = desktop.workspace.clone();
    blocking(move || pictures::read(&workspace, &path)).await
}
