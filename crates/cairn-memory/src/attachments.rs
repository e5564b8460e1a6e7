//! Pictures of the conversation, kept once in the workspace by content hash:
//! `.cairn/attachments/<sha256>.<ext>`. A session records a picture by its hash, type,
//! size and dimensions (a [`Picture`]); the bytes live here only, so a picture pasted in
//! ten messages is one file and a session file stays text.
//!
//! Everything about a picture's bytes (what it really is, its size, its text) is learnt in
//! the document reader's child process with its limits (see `cairn_extract::picture`), so
//! a hostile picture costs bounded memory and time before anything is kept.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use cairn_extract::guard::Limits;
use cairn_extract::picture::{self, PictureOptions};
use cairn_protocol::{Picture, SentPicture};
use sha2::{Digest, Sha256};

use crate::paths::PRIVATE_DIR;

/// The folder under the workspace's private folder that holds the pictures.
pub const ATTACHMENTS_DIR: &str = "attachments";
/// The largest picture taken.
pub const MAX_PICTURE_BYTES: u64 = 32 << 20;
/// The copies for models kept in memory, in bytes of base64: past it, the oldest go.
const SENT_CACHE_BYTES: usize = 64 << 20;

/// The attachments folder of one workspace, and the copies for models made from it.
#[derive(Debug, Clone)]
pub struct Attachments {
    dir: PathBuf,
    ocr_languages: Arc<Vec<String>>,
    limits: Limits,
    sent: Arc<Mutex<SentCache>>,
}

#[derive(Debug, Default)]
struct SentCache {
    copies: HashMap<(String, u32), Arc<SentPicture>>,
    order: Vec<(String, u32)>,
    bytes: usize,
}

impl Attachments {
    /// The attachments of the workspace at `root`, pictures' text read in `ocr_languages`
    /// (none: no OCR).
    pub fn new(root: &Path, ocr_languages: Vec<String>) -> Self {
        Self {
            dir: root.join(PRIVATE_DIR).join(ATTACHMENTS_DIR),
            ocr_languages: Arc::new(ocr_languages),
            limits: Limits::default(),
            sent: Arc::default(),
        }
    }

    /// The languages pictures' text is read in (none: not read).
    pub fn ocr_languages(&self) -> &[String] {
        &self.ocr_languages
    }

    /// The folder the pictures are kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where `picture`'s bytes are kept.
    pub fn path_of(&self, picture: &Picture) -> PathBuf {
        self.dir.join(picture.file_name())
    }

    /// Keeps a picture's `bytes` (named `name`, when it had one): checks in the reader's
    /// child that they are a PNG, JPEG, WebP or GIF (whatever the name says), reads its
    /// size and its text, and writes it once under its hash. Blocking. An error says why,
    /// for the user; nothing is kept then.
    pub fn add(&self, bytes: &[u8], name: Option<&str>) -> Result<Picture, String> {
        if bytes.len() as u64 > MAX_PICTURE_BYTES {
            return Err(format!(
                "the picture is {} MB; pictures of at most {} MB are taken",
                bytes.len() >> 20,
                MAX_PICTURE_BYTES >> 20
            ));
        }
        let options = PictureOptions {
            max_side: None,
            ocr_languages: self.ocr_languages.to_vec(),
        };
        let prepared = picture::prepare(bytes, &options, self.limits)?;
        if let Some(why) = &prepared.ocr_error {
            tracing::info!("no text read from a picture: {why}");
        }
        let picture = Picture {
            sha256: hex(&Sha256::digest(bytes)),
            media_type: prepared.media_type,
            bytes: bytes.len() as u64,
            width: prepared.width,
            height: prepared.height,
            name: name
                .map(|n| n.rsplit(['/', '\\']).next().unwrap_or(n).trim().to_string())
                .filter(|n| !n.is_empty()),
            text: prepared.text,
            sent: None,
        };
        let path = self.path_of(&picture);
        if !path.is_file() {
            std::fs::create_dir_all(&self.dir)
                .map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
            crate::write_atomic(&path, bytes, None)
                .map_err(|e| format!("cannot keep the picture in {}: {e}", path.display()))?;
        }
        Ok(picture)
    }

    /// [`Attachments::add`] for a file, its name kept.
    pub fn add_file(&self, path: &Path) -> Result<Picture, String> {
        let size = std::fs::metadata(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .len();
        if size > MAX_PICTURE_BYTES {
            return Err(format!(
                "{} is {} MB; pictures of at most {} MB are taken",
                path.display(),
                size >> 20,
                MAX_PICTURE_BYTES >> 20
            ));
        }
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        self.add(&bytes, name.as_deref())
    }

    /// The kept bytes of `picture`, checked against its hash (a file changed or lost since
    /// is an error, never another picture).
    pub fn bytes_of(&self, picture: &Picture) -> Result<Vec<u8>, String> {
        let path = self.path_of(picture);
        let bytes = std::fs::read(&path).map_err(|e| {
            format!(
                "the picture {} is no longer kept ({}): {e}",
                picture.mention(),
                path.display()
            )
        })?;
        if hex(&Sha256::digest(&bytes)) != picture.sha256 {
            return Err(format!(
                "the picture {} was changed on disk; it is not sent",
                picture.mention()
            ));
        }
        Ok(bytes)
    }

    /// The copy of `picture` a model that sees is sent: at most `max_side` pixels on its
    /// longest side, made in the reader's child once and kept in memory. Blocking.
    pub fn sent_copy(&self, picture: &Picture, max_side: u32) -> Result<Arc<SentPicture>, String> {
        let key = (picture.sha256.clone(), max_side);
        if let Some(copy) = self.cache().copies.get(&key) {
            return Ok(copy.clone());
        }
        let bytes = self.bytes_of(picture)?;
        let options = PictureOptions {
            max_side: Some(max_side),
            ocr_languages: Vec::new(),
        };
        let scaled = picture::prepare(&bytes, &options, self.limits)?
            .scaled
            .ok_or_else(|| "the picture could not be scaled".to_string())?;
        let copy = Arc::new(SentPicture {
            media_type: scaled.media_type.clone(),
            base64: base64_of(&scaled.data),
            width: scaled.width,
            height: scaled.height,
        });
        let mut cache = self.cache();
        cache.bytes += copy.base64.len();
        cache.copies.insert(key.clone(), copy.clone());
        cache.order.push(key);
        while cache.bytes > SENT_CACHE_BYTES && cache.order.len() > 1 {
            let oldest = cache.order.remove(0);
            if let Some(gone) = cache.copies.remove(&oldest) {
                cache.bytes -= gone.base64.len();
            }
        }
        Ok(copy)
    }

    /// A small copy of `picture` for a thumbnail, as a `data:` URL. Blocking.
    pub fn thumbnail(&self, picture: &Picture, side: u32) -> Result<String, String> {
        let copy = self.sent_copy(picture, side)?;
        Ok(format!("data:{};base64,{}", copy.media_type, copy.base64))
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, SentCache> {
        self.sent.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
#[path = "attachments_tests.rs"]
mod tests;
