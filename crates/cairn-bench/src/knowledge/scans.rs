//! `cairn-bench knowledge --scans N`: pages of ordinary prose typed on a PDF page,
//! rendered grey at 300 dpi by PDFium and wrapped as image-only PDF pages (a JPEG each, as
//! a scanner makes them), then read back by the reader the index uses (PDFium, each page
//! without a text layer rendered again and read by Tesseract). Pages/s, and word accuracy
//! against the known text (1 − word error rate, by edit distance over words).

use std::io::Cursor;
use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure};
use cairn_extract::{Kind, ReadOptions, Reading};
use cairn_testkit::documents;
use cairn_testkit::pdfs::{self, Scan};
use image::{DynamicImage, ImageFormat};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::report::{Row, Verdict};

/// The goal for 300 dpi renders of ordinary prose.
const GOAL_ACCURACY: f64 = 0.95;
const DPI: u32 = 300;
/// Characters a line of 11-point Helvetica holds on an A4 page with its margins.
const LINE_CHARS: usize = 80;
const LINES_PER_PAGE: usize = 40;

/// Ordinary prose, its sentences shuffled into pages.
const PROSE: &[&str] = &[
    "The ferry to the island leaves the harbour at nine in the morning and returns before dark.",
    "Most of the passengers are farmers who carry crates of tomatoes, onions and fresh eggs.",
    "In the spring the river rises quickly, and the old stone bridge is closed for a week or two.",
    "My grandmother kept a notebook of recipes, written in pencil and stained with olive oil.",
    "The committee will meet on Thursday to discuss the budget for the new public library.",
    "We walked along the coast for three hours before we found a quiet place to eat lunch.",
    "Please remember to water the plants on the balcony while we are away in September.",
    "The report shows that sales increased by twelve percent during the second quarter.",
    "A small bakery on the corner sells bread that is still warm at seven every morning.",
    "The children built a wooden boat in the garden and painted it blue and white.",
    "After the storm the fishermen repaired their nets and counted the damage to the boats.",
    "The museum opens a new exhibition of maps and letters from the eighteenth century.",
    "He said that the train would be late, so we waited in the station and read the papers.",
    "Our neighbours planted apple trees along the fence, and now the birds come every autumn.",
    "The doctor recommends a short walk after dinner and plenty of water during the day.",
    "Every winter the village holds a market where people trade wool, honey and firewood.",
];

/// What reading the scans came to.
pub struct Scanned {
    pub pages: usize,
    pub took: Duration,
    pub accuracy: f64,
    pub worst_page: f64,
}

/// Makes `pages` scanned pages and reads them back with PDFium's `library` and
/// Tesseract.
pub fn measure(pages: usize, library: &std::path::Path) -> anyhow::Result<Scanned> {
    let mut rng = StdRng::seed_from_u64(0x5ca7_7e2d);
    let texts: Vec<String> = (0..pages).map(|_| page_text(&mut rng)).collect();
    eprintln!("cairn-bench knowledge: rendering {pages} scanned pages at {DPI} dpi");
    let scans = texts
        .iter()
        .map(|text| scan_of(text, library))
        .collect::<anyhow::Result<Vec<Scan>>>()?;
    let pdf = pdfs::scanned(&scans);
    let options = ReadOptions {
        ocr: Some(vec!["eng".into()]),
        pdfium: Some(library.to_path_buf()),
    };
    eprintln!("cairn-bench knowledge: reading them by OCR");
    let started = Instant::now();
    let read = cairn_extract::extract_with(Kind::Pdf, &pdf, &Reading::new(options))
        .map_err(|e| anyhow!("the scans could not be read: {e}"))?;
    let took = started.elapsed();
    ensure!(
        read.ocr_pages() as usize == pages,
        "{} of {pages} pages were read by OCR ({:?})",
        read.ocr_pages(),
        read.unread
    );
    let per_page: Vec<f64> = texts
        .iter()
        .zip(&read.pages)
        .map(|(known, page)| word_accuracy(known, &page.text))
        .collect();
    let known_words: usize = texts.iter().map(|t| words(t).len()).sum();
    let errors: f64 = texts
        .iter()
        .zip(&per_page)
        .map(|(t, a)| (1.0 - a) * words(t).len() as f64)
        .sum();
    Ok(Scanned {
        pages,
        took,
        accuracy: 1.0 - errors / known_words.max(1) as f64,
        worst_page: per_page.iter().copied().fold(1.0, f64::min),
    })
}

/// The report's rows for `scanned`.
pub fn rows(scanned: &Scanned) -> Vec<Row> {
    vec![
        Row::info(
            "scanned pages read by OCR (300 dpi)",
            format!(
                "{:.2} pages/s ({} pages in {:.1} s)",
                scanned.pages as f64 / scanned.took.as_secs_f64().max(1e-9),
                scanned.pages,
                scanned.took.as_secs_f64()
            ),
        ),
        Row {
            name: "OCR word accuracy (worst page)".into(),
            figure: format!(
                "{:.2}% ({:.2}%)",
                scanned.accuracy * 100.0,
                scanned.worst_page * 100.0
            ),
            baseline: "-".into(),
            goal: format!(">= {:.0}%", GOAL_ACCURACY * 100.0),
            verdict: Verdict::of(scanned.accuracy >= GOAL_ACCURACY),
        },
    ]
}

/// A page of shuffled sentences, wrapped at [`LINE_CHARS`].
fn page_text(rng: &mut StdRng) -> String {
    let mut sentences: Vec<&str> = PROSE.iter().chain(PROSE).copied().collect();
    sentences.shuffle(rng);
    let text = sentences.join(" ");
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.len() + 1 + word.len() > LINE_CHARS {
            lines.push(std::mem::take(&mut line));
            if lines.len() == LINES_PER_PAGE {
                return lines.join("\n");
            }
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines.join("\n")
}

/// `text` typed on a page, rendered grey at [`DPI`] and encoded as a JPEG.
fn scan_of(text: &str, library: &std::path::Path) -> anyhow::Result<Scan> {
    let typed = documents::pdf(&[text]);
    let grey = cairn_extract::render_pages(&typed, DPI as f32, library)
        .map_err(|e| anyhow!("rendering a page: {e}"))?
        .remove(0);
    let mut jpeg = Cursor::new(Vec::new());
    DynamicImage::ImageLuma8(grey.clone()).write_to(&mut jpeg, ImageFormat::Jpeg)?;
    Ok(Scan {
        width: grey.width(),
        height: grey.height(),
        dpi: DPI,
        jpeg: jpeg.into_inner(),
    })
}

/// A text's words, lower case, without the punctuation around them.
fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// 1 − (substitutions + deletions + insertions) / words of `known`, over words.
pub fn word_accuracy(known: &str, read: &str) -> f64 {
    let (known, read) = (words(known), words(read));
    let mut previous: Vec<usize> = (0..=read.len()).collect();
    for (i, k) in known.iter().enumerate() {
        let mut current = vec![i + 1; read.len() + 1];
        for (j, r) in read.iter().enumerate() {
            let substitution = previous[j] + usize::from(k != r);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    let errors = previous[read.len()] as f64;
    (1.0 - errors / known.len().max(1) as f64).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_accuracy_counts_edits_over_words() {
        assert_eq!(word_accuracy("The ferry leaves.", "the ferry leaves"), 1.0);
        assert_eq!(word_accuracy("a b c d", "a x c d"), 0.75);
        assert_eq!(word_accuracy("a b c d", "a c d"), 0.75);
        assert_eq!(word_accuracy("a b c d", ""), 0.0);
    }
}
