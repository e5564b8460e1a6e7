//! Files dropped onto the window. Pictures (PNG, JPEG, WebP, GIF) are kept in the
//! workspace's attachments and go with the next message. Text files and documents (PDF,
//! DOCX, ODT, EPUB, HTML) are copied into `knowledge/inbox/` (never over
//! a file there: a name taken gets `-2`, `-3`…), so the conversation can refer to them and
//! the index finds them; a file already in the workspace is referred to where it is.
//!
//! The paths come only from the operating system's drop event, never from the page: a page
//! that could name paths could copy any file the user can read into the workspace.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use cairn_app::cairn_core::tools::output::looks_binary;
use cairn_app::cairn_memory::source::Format;
use cairn_app::cairn_memory::{beneath, Workspace};
use cairn_protocol::Picture;
use serde::Serialize;
use ts_rs::TS;

/// Where dropped files go.
pub const INBOX: &str = "knowledge/inbox";

/// Larger text files are refused: the inbox is for notes and documents, not data sets.
pub const MAX_DROPPED_BYTES: u64 = 5 * 1024 * 1024;
/// Larger documents are refused (the index reads documents up to this size by default).
pub const MAX_DROPPED_DOCUMENT_BYTES: u64 = 50 * 1024 * 1024;

/// What a drop did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, TS)]
pub struct Dropped {
    /// Workspace paths of the files, in the order dropped.
    pub added: Vec<String>,
    /// The pictures, kept in the attachments for the next message.
    pub pictures: Vec<Picture>,
    /// Files left out, and why.
    pub refused: Vec<Refused>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct Refused {
    pub name: String,
    pub reason: String,
}

/// Keeps the pictures among `paths` for the next message and copies the text files and
/// documents into the inbox.
pub fn add(workspace: &Workspace, paths: &[PathBuf]) -> Dropped {
    let mut dropped = Dropped::default();
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        if is_picture(path) {
            match workspace.attachments().add_file(path) {
                Ok(picture) => dropped.pictures.push(picture),
                Err(reason) => dropped.refused.push(Refused { name, reason }),
            }
            continue;
        }
        match add_one(workspace, path, &name) {
            Ok(rel) => dropped.added.push(rel),
            Err(reason) => dropped.refused.push(Refused { name, reason }),
        }
    }
    dropped
}

/// Whether a dropped file is meant as a picture: by its name, or by its first bytes.
fn is_picture(path: &Path) -> bool {
    let by_name = path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        super::pictures::PICTURE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str())
    });
    by_name || sniffed(path).is_some()
}

/// The picture type a regular file's first bytes say it is.
fn sniffed(path: &Path) -> Option<&'static str> {
    let mut file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut head = [0u8; 32];
    let read = file.read(&mut head).ok()?;
    cairn_app::cairn_extract::picture::media_type_of(&head[..read])
}

fn add_one(workspace: &Workspace, path: &Path, name: &str) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot be read: {e}"))?;
    if meta.is_dir() {
        return Err("folders are not added; drop the files in it".into());
    }
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let document = Format::of(name).is_some_and(Format::is_document);
    let limit = if document {
        MAX_DROPPED_DOCUMENT_BYTES
    } else {
        MAX_DROPPED_BYTES
    };
    if meta.len() > limit {
        return Err(format!("larger than {} MiB", limit / (1024 * 1024)));
    }
    // A file of the workspace is referred to where it is (if a tool could read it there).
    if let Ok(real) = path.canonicalize() {
        if let Ok(root) = workspace.root().canonicalize() {
            if let Ok(rel) = real.strip_prefix(&root) {
                let rel = rel.to_string_lossy().replace('\\', "/");
                if workspace
                    .resolve(&rel, cairn_app::cairn_memory::Access::Read)
                    .is_ok()
                {
                    return Ok(rel);
                }
            }
        }
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot be read: {e}"))?;
    if !document && (looks_binary(&bytes) || std::str::from_utf8(&bytes).is_err()) {
        return Err(
            "not a text file, a document (PDF, DOCX, ODT, EPUB, HTML) or a picture (PNG, JPEG, \
             WebP, GIF)"
                .into(),
        );
    }
    let (stem, extension) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    let stem = clean(stem);
    let absent = |on_disk: Option<&[u8]>| on_disk.is_none();
    for n in 1..=1000 {
        let candidate = match n {
            1 => format!("{INBOX}/{stem}{extension}"),
            n => format!("{INBOX}/{stem}-{n}{extension}"),
        };
        match beneath::replace_if(workspace.root(), &candidate, &bytes, absent) {
            Ok(beneath::Swap::Replaced) => return Ok(candidate),
            Ok(beneath::Swap::Kept) => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
    Err("too many files of that name in the inbox".into())
}

/// A file name safe in the workspace: no separators or control characters, not hidden.
fn clean(stem: &str) -> String {
    let cleaned: String = stem
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '/' | '\\' | ':') {
                '_'
            } else {
                c
            }
        })
        .collect();
    let cleaned = cleaned.trim_start_matches('.').trim();
    if cleaned.is_empty() {
        "dropped".into()
    } else {
        cleaned.chars().take(120).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn setup() -> (tempfile::TempDir, Workspace, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
        let outside = dir.path().join("desktop");
        fs::create_dir_all(&outside).unwrap();
        (dir, ws, outside)
    }

    #[test]
    fn text_files_land_in_the_inbox_and_never_over_another() {
        let (_dir, ws, out) = setup();
        fs::write(out.join("notes.md"), "# Notes\n").unwrap();
        fs::create_dir_all(out.join("other")).unwrap();
        fs::write(out.join("other/notes.md"), "# Other notes\n").unwrap();
        let dropped = add(&ws, &[out.join("notes.md"), out.join("other/notes.md")]);
        assert_eq!(
            dropped.added,
            ["knowledge/inbox/notes.md", "knowledge/inbox/notes-2.md"]
        );
        let read = |rel: &str| fs::read_to_string(ws.root().join(rel)).unwrap();
        assert_eq!(read("knowledge/inbox/notes.md"), "# Notes\n");
        assert_eq!(read("knowledge/inbox/notes-2.md"), "# Other notes\n");
        assert!(dropped.refused.is_empty());
    }

    #[test]
    fn documents_are_copied_whole_into_the_inbox() {
        let (_dir, ws, out) = setup();
        let pdf = b"%PDF-1.7\n\x00\x01binary body\n%%EOF\n".to_vec();
        fs::write(out.join("Paper.PDF"), &pdf).unwrap();
        fs::write(
            out.join("big.pdf"),
            vec![0u8; MAX_DROPPED_DOCUMENT_BYTES as usize + 1],
        )
        .unwrap();
        let dropped = add(&ws, &[out.join("Paper.PDF"), out.join("big.pdf")]);
        assert_eq!(dropped.added, ["knowledge/inbox/Paper.PDF"]);
        assert_eq!(
            fs::read(ws.root().join("knowledge/inbox/Paper.PDF")).unwrap(),
            pdf
        );
        assert_eq!(dropped.refused[0].reason, "larger than 50 MiB");
    }

    #[test]
    fn folders_binaries_big_files_and_the_missing_are_refused_with_why() {
        let (_dir, ws, out) = setup();
        fs::write(out.join("tool.bin"), [0x7f, b'E', b'L', b'F', 0, 0, 1]).unwrap();
        fs::write(
            out.join("big.txt"),
            vec![b'a'; MAX_DROPPED_BYTES as usize + 1],
        )
        .unwrap();
        let dropped = add(
            &ws,
            &[
                out.clone(),
                out.join("tool.bin"),
                out.join("big.txt"),
                out.join("gone.md"),
            ],
        );
        assert!(dropped.added.is_empty(), "{dropped:?}");
        let reasons: Vec<(&str, &str)> = dropped
            .refused
            .iter()
            .map(|r| (r.name.as_str(), r.reason.as_str()))
            .collect();
        assert_eq!(
            reasons[0],
            ("desktop", "folders are not added; drop the files in it")
        );
        assert_eq!(
            reasons[1],
            (
                "tool.bin",
                "not a text file, a document (PDF, DOCX, ODT, EPUB, HTML) or a picture (PNG, \
                 JPEG, WebP, GIF)"
            )
        );
        assert_eq!(reasons[2], ("big.txt", "larger than 5 MiB"));
        assert!(reasons[3].1.starts_with("cannot be read"), "{reasons:?}");
        assert!(!ws.root().join(INBOX).exists());
    }

    #[test]
    fn a_workspace_file_is_referred_to_where_it_is_and_odd_names_are_made_safe() {
        let (_dir, ws, out) = setup();
        let own = ws.root().join("knowledge/car.md");
        fs::write(&own, "vehicle").unwrap();
        fs::write(out.join(".hidden\u{7}name.txt"), "text").unwrap();
        let dropped = add(&ws, &[own, out.join(".hidden\u{7}name.txt")]);
        assert_eq!(
            dropped.added,
            ["knowledge/car.md", "knowledge/inbox/hidden_name.txt"]
        );
    }

    #[test]
    fn pictures_are_kept_for_the_message_and_a_broken_one_says_why() {
        let (_dir, ws, out) = setup();
        let receipt = cairn_testkit::pictures::RECEIPT_PNG;
        fs::write(out.join("Receipt.PNG"), receipt).unwrap();
        // Named as anything: its bytes make it a picture.
        fs::write(out.join("scan"), receipt).unwrap();
        fs::write(out.join("cut.jpg"), &receipt[..300]).unwrap();
        let dropped = add(
            &ws,
            &[
                out.join("Receipt.PNG"),
                out.join("scan"),
                out.join("cut.jpg"),
            ],
        );
        assert!(dropped.added.is_empty(), "{dropped:?}");
        let names: Vec<Option<&str>> = dropped.pictures.iter().map(|p| p.name.as_deref()).collect();
        assert_eq!(names, [Some("Receipt.PNG"), Some("scan")]);
        assert_eq!(dropped.pictures[0].sha256, dropped.pictures[1].sha256);
        assert_eq!(
            fs::read(ws.attachments().path_of(&dropped.pictures[0])).unwrap(),
            receipt
        );
        assert_eq!(dropped.refused.len(), 1, "{dropped:?}");
        assert_eq!(dropped.refused[0].name, "cut.jpg");
        assert!(
            dropped.refused[0].reason.contains("cannot be read"),
            "{dropped:?}"
        );
        assert!(!ws.root().join(INBOX).exists());
    }
}
