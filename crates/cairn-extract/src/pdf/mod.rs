//! PDFs. With PDFium's library (`ReadOptions::pdfium`): the text of each page, a damaged
//! cross-reference table or trailer rebuilt as PDFium does, an empty user password tried
//! before a file is called password-protected, and a page without a text layer rendered
//! at 300 dpi and read by OCR. Without it: the text layer by pdf-extract, as before.

mod pdfium;
mod text_layer;

use std::path::Path;

use crate::{Extracted, Reading};

/// The resolution scanned pages are rendered at for OCR.
pub const OCR_DPI: f32 = 300.0;

pub fn extract(bytes: &[u8], reading: &Reading) -> Result<Extracted, String> {
    match reading.options.pdfium.as_deref() {
        Some(library) => match pdfium::library(library) {
            Ok(pdfium) => return pdfium::extract(pdfium, bytes, reading),
            Err(why) => {
                tracing::debug!(%why, "PDFs are read by pdf-extract (their text layer only)");
            }
        },
        None => tracing::debug!(
            "no PDFium library: PDFs are read by pdf-extract (their text layer only)"
        ),
    }
    text_layer::extract(bytes)
}

/// Every page of `pdf` as a grey picture at `dpi`, by PDFium's `library`: what OCR reads
/// of a scanned page (and what `cairn-bench knowledge` makes its scans of).
pub fn render_pages(pdf: &[u8], dpi: f32, library: &Path) -> Result<Vec<image::GrayImage>, String> {
    pdfium::render_all(pdfium::library(library)?, pdf, dpi)
}
