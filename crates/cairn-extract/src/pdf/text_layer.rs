//! A PDF's text layer by pdf-extract over lopdf, page by page: the reader when PDFium's
//! library is not installed. Pages are not rendered, so a scanned page is not read.

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
                text: crate::html::tidy(&text),
                ocr: false,
            })
            .collect(),
        unread: None,
    };
    if extracted.is_empty() {
        return Err(
            "the PDF has no text layer (a scanned document?); text in images is not read \
             without PDFium's library"
                .into(),
        );
    }
    Ok(extracted)
}
