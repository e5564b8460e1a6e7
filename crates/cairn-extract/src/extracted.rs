//! What the readers make of a document: its format, its text page by page, and the
//! scanned pages left unread.

use serde::{Deserialize, Serialize};

use crate::ocr;

/// A document format this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Pdf,
    Docx,
    Odt,
    Epub,
    Html,
    /// A picture of text (PNG, JPEG, WebP, TIFF), read by OCR.
    Image,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Pdf => "pdf",
            Kind::Docx => "docx",
            Kind::Odt => "odt",
            Kind::Epub => "epub",
            Kind::Html => "html",
            Kind::Image => "image",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [
            Kind::Pdf,
            Kind::Docx,
            Kind::Odt,
            Kind::Epub,
            Kind::Html,
            Kind::Image,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }
}

/// A document's text: markdown, headings as `#` lines; a PDF's in pages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extracted {
    pub pages: Vec<Page>,
    /// Scanned pages (no text layer) whose text was not read, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread: Option<Unread>,
}

/// Pages that are pictures of text and were not read: OCR off, Tesseract missing, or out
/// of time. A document of such pages only is read as empty, with this saying why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unread {
    pub pages: u32,
    /// Why (the last page's reason), for the user: begins with [`ocr::MISSING`] when
    /// Tesseract is missing, with [`ocr::OFF`] when OCR is off.
    pub why: String,
}

impl Unread {
    /// `2 scanned pages not read: install tesseract-ocr`, as a report says it.
    pub fn described(&self) -> String {
        let pages = if self.pages == 1 {
            "1 scanned page".to_string()
        } else {
            format!("{} scanned pages", self.pages)
        };
        format!("{pages} not read: {}", ocr::cause(&self.why))
    }
}

/// A page of text (or the whole text of an unpaged document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// 1-based, in a paged document.
    pub number: Option<u32>,
    pub text: String,
    /// Read by OCR (a picture, or a page without a text layer).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ocr: bool,
}

impl Extracted {
    /// One unpaged text.
    pub fn text(text: String) -> Self {
        Self {
            pages: vec![Page {
                number: None,
                text,
                ocr: false,
            }],
            unread: None,
        }
    }

    /// The pages read by OCR.
    pub fn ocr_pages(&self) -> u32 {
        u32::try_from(self.pages.iter().filter(|p| p.ocr).count()).unwrap_or(u32::MAX)
    }

    /// Whether there is any text at all.
    pub fn is_empty(&self) -> bool {
        self.pages.iter().all(|p| p.text.trim().is_empty())
    }
}

/// The most a document's extracted text may be: past it, the rest is dropped (a small
/// file can hold a great deal of compressed text).
pub const MAX_TEXT_BYTES: usize = 32 << 20;
