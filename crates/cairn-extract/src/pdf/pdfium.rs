//! A PDF read by PDFium (through `pdfium-render`, its library bound once per process):
//! each page's text, and the pages without a text layer that hold pictures rendered and
//! read by OCR while the reading's time lasts.

use std::path::Path;
use std::sync::OnceLock;

use image::GrayImage;
use pdfium_render::prelude::*;

use super::OCR_DPI;
use crate::{ocr, scanned, Extracted, Page, Reading, Unread};

/// The most pixels a side of a rendered page (a page 66 inches long at 300 dpi).
const MAX_SIDE: i32 = 20_000;

/// The process's PDFium, bound to the first library asked for.
static PDFIUM: OnceLock<Result<Pdfium, String>> = OnceLock::new();

/// PDFium with the library at `path` (the first path asked for in this process).
pub fn library(path: &Path) -> Result<&'static Pdfium, String> {
    PDFIUM
        .get_or_init(|| {
            Pdfium::bind_to_library(path)
                .map(Pdfium::new)
                .map_err(|e| format!("PDFium's library {} does not load: {e:?}", path.display()))
        })
        .as_ref()
        .map_err(Clone::clone)
}

fn open<'a>(pdfium: &'a Pdfium, bytes: &'a [u8]) -> Result<PdfDocument<'a>, String> {
    // An empty password opens a file encrypted with an empty user password.
    pdfium
        .load_pdf_from_byte_slice(bytes, Some(""))
        .map_err(|e| match e {
            PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::PasswordError) => {
                "the PDF is password-protected; it is not read".to_string()
            }
            PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::SecurityError) => {
                "the PDF's security handler is not supported; it is not read".to_string()
            }
            PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::FormatError) => {
                "the PDF cannot be read: it is damaged beyond repair or not a PDF".to_string()
            }
            other => format!("the PDF cannot be read: {other:?}"),
        })
}

/// How OCR stands for this reading: the languages, or why scanned pages are not read.
fn ocr_languages(reading: &Reading) -> Result<&[String], fn(&str) -> String> {
    match reading.options.ocr.as_deref() {
        None => Err(ocr::off),
        Some(_) if ocr::tesseract().is_none() => Err(ocr::missing),
        Some(languages) => Ok(languages),
    }
}

pub fn extract(pdfium: &Pdfium, bytes: &[u8], reading: &Reading) -> Result<Extracted, String> {
    let document = open(pdfium, bytes)?;
    let languages = ocr_languages(reading);
    let mut pages = Vec::new();
    let mut unread = 0u32;
    let mut why_unread: Option<String> = None;
    for (index, page) in document.pages().iter().enumerate() {
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let text = page
            .text()
            .map(|t| crate::html::tidy(&t.all()))
            .unwrap_or_default();
        let mut ocr = false;
        let text = if text.is_empty() && has_pictures(&page) {
            match read_scan(&page, &languages, reading) {
                Ok(text) => {
                    ocr = true;
                    text
                }
                Err(why) => {
                    unread += 1;
                    why_unread = Some(why);
                    String::new()
                }
            }
        } else {
            text
        };
        pages.push(Page {
            number: Some(number),
            text,
            ocr,
        });
    }
    let unread = why_unread.map(|why| Unread { pages: unread, why });
    Ok(Extracted { pages, unread })
}

/// A page's text by OCR, or why it was not read.
fn read_scan(
    page: &PdfPage,
    languages: &Result<&[String], fn(&str) -> String>,
    reading: &Reading,
) -> Result<String, String> {
    let languages = match languages {
        Ok(languages) => languages,
        Err(why) => return Err(why("its text is")),
    };
    if reading.ocr_left().is_some_and(|left| left.is_zero()) {
        return Err("OCR ran out of the time one file may take".into());
    }
    let grey = render(page, OCR_DPI)?;
    scanned::read(&grey, languages, reading)
}

/// Whether a page holds a picture (a scan, when it has no text).
fn has_pictures(page: &PdfPage) -> bool {
    page.objects()
        .iter()
        .any(|object| object.object_type() == PdfPageObjectType::Image)
}

/// A page as a grey picture at `dpi`, at most [`MAX_SIDE`] pixels a side.
fn render(page: &PdfPage, dpi: f32) -> Result<GrayImage, String> {
    let config = PdfRenderConfig::new()
        .scale_page_by_factor(dpi / 72.0)
        .set_maximum_width(MAX_SIDE)
        .set_maximum_height(MAX_SIDE)
        .use_grayscale_rendering(true);
    let bitmap = page
        .render_with_config(&config)
        .map_err(|e| format!("the page cannot be rendered: {e:?}"))?;
    let picture = bitmap
        .as_image()
        .map_err(|e| format!("the page cannot be rendered: {e:?}"))?;
    Ok(picture.into_luma8())
}

/// Every page of `bytes` rendered grey at `dpi`.
pub fn render_all(pdfium: &Pdfium, bytes: &[u8], dpi: f32) -> Result<Vec<GrayImage>, String> {
    let document = open(pdfium, bytes)?;
    document
        .pages()
        .iter()
        .map(|page| render(&page, dpi))
        .collect()
}
