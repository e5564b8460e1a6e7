//! Pictures of text for the index: a picture file (PNG, JPEG, WebP, TIFF, known by its
//! bytes whatever its name says) and a scanned PDF page, made grey and read by OCR.
//! A picture's size is checked from its header before anything is allocated, and the
//! decoder is held to the same limits, so a decompression bomb costs a header read.

use image::{DynamicImage, GrayImage, ImageFormat};

use crate::decode::{decode, encode};
use crate::{ocr, Extracted, Page, Reading};

/// Pictures smaller than this on their longest side are enlarged twice for OCR: text in a
/// screenshot is smaller than Tesseract reads well.
const ENLARGE_BELOW: u32 = 1_600;

/// The text of a picture file, as one page read by OCR. An error says why, for the user:
/// OCR off begins with [`ocr::OFF`], Tesseract missing with [`ocr::MISSING`].
pub fn picture(bytes: &[u8], reading: &Reading) -> Result<Extracted, String> {
    let languages = reading
        .options
        .ocr
        .as_deref()
        .ok_or_else(|| ocr::off("text in pictures is"))?;
    if ocr::tesseract().is_none() {
        return Err(ocr::missing("text in pictures is"));
    }
    let what = image::guess_format(bytes).ok();
    if !matches!(
        what,
        Some(ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::WebP | ImageFormat::Tiff)
    ) {
        return Err("not a picture: its bytes are no PNG, JPEG, WebP or TIFF".into());
    }
    let grey = decode(bytes)?.into_luma8();
    let text = read(&grey, languages, reading)?;
    Ok(Extracted {
        pages: vec![Page {
            number: None,
            text,
            ocr: true,
        }],
        unread: None,
    })
}

/// The text of a grey picture, by OCR within the reading's time.
pub fn read(grey: &GrayImage, languages: &[String], reading: &Reading) -> Result<String, String> {
    let grey = if grey.width().max(grey.height()) < ENLARGE_BELOW {
        image::imageops::resize(
            grey,
            grey.width() * 2,
            grey.height() * 2,
            image::imageops::FilterType::CatmullRom,
        )
    } else {
        grey.clone()
    };
    let png = encode(&DynamicImage::ImageLuma8(grey), ImageFormat::Png)?;
    let limit = reading
        .ocr_left()
        .map_or(ocr::MAX_TIME, |left| left.min(ocr::MAX_TIME));
    ocr::read_text_within(&png, languages, limit)
}
