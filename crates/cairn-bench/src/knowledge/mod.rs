//! `cairn-bench knowledge`: a folder of notes and PDFs searched in place (`[memory]
//! folders`), as a person's existing library would be.
//!
//! 1. A library is generated from a seed (`generate.rs`): `--notes` markdown notes in
//!    nested folders and `--pdfs` PDFs of `--pages` pages.
//! 2. By type: the PDFs alone, then the notes alone, each as the one folder of a fresh
//!    workspace, indexed from nothing: files/s and MB/s. Documents are read in child
//!    processes as in the app (this program serves them), so the peak memory of the
//!    indexer and of the largest reader are both taken after the PDFs.
//! 3. Everything together: the index opened and filled in the background while searches
//!    are made the way Ctrl+K makes them, from the first moment: how long the first answer
//!    takes, and the slowest; then when everything is searchable by keyword.
//! 4. Reopened with nothing changed: open and sync until current again.
//!
//! Search by meaning is off (keyword figures; embedding speed is measured by `search`).
//!
//! With `--scans N`, N pages of prose scanned at 300 dpi are read by OCR (`scans.rs`:
//! pages/s, word accuracy); with `--pdf-dir DIR`, the PDFs there are read by pdf-extract
//! and by PDFium side by side (`readers.rs`). `--notes 0 --pdfs 0` leaves the library out.

mod generate;
mod readers;
mod scans;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::ensure;
use cairn_memory::{Corpus, IndexOptions, MemoryIndex, SearchQuery, Workspace};

use self::generate::Written;
use crate::desktop::procmem;
use crate::report::{self, Report, Row, Section, Verdict};
use crate::stats::{ms, round3, Samples};

/// Goals: the first Ctrl+K answer while indexing runs, a reopen with nothing changed, and
/// the memory extracting takes.
const GOAL_FIRST_ANSWER: Duration = Duration::from_secs(1);
const GOAL_REOPEN: Duration = Duration::from_secs(2);
const GOAL_PEAK_MB: f64 = 500.0;
/// Between two searches made while the index fills.
const SEARCH_EVERY: Duration = Duration::from_millis(250);
/// Longer than any indexing this benchmark can ask for.
const PATIENCE: Duration = Duration::from_secs(6 * 3600);

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Markdown notes in the library.
    #[arg(long, default_value_t = 20_000)]
    notes: usize,
    /// PDFs in the library.
    #[arg(long, default_value_t = 500)]
    pdfs: usize,
    /// Pages of each PDF.
    #[arg(long, default_value_t = 8)]
    pages: usize,
    /// Where the library and the workspaces are written [default: the system temp dir].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Pages of prose scanned at 300 dpi, read back by OCR (0: none).
    #[arg(long, default_value_t = 0)]
    scans: usize,
    /// A folder of PDFs to read with pdf-extract and PDFium side by side.
    #[arg(long)]
    pdf_dir: Option<PathBuf>,
    /// Reads this one PDF here and prints what it came to (the side-by-side runs this
    /// program again with it).
    #[arg(long, hide = true)]
    read_one: Option<PathBuf>,
    /// The reader for `--read-one`: `pdfium` or `pdf-extract`.
    #[arg(long, hide = true, default_value = "pdfium")]
    reader: String,
}

/// One folder indexed from nothing.
struct Pass {
    took: Duration,
    chunks: u64,
}

impl Pass {
    fn rates(&self, written: Written) -> (f64, f64) {
        let secs = self.took.as_secs_f64().max(1e-9);
        (
            written.files as f64 / secs,
            written.bytes as f64 / (1 << 20) as f64 / secs,
        )
    }
}

pub async fn run(args: Args) -> anyhow::Result<Report> {
    if let Some(file) = &args.read_one {
        readers::read_one(file, &args.reader)?;
        std::process::exit(0);
    }
    let library = args.notes > 0 || args.pdfs > 0;
    ensure!(
        !library || (args.notes > 0 && args.pdfs > 0 && args.pages > 0),
        "counts must be positive (or --notes 0 --pdfs 0 for no library)"
    );
    tokio::task::spawn_blocking(move || measure(&args)).await?
}

fn measure(args: &Args) -> anyhow::Result<Report> {
    let mut report = if args.notes > 0 {
        measure_library(args)?
    } else {
        Report {
            title: format!("cairn-bench knowledge ({} build)", report::build()),
            sections: Vec::new(),
            notes: Vec::new(),
            json: serde_json::json!({ "build": report::build() }),
        }
    };
    if args.scans == 0 && args.pdf_dir.is_none() {
        return Ok(report);
    }
    let library = cairn_models::pdf_reader_path().ok_or_else(|| {
        anyhow::anyhow!("PDFium's library is not installed: run scripts/fetch-model.sh")
    })?;
    let cpu = cairn_embed::cpu::Cpu::this().to_string();
    report.notes.push(format!("CPU: {cpu}"));
    if args.scans > 0 {
        let scanned = scans::measure(args.scans, &library)?;
        report.sections.push(Section {
            title: "Scanned pages read by OCR (PDFium renders, Tesseract reads)".into(),
            rows: scans::rows(&scanned),
        });
        report.json["scans"] = serde_json::json!({
            "pages": scanned.pages,
            "seconds": round3(scanned.took.as_secs_f64()),
            "word_accuracy": round3(scanned.accuracy),
            "worst_page": round3(scanned.worst_page),
            "cpu": cpu,
        });
    }
    if let Some(dir) = &args.pdf_dir {
        report.sections.push(Section {
            title: "PDF readers side by side: pdf-extract | PDFium".into(),
            rows: readers::compare(dir)?,
        });
    }
    Ok(report)
}

fn measure_library(args: &Args) -> anyhow::Result<Report> {
    let scratch = match &args.dir {
        Some(dir) => tempfile::tempdir_in(dir)?,
        None => tempfile::tempdir()?,
    };
    let library = scratch.path().join("library");
    eprintln!(
        "cairn-bench knowledge: writing {} PDFs of {} pages",
        args.pdfs, args.pages
    );
    let pdfs = generate::pdfs(&library.join("papers"), args.pdfs, args.pages)?;
    eprintln!("cairn-bench knowledge: writing {} notes", args.notes);
    let notes = generate::notes(&library.join("notes"), args.notes)?;

    eprintln!("cairn-bench knowledge: indexing the PDFs alone");
    let (pdf_pass, peaks) =
        watch_memory(|| index_alone(&scratch.path().join("ws-pdfs"), &library.join("papers")));
    let pdf_pass = pdf_pass?;
    eprintln!("cairn-bench knowledge: indexing the notes alone");
    let note_pass = index_alone(&scratch.path().join("ws-notes"), &library.join("notes"))?;

    eprintln!("cairn-bench knowledge: everything, searching while it fills");
    let workspace = workspace(&scratch.path().join("ws-all"), &library)?;
    let together = fill_while_searching(&workspace, notes.files + pdfs.files)?;
    eprintln!("cairn-bench knowledge: reopening with nothing changed");
    let reopen = reopen(&workspace)?;

    let (pdf_files_s, pdf_mb_s) = pdf_pass.rates(pdfs);
    let (note_files_s, note_mb_s) = note_pass.rates(notes);
    let peak_mb = (peaks.indexer + peaks.reader) as f64 / (1 << 20) as f64;
    let mb = |bytes: u64| bytes as f64 / (1 << 20) as f64;
    let answers = Samples::new(together.answers.clone());
    let rows = vec![
        Row::info(
            "library",
            format!(
                "{} notes ({:.1} MB) + {} PDFs of {} pages ({:.1} MB)",
                notes.files,
                mb(notes.bytes),
                pdfs.files,
                args.pages,
                mb(pdfs.bytes)
            ),
        ),
        Row::info(
            "PDFs: files/s, MB/s",
            format!(
                "{pdf_files_s:.1} files/s, {pdf_mb_s:.2} MB/s ({} chunks in {:.1} s)",
                pdf_pass.chunks,
                pdf_pass.took.as_secs_f64()
            ),
        ),
        Row::info(
            "notes: files/s, MB/s",
            format!(
                "{note_files_s:.0} files/s, {note_mb_s:.2} MB/s ({} chunks in {:.1} s)",
                note_pass.chunks,
                note_pass.took.as_secs_f64()
            ),
        ),
        Row::info(
            "keyword-searchable after",
            format!(
                "{:.1} s (all {} files)",
                together.searchable.as_secs_f64(),
                together.files
            ),
        ),
        Row {
            name: "first Ctrl+K answer while indexing".into(),
            figure: format!("{:.0} ms", ms(together.first_answer)),
            baseline: "-".into(),
            goal: format!("< {} ms", GOAL_FIRST_ANSWER.as_millis()),
            verdict: Verdict::of(together.first_answer < GOAL_FIRST_ANSWER),
        },
        Row {
            name: format!(
                "answers while indexing ({}): p50 / max",
                together.answers.len()
            ),
            figure: format!(
                "{:.0} / {:.0} ms",
                ms(answers.p50()),
                ms(answers.percentile(100))
            ),
            baseline: "-".into(),
            goal: format!("< {} ms", GOAL_FIRST_ANSWER.as_millis()),
            verdict: Verdict::of(answers.percentile(100) < GOAL_FIRST_ANSWER),
        },
        Row {
            name: "reopen with nothing changed".into(),
            figure: format!("{:.2} s", reopen.as_secs_f64()),
            baseline: "-".into(),
            goal: format!("< {} s", GOAL_REOPEN.as_secs()),
            verdict: Verdict::of(reopen < GOAL_REOPEN),
        },
        Row {
            name: "peak memory extracting (indexer + reader)".into(),
            figure: format!(
                "{peak_mb:.0} MB ({:.0} + {:.0}; sampled together {:.0})",
                mb(peaks.indexer),
                mb(peaks.reader),
                mb(peaks.together)
            ),
            baseline: "-".into(),
            goal: format!("< {GOAL_PEAK_MB:.0} MB"),
            verdict: Verdict::of(peak_mb < GOAL_PEAK_MB),
        },
    ];
    let json = serde_json::json!({
        "build": report::build(),
        "notes": { "files": notes.files, "bytes": notes.bytes, "chunks": note_pass.chunks,
                   "seconds": round3(note_pass.took.as_secs_f64()),
                   "files_per_s": round3(note_files_s), "mb_per_s": round3(note_mb_s) },
        "pdfs": { "files": pdfs.files, "bytes": pdfs.bytes, "pages": args.pages,
                  "chunks": pdf_pass.chunks, "seconds": round3(pdf_pass.took.as_secs_f64()),
                  "files_per_s": round3(pdf_files_s), "mb_per_s": round3(pdf_mb_s) },
        "searchable_s": round3(together.searchable.as_secs_f64()),
        "first_answer_ms": round3(ms(together.first_answer)),
        "answers_while_indexing": together.answers.len(),
        "answer_p50_ms": round3(ms(answers.p50())),
        "answer_max_ms": round3(ms(answers.percentile(100))),
        "reopen_s": round3(reopen.as_secs_f64()),
        "peak_indexer_bytes": peaks.indexer,
        "peak_reader_bytes": peaks.reader,
        "peak_sampled_bytes": peaks.together,
    });
    Ok(Report {
        title: format!("cairn-bench knowledge ({} build)", report::build()),
        sections: vec![Section {
            title: "A library searched in place (keyword; search by meaning off)".into(),
            rows,
        }],
        notes: vec![
            "files/s and MB/s: each type alone, indexed from nothing as a folder of \
             `[memory] folders` (read, extracted in a child process for PDFs, chunked, \
             indexed, committed)"
                .into(),
            "first Ctrl+K answer: from opening the index to the first search's answer, \
             with the whole library waiting to be indexed; the others every 250 ms until \
             it is done"
                .into(),
            "peak memory: this process's VmHWM after the PDFs plus the largest VmHWM of a \
             reader child (sampled every 3 ms; an upper bound), and the largest sum of \
             VmRSS over both at one sample"
                .into(),
            format!("machine load at the end: {}", crate::fsinfo::load_average()),
        ],
        json,
    })
}

fn workspace(dir: &Path, folder: &Path) -> anyhow::Result<Workspace> {
    Ok(Workspace::open_or_create(dir)?.with_folders(&[folder.to_path_buf()]))
}

fn keyword_only() -> IndexOptions {
    IndexOptions::default()
}

fn index_alone(dir: &Path, folder: &Path) -> anyhow::Result<Pass> {
    let workspace = workspace(dir, folder)?;
    let started = Instant::now();
    let index = MemoryIndex::open(&workspace, keyword_only())?;
    let report = index.sync()?;
    let took = started.elapsed();
    ensure!(
        report.skipped.is_empty(),
        "files were skipped: {:?}",
        report.skipped.iter().take(5).collect::<Vec<_>>()
    );
    let status = index.status();
    Ok(Pass {
        took,
        chunks: status.chunks,
    })
}

struct Together {
    first_answer: Duration,
    answers: Vec<Duration>,
    searchable: Duration,
    files: u64,
}

fn query(text: &str) -> SearchQuery {
    SearchQuery {
        text: text.to_string(),
        limit: 10,
        corpus: Corpus::All,
        today: None,
        mode: None,
    }
}

fn fill_while_searching(workspace: &Workspace, library_files: u64) -> anyhow::Result<Together> {
    let started = Instant::now();
    let index = MemoryIndex::open(workspace, keyword_only())?;
    index.sync_in_background()?;
    let mut answers = Vec::new();
    let words = ["harbour", "river", "Nimbus", "Priya", "garden", "winter"];
    let mut first_answer = None;
    for word in words.iter().cycle() {
        let asked = Instant::now();
        index.search(&query(word))?;
        let took = asked.elapsed();
        first_answer.get_or_insert(started.elapsed());
        answers.push(took);
        if !index.status().catching_up {
            break;
        }
        std::thread::sleep(SEARCH_EVERY);
    }
    ensure!(index.wait_current(PATIENCE), "the index never caught up");
    let searchable = started.elapsed();
    let status = index.status();
    ensure!(
        status.files >= library_files,
        "only {} files of {library_files} are indexed (last error: {:?})",
        status.files,
        status.last_error
    );
    // The last PDF's last page is found by its word: searchable, not only listed.
    let hits = index.search(&query(generate::LAST_WORD))?;
    ensure!(
        hits.results.iter().any(|h| h.page.is_some()),
        "the last PDF's word is not found"
    );
    Ok(Together {
        first_answer: first_answer.unwrap_or_default(),
        answers,
        searchable,
        files: status.files,
    })
}

fn reopen(workspace: &Workspace) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let index = MemoryIndex::open(workspace, keyword_only())?;
    let report = index.sync()?;
    let took = started.elapsed();
    ensure!(
        report.changed == 0,
        "a reopen with nothing changed indexed {} files again",
        report.changed
    );
    Ok(took)
}

/// Peak memory of this process and the readers it starts, while `work` runs.
struct Peaks {
    /// This process's `VmHWM`.
    indexer: u64,
    /// The largest `VmHWM` of a reader child seen (sampled every few milliseconds).
    reader: u64,
    /// The largest sum of `VmRSS` over this process and its children at one sample.
    together: u64,
}

fn watch_memory<T>(work: impl FnOnce() -> T) -> (T, Peaks) {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        std::thread::spawn(move || {
            let me = std::process::id();
            let (mut reader, mut together) = (0u64, 0u64);
            while !done.load(Ordering::Relaxed) {
                let pids = procmem::tree(me);
                for &pid in pids.iter().filter(|&&p| p != me) {
                    reader = reader.max(procmem::status_kib(pid, "VmHWM:").unwrap_or(0));
                }
                together = together.max(procmem::measure(&pids).rss_kib);
                std::thread::sleep(Duration::from_millis(3));
            }
            (reader * 1024, together * 1024)
        })
    };
    let out = work();
    done.store(true, Ordering::Relaxed);
    let (reader, together) = sampler.join().unwrap_or_default();
    let indexer = procmem::status_kib(std::process::id(), "VmHWM:").unwrap_or(0) * 1024;
    (
        out,
        Peaks {
            indexer,
            reader,
            together,
        },
    )
}
