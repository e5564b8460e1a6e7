use cairn_testkit::pictures::{RECEIPT_PNG, RECEIPT_TEXT};
use pretty_assertions::assert_eq;

use super::*;

fn store(ocr: bool) -> (tempfile::TempDir, Attachments) {
    let dir = tempfile::tempdir().unwrap();
    let languages = if ocr {
        vec!["eng".to_string()]
    } else {
        Vec::new()
    };
    let store = Attachments::new(dir.path(), languages);
    (dir, store)
}

#[test]
fn a_picture_is_kept_once_by_its_hash_with_its_size_and_text() {
    let (dir, store) = store(tesseract_here());
    let first = store
        .add(RECEIPT_PNG, Some("/home/me/Pictures/receipt.png"))
        .unwrap();
    let again = store.add(RECEIPT_PNG, Some("copy.png")).unwrap();
    assert_eq!(first.sha256, again.sha256);
    assert_eq!(
        (first.media_type.as_str(), first.width, first.height),
        ("image/png", 900, 220)
    );
    assert_eq!(first.name.as_deref(), Some("receipt.png"));
    assert_eq!(first.bytes, RECEIPT_PNG.len() as u64);
    let kept: Vec<_> = std::fs::read_dir(dir.path().join(".cairn/attachments"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(kept, vec![format!("{}.png", first.sha256)]);
    if tesseract_here() {
        let text = first.text.unwrap();
        for line in RECEIPT_TEXT {
            assert!(text.contains(line), "{text:?} lacks {line:?}");
        }
    }
}

/// Whether Tesseract is installed here (set-up installs it; a machine without it still
/// runs the rest of each test).
pub(super) fn tesseract_here() -> bool {
    cairn_extract::ocr::tesseract().is_some()
}

#[test]
fn what_is_not_a_picture_is_refused_and_nothing_is_kept() {
    let (dir, store) = store(false);
    let why = store
        .add(b"%PDF-1.4 not a picture", Some("scan.png"))
        .unwrap_err();
    assert!(why.contains("PNG, JPEG, WebP or GIF"), "{why}");
    assert!(!dir.path().join(".cairn/attachments").exists());
}

#[test]
fn the_copy_sent_is_scaled_and_a_changed_file_is_never_sent() {
    let (dir, store) = store(false);
    let picture = store.add(RECEIPT_PNG, None).unwrap();
    let copy = store.sent_copy(&picture, 300).unwrap();
    assert_eq!((copy.width, copy.height), (300, 73));
    assert_eq!(copy.media_type, "image/png");
    // Another picture written over the kept one is noticed, not sent in its place.
    let path = dir
        .path()
        .join(".cairn/attachments")
        .join(picture.file_name());
    let other = image::DynamicImage::new_rgb8(10, 10);
    other
        .save_with_format(&path, image::ImageFormat::Png)
        .unwrap();
    let why = store.sent_copy(&picture, 200).unwrap_err();
    assert!(why.contains("changed on disk"), "{why}");
}

#[test]
fn an_oversized_file_is_refused_before_it_is_read() {
    let (dir, store) = store(false);
    let big = dir.path().join("big.png");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(MAX_PICTURE_BYTES + 1).unwrap();
    let why = store.add_file(&big).unwrap_err();
    assert!(why.contains("at most 32 MB"), "{why}");
}
