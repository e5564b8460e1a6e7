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
//! - `pdf/`: PDFium (`pdf/pdfium.rs`, its library loaded at run time) page by page, pages
//!   without a text layer rendered and read by OCR; without PDFium, pdf-extract over lopdf
//!   (`pdf/text_layer.rs`).
//! - `scanned.rs`: picture files (PNG, JPEG, WebP, TIFF) and scanned pages read by OCR
//!   (`ocr.rs`, Tesseract in a child of the reader).
//! - `options.rs`: what the readers may use (OCR and its languages, PDFium's library).
//! - `office.rs`: DOCX's `word/document.xml`, ODT's `content.xml`.
//! - `epub.rs`: the container, the package's spine, each chapter through `html.rs`.
//! - `picture.rs`: pictures for the conversation (type by their bytes, size, a scaled
//!   copy for a model, their text by OCR), decoded with limits.
//! - `decode.rs`: decoding a picture with its size checked first and the decoder held to
//!   limits (the conversation's pictures and the index's).
//! - `zipped.rs`: a zip archive's members, read with caps.
//! - `guard.rs`: the child process (or, in a program that does not serve it, a thread).

mod decode;
mod epub;
mod extracted;
pub mod guard;
pub mod html;
pub mod ocr;
mod office;
mod options;
mod pdf;
pub mod picture;
mod scanned;
mod xml;
mod zipped;

pub use extracted::{Extracted, Kind, Page, Unread, MAX_TEXT_BYTES};
pub use options::{ReadOptions, Reading};
pub use pdf::render_pages;

/// Extracts `bytes` of format `kind` here, in this thread, as the thread's reading says
/// (see [`Reading::current`]): only for input already contained (see [`guard::extract`]).
/// An error says why, for the user. A document with no text is no error: it has none.
pub fn extract_here(kind: Kind, bytes: &[u8]) -> Result<Extracted, String> {
    extract_with(kind, bytes, &Reading::current())
}

/// [`extract_here`] with the reading given.
pub fn extract_with(kind: Kind, bytes: &[u8], reading: &Reading) -> Result<Extracted, String> {
    let mut extracted = match kind {
        Kind::Pdf => pdf::extract(bytes, reading)?,
        Kind::Image => scanned::picture(bytes, reading)?,
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
    Ok(extracted)
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

#[cfg(test)]
mod reading_tests;
