use super::*;
use base64::Engine as _;
use cairn_testkit::pictures::{RECEIPT_PNG, RECEIPT_TEXT};
use pretty_assertions::assert_eq;

/// A workspace in a folder of a temp folder (the rest of it is outside the workspace).
fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
    (dir, ws)
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The width and height a PNG's header gives.
fn png_size(data_url: &str) -> (u32, u32) {
    let body = data_url
        .strip_prefix("data:image/png;base64,")
        .unwrap_or_else(|| panic!("not a PNG data URL: {}", &data_url[..40]));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn a_pasted_png_is_kept_once_and_comes_back_as_a_thumbnail_or_whole() {
    let (_dir, ws) = workspace();
    let attachments = ws.attachments();
    let picture = attach(attachments, Some("receipt.png"), &b64(RECEIPT_PNG)).unwrap();
    assert_eq!(
        (
            picture.media_type.as_str(),
            picture.width,
            picture.height,
            picture.bytes,
            picture.name.as_deref()
        ),
        (
            "image/png",
            900,
            220,
            RECEIPT_PNG.len() as u64,
            Some("receipt.png")
        )
    );
    let kept_file = attachments.path_of(&picture);
    assert_eq!(std::fs::read(&kept_file).unwrap(), RECEIPT_PNG);
    // The same bytes again: the same picture, still one file.
    let again = attach(attachments, None, &b64(RECEIPT_PNG)).unwrap();
    assert_eq!(again.sha256, picture.sha256);
    assert_eq!(std::fs::read_dir(attachments.dir()).unwrap().count(), 1);

    let thumbnail = copy_of(attachments, &picture, 120).unwrap();
    assert_eq!(png_size(&thumbnail), (120, 29));
    // Asked larger than it is: the picture itself.
    let whole = copy_of(attachments, &picture, MAX_VIEW_SIDE).unwrap();
    assert_eq!(whole, format!("data:image/png;base64,{}", b64(RECEIPT_PNG)));
    kept(attachments, std::slice::from_ref(&picture)).unwrap();
}

#[test]
fn what_is_not_a_picture_is_refused_saying_why_and_nothing_is_kept() {
    let (_dir, ws) = workspace();
    let attachments = ws.attachments();
    let text = attach(attachments, Some("notes.txt"), &b64(b"just some words\n")).unwrap_err();
    assert_eq!(text.code, ErrorCode::Invalid);
    assert!(text.message.starts_with("notes.txt: "), "{text:?}");
    assert!(text.message.contains("PNG, JPEG, WebP or GIF"), "{text:?}");
    let cut = attach(attachments, Some("cut.png"), &b64(&RECEIPT_PNG[..400])).unwrap_err();
    assert!(cut.message.contains("cannot be read"), "{cut:?}");
    let garbled = attach(attachments, None, "%%%").unwrap_err();
    assert!(
        garbled.message.contains("did not arrive whole"),
        "{garbled:?}"
    );
    assert!(!attachments.dir().exists());
}

#[test]
fn a_picture_the_page_made_up_is_refused() {
    let (_dir, ws) = workspace();
    let attachments = ws.attachments();
    let mut picture = attach(attachments, None, &b64(RECEIPT_PNG)).unwrap();
    let real = picture.sha256.clone();
    for sha in ["../../../etc/passwd", "ABC", &real.to_uppercase()] {
        picture.sha256 = sha.to_string();
        assert_eq!(
            copy_of(attachments, &picture, 64).unwrap_err().code,
            ErrorCode::Invalid,
            "{sha}"
        );
        assert!(kept(attachments, std::slice::from_ref(&picture)).is_err());
    }
    picture.sha256 = "0".repeat(64);
    assert_eq!(
        kept(attachments, std::slice::from_ref(&picture))
            .unwrap_err()
            .code,
        ErrorCode::NotFound
    );
    assert_eq!(
        copy_of(attachments, &picture, 64).unwrap_err().code,
        ErrorCode::NotFound
    );
}

#[test]
fn a_workspace_picture_is_shown_with_its_size_and_text() {
    let (_dir, ws) = workspace();
    std::fs::create_dir_all(ws.root().join("knowledge")).unwrap();
    std::fs::write(ws.root().join("knowledge/receipt.png"), RECEIPT_PNG).unwrap();
    let shown = read(&ws, "knowledge/receipt.png").unwrap();
    assert_eq!(
        (
            shown.media_type.as_str(),
            shown.width,
            shown.height,
            shown.bytes
        ),
        ("image/png", 900, 220, RECEIPT_PNG.len() as u64)
    );
    assert_eq!(png_size(&shown.url), (900, 220));
    let text = shown.text.unwrap_or_default();
    assert!(
        text.contains("42.50"),
        "{text:?} should hold {RECEIPT_TEXT:?}"
    );
}

#[test]
fn a_text_file_or_a_path_outside_the_workspace_is_not_shown_as_a_picture() {
    let (dir, ws) = workspace();
    std::fs::write(ws.root().join("fake.png"), "not a picture at all\n").unwrap();
    let text = read(&ws, "fake.png").unwrap_err();
    assert_eq!(text.code, ErrorCode::Invalid);
    assert!(text.message.starts_with("fake.png: "), "{text:?}");
    assert!(text.message.contains("PNG, JPEG, WebP or GIF"), "{text:?}");
    std::fs::write(dir.path().join("outside.png"), RECEIPT_PNG).unwrap();
    for path in [
        "../outside.png",
        &dir.path().join("outside.png").display().to_string(),
    ] {
        assert_eq!(
            read(&ws, path).unwrap_err().code,
            ErrorCode::InvalidPath,
            "{path}"
        );
    }
    // A link planted to lead out is not followed either.
    std::os::unix::fs::symlink(dir.path().join("outside.png"), ws.root().join("link.png")).unwrap();
    assert_eq!(
        read(&ws, "link.png").unwrap_err().code,
        ErrorCode::InvalidPath
    );
    assert_eq!(read(&ws, "gone.png").unwrap_err().code, ErrorCode::NotFound);
}
