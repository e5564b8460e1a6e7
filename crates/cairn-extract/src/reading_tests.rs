//! PDFs read by PDFium and pictures read by OCR, as real files come: scanned pages,
//! damaged cross-reference tables and trailers, encryption, empty documents. These need
//! PDFium's library (`scripts/fetch-model.sh`) and Tesseract (`scripts/setup.sh`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Cursor;
use std::time::Instant;

use cairn_testkit::documents;
use cairn_testkit::pdfs::{self, Scan};
use image::{DynamicImage, GrayImage, ImageFormat};
use pretty_assertions::assert_eq;

use super::*;

fn with_pdfium() -> ReadOptions {
    ReadOptions {
        ocr: Some(vec!["eng".into()]),
        pdfium: Some(pdfs::pdfium_library()),
    }
}

fn read(kind: Kind, bytes: &[u8], options: ReadOptions) -> Result<Extracted, String> {
    extract_with(kind, bytes, &Reading::new(options))
}

/// `text` printed on a page and rendered grey at 300 dpi, as a scanner would see it.
fn rendered(text: &str) -> GrayImage {
    let pdf = documents::pdf(&[text]);
    render_pages(&pdf, 300.0, &pdfs::pdfium_library())
        .unwrap()
        .remove(0)
}

fn encoded(grey: &GrayImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    DynamicImage::ImageLuma8(grey.clone())
        .write_to(&mut out, format)
        .unwrap();
    out.into_inner()
}

fn scan(text: &str) -> Scan {
    let grey = rendered(text);
    Scan {
        width: grey.width(),
        height: grey.height(),
        dpi: 300,
        jpeg: encoded(&grey, ImageFormat::Jpeg),
    }
}

fn texts(extracted: &Extracted) -> Vec<(Option<u32>, bool, String)> {
    extracted
        .pages
        .iter()
        .map(|p| (p.number, p.ocr, p.text.clone()))
        .collect()
}

#[test]
fn a_picture_of_text_is_read_by_ocr_whatever_its_format() {
    let grey = rendered("The ferry to Hvar leaves at nine.");
    for format in [ImageFormat::Png, ImageFormat::Jpeg, ImageFormat::Tiff] {
        let extracted = read(Kind::Image, &encoded(&grey, format), with_pdfium()).unwrap();
        assert_eq!(
            texts(&extracted),
            [(None, true, "The ferry to Hvar leaves at nine.".to_string())],
            "{format:?}"
        );
    }
}

#[test]
fn a_scanned_page_is_read_by_ocr_among_pages_with_text() {
    let typed = documents::pdf(&["Quince jam\nBoil the fruit slowly."]);
    let scanned = pdfs::scanned(&[scan("Second page about pectin.")]);
    // Page 1 typed, page 2 a scan: two files read one after the other by one reader.
    let first = read(Kind::Pdf, &typed, with_pdfium()).unwrap();
    let second = read(Kind::Pdf, &scanned, with_pdfium()).unwrap();
    assert_eq!(
        texts(&first),
        [(
            Some(1),
            false,
            "Quince jam\nBoil the fruit slowly.".to_string()
        )]
    );
    assert_eq!(
        texts(&second),
        [(Some(1), true, "Second page about pectin.".to_string())]
    );
    assert_eq!(second.unread, None);
}

#[test]
fn without_ocr_a_scanned_pdf_is_said_to_be_unread() {
    let options = ReadOptions {
        ocr: None,
        ..with_pdfium()
    };
    let scanned = pdfs::scanned(&[scan("Tide tables."), scan("Moon phases.")]);
    let extracted = read(Kind::Pdf, &scanned, options.clone()).unwrap();
    assert!(extracted.is_empty(), "{extracted:?}");
    let unread = extracted.unread.unwrap();
    assert_eq!(
        unread.described(),
        "2 scanned pages not read: OCR is off (`[memory] ocr = false`)"
    );
    let picture = encoded(&rendered("Tide tables."), ImageFormat::Png);
    let error = read(Kind::Image, &picture, options).unwrap_err();
    assert!(error.starts_with(ocr::OFF), "{error}");
}

#[test]
fn ocr_out_of_time_leaves_the_pages_unread_and_says_so() {
    let scanned = pdfs::scanned(&[scan("Tide tables.")]);
    let reading = Reading {
        options: with_pdfium(),
        ocr_until: Some(Instant::now()),
    };
    let unread = extract_with(Kind::Pdf, &scanned, &reading)
        .unwrap()
        .unread
        .unwrap();
    assert_eq!(
        unread.described(),
        "1 scanned page not read: OCR ran out of the time one file may take"
    );
}

#[test]
fn damaged_cross_references_are_repaired_and_a_cut_file_is_refused() {
    let pdf = pdfs::classic(&["Anchor chain.", "Second page, the windlass."]);
    for damaged in [pdfs::shifted_xref(&pdf), pdfs::without_xref(&pdf)] {
        assert_ne!(damaged, pdf);
        let extracted = read(Kind::Pdf, &damaged, with_pdfium()).unwrap();
        let pages: Vec<_> = extracted.pages.iter().map(|p| p.number).collect();
        assert_eq!(pages, [Some(1), Some(2)]);
        assert_eq!(extracted.pages[1].text, "Second page, the windlass.");
    }
    let cut = pdfs::truncated(&pdf, 0.3);
    let error = read(Kind::Pdf, &cut, with_pdfium()).unwrap_err();
    assert!(error.starts_with("the PDF cannot be read"), "{error}");
}

#[test]
fn an_empty_user_password_opens_and_a_real_one_is_named() {
    let open = pdfs::encrypted(&["The lighthouse keeper logs the weather."], "");
    let extracted = read(Kind::Pdf, &open, with_pdfium()).unwrap();
    assert_eq!(
        extracted.pages[0].text,
        "The lighthouse keeper logs the weather."
    );
    let locked = pdfs::encrypted(&["The lighthouse keeper logs the weather."], "secret");
    let error = read(Kind::Pdf, &locked, with_pdfium()).unwrap_err();
    assert_eq!(error, "the PDF is password-protected; it is not read");
}

#[test]
fn empty_documents_are_read_as_empty_not_failed() {
    let blank = read(Kind::Pdf, &documents::pdf(&["", ""]), with_pdfium()).unwrap();
    assert!(blank.is_empty() && blank.unread.is_none(), "{blank:?}");
    assert_eq!(blank.pages.len(), 2);
    let docx = read(Kind::Docx, &documents::docx(&[]), with_pdfium()).unwrap();
    assert!(docx.is_empty(), "{docx:?}");
    let odt = read(Kind::Odt, &documents::odt(&[]), with_pdfium()).unwrap();
    assert!(odt.is_empty(), "{odt:?}");
}

#[test]
fn without_pdfium_the_text_layer_is_read_as_before() {
    let pdf = documents::pdf(&["Anchor chain.", "Second page."]);
    let plain = ReadOptions::plain();
    let extracted = read(Kind::Pdf, &pdf, plain.clone()).unwrap();
    assert_eq!(extracted.pages[1].text, "Second page.");
    let error = read(Kind::Pdf, &pdfs::scanned(&[scan("Tide.")]), plain).unwrap_err();
    assert!(error.contains("no text layer"), "{error}");
}

#[test]
fn pictures_that_lie_or_are_cut_or_too_large_are_refused_with_a_reason() {
    let jpeg = encoded(&rendered("Tide tables."), ImageFormat::Jpeg);
    let bomb = cairn_testkit::pictures::png_claiming(50_000, 50_000);
    let cases: [(&[u8], &str); 3] = [
        (b"%PDF-1.4 named like a picture", "not a picture"),
        (&jpeg[..jpeg.len() / 2], "the JPEG ends early"),
        (&bomb, "50000 × 50000 pixels"),
    ];
    for (bytes, want) in cases {
        let error = read(Kind::Image, bytes, with_pdfium()).unwrap_err();
        assert!(error.contains(want), "{want}: {error}");
    }
}

#[test]
fn damaged_real_files_are_read_by_pdfium_where_pdf_extract_gives_up() {
    let files: [(&[u8], &str); 3] = [
        (
            include_bytes!("../tests/fixtures/pypdf/toy.pdf"),
            "AWAY again1\nAWAY again2\nSomething[cited]\nSingle quote operator\n\
             Double quote operator\nLast Txt",
        ),
        (
            include_bytes!("../tests/fixtures/pypdf/issue-297.pdf"),
            "test example",
        ),
        (
            include_bytes!("../tests/fixtures/pypdf/selenium-pypdf-issue-177.pdf"),
            "Fichier : Document 1 sans titre Page 1 sur 1\nHello World",
        ),
    ];
    for (bytes, want) in files {
        let old = read(Kind::Pdf, bytes, ReadOptions::plain()).unwrap_err();
        assert!(old.starts_with("the PDF cannot be read"), "{old}");
        let new = read(Kind::Pdf, bytes, with_pdfium()).unwrap();
        assert_eq!(texts(&new), [(Some(1), false, want.to_string())]);
    }
}
