//! `cairn-bench knowledge --pdf-dir DIR`: the PDFs of a folder (real ones, damaged ones)
//! read by both PDF readers side by side, each in a process of its own as the index's
//! reader child would: pdf-extract (the reader without PDFium) and PDFium, OCR off so that
//! both read text layers only. Per file: pages, characters of text, the read's time, the
//! process's peak memory (and what the read added to it), or the error.

use std::path::Path;
use std::time::Instant;

use cairn_extract::{Kind, ReadOptions, Reading};

use crate::report::Row;

/// What one reader did with one file, in a process of its own (this program, started
/// again with `--read-one`): the read's time, and the process's peak memory before and
/// after it.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Read {
    outcome: Result<(usize, usize), String>,
    ms: f64,
    before_kb: u64,
    peak_kb: u64,
}

impl Read {
    fn shown(&self) -> String {
        let cost = format!(
            "{:.0} ms, {:.0} MB peak (+{:.0})",
            self.ms,
            self.peak_kb as f64 / 1024.0,
            self.peak_kb.saturating_sub(self.before_kb) as f64 / 1024.0
        );
        match &self.outcome {
            Ok((pages, chars)) => format!("{pages} p, {chars} chars, {cost}"),
            Err(why) => format!("error ({}), {cost}", short(why)),
        }
    }
}

fn short(why: &str) -> String {
    let mut short: String = why.chars().take(48).collect();
    if short.len() < why.len() {
        short.push('…');
    }
    short
}

fn peak_kb() -> u64 {
    crate::desktop::procmem::status_kib(std::process::id(), "VmHWM:").unwrap_or(0)
}

/// The reader named `reader` (`pdfium` or `pdf-extract`).
fn options(reader: &str, library: &Path) -> ReadOptions {
    match reader {
        "pdfium" => ReadOptions {
            ocr: None,
            pdfium: Some(library.to_path_buf()),
        },
        _ => ReadOptions::plain(),
    }
}

/// `--read-one FILE --reader NAME`: reads the file here and prints what it came to.
pub fn read_one(file: &Path, reader: &str) -> anyhow::Result<()> {
    let library = cairn_models::pdf_reader_path().unwrap_or_default();
    let options = options(reader, &library);
    let bytes = std::fs::read(file)?;
    let before_kb = peak_kb();
    let started = Instant::now();
    let outcome = cairn_extract::extract_with(Kind::Pdf, &bytes, &Reading::new(options));
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let read = Read {
        outcome: outcome.map(|e| {
            let chars = e.pages.iter().map(|p| p.text.chars().count()).sum();
            (e.pages.len(), chars)
        }),
        ms,
        before_kb,
        peak_kb: peak_kb(),
    };
    println!("{}", serde_json::to_string(&read)?);
    Ok(())
}

/// `file` read by `reader` in a process of its own.
fn read_apart(file: &Path, reader: &str) -> String {
    let program = std::env::current_exe().unwrap_or_default();
    let output = std::process::Command::new(program)
        .args(["knowledge", "--read-one"])
        .arg(file)
        .args(["--reader", reader])
        .output();
    match output {
        Ok(out) if out.status.success() => {
            let line = String::from_utf8_lossy(&out.stdout);
            serde_json::from_str::<Read>(line.trim())
                .map_or_else(|e| format!("unreadable answer: {e}"), |r| r.shown())
        }
        Ok(out) => format!("crashed ({})", out.status),
        Err(e) => format!("could not start: {e}"),
    }
}

/// A row per PDF of `dir`: pdf-extract, then PDFium.
pub fn compare(dir: &Path) -> anyhow::Result<Vec<Row>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("pdf")))
        .collect();
    files.sort();
    let mut rows = Vec::new();
    for file in files {
        let size = std::fs::metadata(&file)?.len();
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        eprintln!("cairn-bench knowledge: reading {name} both ways");
        let (old, new) = (
            read_apart(&file, "pdf-extract"),
            read_apart(&file, "pdfium"),
        );
        rows.push(Row::info(
            format!("{name} ({} KB)", size.div_ceil(1024)),
            format!("pdf-extract: {old} | PDFium: {new}"),
        ));
    }
    Ok(rows)
}
