//! Pictures for the page: one pasted or picked is kept in the workspace's attachments (read
//! and checked in the document reader's child first), a kept one comes back as a `data:`
//! URL of the size asked for, and a picture file of the workspace is shown with its size
//! and the text read in it. Nothing here reads a path the page names except through the
//! workspace's safe paths.

use cairn_app::cairn_extract::guard::Limits;
use cairn_app::cairn_extract::picture::{self, PictureOptions};
use cairn_app::cairn_memory::attachments::MAX_PICTURE_BYTES;
use cairn_app::cairn_memory::{Access, Attachments, Workspace};
use cairn_protocol::{ContentBlock, Message, Picture};
use serde::Serialize;
use ts_rs::TS;

use super::dropped::Refused;
use super::error::{AppError, AppResult, ErrorCode};

/// The longest side a copy of a kept picture is made at (the full view's).
pub const MAX_VIEW_SIDE: u32 = 4096;
/// The longest side of a workspace picture as its view shows it.
pub const WORKSPACE_VIEW_SIDE: u32 = 2048;
/// The file types taken as pictures, by name (their bytes decide in the end).
pub const PICTURE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "webp", "gif"];

/// A picture file of the workspace, as its view shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct WorkspacePicture {
    pub path: String,
    /// The picture as a `data:` URL, at most 2048 pixels a side.
    pub url: String,
    /// What its bytes are: `image/png`, `image/jpeg`, `image/webp` or `image/gif`.
    pub media_type: String,
    pub width: u32,
    pub height: u32,
    /// Its size in bytes.
    #[ts(type = "number")]
    pub bytes: u64,
    /// The text read in it (OCR), when there is any.
    pub text: Option<String>,
}

/// Pictures picked in the system's dialog: those kept, and those refused with why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, TS)]
pub struct PickedPictures {
    pub pictures: Vec<Picture>,
    pub refused: Vec<Refused>,
}

/// Keeps the picture whose bytes are `base64` (named `name`): refused with the reader's
/// reason when it is not a PNG, JPEG, WebP or GIF, is too large or cannot be read.
/// Blocking.
pub fn attach(attachments: &Attachments, name: Option<&str>, base64: &str) -> AppResult<Picture> {
    use base64::Engine as _;
    // Four characters of base64 hold three bytes: a larger text is refused undecoded.
    if base64.len() as u64 > MAX_PICTURE_BYTES / 3 * 4 + 4 {
        return Err(AppError::invalid(format!(
            "the picture is larger than {} MB, the most that is taken",
            MAX_PICTURE_BYTES >> 20
        )));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64.trim())
        .map_err(|e| AppError::invalid(format!("the picture's bytes did not arrive whole: {e}")))?;
    attachments
        .add(&bytes, name)
        .map_err(|why| AppError::invalid(named(name, &why)))
}

/// Keeps the picture files at `paths` (from the system's dialog or drop, never the page).
/// Blocking.
pub fn attach_files(attachments: &Attachments, paths: &[std::path::PathBuf]) -> PickedPictures {
    let mut picked = PickedPictures::default();
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        match attachments.add_file(path) {
            Ok(picture) => picked.pictures.push(picture),
            Err(reason) => picked.refused.push(Refused { name, reason }),
        }
    }
    picked
}

fn named(name: Option<&str>, why: &str) -> String {
    match name.map(str::trim).filter(|n| !n.is_empty()) {
        Some(name) => format!("{name}: {why}"),
        None => why.to_string(),
    }
}

/// Refuses a picture the page describes that could not be one Cairn kept: its hash is
/// the name of its file, so it must be one.
fn well_formed(picture: &Picture) -> AppResult<()> {
    let hex = picture.sha256.len() == 64
        && picture
            .sha256
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let typed = PICTURE_EXTENSIONS
        .iter()
        .any(|ext| picture.file_name().ends_with(&format!(".{ext}")));
    if hex && typed {
        Ok(())
    } else {
        Err(AppError::invalid(format!(
            "{} is not a picture Cairn keeps",
            picture.mention()
        )))
    }
}

/// Checks that every picture of a message to send is kept in the attachments.
pub fn kept(attachments: &Attachments, pictures: &[Picture]) -> AppResult<()> {
    for picture in pictures {
        well_formed(picture)?;
        if !attachments.path_of(picture).is_file() {
            return Err(AppError::new(
                ErrorCode::NotFound,
                format!(
                    "the picture {} is no longer kept; attach it again",
                    picture.mention()
                ),
            ));
        }
    }
    Ok(())
}

/// A kept picture as a `data:` URL at most `side` pixels on its longest side (the
/// picture's own bytes when it is smaller). Blocking.
pub fn copy_of(attachments: &Attachments, picture: &Picture, side: u32) -> AppResult<String> {
    well_formed(picture)?;
    attachments
        .thumbnail(picture, side.clamp(16, MAX_VIEW_SIDE))
        .map_err(|why| AppError::new(ErrorCode::NotFound, why))
}

/// The pictures of a message: a user's pasted ones, or those a tool gave.
pub fn of_message(message: &Message) -> Vec<Picture> {
    match message {
        Message::User { content } => content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Image(picture) => Some(picture.clone()),
                _ => None,
            })
            .collect(),
        Message::ToolResult(result) => result.pictures.clone(),
        Message::Assistant(_) => Vec::new(),
    }
}

/// A picture file of the workspace (or of a folder searched in place) for its view: read
/// through the safe paths, at most [`MAX_PICTURE_BYTES`], decoded and read for text in
/// the document reader's child. Blocking.
pub fn read(workspace: &Workspace, path: &str) -> AppResult<WorkspacePicture> {
    let full = workspace.resolve(path, Access::Read)?;
    if std::fs::metadata(&full)
        .map_err(|e| AppError::io(path, e))?
        .is_dir()
    {
        return Err(AppError::invalid(format!("{path} is a folder")));
    }
    let (root, rel) = workspace.locate(path);
    let size = cairn_app::cairn_memory::beneath::open(root, rel)?
        .metadata()
        .map_err(|e| AppError::io(path, e))?
        .len();
    if size > MAX_PICTURE_BYTES {
        return Err(AppError::invalid(format!(
            "{path} is {} MB; pictures over {} MB are not shown here",
            size >> 20,
            MAX_PICTURE_BYTES >> 20
        )));
    }
    let bytes = cairn_app::cairn_memory::beneath::read(root, rel, MAX_PICTURE_BYTES)?;
    let options = PictureOptions {
        max_side: Some(WORKSPACE_VIEW_SIDE),
        ocr_languages: workspace.attachments().ocr_languages().to_vec(),
    };
    let prepared = picture::prepare(&bytes, &options, Limits::default())
        .map_err(|why| AppError::invalid(format!("{path}: {why}")))?;
    let url = prepared
        .scaled
        .as_ref()
        .map(|copy| copy.data_url())
        .ok_or_else(|| AppError::new(ErrorCode::Internal, format!("{path}: no copy was made")))?;
    Ok(WorkspacePicture {
        path: path.to_string(),
        url,
        media_type: prepared.media_type,
        width: prepared.width,
        height: prepared.height,
        bytes: size,
        text: prepared.text,
    })
}

#[cfg(test)]
#[path = "pictures_tests.rs"]
mod tests;
