//! Searching the index: BM25 over chunk text and headings with the terms OR-ed, a boost
//! when the words appear as a phrase, a recency decay for dated daily logs, filters by
//! corpus, and snippets with the matched terms marked.

use std::time::{Duration, Instant};

use chrono::{Local, NaiveDate};
use serde::Serialize;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{DocAddress, DocId, Score, SegmentReader, TantivyDocument, Term};

use super::schema::{tokens, Fields};
use super::{day_number, IndexError, MemoryIndex};
use crate::source::{Corpus, SourceKind};

/// How much a match in the heading counts beside one in the text.
const HEADING_BOOST: Score = 0.6;
/// How much the whole query found as a phrase adds.
const PHRASE_BOOST: Score = 2.0;
/// Longest snippet, in characters.
const SNIPPET_CHARS: usize = 220;

#[derive(Debug, Clone)]
pub struct SearchQuery {
    pub text: String,
    pub limit: usize,
    pub corpus: Corpus,
    /// The day recency is measured from (default: today, local time).
    pub today: Option<NaiveDate>,
}

impl SearchQuery {
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            limit: 10,
            corpus: Corpus::All,
            today: None,
        }
    }
}

/// One hit: a chunk of a file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub score: f32,
    /// A passage of the chunk around the matches.
    pub snippet: String,
    /// Byte ranges of `snippet` that matched the query.
    pub highlights: Vec<(usize, usize)>,
    /// `path#Lstart-Lend`.
    pub citation: String,
    pub source: String,
    /// The headings above the chunk (" > "-separated).
    pub heading: String,
}

impl SearchHit {
    /// The snippet with each matched part between `open` and `close`.
    pub fn marked(&self, open: &str, close: &str) -> String {
        let mut out = String::with_capacity(self.snippet.len() + 8);
        let mut at = 0;
        for &(start, end) in &self.highlights {
            if start < at || end > self.snippet.len() {
                continue;
            }
            out.push_str(&self.snippet[at..start]);
            out.push_str(open);
            out.push_str(&self.snippet[start..end]);
            out.push_str(close);
            at = end;
        }
        out.push_str(&self.snippet[at..]);
        out
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SearchResults {
    pub results: Vec<SearchHit>,
    /// The index was still catching up with recent changes when the search ran.
    pub stale: bool,
    #[serde(skip)]
    pub took: Duration,
}

impl MemoryIndex {
    /// Searches, first waiting briefly (the configured catch-up wait) for pending changes
    /// to be indexed.
    pub fn search(&self, query: &SearchQuery) -> Result<SearchResults, IndexError> {
        self.search_waiting(query, self.shared.options.catch_up_wait)
    }

    /// Searches, first waiting up to `wait` for pending changes to be indexed.
    pub fn search_waiting(
        &self,
        query: &SearchQuery,
        wait: Duration,
    ) -> Result<SearchResults, IndexError> {
        let started = Instant::now();
        let current = self.is_read_only() || self.wait_current(wait);
        let mut results = self.search_now(query)?;
        results.stale = !current;
        results.took = started.elapsed();
        Ok(results)
    }

    /// Searches what is committed now, without waiting.
    pub fn search_now(&self, query: &SearchQuery) -> Result<SearchResults, IndexError> {
        let started = Instant::now();
        let fields = self.shared.fields;
        let Some(tantivy_query) = build_query(&fields, &query.text, query.corpus) else {
            return Ok(SearchResults::default());
        };
        let searcher = self.shared.reader.searcher();
        let today = day_number(query.today.unwrap_or_else(|| Local::now().date_naive()));
        let half_life = self.shared.options.half_life_days.max(0.001) as f32;
        let collector =
            TopDocs::with_limit(query.limit.max(1)).tweak_score(move |segment: &SegmentReader| {
                let days = segment.fast_fields().i64("day").ok();
                move |doc: DocId, score: Score| {
                    let day = days.as_ref().and_then(|c| c.first(doc)).unwrap_or(0);
                    score * decay(today, day, half_life)
                }
            });
        let top: Vec<(Score, DocAddress)> = searcher.search(&tantivy_query, &collector)?;
        let mut snippets = SnippetGenerator::create(&searcher, &*tantivy_query, fields.body)?;
        snippets.set_max_num_chars(SNIPPET_CHARS);
        let mut results = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address)?;
            let text = |field| {
                doc.get_first(field)
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            };
            let number = |field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0);
            let path = text(fields.path);
            let (start_line, end_line) = (number(fields.start_line), number(fields.end_line));
            let snippet = snippets.snippet_from_doc(&doc);
            let (snippet, highlights) = if snippet.fragment().trim().is_empty() {
                (opening(&text(fields.body)), Vec::new())
            } else {
                let ranges = snippet
                    .highlighted()
                    .iter()
                    .map(|r| (r.start, r.end))
                    .collect();
                (snippet.fragment().to_string(), ranges)
            };
            results.push(SearchHit {
                citation: format!("{path}#L{start_line}-L{end_line}"),
                path,
                start_line: start_line as usize,
                end_line: end_line as usize,
                score,
                snippet,
                highlights,
                source: text(fields.source),
                heading: text(fields.heading),
            });
        }
        Ok(SearchResults {
            results,
            stale: false,
            took: started.elapsed(),
        })
    }
}

/// The query for `text`, or `None` when it has no searchable words.
fn build_query(fields: &Fields, text: &str, corpus: Corpus) -> Option<Box<dyn Query>> {
    let tokens = tokens(text);
    if tokens.is_empty() {
        return None;
    }
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    let mut seen = Vec::new();
    for token in &tokens {
        if seen.contains(token) {
            continue;
        }
        seen.push(token.clone());
        let body = Term::from_field_text(fields.body, token);
        let heading = Term::from_field_text(fields.heading, token);
        clauses.push((
            Occur::Should,
            Box::new(TermQuery::new(body, IndexRecordOption::WithFreqs)),
        ));
        clauses.push((
            Occur::Should,
            Box::new(BoostQuery::new(
                Box::new(TermQuery::new(heading, IndexRecordOption::WithFreqs)),
                HEADING_BOOST,
            )),
        ));
    }
    if tokens.len() > 1 {
        let terms = tokens
            .iter()
            .map(|t| Term::from_field_text(fields.body, t))
            .collect();
        clauses.push((
            Occur::Should,
            Box::new(BoostQuery::new(
                Box::new(PhraseQuery::new(terms)),
                PHRASE_BOOST,
            )),
        ));
    }
    let words: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
    if corpus == Corpus::All {
        return Some(words);
    }
    let kinds: Vec<(Occur, Box<dyn Query>)> = SourceKind::ALL
        .into_iter()
        .filter(|k| corpus.includes(*k))
        .map(|k| {
            let term = Term::from_field_text(fields.source, k.as_str());
            let query: Box<dyn Query> = Box::new(TermQuery::new(term, IndexRecordOption::Basic));
            (Occur::Should, query)
        })
        .collect();
    // The filter must match but adds nothing to the score.
    let filter = BoostQuery::new(Box::new(BooleanQuery::new(kinds)), 0.0);
    Some(Box::new(BooleanQuery::new(vec![
        (Occur::Must, words),
        (Occur::Must, Box::new(filter)),
    ])))
}

/// The weight of a hit from `day` (0: undated, no decay) seen on `today`.
fn decay(today: i64, day: i64, half_life: f32) -> f32 {
    if day <= 0 || day >= today {
        return 1.0;
    }
    0.5f32.powf((today - day) as f32 / half_life)
}

/// The start of `text`, cut at a character boundary.
fn opening(text: &str) -> String {
    match text.char_indices().nth(SNIPPET_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_halves_every_half_life_and_spares_undated_hits() {
        assert_eq!(decay(100, 0, 30.0), 1.0);
        assert_eq!(decay(100, 100, 30.0), 1.0);
        assert!((decay(100, 70, 30.0) - 0.5).abs() < 1e-6);
        assert!((decay(100, 40, 30.0) - 0.25).abs() < 1e-6);
    }

    #[test]
    fn marked_wraps_highlights() {
        let hit = SearchHit {
            path: "a.md".into(),
            start_line: 1,
            end_line: 1,
            score: 1.0,
            snippet: "the blue door".into(),
            highlights: vec![(4, 8)],
            citation: "a.md#L1-L1".into(),
            source: "knowledge".into(),
            heading: String::new(),
        };
        assert_eq!(hit.marked("**", "**"), "the **blue** door");
    }
}
