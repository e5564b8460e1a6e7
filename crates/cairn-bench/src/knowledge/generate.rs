//! The library the `knowledge` benchmark indexes, generated from a seed: markdown notes in
//! nested folders, and PDFs of several pages written by `lopdf` (the test kit's builder),
//! their words drawn from the search benchmark's vocabulary.

use std::fs;
use std::path::Path;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::search::vocab::{proper_noun, Vocabulary};

const SEED: u64 = 0x0b00_c5ed;
/// Notes to a folder, folders to a parent: a vault of a few hundred folders.
const PER_FOLDER: usize = 60;

/// On the last page of the last PDF only: searching it proves the PDFs are all in.
pub const LAST_WORD: &str = "zephyrquill";

/// What was written, by type.
#[derive(Debug, Clone, Copy, Default)]
pub struct Written {
    pub files: u64,
    pub bytes: u64,
}

/// A sentence of 8 to 20 words, with now and then a name or a project.
fn sentence(words: &Vocabulary, rng: &mut StdRng) -> String {
    let n = rng.random_range(8..=20);
    let mut out = String::new();
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        if rng.random_bool(0.06) {
            out.push_str(proper_noun(rng));
        } else {
            out.push_str(words.word(rng));
        }
    }
    out.push('.');
    out
}

fn paragraph(words: &Vocabulary, rng: &mut StdRng, sentences: usize) -> String {
    (0..sentences)
        .map(|_| sentence(words, rng))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `count` notes of about 0.5 to 3 KB under `dir`, a heading and a few paragraphs each.
pub fn notes(dir: &Path, count: usize) -> anyhow::Result<Written> {
    let mut rng = StdRng::seed_from_u64(SEED);
    let words = Vocabulary::new(&mut rng);
    let mut written = Written::default();
    for i in 0..count {
        let folder = dir.join(format!(
            "area-{:02}/topic-{:03}",
            i / (PER_FOLDER * 20),
            i / PER_FOLDER
        ));
        if i % PER_FOLDER == 0 {
            fs::create_dir_all(&folder)?;
        }
        let mut text = format!("# {} {}\n", proper_noun(&mut rng), words.word(&mut rng));
        for _ in 0..rng.random_range(1..=5) {
            text.push('\n');
            let sentences = rng.random_range(2..=6);
            text.push_str(&paragraph(&words, &mut rng, sentences));
            text.push('\n');
        }
        fs::write(folder.join(format!("note-{i:05}.md")), &text)?;
        written.files += 1;
        written.bytes += text.len() as u64;
    }
    Ok(written)
}

/// `count` PDFs of `pages` pages under `dir`, about 1.5 KB of text a page in short lines.
pub fn pdfs(dir: &Path, count: usize, pages: usize) -> anyhow::Result<Written> {
    let mut rng = StdRng::seed_from_u64(SEED ^ 0x5eed);
    let words = Vocabulary::new(&mut rng);
    fs::create_dir_all(dir)?;
    let mut written = Written::default();
    for i in 0..count {
        let texts: Vec<String> = (0..pages)
            .map(|_| {
                let mut page = String::new();
                for _ in 0..rng.random_range(18..=26) {
                    let line: Vec<&str> = (0..rng.random_range(8..=12))
                        .map(|_| words.word(&mut rng))
                        .collect();
                    page.push_str(&line.join(" "));
                    page.push('\n');
                }
                page
            })
            .collect();
        let mut texts = texts;
        if i + 1 == count {
            if let Some(last) = texts.last_mut() {
                last.push_str(LAST_WORD);
            }
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let bytes = cairn_testkit::documents::pdf(&refs);
        fs::write(dir.join(format!("paper-{i:04}.pdf")), &bytes)?;
        written.files += 1;
        written.bytes += bytes.len() as u64;
    }
    Ok(written)
}
