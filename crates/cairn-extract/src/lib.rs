//! Text out of documents, for the memory index: PDF (the text layer, page by page), DOCX
//! and ODT (paragraphs, headings as markdown headings), EPUB (chapters in reading order)
//! and HTML (the readable text, as `web_fetch` reads pages).
//!
//! Every format here is parsed from bytes someone else made, so extraction is treated as
//! hostile-input code: [`guard::extract`] reads a file in a child process (this same
//! program, started again) with a memory limit and a timeout, so a file that makes a
//! parser loop, balloon or crash costs that file only. Zip members are read with a cap
//! (no zip bomb inflates past it), and XML is parsed by roxmltree, which expands no
//! external entities and limits the internal ones.
//!
//! - `pdf.rs`: pdf-extract over lopdf, one page at a time.
//! - `office.rs`: DOCX's `word/document.xml`, ODT's `content.xml`.
//! - `epub.rs`: the container, the package's spine, each chapter through `html.rs`.
//! - `zipped.rs`: a zip archive's members, read with caps.
//! - `guard.rs`: the child process (or, in a program that does not serve it, a thread).

mod epub;
pub mod guard;
pub mod html;
mod office;
mod pdf;
mod zipped;

use serde::{Deserialize, Serialize};

/// A document format this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Pdf,
    Docx,
    Odt,
    Epub,
    Html,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Pdf => "pdf",
            Kind::Docx => "docx",
            Kind::Odt => "odt",
            Kind::Epub => "epub",
            Kind::Html => "html",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [Kind::Pdf, Kind::Docx, Kind::Odt, Kind::Epub, Kind::Html]
            .into_iter()
            .find(|k| k.as_str() == name)
    }
}

/// A document's text: markdown, headings as `#` lines; a PDF's in pages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extracted {
    pub pages: Vec<Page>,
}

/// A page of text (or the whole text of an unpaged document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// 1-based, in a paged document.
    pub number: Option<u32>,
    pub text: String,
}

impl Extracted {
    /// One unpaged text.
    pub fn text(text: String) -> Self {
        Self {
            pages: vec![Page { number: None, text }],
        }
    }

    /// Whether there is any text at all.
    pub fn is_empty(&self) -> bool {
        self.pages.iter().all(|p| p.text.trim().is_empty())
    }
}

/// The most a document's extracted text may be: past it, the rest is dropped (a small
/// file can hold a great deal of compressed text).
pub const MAX_TEXT_BYTES: usize = 32 << 20;

/// Extracts `bytes` of format `kind` here, in this thread: only for input already
/// contained (see [`guard::extract`]). An error says why, for the user.
pub fn extract_here(kind: Kind, bytes: &[u8]) -> Result<Extracted, String> {
    let mut extracted = match kind {
        Kind::Pdf => pdf::extract(bytes)?,
        Kind::Docx => Extracted::text(office::docx(bytes)?),
        Kind::Odt => Extracted::text(office::odt(bytes)?),
        Kind::Epub => Extracted::text(epub::extract(bytes)?),
        Kind::Html => {
            let html = String::from_utf8_lossy(bytes);
            let read = html::readable(&html, None);
            let text = match read.title.filter(|t| !t.trim().is_empty()) {
                Some(title) if !read.text.trim_start().starts_with('#') => {
                    format!("# {}\n\n{}", title.trim(), read.text)
                }
                _ => read.text,
            };
            Extracted::text(text)
        }
    };
    cap(&mut extracted);
    if extracted.is_empty() && kind != Kind::Pdf {
        return Err(format!("no text found in the {}", kind.as_str()));
    }
    Ok(extracted)
}

/// Parses XML with roxmltree, a DTD refused (so no entity can expand); an error names
/// `what` was being read.
fn parse_xml<'a>(xml: &'a str, what: &str) -> Result<roxmltree::Document<'a>, String> {
    roxmltree::Document::parse_with_options(
        xml,
        roxmltree::ParsingOptions {
            allow_dtd: false,
            ..roxmltree::ParsingOptions::default()
        },
    )
    .map_err(|e| format!("its {what} cannot be read: {e}"))
}

/// Drops what passes [`MAX_TEXT_BYTES`].
fn cap(extracted: &mut Extracted) {
    let mut left = MAX_TEXT_BYTES;
    extracted.pages.retain_mut(|page| {
        if left == 0 {
            return false;
        }
        if page.text.len() > left {
            let cut = page.text.floor_char_boundary(left);
            page.text.truncate(cut);
        }
        left -= page.text.len();
        true
    });
}

#[cfg(test)]
mod tests;
