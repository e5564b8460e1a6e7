//! Searching the index: BM25 over chunk text and headings with the terms OR-ed, a boost
//! when the words appear as a phrase, the days a query asks about and a bounded recency
//! for dated daily logs (see `when` and `weigh`), filters by corpus, and snippets with the
//! matched terms marked; by meaning (cosine of chunk
//! vectors) and hybrid (both fused, see `semantic`) when an embedding model is set.

use std::time::{Duration, Instant};

use chrono::{Local, NaiveDate};
use serde::Serialize;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocAddress, Score, TantivyDocument, Term};
use ts_rs::TS;

use super::rank::{self, Ranking};
use super::schema::{kind_bit, tokens, Fields};
use super::semantic::{self, Filter, Fused};
use super::snippet::Marker;
use super::vectors::Quantized;
use super::weigh::Weighing;
use super::{day_number, embedding, when, IndexError, MemoryIndex};
use crate::source::{Corpus, SourceKind};

/// A whole pass over the files that has run this long is not waited for by a search.
pub const LONG_PASS: Duration = Duration::from_millis(300);

/// How much a match in the heading counts beside one in the text.
const HEADING_BOOST: Score = 0.6;
/// How much the whole query found as a phrase adds.
const PHRASE_BOOST: Score = 2.0;
/// Longest snippet, in characters.
const SNIPPET_CHARS: usize = 220;

/// How a search matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// The words (BM25).
    Keyword,
    /// The meaning (cosine of embeddings).
    Semantic,
    /// Both, fused.
    Hybrid,
}

impl SearchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Keyword => "keyword",
            SearchMode::Semantic => "semantic",
            SearchMode::Hybrid => "hybrid",
        }
    }
}

impl std::fmt::Display for SearchMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for SearchMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "keyword" => Ok(SearchMode::Keyword),
            "semantic" => Ok(SearchMode::Semantic),
            "hybrid" => Ok(SearchMode::Hybrid),
            other => Err(format!(
                "unknown search mode `{other}` (keyword, semantic or hybrid)"
            )),
        }
    }
}

#[derive(Debug, Clone)]
pub struct SearchQuery {
    pub text: String,
    pub limit: usize,
    pub corpus: Corpus,
    /// The day recency is measured from (default: today, local time).
    pub today: Option<NaiveDate>,
    /// `None`: hybrid when an embedding model is set, else keyword.
    pub mode: Option<SearchMode>,
}

impl SearchQuery {
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            limit: 10,
            corpus: Corpus::All,
            today: None,
            mode: None,
        }
    }
}

/// How much of the index search by meaning saw: chunks with a vector, of all in the index.
/// Short of all, the rest were found by their words only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Coverage {
    pub embedded: u64,
    pub chunks: u64,
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
    /// The page of a paged document (a PDF) the chunk is on, 1-based.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// For a file of a folder searched in place, where that folder is (its `path` starts
    /// with the folder's name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    /// The day a dated hit is about (a daily log's, the day a session began), `YYYY-MM-DD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub day: Option<String>,
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
    /// How the hits were found.
    pub mode: Option<SearchMode>,
    /// With search by meaning: how many chunks had their vectors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
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
        // A whole pass over the files that has run a while (the first index of a large
        // folder) may take minutes: waiting for it would only delay every answer. A file
        // just saved, or a pass just begun, is waited for.
        let long_pass = self
            .shared
            .progress()
            .pass_started
            .is_some_and(|begun| begun.elapsed() >= LONG_PASS);
        let wait = if long_pass { Duration::ZERO } else { wait };
        let current = self.is_read_only() || self.wait_current(wait);
        let mut results = self.search_now(query)?;
        results.stale = !current;
        results.took = started.elapsed();
        Ok(results)
    }

    /// Searches what is committed now, without waiting.
    pub fn search_now(&self, query: &SearchQuery) -> Result<SearchResults, IndexError> {
        let started = Instant::now();
        let embedder = self.shared.embedder();
        let embedder = embedder.as_ref();
        let mode = match (query.mode, embedder) {
            (Some(SearchMode::Keyword), _) | (None, None) => SearchMode::Keyword,
            (Some(_), None) => return Err(IndexError::NoEmbedder),
            (Some(mode), Some(_)) => mode,
            (None, Some(_)) => SearchMode::Hybrid,
        };
        let fields = self.shared.fields;
        let today_date = query.today.unwrap_or_else(|| Local::now().date_naive());
        let asked = when::read(&query.text, today_date);
        let words = build_query(&fields, &asked.text);
        if query.text.trim().is_empty() || (mode == SearchMode::Keyword && words.is_none()) {
            return Ok(SearchResults::default());
        }
        let searcher = self.shared.reader.searcher();
        let limit = query.limit.max(1);
        let kinds = SourceKind::ALL
            .into_iter()
            .filter(|k| query.corpus.includes(*k))
            .fold(0, |bits, k| bits | kind_bit(k));
        let options = &self.shared.options;
        let weighing = Weighing::new(
            day_number(today_date),
            options.recency_strength as f32,
            options.half_life_days as f32,
            asked.latest,
            asked.window.map(|(a, b)| (day_number(a), day_number(b))),
        );
        // Hybrid and semantic rank more candidates than asked, for fusion and MMR.
        let pool = if mode == SearchMode::Keyword {
            limit
        } else {
            (limit * 4).max(40)
        };
        let keyword = match (&words, mode) {
            (Some(parts), SearchMode::Keyword | SearchMode::Hybrid) => rank::top_docs(
                &searcher,
                &Ranking {
                    words: &parts.words,
                    phrase: parts.phrase.as_ref().map(|p| p as &dyn Query),
                    phrase_boost: PHRASE_BOOST,
                    limit: pool,
                    kinds,
                    weighing,
                },
            )?,
            _ => Vec::new(),
        };
        let mut coverage = None;
        let top: Vec<(Score, DocAddress)> = match (mode, embedder) {
            (SearchMode::Keyword, _) | (_, None) => keyword,
            (_, Some(embedder)) => {
                let vector = super::embedding::embed_query(embedder.as_ref(), &asked.text);
                let vector = match vector {
                    Ok(vector) => vector,
                    // Not asked for by name: the words still find what they can.
                    Err(e) if query.mode.is_none() => {
                        tracing::warn!(error = %e, "cannot embed the query; keyword search only");
                        let mut results = self.hits(&searcher, words.as_ref(), &keyword)?;
                        results.results.truncate(limit);
                        results.mode = Some(SearchMode::Keyword);
                        results.took = started.elapsed();
                        return Ok(results);
                    }
                    Err(e) => return Err(IndexError::Embed(e)),
                };
                let query_vector = Quantized::new(&vector);
                if self.is_read_only() {
                    // The embedder knows which model it runs once it has embedded the
                    // query; the writer records the vectors under that name.
                    let model = embedder.model();
                    if self.shared.vectors().model() != model {
                        self.shared.vectors_mut().reset(model);
                    }
                    self.load_new_vectors();
                }
                let store = self.shared.vectors();
                let mut cache = self
                    .shared
                    .slot_cache
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let filter = Filter {
                    kinds,
                    weighing,
                    exact_up_to: self.shared.options.exact_search_up_to,
                };
                // Vectors of another length than the query's (a server that changed its
                // model under the same name, or a model switched a moment ago) cannot be
                // compared: nothing is near until they are made again.
                let comparable = store.dimensions() == 0 || store.dimensions() == vector.len();
                let (near, seen) = if comparable {
                    semantic::nearest(&searcher, &store, &mut cache, &query_vector, &filter, pool)?
                } else {
                    let chunks = searcher.num_docs();
                    (
                        Vec::new(),
                        Coverage {
                            chunks,
                            embedded: 0,
                        },
                    )
                };
                coverage = Some(seen);
                let fused = if mode == SearchMode::Semantic {
                    near.iter()
                        .map(|n| Fused {
                            score: n.score,
                            address: n.address,
                            slot: Some(n.slot),
                            keyword: 0.0,
                        })
                        .collect()
                } else {
                    let most = most_keyword_score(&searcher, &fields, &asked.text)?;
                    let meanings = if comparable {
                        semantic::meaning_of_hits(
                            &searcher,
                            &store,
                            &mut cache,
                            &query_vector,
                            &weighing,
                            &keyword,
                            &near,
                        )?
                    } else {
                        Default::default()
                    };
                    semantic::fuse(&keyword, most, &near, |a| meanings.get(&a).copied())
                };
                semantic::diversify(fused, &store, limit)
                    .into_iter()
                    .map(|f| (f.score, f.address))
                    .collect()
            }
        };
        let mut results = self.hits(&searcher, words.as_ref(), &top)?;
        results.mode = Some(mode);
        results.coverage = coverage;
        results.took = started.elapsed();
        Ok(results)
    }

    /// A read-only process: loads the vectors the writing process has added since.
    fn load_new_vectors(&self) {
        let guard = self
            .shared
            .reading_catalog
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(catalog) = guard.as_ref() {
            if let Err(e) = embedding::load_new(&self.shared, catalog) {
                tracing::warn!(error = %e, "cannot load new vectors");
            }
        }
    }

    /// The hits for ranked chunks: their place, heading and a snippet with the query's
    /// words marked (or the chunk's opening when none of them is in it).
    fn hits(
        &self,
        searcher: &tantivy::Searcher,
        words: Option<&QueryParts>,
        top: &[(Score, DocAddress)],
    ) -> Result<SearchResults, IndexError> {
        let fields = self.shared.fields;
        let addresses: Vec<DocAddress> = top.iter().map(|(_, address)| *address).collect();
        let (marker, marks) = match words {
            Some(parts) => {
                let marker = Marker::new(searcher, &parts.words, fields.body, SNIPPET_CHARS)?;
                let marks = marker.marks(searcher, &addresses)?;
                (Some(marker), marks)
            }
            None => (None, vec![Vec::new(); top.len()]),
        };
        let mut results = Vec::with_capacity(top.len());
        for ((score, address), marks) in top.iter().zip(&marks) {
            let doc: TantivyDocument = searcher.doc(*address)?;
            let text = |field| {
                doc.get_first(field)
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            };
            let number = |field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0);
            let day = doc
                .get_first(fields.day)
                .and_then(|v| v.as_i64())
                .and_then(super::schema::date_of_day)
                .map(|d| d.format("%Y-%m-%d").to_string());
            let path = text(fields.path);
            let (start_line, end_line) = (number(fields.start_line), number(fields.end_line));
            let page = u32::try_from(number(fields.page)).ok().filter(|&p| p > 0);
            let body = doc
                .get_first(fields.body)
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            let snippet = marker.as_ref().and_then(|m| m.snippet(body, marks));
            let (snippet, highlights) = match snippet {
                Some(snippet) if !snippet.fragment.trim().is_empty() => {
                    (snippet.fragment, snippet.highlights)
                }
                _ => (opening(body), Vec::new()),
            };
            let folder = self
                .shared
                .folders
                .iter()
                .find(|f| f.relative_of(&path).is_some())
                .map(|f| f.root.display().to_string());
            results.push(SearchHit {
                folder,
                day,
                citation: match page {
                    Some(page) => format!("{path}#page={page}"),
                    None => format!("{path}#L{start_line}-L{end_line}"),
                },
                page,
                path,
                start_line: start_line as usize,
                end_line: end_line as usize,
                score: *score,
                snippet,
                highlights,
                source: text(fields.source),
                heading: text(fields.heading),
            });
        }
        Ok(SearchResults {
            results,
            ..SearchResults::default()
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

/// The most BM25 can give the query's words: each word's IDF at saturated term
/// frequency, summed. A keyword hit's score over it is its calibrated score in a hybrid
/// fusion: a hit that matched only common words (as a question's "what", "did", "about"
/// do) counts little, one that holds the rare words of the query counts fully.
fn most_keyword_score(
    searcher: &tantivy::Searcher,
    fields: &Fields,
    text: &str,
) -> Result<f32, IndexError> {
    let total = searcher.num_docs() as f32;
    let mut most = 0.0f32;
    let mut seen = Vec::new();
    for token in tokens(text) {
        if seen.contains(&token) {
            continue;
        }
        let df = searcher.doc_freq(&Term::from_field_text(fields.body, &token))? as f32;
        most += (1.0 + (total - df + 0.5) / (df + 0.5)).ln() * (BM25_K1 + 1.0);
        seen.push(token);
    }
    Ok(most)
}

/// BM25's term-frequency saturation (Tantivy's).
const BM25_K1: f32 = 1.2;

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
            page: None,
            folder: None,
            day: None,
        };
        assert_eq!(hit.marked("**", "**"), "the **blue** door");
    }
}
