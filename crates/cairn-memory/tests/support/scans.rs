//! Pictures of known text for the OCR tests: typed on a PDF page, rendered grey at 300 dpi
//! by PDFium, encoded as a picture file or wrapped as a scanned PDF page.

use std::io::Cursor;
use std::path::PathBuf;

use cairn_extract::ReadOptions;
use cairn_testkit::documents;
use cairn_testkit::pdfs::{self, Scan};
use image::{DynamicImage, GrayImage, ImageFormat};

/// OCR in English and PDFium, as the app reads with both installed.
pub fn with_ocr() -> ReadOptions {
    ReadOptions {
        ocr: Some(vec!["eng".into()]),
        pdfium: Some(pdfium()),
    }
}

pub fn pdfium() -> PathBuf {
    pdfs::pdfium_library()
}

/// `text` typed on a page and rendered grey at 300 dpi.
pub fn rendered(text: &str) -> GrayImage {
    cairn_extract::render_pages(&documents::pdf(&[text]), 300.0, &pdfium())
        .unwrap()
        .remove(0)
}

/// `text` as a picture file of `format`.
pub fn picture(text: &str, format: ImageFormat) -> Vec<u8> {
    encoded(rendered(text), format)
}

fn encoded(grey: GrayImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    DynamicImage::ImageLuma8(grey)
        .write_to(&mut out, format)
        .unwrap();
    out.into_inner()
}

/// A PDF of one scanned page per text: pictures only, no text layer.
pub fn scanned_pdf(pages: &[&str]) -> Vec<u8> {
    let scans: Vec<Scan> = pages
        .iter()
        .map(|text| {
            let grey = rendered(text);
            Scan {
                width: grey.width(),
                height: grey.height(),
                dpi: 300,
                jpeg: encoded(grey, ImageFormat::Jpeg),
            }
        })
        .collect();
    pdfs::scanned(&scans)
}
