//! PDF: the text layer of each page (pdf-extract over lopdf). A PDF without one (a scan)
//! is told so: text in images is not read.

use crate::{Extracted, Page};

pub fn extract(bytes: &[u8]) -> Result<Extracted, String> {
    let pages = pdf_extract::extract_text_from_mem_by_pages(bytes).map_err(|e| {
        let e = e.to_string();
        if e.to_ascii_lowercase().contains("encrypt") {
            "the PDF is encrypted; it is not read".to_string()
        } else {
            format!("the PDF cannot be read: {e}")
        }
    })?;
    let extracted = Extracted {
        pages: pages
            .into_iter()
            .enumerate()
            .map(|(i, text)| Page {
                number: Some(u32::try_from(i + 1).unwrap_or(u32::MAX)),
                text: tidy(&text),
            })
            .collect(),
    };
    if extracted.is_empty() {
        return Err(
            "the PDF has no text layer (a scanned document?); text in images is not read".into(),
        );
    }
    Ok(extracted)
}

/// Lines trimmed, at most one blank line in a row.
fn tidy(text: &str) -> String {
    crate::html::tidy(text)
}
