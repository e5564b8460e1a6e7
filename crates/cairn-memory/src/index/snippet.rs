//! Snippets of hits with the query's words marked, found from the positions the index
//! already holds.
//!
//! Tantivy's `SnippetGenerator` runs every word of every hit through the whole analyzer
//! (lower case, folding, the stemmer) to learn which words are the query's: that was half
//! of a keyword query's time. The index knows where each term sits in each chunk (the body
//! is indexed with positions), so here the positions are read from the postings, one pass
//! per term and segment over the hits in document order, and the text is only cut into
//! words (no analysis) to turn positions into byte ranges. The fragment chosen is the one
//! Tantivy's generator would choose: windows of at most `max_bytes`, each scored by the
//! sum of its marked words' weights (1 / (1 + document frequency)), the best and earliest
//! kept.

use std::collections::BTreeSet;

use tantivy::postings::Postings;
use tantivy::query::Query;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::tokenizer::{SimpleTokenizer, TokenStream, Tokenizer};
use tantivy::{DocAddress, DocSet, Score, Searcher, Term};

/// A fragment of a chunk's text and the byte ranges of the words marked in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Snippet {
    pub fragment: String,
    pub highlights: Vec<(usize, usize)>,
}

/// The query's terms in one field, with their weights.
pub struct Marker {
    field: Field,
    terms: Vec<(Term, Score)>,
    max_bytes: usize,
}

impl Marker {
    /// The terms of `query` in `field` that some chunk holds.
    pub fn new(
        searcher: &Searcher,
        query: &dyn Query,
        field: Field,
        max_bytes: usize,
    ) -> tantivy::Result<Self> {
        let mut unique: BTreeSet<Term> = BTreeSet::new();
        query.query_terms(&mut |term, _| {
            if term.field() == field {
                unique.insert(term.clone());
            }
        });
        let mut terms = Vec::with_capacity(unique.len());
        for term in unique {
            let doc_freq = searcher.doc_freq(&term)?;
            if doc_freq > 0 {
                terms.push((term, 1.0 / (1.0 + doc_freq as Score)));
            }
        }
        Ok(Self {
            field,
            terms,
            max_bytes,
        })
    }

    /// For each of `docs`, its words of the query: (position, weight), by position.
    pub fn marks(
        &self,
        searcher: &Searcher,
        docs: &[DocAddress],
    ) -> tantivy::Result<Vec<Vec<(u32, Score)>>> {
        let mut marks = vec![Vec::new(); docs.len()];
        if self.terms.is_empty() {
            return Ok(marks);
        }
        // Postings only move forward: visit the hits by segment, then document.
        let mut order: Vec<usize> = (0..docs.len()).collect();
        order.sort_by_key(|&n| (docs[n].segment_ord, docs[n].doc_id));
        let mut positions = Vec::new();
        for segment in order.chunk_by(|a, b| docs[*a].segment_ord == docs[*b].segment_ord) {
            let reader = searcher.segment_reader(docs[segment[0]].segment_ord);
            let inverted = reader.inverted_index(self.field)?;
            for (term, weight) in &self.terms {
                let Some(mut postings) =
                    inverted.read_postings(term, IndexRecordOption::WithFreqsAndPositions)?
                else {
                    continue;
                };
                for &n in segment {
                    let doc = docs[n].doc_id;
                    if postings.doc() > doc || postings.seek(doc) != doc {
                        continue;
                    }
                    postings.positions(&mut positions);
                    marks[n].extend(positions.iter().map(|&p| (p, *weight)));
                }
            }
        }
        for list in &mut marks {
            list.sort_by_key(|(position, _)| *position);
        }
        Ok(marks)
    }

    /// The best fragment of `text` for its `marks`; `None` when nothing is marked.
    pub fn snippet(&self, text: &str, marks: &[(u32, Score)]) -> Option<Snippet> {
        let last = marks.last()?.0;
        let mut best: Option<Fragment> = None;
        let mut current = Fragment::new(0);
        let mut next = marks.iter().peekable();
        let mut words = SimpleTokenizer::default();
        let mut stream = words.token_stream(text);
        while let Some(token) = stream.next() {
            if token.offset_to - current.start > self.max_bytes {
                if current.score > 0.0 {
                    keep(&mut best, current);
                } else if token.position as u64 > u64::from(last) {
                    // Every mark is behind: no later window can score.
                    current = Fragment::new(token.offset_from);
                    break;
                }
                current = Fragment::new(token.offset_from);
            }
            current.stop = token.offset_to;
            let position = token.position as u64;
            while next.peek().is_some_and(|(p, _)| u64::from(*p) < position) {
                next.next();
            }
            let mut marked = false;
            while let Some((_, weight)) = next.next_if(|(p, _)| u64::from(*p) == position) {
                current.score += weight;
                marked = true;
            }
            if marked {
                current
                    .highlights
                    .push((token.offset_from, token.offset_to));
            }
        }
        if current.score > 0.0 {
            keep(&mut best, current);
        }
        let best = best?;
        Some(Snippet {
            fragment: text[best.start..best.stop].to_string(),
            highlights: best
                .highlights
                .iter()
                .map(|(from, to)| (from - best.start, to - best.start))
                .collect(),
        })
    }
}

/// A window of the text being scored.
struct Fragment {
    start: usize,
    stop: usize,
    score: Score,
    highlights: Vec<(usize, usize)>,
}

impl Fragment {
    fn new(start: usize) -> Self {
        Self {
            start,
            stop: start,
            score: 0.0,
            highlights: Vec::new(),
        }
    }
}

/// Keeps `fragment` when it scores higher than the best so far (the earlier on a tie).
fn keep(best: &mut Option<Fragment>, fragment: Fragment) {
    if best.as_ref().is_none_or(|b| fragment.score > b.score) {
        *best = Some(fragment);
    }
}

#[cfg(test)]
mod tests {
    use tantivy::collector::TopDocs;
    use tantivy::query::{BooleanQuery, Occur, TermQuery};
    use tantivy::schema::Value;
    use tantivy::snippet::SnippetGenerator;
    use tantivy::{Index, TantivyDocument};

    use super::super::schema::{self, Fields};
    use super::*;

    /// Ours and Tantivy's generator give the same fragment and marks on the same hits.
    #[test]
    fn marks_what_tantivys_generator_marks() {
        let (schema_def, fields) = Fields::schema();
        let index = Index::create_in_ram(schema_def);
        schema::register(&index);
        let mut writer = index
            .writer_with_num_threads(1, 15_000_000)
            .unwrap_or_else(|e| panic!("{e}"));
        let texts = [
            "Running late again: the runners ran to the station. Nothing else happened here.",
            "A note without the word.",
            &format!(
                "{} the station was closed, so we walked. {} Running shoes, running water.",
                "Filler words to push things along. ".repeat(8),
                "More filler and more words. ".repeat(10)
            ),
            "Ünïcode stations, station-to-station; RUNNING",
        ];
        for text in texts {
            let mut doc = TantivyDocument::default();
            doc.add_text(fields.body, text);
            writer.add_document(doc).unwrap_or_else(|e| panic!("{e}"));
        }
        writer.commit().unwrap_or_else(|e| panic!("{e}"));
        let reader = index.reader().unwrap_or_else(|e| panic!("{e}"));
        let searcher = reader.searcher();
        let words: Vec<(Occur, Box<dyn Query>)> = ["run", "station"]
            .iter()
            .map(|word| {
                let query: Box<dyn Query> = Box::new(TermQuery::new(
                    Term::from_field_text(fields.body, word),
                    IndexRecordOption::WithFreqsAndPositions,
                ));
                (Occur::Should, query)
            })
            .collect();
        let query = BooleanQuery::new(words);
        let top = searcher
            .search(&query, &TopDocs::with_limit(10).order_by_score())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(top.len(), 3);
        let addresses: Vec<DocAddress> = top.iter().map(|(_, a)| *a).collect();
        for max in [40, 120, 220] {
            let ours =
                Marker::new(&searcher, &query, fields.body, max).unwrap_or_else(|e| panic!("{e}"));
            let marks = ours
                .marks(&searcher, &addresses)
                .unwrap_or_else(|e| panic!("{e}"));
            let mut theirs = SnippetGenerator::create(&searcher, &query, fields.body)
                .unwrap_or_else(|e| panic!("{e}"));
            theirs.set_max_num_chars(max);
            for (address, marks) in addresses.iter().zip(&marks) {
                let doc: TantivyDocument = searcher.doc(*address).unwrap_or_else(|e| panic!("{e}"));
                let text = doc
                    .get_first(fields.body)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default();
                let want = theirs.snippet(text);
                let got = ours.snippet(text, marks);
                let got = got.unwrap_or_else(|| panic!("no snippet for {text:?}"));
                assert_eq!(got.fragment, want.fragment(), "max {max}");
                let want_ranges: Vec<(usize, usize)> = want
                    .highlighted()
                    .iter()
                    .map(|r| (r.start, r.end))
                    .collect();
                assert_eq!(got.highlights, want_ranges, "{text:?} max {max}");
                assert!(!got.highlights.is_empty());
            }
        }
    }

    #[test]
    fn nothing_marked_is_no_snippet() {
        let (schema_def, fields) = Fields::schema();
        let index = Index::create_in_ram(schema_def);
        let searcher = index.reader().unwrap_or_else(|e| panic!("{e}")).searcher();
        let query = BooleanQuery::new(Vec::new());
        let marker =
            Marker::new(&searcher, &query, fields.body, 100).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(marker.snippet("some text", &[]), None);
    }
}
