//! The readers of each format, and the guard run on a thread (this program does not serve).

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cairn_testkit::documents;
use pretty_assertions::assert_eq;

use super::*;

fn texts(extracted: &Extracted) -> Vec<(Option<u32>, String)> {
    extracted
        .pages
        .iter()
        .map(|p| (p.number, p.text.clone()))
        .collect()
}

#[test]
fn a_pdf_is_read_page_by_page() {
    let pdf = documents::pdf(&[
        "Quince jam\nBoil the fruit slowly.",
        "Second page about pectin.",
        "Third page.",
    ]);
    let extracted = extract_here(Kind::Pdf, &pdf).unwrap();
    let pages = texts(&extracted);
    assert_eq!(pages.len(), 3);
    assert_eq!(pages[0].0, Some(1));
    assert!(pages[0].1.contains("Quince jam"), "{pages:?}");
    assert!(pages[0].1.contains("Boil the fruit slowly."), "{pages:?}");
    assert!(pages[1].1.contains("pectin") && !pages[0].1.contains("pectin"));
    assert_eq!(pages[2].0, Some(3));
}

#[test]
fn a_pdf_without_a_text_layer_says_so() {
    let error = extract_here(Kind::Pdf, &documents::pdf(&["", ""])).unwrap_err();
    assert!(error.contains("no text layer"), "{error}");
}

#[test]
fn broken_documents_are_refused_with_a_reason_not_a_panic() {
    let pdf = documents::pdf(&["Some text here."]);
    let cases = [
        (
            Kind::Pdf,
            b"%PDF-1.5\n garbage".to_vec(),
            "the PDF cannot be read: ",
        ),
        (
            Kind::Pdf,
            pdf[..pdf.len() / 2].to_vec(),
            "the PDF cannot be read: ",
        ),
        (
            Kind::Docx,
            b"PK\x03\x04 not really".to_vec(),
            "not a valid DOCX file (its zip container: ",
        ),
        (
            Kind::Odt,
            documents::zip(&[("content.xml", b"<unclosed".as_slice())]),
            "its XML cannot be read: ",
        ),
        (
            Kind::Epub,
            documents::zip(&[("mimetype", b"x".as_slice())]),
            "not an EPUB file (it has no META-INF/container.xml)",
        ),
        (
            Kind::Docx,
            documents::zip(&[("other.xml", b"<a/>".as_slice())]),
            "not a DOCX file (it has no word/document.xml)",
        ),
    ];
    // Each reason is the reader's own; a caught panic ("the … reader crashed") is none.
    let reasons: Vec<String> = cases
        .iter()
        .map(|(kind, bytes, want)| {
            let error = guard::extract(*kind, bytes, guard::Limits::default()).unwrap_err();
            if error.starts_with(want) {
                want.to_string()
            } else {
                error
            }
        })
        .collect();
    let wants: Vec<&str> = cases.iter().map(|(_, _, want)| *want).collect();
    assert_eq!(reasons, wants);
}

#[test]
fn docx_and_odt_keep_headings_and_paragraphs() {
    let paragraphs = [
        (Some(1), "Garden plan"),
        (None, "Tomatoes by the south wall & basil beside them."),
        (Some(2), "Watering"),
        (None, "Every morning in July."),
    ];
    let want = "# Garden plan\nTomatoes by the south wall & basil beside them.\n\n## Watering\nEvery morning in July.";
    let docx = extract_here(Kind::Docx, &documents::docx(&paragraphs)).unwrap();
    assert_eq!(texts(&docx), [(None, want.to_string())]);
    let odt = extract_here(Kind::Odt, &documents::odt(&paragraphs)).unwrap();
    assert_eq!(texts(&odt), [(None, want.to_string())]);
}

#[test]
fn an_epub_is_read_in_spine_order_with_chapter_headings() {
    let book = documents::epub(&[
        ("The Harbour", "Boats come in at dawn."),
        ("The Lighthouse", "The keeper logs the weather."),
    ]);
    let text = extract_here(Kind::Epub, &book).unwrap().pages[0]
        .text
        .clone();
    let harbour = text.find("# The Harbour").unwrap();
    let lighthouse = text.find("# The Lighthouse").unwrap();
    assert!(harbour < lighthouse, "{text}");
    assert!(text.contains("The keeper logs the weather."), "{text}");
}

#[test]
fn html_files_are_read_as_their_readable_text() {
    let html = "<html><head><title>Trip</title><style>p{}</style></head><body>\
                <h1>Croatia</h1><p>The ferry to <b>Hvar</b> leaves at nine.</p></body></html>";
    let text = extract_here(Kind::Html, html.as_bytes()).unwrap().pages[0]
        .text
        .clone();
    assert!(
        text.contains("Croatia") && text.contains("**Hvar**"),
        "{text}"
    );
    assert!(!text.contains("p{}"), "{text}");
}

#[test]
fn a_zip_bomb_is_refused_before_it_inflates() {
    let zeros = vec![b' '; (zipped::MAX_MEMBER_BYTES + 1024) as usize];
    let bomb = documents::zip(&[("word/document.xml", zeros.as_slice())]);
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    let error = extract_here(Kind::Docx, &bomb).unwrap_err();
    assert!(error.contains("inflates past"), "{error}");
}

#[test]
fn entities_cannot_expand() {
    let laughs = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">\
                  <!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>\
                  <w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">\
                  <w:body><w:p><w:r><w:t>&lol2;</w:t></w:r></w:p></w:body></w:document>";
    let docx = documents::zip(&[("word/document.xml", laughs.as_bytes())]);
    let error = extract_here(Kind::Docx, &docx).unwrap_err();
    assert!(error.contains("XML cannot be read"), "{error}");
}

/// How long [`slow_reader`] takes: far past any limit a test sets.
const SLOW_READ: Duration = Duration::from_secs(30);

/// A reader stuck on its file.
fn slow_reader(_: Kind, _: &[u8]) -> Result<Extracted, String> {
    std::thread::sleep(SLOW_READ);
    Ok(Extracted::text("read at last".into()))
}

#[test]
fn a_reader_that_runs_too_long_is_abandoned_in_time() {
    let limits = guard::Limits {
        timeout: Duration::from_millis(500),
        ..guard::Limits::default()
    };
    let started = Instant::now();
    let error = guard::in_thread(slow_reader, Kind::Pdf, b"", limits).unwrap_err();
    let elapsed = started.elapsed();
    assert_eq!(
        error,
        "reading it took longer than 500 ms; it was abandoned"
    );
    assert!(
        elapsed >= limits.timeout && elapsed < limits.timeout + Duration::from_secs(5),
        "gave up after {elapsed:?}, the limit being {:?} and the read {SLOW_READ:?}",
        limits.timeout
    );
}

#[test]
fn extracted_text_is_capped() {
    let mut extracted = Extracted {
        pages: vec![
            Page {
                number: Some(1),
                text: "é".repeat(MAX_TEXT_BYTES),
                ocr: false,
            },
            Page {
                number: Some(2),
                text: "more".into(),
                ocr: false,
            },
        ],
        unread: None,
    };
    cap(&mut extracted);
    assert_eq!(extracted.pages.len(), 1);
    assert!(extracted.pages[0].text.len() <= MAX_TEXT_BYTES);
}
