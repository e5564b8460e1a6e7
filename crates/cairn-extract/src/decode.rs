//! Decoding a picture someone else made, with its cost bounded: its size is checked from
//! its header before anything is allocated, the decoder is held to the same limits, a GIF
//! is read to its first frame and a cut-off JPEG is refused (the decoder would fill it with
//! grey). The conversation's pictures (`picture.rs`) and the index's (`scanned.rs`) share it.

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, ImageReader};

/// The most pixels a side of a picture that is read.
pub const MAX_SIDE: u32 = 20_000;
/// The most memory a decoded picture may take.
pub const MAX_DECODE_BYTES: u64 = 512 << 20;

/// Decodes a picture (a GIF's first frame) with the decoder held to [`MAX_SIDE`] and
/// [`MAX_DECODE_BYTES`].
pub fn decode(bytes: &[u8]) -> Result<DynamicImage, String> {
    let reader = || -> Result<ImageReader<Cursor<&[u8]>>, String> {
        let mut reader = ImageReader::new(Cursor::new(bytes))
            .with_guessed_format()
            .map_err(|e| format!("the picture cannot be read: {e}"))?;
        let mut limits = image::Limits::default();
        limits.max_image_width = Some(MAX_SIDE);
        limits.max_image_height = Some(MAX_SIDE);
        limits.max_alloc = Some(MAX_DECODE_BYTES);
        reader.limits(limits);
        Ok(reader)
    };
    // The header alone, read without the limits (which would refuse a bomb before its
    // size could be told).
    let (width, height) = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| format!("the picture cannot be read: {e}"))?
        .into_dimensions()
        .map_err(|e| format!("the picture cannot be read: {}", described(&e)))?;
    if width > MAX_SIDE || height > MAX_SIDE {
        return Err(format!(
            "the picture is {width} × {height} pixels; Cairn reads pictures of at most \
             {MAX_SIDE} pixels a side"
        ));
    }
    if u64::from(width) * u64::from(height) * 4 > MAX_DECODE_BYTES {
        return Err(format!(
            "the picture is {width} × {height} pixels, more than the {} MB Cairn decodes a \
             picture into",
            MAX_DECODE_BYTES >> 20
        ));
    }
    if image::guess_format(bytes).ok() == Some(ImageFormat::Jpeg) && !jpeg_ends(bytes) {
        return Err("the picture cannot be read: the JPEG ends early (truncated?)".into());
    }
    reader()?
        .decode()
        .map_err(|e| format!("the picture cannot be read: {}", described(&e)))
}

/// Whether a JPEG's last scan is followed by its end marker. The decoder fills a cut-off
/// picture with grey instead of failing; in entropy-coded data every 0xFF is followed by
/// 0x00, so an end marker after the last scan's start is the end of the picture.
fn jpeg_ends(bytes: &[u8]) -> bool {
    let last = |marker: u8| bytes.windows(2).rposition(|w| w == [0xFF, marker]);
    match (last(0xDA), last(0xD9)) {
        (Some(scan), Some(end)) => end > scan,
        _ => false,
    }
}

/// A decoder's error as a person reads it.
fn described(e: &image::ImageError) -> String {
    match e {
        image::ImageError::Limits(_) => format!(
            "it is larger than Cairn reads ({MAX_SIDE} pixels a side, {} MB decoded)",
            MAX_DECODE_BYTES >> 20
        ),
        image::ImageError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the file ends early (truncated?)".into()
        }
        other => other.to_string(),
    }
}

/// A picture encoded as `format`.
pub fn encode(picture: &DynamicImage, format: ImageFormat) -> Result<Vec<u8>, String> {
    let mut out = Cursor::new(Vec::new());
    picture
        .write_to(&mut out, format)
        .map_err(|e| format!("the picture cannot be encoded: {e}"))?;
    Ok(out.into_inner())
}
