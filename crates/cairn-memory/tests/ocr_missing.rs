//! Without Tesseract, pictures and scanned pages are left out with one reason that says
//! what to install, never as failures. A test program of its own: it empties `PATH`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::time::Duration;

use cairn_memory::index::FileStatus;
use cairn_memory::{IndexOptions, MemoryIndex, Workspace};
use image::ImageFormat;

#[path = "support/scans.rs"]
mod scans;

#[test]
fn a_missing_tesseract_is_one_reason_to_install_it_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
    let root = ws.root().to_path_buf();
    fs::create_dir_all(root.join("scans")).unwrap();
    let note = scans::picture("Feed the sourdough starter", ImageFormat::Png);
    fs::write(root.join("scans/note.png"), note).unwrap();
    let log = scans::scanned_pdf(&["Tide at six.", "Moon full."]);
    fs::write(root.join("scans/log.pdf"), log).unwrap();
    // Tesseract is nowhere on the way programs are found.
    let empty = dir.path().join("bin");
    fs::create_dir_all(&empty).unwrap();
    std::env::set_var("PATH", &empty);
    assert_eq!(cairn_extract::ocr::tesseract(), None);
    let options = IndexOptions {
        debounce: Duration::from_millis(50),
        read: scans::with_ocr(),
        ..IndexOptions::default()
    };
    let index = MemoryIndex::open(&ws, options).unwrap();
    index.sync().unwrap();
    let report = index.files_report().unwrap();
    let status: Vec<(&str, FileStatus)> = report
        .files
        .iter()
        .filter(|f| f.path.starts_with("scans/"))
        .map(|f| (f.path.as_str(), f.status))
        .collect();
    assert_eq!(
        status,
        [
            ("scans/log.pdf", FileStatus::Skipped),
            ("scans/note.png", FileStatus::Skipped)
        ]
    );
    assert_eq!(report.failed, 0);
    assert_eq!(
        report.unread_scans,
        ["3 scanned pages not read: install tesseract-ocr"]
    );
}
