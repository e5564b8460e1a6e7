//! Pictures and scanned PDF pages in memory: found by the text OCR reads in them, in the
//! workspace and in folders searched in place, with their pages; OCR off leaves them out
//! and says so, and turning it on reaches them without touching them; hostile pictures
//! are refused with a reason. Needs Tesseract (`scripts/setup.sh`) and PDFium's library
//! (`scripts/fetch-model.sh`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;
use std::time::Duration;

use cairn_extract::ReadOptions;
use cairn_memory::index::FileStatus;
use cairn_memory::{IndexOptions, MemoryIndex, SearchQuery, Workspace};
use cairn_testkit::documents;
use image::ImageFormat;

#[path = "support/scans.rs"]
mod scans;

fn put(root: &Path, path: &str, bytes: &[u8]) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

fn options(read: ReadOptions) -> IndexOptions {
    IndexOptions {
        debounce: Duration::from_millis(50),
        read,
        ..IndexOptions::default()
    }
}

/// The first hit's path and page for `text`, when there is one.
fn first_hit(index: &MemoryIndex, text: &str) -> Option<(String, Option<u32>)> {
    let results = index.search(&SearchQuery::new(text)).unwrap().results;
    results.first().map(|hit| (hit.path.clone(), hit.page))
}

#[test]
fn pictures_and_scanned_pages_are_found_by_their_text_with_pages() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("Scans");
    put(
        &outside,
        "receipt.jpg",
        &scans::picture("Invoice for the teak garden bench", ImageFormat::Jpeg),
    );
    let ws = Workspace::open_or_create(&dir.path().join("ws"))
        .unwrap()
        .with_folders(std::slice::from_ref(&outside));
    let root = ws.root().to_path_buf();
    put(
        &root,
        "knowledge/whiteboard.png",
        &scans::picture("Plant the quinces before the first frost", ImageFormat::Png),
    );
    put(
        &root,
        "papers/letter.pdf",
        &scans::scanned_pdf(&["Dear neighbour,", "The harbour wall needs mending."]),
    );
    put(
        &root,
        "papers/typed.pdf",
        &documents::pdf(&["Anchor chain notes."]),
    );
    let index = MemoryIndex::open(&ws, options(scans::with_ocr())).unwrap();
    index.sync().unwrap();
    assert_eq!(
        first_hit(&index, "quinces frost"),
        Some(("knowledge/whiteboard.png".into(), None))
    );
    assert_eq!(
        first_hit(&index, "harbour wall"),
        Some(("papers/letter.pdf".into(), Some(2)))
    );
    assert_eq!(
        first_hit(&index, "teak bench"),
        Some(("Scans/receipt.jpg".into(), None))
    );
    let report = index.files_report().unwrap();
    let ocr: Vec<(&str, FileStatus, u32)> = report
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.status, f.ocr_pages))
        .filter(|f| f.0.contains('.') && !f.0.ends_with(".md"))
        .collect();
    assert_eq!(
        ocr,
        [
            ("knowledge/whiteboard.png", FileStatus::Indexed, 1),
            ("papers/letter.pdf", FileStatus::Indexed, 2),
            ("papers/typed.pdf", FileStatus::Indexed, 0),
            ("Scans/receipt.jpg", FileStatus::Indexed, 1),
        ]
    );
    assert_eq!(report.ocr_files, 3);
    assert!(report.unread_scans.is_empty(), "{:?}", report.unread_scans);
}

#[test]
fn with_ocr_off_pictures_and_scans_are_left_out_and_come_back_when_it_is_on() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
    let root = ws.root().to_path_buf();
    put(
        &root,
        "scans/note.png",
        &scans::picture("Feed the sourdough starter", ImageFormat::Png),
    );
    put(
        &root,
        "scans/log.pdf",
        &scans::scanned_pdf(&["Tide at six.", "Moon full."]),
    );
    let off = ReadOptions {
        ocr: None,
        ..scans::with_ocr()
    };
    let index = MemoryIndex::open(&ws, options(off)).unwrap();
    index.sync().unwrap();
    assert_eq!(first_hit(&index, "sourdough"), None);
    let report = index.files_report().unwrap();
    let status: Vec<(&str, FileStatus, Option<&str>)> = report
        .files
        .iter()
        .filter(|f| f.path.starts_with("scans/"))
        .map(|f| (f.path.as_str(), f.status, f.reason.as_deref()))
        .collect();
    let off_reason = "OCR is off (`[memory] ocr = false`)";
    assert_eq!(
        status,
        [
            (
                "scans/log.pdf",
                FileStatus::Skipped,
                Some(format!("2 scanned pages not read: {off_reason}").as_str())
            ),
            (
                "scans/note.png",
                FileStatus::Skipped,
                Some(format!("{off_reason}: text in pictures is not read").as_str())
            ),
        ]
    );
    assert_eq!(
        report.unread_scans,
        [format!("3 scanned pages not read: {off_reason}")]
    );
    assert_eq!(report.failed, 0);
    drop(index);
    // OCR on: the same files, untouched, are read again.
    let index = MemoryIndex::open(&ws, options(scans::with_ocr())).unwrap();
    let report = index.sync().unwrap();
    assert_eq!(report.changed, 2);
    assert_eq!(
        first_hit(&index, "sourdough"),
        Some(("scans/note.png".into(), None))
    );
    assert_eq!(
        first_hit(&index, "moon full"),
        Some(("scans/log.pdf".into(), Some(2)))
    );
    // And once read, they are not read again while nothing changes.
    drop(index);
    let index = MemoryIndex::open(&ws, options(scans::with_ocr())).unwrap();
    assert_eq!(index.sync().unwrap().changed, 0);
}

/// The peak of this process's resident memory, in MB.
fn peak_mb() -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb / 1024
}

#[test]
fn hostile_pictures_are_refused_with_a_reason_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
    let root = ws.root().to_path_buf();
    let jpeg = scans::picture("Tide tables", ImageFormat::Jpeg);
    put(
        &root,
        "in/bomb.png",
        &cairn_testkit::pictures::png_claiming(50_000, 50_000),
    );
    put(&root, "in/cut.jpg", &jpeg[..jpeg.len() / 2]);
    put(
        &root,
        "in/liar.png",
        b"%PDF-1.4 a PDF under a picture's name",
    );
    put(&root, "in/fine.jpeg", &jpeg);
    let before = peak_mb();
    let index = MemoryIndex::open(&ws, options(scans::with_ocr())).unwrap();
    let report = index.sync().unwrap();
    let reasons: std::collections::HashMap<_, _> = report.not_indexed.iter().cloned().collect();
    let wants = [
        ("in/bomb.png", "50000 × 50000 pixels"),
        ("in/cut.jpg", "the JPEG ends early"),
        ("in/liar.png", "not a picture"),
    ];
    for (path, want) in wants {
        assert!(reasons[path].contains(want), "{path}: {reasons:?}");
    }
    assert!(!reasons.contains_key("in/fine.jpeg"), "{reasons:?}");
    let grown = peak_mb().saturating_sub(before);
    // Decoding the bomb would take 2,384 MB of grey pixels.
    assert!(grown < 400, "the peak grew by {grown} MB");
    assert_eq!(
        first_hit(&index, "tide tables"),
        Some(("in/fine.jpeg".into(), None))
    );
}

#[test]
fn empty_documents_are_indexed_with_no_chunks_not_failed() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
    let root = ws.root().to_path_buf();
    put(&root, "docs/empty.docx", &documents::docx(&[]));
    put(&root, "docs/empty.odt", &documents::odt(&[]));
    put(&root, "docs/blank.pdf", &documents::pdf(&["", ""]));
    let index = MemoryIndex::open(&ws, options(scans::with_ocr())).unwrap();
    index.sync().unwrap();
    let report = index.files_report().unwrap();
    let docs: Vec<(&str, FileStatus, u64)> = report
        .files
        .iter()
        .filter(|f| f.path.starts_with("docs/"))
        .map(|f| (f.path.as_str(), f.status, f.chunks))
        .collect();
    assert_eq!(
        docs,
        [
            ("docs/blank.pdf", FileStatus::Indexed, 0),
            ("docs/empty.docx", FileStatus::Indexed, 0),
            ("docs/empty.odt", FileStatus::Indexed, 0),
        ]
    );
}

/// A scanned PDF longer than a file's own time allows for OCR is read whole: its text
/// layer within the limit, its scanned pages in a pass that may take longer.
#[test]
fn a_scanned_pdf_is_read_whole_past_the_files_own_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
    let root = ws.root().to_path_buf();
    let pages = [
        "Chapter one: the orchard.",
        "Chapter two: the quince harvest.",
        "Chapter three: the cider press.",
        "Chapter four: the bee hives.",
        "Chapter five: the hedge laying.",
        "Chapter six: the apple store.",
        "Chapter seven: the frost nights.",
        "Chapter eight: the winter pruning.",
    ];
    put(&root, "books/orchard.pdf", &scans::scanned_pdf(&pages));
    let mut options = options(scans::with_ocr());
    // Less than OCR needs for eight pages, more than reading the text layer takes.
    options.extract.timeout = Duration::from_millis(1_500);
    let index = MemoryIndex::open(&ws, options).unwrap();
    index.sync().unwrap();
    assert_eq!(
        first_hit(&index, "winter pruning"),
        Some(("books/orchard.pdf".into(), Some(8)))
    );
    let report = index.files_report().unwrap();
    let book = report
        .files
        .iter()
        .find(|f| f.path == "books/orchard.pdf")
        .unwrap();
    assert_eq!((book.status, book.ocr_pages), (FileStatus::Indexed, 8));
    assert!(report.unread_scans.is_empty(), "{:?}", report.unread_scans);
}
