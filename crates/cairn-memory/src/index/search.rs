//! Searching the index: BM25 over chunk text and headings with the terms OR-ed, a boost
//! when the words appear as a phrase, a recency decay for dated daily logs, filters by
//! corpus, and snippets with the matched terms marked.

use std::time::{Duration, Instant};

use chrono::{Local, NaiveDate};
use serde::Serialize;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{Score, TantivyDocument, Term};

use super::rank::{self, Ranking};
use super::schema::{kind_bit, tokens, Fields};
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
        let Some(query_parts) = build_query(&fields, &query.text) else {
            return Ok(SearchResults::default());
        };
        let searcher = self.shared.reader.searcher();
        let ranking = Ranking {
            words: &query_parts.words,
            phrase: query_parts.phrase.as_ref().map(|p| p as &dyn Query),
            phrase_boost: PHRASE_BOOST,
            limit: query.limit.max(1),
            kinds: SourceKind::ALL
                .into_iter()
                .filter(|k| query.corpus.includes(*k))
                .fold(0, |bits, k| bits | kind_bit(k)),
            today: day_number(query.today.unwrap_or_else(|| Local::now().date_naive())),
            half_life: self.shared.options.half_life_days.max(0.001) as f32,
        };
        let top = rank::top_docs(&searcher, &ranking)?;
        let mut snippets = SnippetGenerator::create(&searcher, &query_parts.words, fields.body)?;
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

/// The query for `text`: its words OR-ed (each in the text, and less in the heading)
/// and, with two words or more, the phrase.
struct QueryParts {
    words: BooleanQuery,
    phrase: Option<PhraseQuery>,
}

/// The query for `text`, or `None` when it has no searchable words.
fn build_query(fields: &Fields, text: &str) -> Option<QueryParts> {
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
    let phrase = (tokens.len() > 1).then(|| {
        let terms = tokens
            .iter()
            .map(|t| Term::from_field_text(fields.body, t))
            .collect();
        PhraseQuery::new(terms)
    });
    Some(QueryParts {
        words: BooleanQuery::new(clauses),
        phrase,
    })
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
