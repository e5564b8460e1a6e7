//! `cairn search`: bring the memory index up to date, then search it.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::Context;

use cairn_app::cairn_memory::index::{Coverage, SearchMode};
use cairn_app::cairn_memory::{
    Corpus, IndexError, IndexOptions, SearchHit, SearchQuery, SearchResults, Workspace,
};
use cairn_app::launch;
use serde::Serialize;

use crate::args::{Cli, SearchArgs};
use crate::index::{self, duration};
use crate::setup;
use crate::terminal::{self, clean, clean_line, Style};

/// Exit status for a usage error.
const USAGE: u8 = 2;
/// A search by meaning waits for the vectors of what the sync just indexed when they are
/// this few (a note saved a moment ago: a few seconds of embedding at most), up to
/// [`WAIT_FOR_VECTORS`], so it finds that note by meaning too.
const FEW_VECTORS: u64 = 256;
const WAIT_FOR_VECTORS: Duration = Duration::from_secs(5);

pub async fn run(cli: &Cli, args: &SearchArgs) -> anyhow::Result<u8> {
    let text = args.query.join(" ");
    if text.trim().is_empty() {
        eprintln!(
            "cairn search: no query given (pass the words to look for, e.g. \
             `cairn search watering can`)"
        );
        return Ok(USAGE);
    }
    let config = setup::config(cli)?;
    let workspace = setup::workspace(cli, &config)?;
    let query = SearchQuery {
        limit: usize::from(args.limit),
        corpus: args.corpus,
        mode: args.mode,
        ..SearchQuery::new(text.clone())
    };
    let embedder = match args.mode {
        Some(SearchMode::Keyword) => None,
        _ => index::embedder_for_few_queries(&config),
    };
    // The query's engine loads while the index opens and catches up with the files: the
    // search then finds it ready (its vector is made again, in milliseconds).
    if let Some(embedder) = embedder.clone() {
        let text = text.clone();
        std::thread::spawn(move || drop(embedder.embed_query(&text)));
    }
    let asked = query.clone();
    let options = IndexOptions {
        embedder,
        ..launch::index_options(&config)
    };
    let found =
        match tokio::task::spawn_blocking(move || search(&workspace, options, &asked)).await? {
            Err(e) if matches!(e.downcast_ref::<IndexError>(), Some(IndexError::NoEmbedder)) => {
                eprintln!("cairn search: {e}");
                return Ok(USAGE);
            }
            found => found?,
        };
    if args.json {
        let value = SearchJson {
            results: &found.results.results,
            mode: found.results.mode,
            coverage: found.results.coverage,
            stale: found.results.stale,
            took_ms: found.results.took.as_millis() as u64,
            read_only: found.read_only,
        };
        terminal::print(&format!("{}\n", serde_json::to_string_pretty(&value)?))?;
        return Ok(0);
    }
    terminal::print(&describe(&found.results, &query, Style::detect()))?;
    if found.read_only {
        eprintln!(
            "cairn: note: another Cairn process (the desktop app, a `cairn chat`, ...) is \
             writing the memory index; these results are from what it has indexed so far"
        );
    }
    if let Some(coverage) = found.results.coverage.filter(|c| c.embedded < c.chunks) {
        eprintln!(
            "cairn: note: search by meaning saw {} of {} chunks (the rest by their words \
             only); `cairn index` makes the missing vectors",
            coverage.embedded, coverage.chunks
        );
    }
    if found.results.stale {
        eprintln!(
            "cairn: note: the index had not caught up with the files; these results may miss \
             recent changes"
        );
    }
    Ok(0)
}

/// What `cairn search --json` prints.
#[derive(Serialize)]
struct SearchJson<'a> {
    results: &'a [SearchHit],
    /// keyword, semantic or hybrid.
    mode: Option<SearchMode>,
    /// With search by meaning: chunks with vectors, of those searched.
    #[serde(skip_serializing_if = "Option::is_none")]
    coverage: Option<Coverage>,
    stale: bool,
    /// How long the search took (not the sync before it).
    took_ms: u64,
    /// Another Cairn process writes the index; it was searched as that process left it.
    read_only: bool,
}

struct Found {
    results: SearchResults,
    /// Another process holds the index's writer, so it was searched without a sync.
    read_only: bool,
}

/// Opens the index, syncs it when this process may write it, and searches.
fn search(
    workspace: &Workspace,
    options: IndexOptions,
    query: &SearchQuery,
) -> anyhow::Result<Found> {
    let index = index::open(workspace, options)?;
    let mut read_only = false;
    let mut sync_failed = false;
    match index.sync() {
        Ok(report) => {
            for (path, reason) in &report.skipped {
                eprintln!(
                    "cairn: warning: {} is not indexed: {}",
                    clean_line(path),
                    clean_line(reason)
                );
            }
        }
        Err(IndexError::ReadOnly) => read_only = true,
        Err(e) => {
            eprintln!(
                "cairn: warning: cannot bring the memory index up to date ({e}); searching \
                 what it holds"
            );
            sync_failed = true;
        }
    }
    // Returns at once with no embedder (keyword mode, or none set up) or read-only.
    index.wait_few_embedded(FEW_VECTORS, Instant::now() + WAIT_FOR_VECTORS);
    let mut results = match index.search(query) {
        Err(IndexError::NoEmbedder) => return Err(IndexError::NoEmbedder.into()),
        other => other.context("the search failed")?,
    };
    results.stale |= sync_failed;
    Ok(Found { results, read_only })
}

/// The hits as text: citation, score and heading, then the snippet with the matched words
/// styled; a line saying so when there are none.
fn describe(results: &SearchResults, query: &SearchQuery, style: Style) -> String {
    let mut out = String::new();
    let hits = &results.results;
    if hits.is_empty() {
        let place = match query.corpus {
            Corpus::All => String::new(),
            corpus => format!(" in {corpus}"),
        };
        let _ = writeln!(
            out,
            "no results for \"{}\"{place}",
            clean_line(query.text.trim())
        );
        return out;
    }
    for hit in hits {
        let _ = write!(out, "{}", style.bold(&clean_line(&hit.citation)));
        if let Some(day) = &hit.day {
            let _ = write!(out, "  {day}");
        }
        let _ = write!(out, "  {}", style.dim(&format!("score {:.2}", hit.score)));
        if !hit.heading.is_empty() {
            let _ = write!(out, "  {}", clean_line(&hit.heading));
        }
        out.push('\n');
        for line in snippet(hit, style).lines() {
            if !line.trim().is_empty() {
                let _ = writeln!(out, "    {}", line.trim_end());
            }
        }
        out.push('\n');
    }
    let count = match hits.len() {
        1 => "1 result".to_string(),
        n => format!("{n} results"),
    };
    let _ = writeln!(
        out,
        "{}",
        style.dim(&format!("{count} in {}", duration(results.took)))
    );
    out
}

/// The snippet, cleaned of control characters, with each matched part highlighted.
fn snippet(hit: &SearchHit, style: Style) -> String {
    let text = &hit.snippet;
    let mut out = String::with_capacity(text.len() + 16);
    let mut at = 0;
    for &(start, end) in &hit.highlights {
        let (Some(before), Some(word)) = (text.get(at..start), text.get(start..end)) else {
            continue;
        };
        out.push_str(&clean(before));
        out.push_str(&style.highlight(&clean(word)));
        at = end;
    }
    out.push_str(&clean(text.get(at..).unwrap_or_default()));
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn hit() -> SearchHit {
        SearchHit {
            path: "knowledge/garden.md".into(),
            start_line: 5,
            end_line: 7,
            score: 2.345,
            snippet: "## Watering\nThe blue watering can\x1b[2J is in the shed.".into(),
            highlights: vec![(21, 29), (30, 33)],
            citation: "knowledge/garden.md#L5-L7".into(),
            source: "knowledge".into(),
            heading: "Garden > Watering".into(),
            page: None,
            folder: None,
            day: None,
        }
    }

    #[test]
    fn hits_read_as_citation_score_heading_then_the_snippet() {
        let results = SearchResults {
            results: vec![hit()],
            took: Duration::from_millis(3),
            ..SearchResults::default()
        };
        assert_eq!(
            describe(&results, &SearchQuery::new("watering can"), Style::plain()),
            "knowledge/garden.md#L5-L7  score 2.35  Garden > Watering\n    \
             ## Watering\n    The blue watering can\u{fffd}[2J is in the shed.\n\n\
             1 result in 3 ms\n"
        );
    }

    #[test]
    fn matched_words_are_highlighted_on_a_terminal() {
        let marked = snippet(&hit(), Style::colored());
        assert!(
            marked.contains("\x1b[1;33mwatering\x1b[0m \x1b[1;33mcan\x1b[0m"),
            "{marked:?}"
        );
        assert!(!marked.contains("\x1b[2J"));
    }

    #[test]
    fn no_results_names_the_query_and_the_corpus() {
        let query = SearchQuery {
            corpus: Corpus::Knowledge,
            ..SearchQuery::new("zeppelin ")
        };
        assert_eq!(
            describe(&SearchResults::default(), &query, Style::plain()),
            "no results for \"zeppelin\" in knowledge\n"
        );
    }
}
