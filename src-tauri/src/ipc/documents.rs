//! Documents (PDF, Word, OpenDocument, EPUB) for the page: their text as the index reads
//! it, page by page, so a search hit opens at its page; and the original opened in the
//! system's viewer. Nothing here writes.

use cairn_app::cairn_extract::Kind;
use cairn_app::cairn_memory::{Access, Workspace};
use serde::Serialize;
use ts_rs::TS;

use super::error::{AppError, AppResult, ErrorCode};

/// The largest document opened (the index's default limit for documents).
pub const MAX_DOCUMENT_BYTES: u64 = cairn_app::cairn_memory::index::MAX_DOCUMENT_BYTES;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct DocumentPage {
    /// 1-based, in a paged document (PDF); none for a document read as one text.
    pub number: Option<u32>,
    /// Markdown: headings as `#` lines.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct DocumentText {
    pub path: String,
    /// `pdf`, `docx`, `odt` or `epub`.
    pub kind: String,
    pub pages: Vec<DocumentPage>,
    /// Said when there is no text to show.
    pub note: Option<String>,
}

/// The document kind of `path` by its extension: the formats shown as extracted text
/// (HTML is text and opens in the editor).
pub fn kind_of(path: &str) -> Option<Kind> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (_, extension) = name.rsplit_once('.')?;
    match Kind::parse(&extension.to_ascii_lowercase())? {
        Kind::Html => None,
        kind => Some(kind),
    }
}

fn not_a_document(path: &str) -> AppError {
    AppError::invalid(format!("{path} is not a document (PDF, DOCX, ODT or EPUB)"))
}

/// Reads and extracts `path` (in the workspace or a folder searched in place), with the
/// index's cost limits: a reader that fails, hangs or balloons is an error, not a crash.
pub fn read(workspace: &Workspace, path: &str) -> AppResult<DocumentText> {
    let kind = kind_of(path).ok_or_else(|| not_a_document(path))?;
    // Checked first (hidden state, links out, a folder's bounds), then read beneath root.
    workspace.resolve(path, Access::Read)?;
    let (root, rel) = workspace.locate(path);
    let size = cairn_app::cairn_memory::beneath::open(root, rel)?
        .metadata()
        .map_err(|e| AppError::io(path, e))?
        .len();
    if size > MAX_DOCUMENT_BYTES {
        return Err(AppError::invalid(format!(
            "{path} is {} MB; documents over {} MB are not opened here",
            size >> 20,
            MAX_DOCUMENT_BYTES >> 20
        )));
    }
    let bytes = cairn_app::cairn_memory::beneath::read(root, rel, MAX_DOCUMENT_BYTES)?;
    // Read as the index reads it: PDFium when installed, scanned pages by OCR in the
    // workspace's languages.
    let options = cairn_app::launch::document_options(workspace);
    let extracted =
        cairn_app::cairn_extract::guard::extract_with(kind, &bytes, Default::default(), &options)
            .map_err(|why| AppError::new(ErrorCode::Io, format!("cannot read {path}: {why}")))?;
    // A PDF without a text layer is the extractor's error, which says so.
    // Scanned pages not read (no OCR, out of time) are said first: they are why text is
    // missing.
    let note = match &extracted.unread {
        Some(unread) => Some(format!("{}.", unread.described())),
        None => (!extracted.pages.iter().any(|p| !p.text.trim().is_empty()))
            .then(|| "This document has no text; open it in a viewer.".to_string()),
    };
    Ok(DocumentText {
        path: path.to_string(),
        kind: kind.as_str().to_string(),
        pages: extracted
            .pages
            .into_iter()
            .map(|p| DocumentPage {
                number: p.number,
                text: p.text,
            })
            .collect(),
        note,
    })
}

/// The file the system's viewer is to open: a document only. A script, a `.desktop`
/// entry or a program in a workspace someone else prepared is never handed to the
/// system's opener, which could run it.
pub fn viewable(workspace: &Workspace, path: &str) -> AppResult<std::path::PathBuf> {
    kind_of(path).ok_or_else(|| not_a_document(path))?;
    let full = workspace.resolve(path, Access::Read)?;
    if !full.is_file() {
        return Err(AppError::new(
            ErrorCode::NotFound,
            format!("{path} is not there"),
        ));
    }
    Ok(full)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipc::files::tests::workspace;

    #[test]
    fn a_pdf_reads_page_by_page_with_its_numbers() {
        let (_dir, workspace) = workspace();
        let pdf = cairn_testkit::documents::pdf(&["first page words", "", "third page tide"]);
        std::fs::create_dir_all(workspace.root().join("knowledge")).unwrap();
        std::fs::write(workspace.root().join("knowledge/Paper.PDF"), pdf).unwrap();
        let doc = read(&workspace, "knowledge/Paper.PDF").unwrap();
        assert_eq!(doc.kind, "pdf");
        let numbers: Vec<_> = doc.pages.iter().map(|p| p.number).collect();
        assert_eq!(numbers, [Some(1), Some(2), Some(3)]);
        assert!(doc.pages[2].text.contains("third page tide"));
        assert_eq!(doc.note, None);
    }

    #[test]
    fn a_pdf_without_text_says_so() {
        let (_dir, workspace) = workspace();
        let pdf = cairn_testkit::documents::pdf(&["", ""]);
        std::fs::write(workspace.root().join("scan.pdf"), pdf).unwrap();
        // PDFium reads it as a document of empty pages, which the view says has no text;
        // without PDFium's library the text-layer reader refuses it, saying why.
        match read(&workspace, "scan.pdf") {
            Ok(document) => assert_eq!(
                document.note.as_deref(),
                Some("This document has no text; open it in a viewer.")
            ),
            Err(error) => assert!(error.message.contains("no text layer"), "{error:?}"),
        }
    }

    #[test]
    fn a_broken_document_is_an_error_naming_it() {
        let (_dir, workspace) = workspace();
        std::fs::write(workspace.root().join("bad.docx"), b"not a zip at all").unwrap();
        let error = read(&workspace, "bad.docx").unwrap_err();
        assert!(error.message.contains("cannot read bad.docx"), "{error:?}");
    }

    #[test]
    fn only_documents_are_read_or_handed_to_the_viewer() {
        let (_dir, workspace) = workspace();
        for name in ["run.sh", "evil.desktop", "notes.md", "page.html", "noext"] {
            std::fs::write(workspace.root().join(name), b"#!/bin/sh\necho hi\n").unwrap();
            assert!(read(&workspace, name).is_err(), "{name} was read");
            let error = viewable(&workspace, name).unwrap_err();
            assert!(
                error.message.contains("not a document"),
                "{name}: {error:?}"
            );
        }
        std::fs::write(workspace.root().join("a.pdf"), b"%PDF").unwrap();
        assert!(viewable(&workspace, "a.pdf").is_ok());
        assert!(viewable(&workspace, "../a.pdf").is_err());
        assert!(viewable(&workspace, ".cairn/x.pdf").is_err());
        assert_eq!(
            viewable(&workspace, "gone.pdf").unwrap_err().code,
            ErrorCode::NotFound
        );
    }
}
