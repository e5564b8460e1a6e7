//! Pictures for the conversation: what a PNG, JPEG, WebP or GIF really is (by its bytes,
//! not its name), its size, a copy scaled for a model that sees, and the text in it (OCR)
//! for one that does not.
//!
//! A picture is hostile input like any document: [`prepare`] decodes it in the reader's
//! child process (see `guard.rs`) with its memory and time limits, and the decoder itself
//! is held to [`MAX_SIDE`] pixels a side and [`MAX_DECODE_BYTES`] of pixels, checked from
//! the header before anything is allocated, so a decompression bomb costs a header read.
//! A GIF is read to its first frame only, however many it has.

use base64::Engine as _;
use image::{DynamicImage, ImageFormat};
use serde::{Deserialize, Serialize};

use crate::decode::{decode, encode};
use crate::guard::{self, Limits, PICTURE_JOB};

pub use crate::decode::{MAX_DECODE_BYTES, MAX_SIDE};
/// Past this many bytes, a scaled PNG is sent as JPEG instead (providers cap a picture at
/// about 5 MB once base64-encoded).
const MAX_PNG_BYTES: usize = 3_600_000;
/// What a picture is to be prepared for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PictureOptions {
    /// The longest side of a copy for a model (or a thumbnail); no copy when `None`.
    pub max_side: Option<u32>,
    /// The languages to read text in (Tesseract's names, e.g. `eng`); none: no OCR.
    pub ocr_languages: Vec<String>,
}

/// A picture, understood.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prepared {
    /// The picture's own type, from its bytes: `image/png`, `image/jpeg`, `image/webp`
    /// or `image/gif`.
    pub media_type: String,
    pub width: u32,
    pub height: u32,
    /// The copy for a model, when one was asked for: the picture itself when it already
    /// fits (a GIF always becomes its first frame).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaled: Option<Encoded>,
    /// The text read in it, when OCR was asked for and found some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Why no text could be read (OCR missing or failed), when OCR was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocr_error: Option<String>,
}

/// An encoded picture.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Encoded {
    pub media_type: String,
    #[serde(with = "base64_bytes")]
    pub data: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

impl std::fmt::Debug for Encoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoded")
            .field("media_type", &self.media_type)
            .field("bytes", &self.data.len())
            .field("width", &self.width)
            .field("height", &self.height)
            .finish()
    }
}

mod base64_bytes {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)
    }
}

impl Encoded {
    /// The picture as a `data:` URL.
    pub fn data_url(&self) -> String {
        format!(
            "data:{};base64,{}",
            self.media_type,
            base64::engine::general_purpose::STANDARD.encode(&self.data)
        )
    }
}

/// The media type of a picture the conversation takes, from its first bytes; `None` for
/// anything else (whatever its name says).
pub fn media_type_of(bytes: &[u8]) -> Option<&'static str> {
    match image::guess_format(bytes).ok()? {
        ImageFormat::Png => Some("image/png"),
        ImageFormat::Jpeg => Some("image/jpeg"),
        ImageFormat::WebP => Some("image/webp"),
        ImageFormat::Gif => Some("image/gif"),
        _ => None,
    }
}

/// Prepares a picture within `limits`: in a child process when this program serves (see
/// `guard.rs`), else on a thread. An error says why, for the user.
pub fn prepare(bytes: &[u8], options: &PictureOptions, limits: Limits) -> Result<Prepared, String> {
    if guard::serves() {
        if let Ok(program) = std::env::current_exe() {
            let json = serde_json::to_string(options).map_err(|e| e.to_string())?;
            let job = guard::Job {
                name: PICTURE_JOB,
                options: Some(json),
                shown: &[],
            };
            let answer: Option<Result<Prepared, String>> =
                guard::run_child(&program, job, bytes, limits)?;
            return answer.unwrap_or_else(|| Err(guard::crashed("picture", limits)));
        }
    }
    let bytes = bytes.to_vec();
    let options = options.clone();
    guard::on_thread(move || prepare_here(&bytes, &options), limits)
}

/// Prepares a picture here, in this thread: only for input already contained.
pub fn prepare_here(bytes: &[u8], options: &PictureOptions) -> Result<Prepared, String> {
    let media_type = media_type_of(bytes).ok_or_else(|| {
        let what = image::guess_format(bytes)
            .ok()
            .and_then(|f| f.extensions_str().first().copied())
            .map(|ext| format!("a {} file", ext.to_ascii_uppercase()))
            .unwrap_or_else(|| "not a picture Cairn reads".into());
        format!("its bytes are {what}; pictures are taken as PNG, JPEG, WebP or GIF")
    })?;
    let picture = decode(bytes)?;
    let (width, height) = (picture.width(), picture.height());
    let scaled = match options.max_side {
        None => None,
        Some(side) => Some(scaled_copy(bytes, media_type, &picture, side.max(1))?),
    };
    let (text, ocr_error) = if options.ocr_languages.is_empty() {
        (None, None)
    } else {
        match read_text(&picture, &options.ocr_languages) {
            Ok(text) if text.trim().is_empty() => (None, None),
            Ok(text) => (Some(text.trim().to_string()), None),
            Err(why) => (None, Some(why)),
        }
    };
    Ok(Prepared {
        media_type: media_type.to_string(),
        width,
        height,
        scaled,
        text,
        ocr_error,
    })
}

/// The copy of a picture for a model: the original bytes when they already fit and are
/// a still picture, else scaled to `side` on its longest side and encoded again (PNG for
/// PNG and GIF, as screenshots and drawings keep their edges; JPEG otherwise, or when the
/// PNG would be too large).
fn scaled_copy(
    bytes: &[u8],
    media_type: &str,
    picture: &DynamicImage,
    side: u32,
) -> Result<Encoded, String> {
    let (width, height) = (picture.width(), picture.height());
    let fits = width.max(height) <= side;
    if fits && media_type != "image/gif" {
        return Ok(Encoded {
            media_type: media_type.to_string(),
            data: bytes.to_vec(),
            width,
            height,
        });
    }
    let copy = if fits {
        picture.clone()
    } else {
        picture.resize(side, side, image::imageops::FilterType::Triangle)
    };
    let lossless = matches!(media_type, "image/png" | "image/gif");
    if lossless {
        let png = encode(&copy, ImageFormat::Png)?;
        if png.len() <= MAX_PNG_BYTES {
            return Ok(Encoded {
                media_type: "image/png".into(),
                data: png,
                width: copy.width(),
                height: copy.height(),
            });
        }
    }
    let rgb = DynamicImage::ImageRgb8(copy.to_rgb8());
    Ok(Encoded {
        media_type: "image/jpeg".into(),
        data: encode(&rgb, ImageFormat::Jpeg)?,
        width: copy.width(),
        height: copy.height(),
    })
}

/// The text in a picture, read as the index reads a picture file (grey, enlarged when
/// small, by Tesseract), with no time of its own: the reader child's limit holds.
fn read_text(picture: &DynamicImage, languages: &[String]) -> Result<String, String> {
    let reading = crate::Reading::new(crate::ReadOptions::default());
    crate::scanned::read(&picture.to_luma8(), languages, &reading)
}

#[cfg(test)]
#[path = "picture_tests.rs"]
mod tests;
