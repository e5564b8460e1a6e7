//! What OCR did for a file, kept in the catalog beside it: the pages read by OCR, the
//! scanned pages left unread and why, and the state of OCR it was read under (off,
//! Tesseract missing, or its languages). A file read under another state than today's is
//! read again, so installing Tesseract or a language, or turning OCR on, reaches the
//! pictures and scans already seen.

use cairn_extract::{ocr, Extracted, ReadOptions};
use serde::{Deserialize, Serialize};

/// How OCR bore on one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OcrNote {
    /// The state of OCR it was read under ([`stamp`]).
    pub stamp: String,
    /// Pages (a picture: its one page) read by OCR.
    pub pages: u32,
    /// Scanned pages left unread.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unread: u32,
    /// Why they were left, as a report says it (`install tesseract-ocr`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl OcrNote {
    /// The note as the catalog keeps it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A note the catalog kept; `None` for none (or one that cannot be read).
    pub fn from_json(json: Option<&str>) -> Option<Self> {
        serde_json::from_str(json?).ok()
    }

    /// `3 scanned pages not read: install tesseract-ocr`, when pages were left.
    pub fn unread_line(&self) -> Option<String> {
        let why = self.why.as_deref()?;
        let pages = match self.unread {
            0 => return None,
            1 => "1 scanned page".to_string(),
            n => format!("{n} scanned pages"),
        };
        Some(format!("{pages} not read: {why}"))
    }
}

/// [`stamp`] when Tesseract is not installed.
pub const MISSING_STAMP: &str = "missing";

/// The state of OCR now: `off`, `missing` (Tesseract is not installed) or the languages
/// (`eng+deu`).
pub fn stamp(options: &ReadOptions) -> String {
    match options.ocr.as_deref() {
        None => "off".into(),
        Some(_) if ocr::tesseract().is_none() => MISSING_STAMP.into(),
        Some(languages) => languages.join("+"),
    }
}

/// The note for what a reader made of a file, when OCR bore on it.
pub fn of_extracted(extracted: &Extracted, stamp: &str) -> Option<OcrNote> {
    let pages = extracted.ocr_pages();
    if pages == 0 && extracted.unread.is_none() {
        return None;
    }
    Some(OcrNote {
        stamp: stamp.to_string(),
        pages,
        unread: extracted.unread.as_ref().map_or(0, |u| u.pages),
        why: extracted.unread.as_ref().map(|u| ocr::cause(&u.why)),
    })
}

/// The note for a picture not read for want of OCR (off, Tesseract missing), when
/// `why` (its reader's error) says so.
pub fn of_unread_picture(why: &str, stamp: &str) -> Option<OcrNote> {
    (why.starts_with(ocr::MISSING) || why.starts_with(ocr::OFF)).then(|| OcrNote {
        stamp: stamp.to_string(),
        pages: 0,
        unread: 1,
        why: Some(ocr::cause(why)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_says_what_was_left_unread_and_survives_the_catalog() {
        let note = OcrNote {
            stamp: "missing".into(),
            pages: 0,
            unread: 3,
            why: Some(ocr::INSTALL.into()),
        };
        assert_eq!(
            note.unread_line().as_deref(),
            Some("3 scanned pages not read: install tesseract-ocr")
        );
        assert_eq!(OcrNote::from_json(Some(&note.to_json())), Some(note));
        assert_eq!(OcrNote::from_json(None), None);
        let missing = ocr::missing("text in pictures is");
        let picture = of_unread_picture(&missing, "missing").unwrap();
        assert_eq!(
            picture.unread_line().as_deref(),
            Some("1 scanned page not read: install tesseract-ocr")
        );
        assert_eq!(of_unread_picture("the picture cannot be read", "eng"), None);
        assert_eq!(
            stamp(&ReadOptions {
                ocr: None,
                pdfium: None
            }),
            "off"
        );
    }
}
