//! Memory search results, index status and consolidation results as the page shows them.

use cairn_app::cairn_core::upkeep::ConsolidationReport;
use cairn_app::cairn_memory::{SearchHit, SearchMode, SearchResults};
use serde::Serialize;
use ts_rs::TS;

/// What a memory search found.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(rename = "SearchResults")]
pub struct SearchResultsView {
    pub hits: Vec<SearchHitView>,
    /// The index was still catching up when the search ran.
    pub stale: bool,
    pub took_ms: f64,
    /// How the hits were found (`None` when the query had nothing to search).
    pub mode: Option<SearchMode>,
    /// With search by meaning: chunks with their vectors, of all in the index.
    pub coverage: Option<CoverageView>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
pub struct CoverageView {
    pub embedded: u64,
    pub chunks: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(rename = "SearchHit")]
pub struct SearchHitView {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub heading: String,
    /// The snippet cut into plain-text parts; `hit` parts matched the query.
    pub parts: Vec<SnippetPart>,
    /// The page of a paged document (a PDF), 1-based.
    pub page: Option<u32>,
    /// Where the folder searched in place that holds the file is (its path starts with
    /// the folder's name).
    pub folder: Option<String>,
    /// The day a dated hit (a daily log, a session) is about, `YYYY-MM-DD`.
    pub day: Option<String>,
}

/// A piece of a snippet: plain text the page shows as text, marked when it matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct SnippetPart {
    pub text: String,
    pub hit: bool,
}

impl SearchResultsView {
    pub fn of(results: &SearchResults) -> Self {
        Self {
            hits: results.results.iter().map(SearchHitView::of).collect(),
            stale: results.stale,
            took_ms: results.took.as_secs_f64() * 1000.0,
            mode: results.mode,
            coverage: results.coverage.map(|c| CoverageView {
                embedded: c.embedded,
                chunks: c.chunks,
            }),
        }
    }
}

impl SearchHitView {
    pub fn of(hit: &SearchHit) -> Self {
        Self {
            path: hit.path.clone(),
            start_line: hit.start_line,
            end_line: hit.end_line,
            heading: hit.heading.clone(),
            parts: parts(&hit.snippet, &hit.highlights),
            page: hit.page,
            folder: hit.folder.clone(),
            day: hit.day.clone(),
        }
    }
}

/// Cuts `snippet` at the highlighted byte ranges; ranges that overlap, run past the end
/// or split a character are skipped.
pub fn parts(snippet: &str, highlights: &[(usize, usize)]) -> Vec<SnippetPart> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut push = |text: &str, hit: bool| {
        if !text.is_empty() {
            out.push(SnippetPart {
                text: text.to_string(),
                hit,
            });
        }
    };
    for &(start, end) in highlights {
        let valid = at <= start
            && start < end
            && snippet.is_char_boundary(start)
            && snippet.is_char_boundary(end);
        if !valid {
            continue;
        }
        push(&snippet[at..start], false);
        push(&snippet[start..end], true);
        at = end;
    }
    push(&snippet[at..], false);
    out
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct MemoryOverview {
    /// `memory/YYYY-MM-DD.md`.
    pub today_path: String,
    /// Empty when there is no log today.
    pub today_text: String,
    /// Milliseconds since the epoch, `None` when never.
    pub last_consolidation_ms: Option<i64>,
    pub next_consolidation_ms: Option<i64>,
    /// False when consolidation is off (no model may write memory, or the interval is 0).
    pub consolidation_enabled: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct ConsolidationResult {
    /// A `ConsolidationStatus` name, or `failed`.
    #[ts(type = "ConsolidationStatus | \"failed\"")]
    pub status: String,
    pub message: String,
    pub added: usize,
    pub removed: usize,
    /// Workspace-relative path of the MEMORY.md backup, when one was taken.
    pub backup: Option<String>,
}

impl ConsolidationResult {
    pub fn of(report: &ConsolidationReport) -> Self {
        let name = report.status.name();
        let message = match &report.reason {
            Some(reason) => reason.clone(),
            None => match name {
                "written" => format!(
                    "MEMORY.md rewritten from {} log(s): {} added, {} removed, {} kept",
                    report.merged_logs.len(),
                    report.added,
                    report.removed,
                    report.kept
                ),
                "unchanged" => "MEMORY.md already held everything new".to_string(),
                "nothing_new" => "no daily log changed since the last run".to_string(),
                other => other.replace('_', " "),
            },
        };
        Self {
            status: name.to_string(),
            message,
            added: report.added,
            removed: report.removed,
            backup: report.backup.clone(),
        }
    }

    pub fn failed(message: String) -> Self {
        Self {
            status: "failed".into(),
            message,
            added: 0,
            removed: 0,
            backup: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn part(text: &str, hit: bool) -> SnippetPart {
        SnippetPart {
            text: text.into(),
            hit,
        }
    }

    #[test]
    fn snippets_are_cut_at_highlights_and_bad_ranges_are_skipped() {
        let snippet = "the café <b> was open";
        assert_eq!(
            parts(snippet, &[(4, 9), (6, 7), (10, 13), (15, 99)]),
            vec![
                part("the ", false),
                part("café", true),
                part(" ", false),
                part("<b>", true),
                part(" was open", false),
            ]
        );
        // A range inside "é" is not on a character boundary.
        assert_eq!(parts("é", &[(1, 2)]), vec![part("é", false)]);
    }

    #[test]
    fn coverage_lists_what_ocr_read_and_the_scanned_pages_it_left() {
        use cairn_app::cairn_memory::index::{FileEntry, FileStatus, FilesReport};
        let entry = |path: &str, status, ocr_pages, unread: Option<&str>| FileEntry {
            path: path.into(),
            status,
            folder: false,
            reason: None,
            chunks: 1,
            embedded: 0,
            ocr_pages,
            unread_scans: unread.map(String::from),
        };
        let report = FilesReport {
            files: vec![
                entry("notes/a.md", FileStatus::Indexed, 0, None),
                entry(
                    "scans/b.pdf",
                    FileStatus::Indexed,
                    12,
                    Some("3 scanned pages not read"),
                ),
                entry("photo.png", FileStatus::Skipped, 0, None),
            ],
            unread_scans: vec!["1 scanned page not read: install tesseract-ocr".into()],
            ..FilesReport::default()
        };
        let coverage = CoverageReport::of(&report);
        assert_eq!(
            coverage.ocr,
            vec![OcrFile {
                path: "scans/b.pdf".into(),
                pages: 12,
                unread: Some("3 scanned pages not read".into()),
            }]
        );
        assert_eq!(coverage.unread_scans, report.unread_scans);
        assert_eq!(coverage.left_out.len(), 1);
    }
}

/// Where a file stands in the index (the Coverage view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct CoverageFile {
    pub path: String,
    /// `skipped`, `failed` or `pending` (indexed files are only counted).
    pub status: String,
    /// An ignored folder, reported once for everything in it.
    pub folder: bool,
    pub reason: Option<String>,
}

/// What the index reaches: the counts, and every file it leaves out with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct CoverageReport {
    pub indexed: u64,
    pub skipped: u64,
    pub failed: u64,
    pub pending: u64,
    pub chunks: u64,
    pub embedded: u64,
    /// The files not indexed, failed ones first.
    pub left_out: Vec<CoverageFile>,
    /// The files indexed with text read by OCR (pictures, scanned PDF pages).
    pub ocr: Vec<OcrFile>,
    /// Scanned pages not read, one line per reason (`3 scanned pages not read: install
    /// tesseract-ocr`).
    pub unread_scans: Vec<String>,
}

/// A file whose text was read by OCR: `indexed (OCR)` in the Coverage view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct OcrFile {
    pub path: String,
    /// Pages read by OCR (a picture counts one).
    pub pages: u32,
    /// Its scanned pages left unread, and why, when some were.
    pub unread: Option<String>,
}

impl CoverageReport {
    pub fn of(report: &cairn_app::cairn_memory::index::FilesReport) -> Self {
        use cairn_app::cairn_memory::index::FileStatus;
        let status = |s: FileStatus| match s {
            FileStatus::Indexed => "indexed",
            FileStatus::Skipped => "skipped",
            FileStatus::Failed => "failed",
            FileStatus::Pending => "pending",
        };
        let mut left_out: Vec<CoverageFile> = report
            .files
            .iter()
            .filter(|f| f.status != FileStatus::Indexed)
            .map(|f| CoverageFile {
                path: f.path.clone(),
                status: status(f.status).into(),
                folder: f.folder,
                reason: f.reason.clone(),
            })
            .collect();
        left_out.sort_by_key(|f| f.status != "failed");
        let ocr = report
            .files
            .iter()
            .filter(|f| f.status == FileStatus::Indexed && f.ocr_pages > 0)
            .map(|f| OcrFile {
                path: f.path.clone(),
                pages: f.ocr_pages,
                unread: f.unread_scans.clone(),
            })
            .collect();
        Self {
            indexed: report.indexed,
            skipped: report.skipped,
            failed: report.failed,
            pending: report.pending,
            chunks: report.chunks,
            embedded: report.embedded,
            left_out,
            ocr,
            unread_scans: report.unread_scans.clone(),
        }
    }
}
