//! `cairn ask --attach FILE`: pictures kept in the workspace beside the message (as the
//! window's composer keeps them), documents (PDF, DOCX, ODT, EPUB, HTML) and text files
//! read into it. Every file is read with the document reader's limits, in its child.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use cairn_app::cairn_extract::guard::{self, Limits};
use cairn_app::cairn_extract::{picture, Kind};
use cairn_app::cairn_memory::{attachments::MAX_PICTURE_BYTES, Workspace};
use cairn_protocol::Picture;

/// The most of one document's text put in the message; the rest is cut, saying so.
const MAX_DOCUMENT_CHARS: usize = 100_000;

/// What the attached files became.
#[derive(Debug, Default)]
pub struct Attached {
    pub pictures: Vec<Picture>,
    /// The documents' text, each in a `<document>` element, to follow the message.
    pub documents: String,
}

/// Reads `files`. A file that cannot be attached is an error naming it and why; nothing is
/// sent then.
pub fn read(workspace: &Workspace, files: &[PathBuf]) -> anyhow::Result<Attached> {
    let mut attached = Attached::default();
    for file in files {
        let size = std::fs::metadata(file)
            .with_context(|| format!("cannot attach {}", file.display()))?
            .len();
        if size > MAX_PICTURE_BYTES.max(64 << 20) {
            bail!(
                "cannot attach {}: it is {} MB, more than the {} MB taken",
                file.display(),
                size >> 20,
                MAX_PICTURE_BYTES.max(64 << 20) >> 20
            );
        }
        let bytes =
            std::fs::read(file).with_context(|| format!("cannot attach {}", file.display()))?;
        if picture::media_type_of(&bytes).is_some() {
            let picture = workspace
                .attachments()
                .add_file(file)
                .map_err(|why| anyhow::anyhow!("cannot attach {}: {why}", file.display()))?;
            attached.pictures.push(picture);
            continue;
        }
        let text = document_text(workspace, file, &bytes)?;
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !attached.documents.is_empty() {
            attached.documents.push_str("\n\n");
        }
        attached.documents.push_str(&format!(
            "<document name=\"{}\">\n{}\n</document>",
            name.replace(['"', '<', '>'], "_"),
            capped(&text)
        ));
    }
    Ok(attached)
}

/// A document's text: read by the document reader by its extension (as the index reads it:
/// PDFium when installed, scanned pages by OCR in the workspace's languages), else the file
/// itself when it is UTF-8 text.
fn document_text(workspace: &Workspace, file: &Path, bytes: &[u8]) -> anyhow::Result<String> {
    let ext = file
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let kind = match ext.as_str() {
        "htm" | "xhtml" => Some(Kind::Html),
        other => Kind::parse(other),
    };
    if let Some(kind) = kind {
        let options = cairn_app::launch::document_options(workspace);
        let extracted = guard::extract_with(kind, bytes, Limits::default(), &options)
            .map_err(|why| anyhow::anyhow!("cannot attach {}: {why}", file.display()))?;
        let pages: Vec<String> = extracted
            .pages
            .iter()
            .map(|page| match page.number {
                Some(n) => format!("[page {n}]\n{}", page.text.trim()),
                None => page.text.trim().to_string(),
            })
            .collect();
        return Ok(pages.join("\n\n"));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) if !bytes.contains(&0) => Ok(text.to_string()),
        _ => bail!(
            "cannot attach {}: it is not a picture (PNG, JPEG, WebP, GIF), a document (PDF, \
             DOCX, ODT, EPUB, HTML) or a text file",
            file.display()
        ),
    }
}

/// At most [`MAX_DOCUMENT_CHARS`] of `text`, saying when it was cut.
fn capped(text: &str) -> String {
    match text.char_indices().nth(MAX_DOCUMENT_CHARS) {
        None => text.to_string(),
        Some((cut, _)) => format!(
            "{}\n[… cut: the document has {} characters; the first {MAX_DOCUMENT_CHARS} are \
             shown]",
            &text[..cut],
            text.chars().count()
        ),
    }
}
