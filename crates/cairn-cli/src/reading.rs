//! `cairn doctor`'s documents section: whether text in pictures and scanned pages is read
//! (Tesseract, its languages) and what reads PDFs (PDFium, else their text layer). Neither
//! missing is a problem: what is not read is said, with what to install.

use cairn_app::launch::{Config, OcrState};

use crate::escape;

/// Prints the section; returns the number of problems (none: a missing reader is said,
/// not counted).
pub fn check(config: &Config) -> u32 {
    println!("\ndocuments");
    for line in lines(
        &OcrState::of(config),
        cairn_app::cairn_models::pdf_reader_path(),
    ) {
        println!("  {}", escape::prose_line(&line));
    }
    0
}

/// The section's lines.
fn lines(ocr: &OcrState, pdfium: Option<std::path::PathBuf>) -> Vec<String> {
    let mut lines = match ocr {
        OcrState::Off => vec!["· OCR is off (`[memory] ocr = false`): pictures are not \
                               indexed, scanned pages not read"
            .to_string()],
        OcrState::Missing => vec!["· Tesseract is not installed: pictures and scanned pages \
                                   are not read (install tesseract-ocr)"
            .to_string()],
        OcrState::Ready { usable, .. } if usable.is_empty() => {
            vec!["· Tesseract has none of the OCR languages asked for".to_string()]
        }
        OcrState::Ready { usable, .. } => {
            vec![format!(
                "✓ text in pictures and scanned pages is read by Tesseract ({})",
                usable.join(", ")
            )]
        }
        OcrState::Unknown(why) => vec![format!("· Tesseract's languages are unknown: {why}")],
    };
    lines.extend(ocr.warnings().into_iter().map(|w| format!("· {w}")));
    lines.push(match pdfium {
        Some(path) => format!("✓ PDFs are read by PDFium ({})", path.display()),
        None => "· PDFium's library is not installed: PDFs are read by their text layer \
                 only, scanned pages not read (run `scripts/fetch-model.sh`)"
            .to_string(),
    });
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tesseract_or_pdfium_is_one_line_each_saying_what_to_install() {
        assert_eq!(
            lines(&OcrState::Missing, None),
            [
                "· Tesseract is not installed: pictures and scanned pages are not read \
                 (install tesseract-ocr)",
                "· PDFium's library is not installed: PDFs are read by their text layer \
                 only, scanned pages not read (run `scripts/fetch-model.sh`)"
            ]
        );
        let ready = OcrState::Ready {
            usable: vec!["eng".into()],
            missing: vec!["deu".into()],
        };
        let lines = lines(&ready, Some("/m/pdfium/libpdfium.so".into()));
        assert_eq!(
            lines,
            [
                "✓ text in pictures and scanned pages is read by Tesseract (eng)",
                "· the OCR language `deu` is not installed (install tesseract-ocr-deu); OCR \
                 reads eng",
                "✓ PDFs are read by PDFium (/m/pdfium/libpdfium.so)"
            ]
        );
    }
}
