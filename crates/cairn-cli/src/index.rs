//! `cairn index`: bring the memory index up to date with the workspace's files (or rebuild
//! it) and say what changed. Also how the CLI opens the index.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::Context;
use std::io::IsTerminal;
use std::sync::Arc;

use cairn_app::cairn_memory::index::Embedder;
use cairn_app::cairn_memory::index::{FileStatus, FilesReport};
use cairn_app::cairn_memory::{
    IndexError, IndexOptions, IndexStatus, MemoryIndex, SyncReport, Workspace,
};
use cairn_app::launch::{self, Config};
use serde::Serialize;

use crate::args::{Cli, IndexArgs};
use crate::setup;
use crate::terminal::{self, clean_line, Style};

pub async fn run(cli: &Cli, args: &IndexArgs) -> anyhow::Result<u8> {
    let config = setup::config(cli)?;
    let workspace = setup::workspace(cli, &config)?;
    let rebuild = args.rebuild;
    let opened = workspace.clone();
    let embedder = if args.no_embed {
        None
    } else {
        embedder(&config)
    };
    let options = IndexOptions {
        embedder,
        ..launch::index_options(&config)
    };
    let report_files = args.report;
    let updated =
        tokio::task::spawn_blocking(move || update(&opened, options, rebuild, report_files))
            .await??;
    let Some((report, took, status, files)) = updated else {
        eprintln!("cairn: {}", held_elsewhere(&workspace, rebuild));
        return Ok(1);
    };
    if let Some(error) = &status.embed_error {
        eprintln!(
            "cairn: warning: search by meaning covers {} of {} chunks: embedding failed ({})",
            status.embedded,
            status.to_embed,
            clean_line(error)
        );
    }
    let text = match (files, args.json) {
        (Some(files), true) => format!("{}\n", serde_json::to_string_pretty(&files)?),
        (Some(files), false) => describe_files(&files, Style::detect()),
        (None, json) => summary(&report, took, rebuild, &status, json)?,
    };
    terminal::print(&text)?;
    Ok(0)
}

/// The sync's summary, as text or JSON.
fn summary(
    report: &SyncReport,
    took: Duration,
    rebuild: bool,
    status: &IndexStatus,
    json: bool,
) -> anyhow::Result<String> {
    Ok(if json {
        let value = IndexJson {
            files: report.files,
            chunks: report.chunks,
            changed: report.changed,
            removed: report.removed,
            skipped: report
                .not_indexed
                .iter()
                .map(|(path, reason)| Skipped { path, reason })
                .collect(),
            took_ms: took.as_millis() as u64,
            embedding_model: status.embedding_model.as_deref(),
            embedded: status.embedded,
            to_embed: status.to_embed,
        };
        format!("{}\n", serde_json::to_string_pretty(&value)?)
    } else {
        let mut text = describe(report, took, rebuild, Style::detect());
        if let Some(model) = &status.embedding_model {
            text.push_str(&format!(
                "vectors ({}): {} of {} chunks\n",
                clean_line(model),
                status.embedded,
                status.to_embed
            ));
        }
        text
    })
}

/// What `cairn index --json` prints.
#[derive(Serialize)]
struct IndexJson<'a> {
    files: u64,
    chunks: u64,
    changed: u64,
    removed: u64,
    skipped: Vec<Skipped<'a>>,
    took_ms: u64,
    /// The model of search by meaning (none: keyword search only).
    embedding_model: Option<&'a str>,
    /// Distinct chunks with their vectors.
    embedded: u64,
    /// Distinct chunks (chunks of the same heading and text share a vector): embedding
    /// is complete when `embedded` reaches it.
    to_embed: u64,
}

#[derive(Serialize)]
struct Skipped<'a> {
    path: &'a str,
    reason: &'a str,
}

/// The embedder the settings choose; why there is none when one was asked for goes to
/// stderr.
pub fn embedder(config: &Config) -> Option<Arc<dyn Embedder>> {
    launch::embedder(config, &mut warn)
}

/// As [`embedder`], for a command that embeds its query and exits.
pub fn embedder_for_few_queries(config: &Config) -> Option<Arc<dyn Embedder>> {
    launch::embedder_for_few_queries(config, &mut warn)
}

fn warn(warning: String) {
    eprintln!("cairn: warning: {}", clean_line(&warning))
}

/// Opens the workspace's memory index; a rebuild decided while opening (an index of
/// another version, or one that cannot be read) is told on stderr.
pub fn open(workspace: &Workspace, options: IndexOptions) -> anyhow::Result<MemoryIndex> {
    let index = MemoryIndex::open(workspace, options).with_context(|| {
        format!(
            "cannot open the memory index in {}",
            workspace.state_dir().display()
        )
    })?;
    for notice in index.notices() {
        eprintln!(
            "cairn: warning: memory index: {}",
            crate::escape::prose_line(&notice.to_string())
        );
    }
    Ok(index)
}

/// What `update` did: the sync, how long it and the embedding took, the index after, and
/// (when asked) every file's status.
type Updated = (SyncReport, Duration, IndexStatus, Option<FilesReport>);

/// Syncs (or rebuilds), then makes the vectors still missing, and waits for both;
/// `None` when another process holds the index's writer.
fn update(
    workspace: &Workspace,
    options: IndexOptions,
    rebuild: bool,
    report_files: bool,
) -> anyhow::Result<Option<Updated>> {
    let index = open(workspace, options)?;
    let started = Instant::now();
    let result = if rebuild {
        index.rebuild()
    } else {
        index.sync()
    };
    match result {
        Ok(report) => {
            let status = index.wait_embedded(progress_line());
            if std::io::stderr().is_terminal() {
                eprint!("\r\x1b[K");
            }
            let took = started.elapsed();
            let files = if report_files {
                Some(index.files_report().context("cannot list the files")?)
            } else {
                None
            };
            Ok(Some((report, took, status, files)))
        }
        Err(IndexError::ReadOnly) => Ok(None),
        Err(e) => Err(e).context("cannot bring the memory index up to date"),
    }
}

/// Tells the embedding's progress on stderr, on one line rewritten in place, when stderr
/// is a terminal.
fn progress_line() -> impl FnMut(u64, u64) {
    let terminal = std::io::stderr().is_terminal();
    move |done, of| {
        if terminal && done < of {
            eprint!("\r\x1b[Kembedding {done} / {of}");
        }
    }
}

/// What to tell the user when another Cairn process holds the index's writer.
fn held_elsewhere(workspace: &Workspace, rebuild: bool) -> String {
    let situation = format!(
        "the memory index of {} is being written by another Cairn process (the desktop app, \
         a `cairn chat` or `cairn ask`, or another `cairn index` or `cairn search`)",
        workspace.root().display()
    );
    if rebuild {
        format!(
            "{situation}. To rebuild it, close the app or let that command end, then run \
             `cairn index --rebuild` again."
        )
    } else {
        format!(
            "{situation}. That process keeps the index up to date itself; to see this \
             report, run `cairn index` again once it has ended."
        )
    }
}

/// The report as text: totals, what changed, skipped files with reasons, the time.
fn describe(report: &SyncReport, took: Duration, rebuild: bool, style: Style) -> String {
    let mut out = String::new();
    let state = if rebuild {
        "index rebuilt:"
    } else {
        "index up to date:"
    };
    let changes = match (rebuild, report.changed, report.removed) {
        (true, _, _) => String::new(),
        (false, 0, 0) => " (nothing changed)".to_string(),
        (false, updated, 0) => format!(" ({updated} updated)"),
        (false, updated, removed) => format!(" ({updated} updated, {removed} removed)"),
    };
    let _ = writeln!(
        out,
        "{} {}, {}{changes} in {}",
        style.bold(state),
        plural(report.files, "file"),
        plural(report.chunks, "chunk"),
        duration(took)
    );
    if !report.not_indexed.is_empty() {
        let _ = writeln!(
            out,
            "skipped {} (not indexed):",
            plural(report.not_indexed.len() as u64, "file")
        );
        for (path, reason) in &report.not_indexed {
            let _ = writeln!(
                out,
                "  {}: {}",
                terminal::clean_line(path),
                terminal::clean_line(reason)
            );
        }
    }
    out
}

/// Every file with its status, then the totals.
fn describe_files(report: &FilesReport, style: Style) -> String {
    let mut out = String::new();
    for file in &report.files {
        let status = match file.status {
            FileStatus::Indexed if file.ocr_pages > 0 => "indexed (OCR)",
            FileStatus::Indexed => "indexed",
            FileStatus::Skipped => "skipped",
            FileStatus::Failed => "failed ",
            FileStatus::Pending => "pending",
        };
        let path = if file.folder {
            format!("{}/", clean_line(&file.path))
        } else {
            clean_line(&file.path)
        };
        let detail = match (&file.reason, file.status) {
            (Some(reason), _) => clean_line(reason),
            (None, FileStatus::Indexed) if report.embedding_model.is_some() => format!(
                "{}, {} embedded",
                plural(file.chunks, "chunk"),
                file.embedded
            ),
            (None, FileStatus::Indexed) => plural(file.chunks, "chunk"),
            (None, _) => String::new(),
        };
        let detail = ocr_detail(file, detail);
        let _ = writeln!(out, "{status}  {path}  {detail}");
    }
    let _ = writeln!(
        out,
        "{} {} indexed ({}, {} embedded), {} skipped, {} failed, {} pending",
        style.bold("coverage:"),
        plural(report.indexed, "file"),
        plural(report.chunks, "chunk"),
        report.embedded,
        report.skipped,
        report.failed,
        report.pending
    );
    if report.ocr_files > 0 {
        let _ = writeln!(out, "{} read by OCR", plural(report.ocr_files, "file"));
    }
    for line in &report.unread_scans {
        let _ = writeln!(out, "{}", clean_line(line));
    }
    out
}

/// `detail` with what OCR read of a PDF's pages and left unread.
fn ocr_detail(file: &cairn_app::cairn_memory::index::FileEntry, detail: String) -> String {
    let mut parts = vec![detail];
    let paged = file.path.to_ascii_lowercase().ends_with(".pdf");
    if paged && file.ocr_pages > 0 {
        parts.push(format!(
            "{} by OCR",
            plural(u64::from(file.ocr_pages), "page")
        ));
    }
    if let Some(unread) = file
        .unread_scans
        .as_deref()
        .filter(|_| file.status == FileStatus::Indexed)
    {
        parts.push(clean_line(unread));
    }
    parts.retain(|p| !p.is_empty());
    parts.join(", ")
}

pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `850 ms`, `12.3 s`.
pub fn duration(took: Duration) -> String {
    if took < Duration::from_secs(10) {
        format!("{} ms", took.as_millis())
    } else {
        format!("{:.1} s", took.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_says_what_changed_and_what_was_skipped() {
        let report = SyncReport {
            files: 3,
            chunks: 1,
            changed: 2,
            removed: 1,
            skipped: Vec::new(),
            not_indexed: vec![("knowledge/a.md".into(), "not UTF-8 text".into())],
            took: Duration::ZERO,
        };
        let plain = Style::plain();
        assert_eq!(
            describe(&report, Duration::from_millis(7), false, plain),
            "index up to date: 3 files, 1 chunk (2 updated, 1 removed) in 7 ms\n\
             skipped 1 file (not indexed):\n  knowledge/a.md: not UTF-8 text\n"
        );
        let quiet = SyncReport {
            not_indexed: Vec::new(),
            changed: 0,
            removed: 0,
            ..report
        };
        assert_eq!(
            describe(&quiet, Duration::from_secs(12), false, plain),
            "index up to date: 3 files, 1 chunk (nothing changed) in 12.0 s\n"
        );
    }

    #[test]
    fn files_read_by_ocr_and_scans_left_unread_are_said() {
        use cairn_app::cairn_memory::index::FileEntry;
        let entry = |path: &str, status, chunks, ocr_pages, unread: Option<&str>| FileEntry {
            path: path.into(),
            status,
            folder: false,
            reason: None,
            chunks,
            embedded: 0,
            ocr_pages,
            unread_scans: unread.map(String::from),
        };
        let report = FilesReport {
            files: vec![
                entry("scans/board.png", FileStatus::Indexed, 1, 1, None),
                entry(
                    "papers/mixed.pdf",
                    FileStatus::Indexed,
                    4,
                    2,
                    Some("1 scanned page not read: OCR ran out of the time one file may take"),
                ),
                entry("notes/a.md", FileStatus::Indexed, 2, 0, None),
            ],
            indexed: 3,
            chunks: 7,
            ocr_files: 2,
            unread_scans: vec!["3 scanned pages not read: install tesseract-ocr".into()],
            ..FilesReport::default()
        };
        assert_eq!(
            describe_files(&report, Style::plain()),
            "indexed (OCR)  scans/board.png  1 chunk\n\
             indexed (OCR)  papers/mixed.pdf  4 chunks, 2 pages by OCR, 1 scanned page not \
             read: OCR ran out of the time one file may take\n\
             indexed  notes/a.md  2 chunks\n\
             coverage: 3 files indexed (7 chunks, 0 embedded), 0 skipped, 0 failed, 0 pending\n\
             2 files read by OCR\n\
             3 scanned pages not read: install tesseract-ocr\n"
        );
    }
}
