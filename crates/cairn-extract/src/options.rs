//! How documents are read: whether text in pictures is read (OCR, and in which languages),
//! where PDFium's library is, and how long OCR may go on for one file. The guard hands
//! them to the reader it runs (a child process or a thread) as the reading's context.

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// What the readers may use, as the settings have it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct ReadOptions {
    /// The languages Tesseract reads pictures and scanned pages in (`eng`, `deu`, …);
    /// `None`: text in pictures is not read.
    pub ocr: Option<Vec<String>>,
    /// PDFium's shared library; `None`, or a library that does not load: PDFs are read
    /// by pdf-extract (their text layer only).
    pub pdfium: Option<PathBuf>,
}

impl Default for ReadOptions {
    /// OCR in English; PDFs by pdf-extract (PDFium's library is found by the app).
    fn default() -> Self {
        Self {
            ocr: Some(vec!["eng".to_string()]),
            pdfium: None,
        }
    }
}

impl ReadOptions {
    /// No OCR, no PDFium: the text layers only.
    pub fn plain() -> Self {
        Self {
            ocr: None,
            pdfium: None,
        }
    }
}

/// One reading: the options, and when OCR must stop starting new pages (so that a file
/// of many scanned pages ends with what was read rather than with a timeout).
#[derive(Debug, Clone)]
pub struct Reading {
    pub options: ReadOptions,
    pub ocr_until: Option<Instant>,
}

impl Reading {
    /// A reading with `options` and no deadline.
    pub fn new(options: ReadOptions) -> Self {
        Self {
            options,
            ocr_until: None,
        }
    }

    /// A reading with `options` that must be done within `limit`: OCR starts no page
    /// after four fifths of it.
    pub fn within(options: ReadOptions, limit: Duration) -> Self {
        Self {
            options,
            ocr_until: Instant::now().checked_add(Self::ocr_share(limit)),
        }
    }

    /// How long of a reading's `limit` OCR may start new pages in: four fifths.
    pub fn ocr_share(limit: Duration) -> Duration {
        limit.mul_f64(0.8)
    }

    /// The time OCR has left, when it has a deadline.
    pub fn ocr_left(&self) -> Option<Duration> {
        self.ocr_until
            .map(|until| until.saturating_duration_since(Instant::now()))
    }

    /// The reading this thread does now (see [`Reading::set_current`]), else the default.
    pub fn current() -> Self {
        CURRENT
            .with(|current| current.borrow().clone())
            .unwrap_or_else(|| Reading::new(ReadOptions::default()))
    }

    /// Makes this the reading of the calling thread, for [`crate::extract_here`].
    pub fn set_current(self) {
        CURRENT.with(|current| *current.borrow_mut() = Some(self));
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Reading>> = const { RefCell::new(None) };
}
