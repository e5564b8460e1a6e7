//! Ranking: the top chunks for a query without scoring every chunk that shares a word
//! with it.
//!
//! The words are OR-ed term queries, which Tantivy can evaluate with block-max WAND:
//! it skips blocks of documents whose best possible score cannot beat the current
//! k-th best. Two things would defeat that if they were part of the query, so they are
//! applied around it instead:
//! - The weighing by day (recency, asked days: see `weigh`) multiplies a raw score by at
//!   most 1, so the k-th best weighed score is a safe threshold for raw scores: a chunk
//!   whose raw score is below it cannot reach it once weighed.
//! - The phrase boost is added to the best few candidates only, after the pruned pass.
//!   A chunk whose words alone rank it below those candidates is not lifted by its
//!   phrase; with several times the asked-for number of candidates this changes which
//!   hits come back only in contrived cases.
//!
//! The corpus filter is a fast-field check in the same callback, so it prunes too.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

use tantivy::columnar::ColumnValues;
use tantivy::query::{EnableScoring, Query, Weight};
use tantivy::{DocAddress, DocId, DocSet, Score, Searcher};

use super::weigh::Weighing;

/// How many candidates the pruned pass keeps for the phrase re-rank, per hit asked for.
const CANDIDATES_PER_HIT: usize = 4;
/// The fewest candidates kept, so small limits still see a fair field.
const MIN_CANDIDATES: usize = 40;

/// What to rank and how.
pub(super) struct Ranking<'a> {
    pub words: &'a dyn Query,
    pub phrase: Option<&'a dyn Query>,
    pub phrase_boost: Score,
    pub limit: usize,
    /// Bits of the source kinds allowed (see [`super::schema::kind_bit`]).
    pub kinds: u64,
    /// What a hit's day does to its score.
    pub weighing: Weighing,
}

/// The best `limit` chunks, best first, with their final scores.
pub(super) fn top_docs(
    searcher: &Searcher,
    ranking: &Ranking,
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    let scoring = EnableScoring::enabled_from_searcher(searcher);
    let words = ranking.words.weight(scoring)?;
    let keep = if ranking.phrase.is_some() {
        (ranking.limit * CANDIDATES_PER_HIT).max(MIN_CANDIDATES)
    } else {
        ranking.limit
    };
    let mut heap = TopHeap::new(keep);
    for (ord, reader) in searcher.segment_readers().iter().enumerate() {
        let fast = reader.fast_fields();
        let days = fast.i64("day")?.first_or_default_col(0);
        let kinds = fast.u64("kind")?.first_or_default_col(u64::MAX);
        let alive = reader.alive_bitset();
        let mut threshold = heap.threshold();
        words.for_each_pruning(threshold, reader, &mut |doc, score| {
            let wanted =
                alive.is_none_or(|a| a.is_alive(doc)) && kinds.get_val(doc) & ranking.kinds != 0;
            if wanted {
                let weighed = score * ranking.weighing.factor(days.get_val(doc));
                heap.push(weighed, DocAddress::new(ord as u32, doc));
                threshold = heap.threshold();
            }
            threshold
        })?;
    }
    let mut candidates = heap.into_sorted();
    if let Some(phrase) = ranking.phrase {
        let weight = phrase.weight(EnableScoring::enabled_from_searcher(searcher))?;
        add_phrase_scores(searcher, weight.as_ref(), ranking, &mut candidates)?;
        candidates.sort_by(Candidate::best_first);
    }
    candidates.truncate(ranking.limit);
    Ok(candidates
        .into_iter()
        .map(|c| (c.score, c.address))
        .collect())
}

/// Adds the boosted phrase score, weighed like the rest, to each candidate that has the
/// phrase.
fn add_phrase_scores(
    searcher: &Searcher,
    phrase: &dyn Weight,
    ranking: &Ranking,
    candidates: &mut [Candidate],
) -> tantivy::Result<()> {
    // Scorers only move forward: visit each segment's candidates in document order.
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by_key(|&i| candidates[i].address);
    let mut at = 0;
    while at < order.len() {
        let segment = candidates[order[at]].address.segment_ord;
        let reader = searcher.segment_reader(segment);
        let days: Arc<dyn ColumnValues<i64>> =
            reader.fast_fields().i64("day")?.first_or_default_col(0);
        let mut scorer = phrase.scorer(reader, ranking.phrase_boost)?;
        while at < order.len() && candidates[order[at]].address.segment_ord == segment {
            let candidate = &mut candidates[order[at]];
            let doc: DocId = candidate.address.doc_id;
            if scorer.doc() <= doc && scorer.seek(doc) == doc {
                let factor = ranking.weighing.factor(days.get_val(doc));
                candidate.score += scorer.score() * factor;
            }
            at += 1;
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Copy)]
struct Candidate {
    /// The weighed score, which orders candidates.
    score: Score,
    address: DocAddress,
}

impl Candidate {
    /// Higher score first; on a tie the earlier document, so results are stable.
    fn best_first(a: &Candidate, b: &Candidate) -> Ordering {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.address.cmp(&b.address))
    }
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        Candidate::best_first(self, other) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    /// Better candidates are smaller, so the max-heap's top is the worst kept one.
    fn cmp(&self, other: &Self) -> Ordering {
        Candidate::best_first(self, other)
    }
}

/// The best `capacity` candidates seen so far.
struct TopHeap {
    capacity: usize,
    heap: BinaryHeap<Candidate>,
}

impl TopHeap {
    fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            heap: BinaryHeap::with_capacity(capacity.max(1) + 1),
        }
    }

    fn push(&mut self, score: Score, address: DocAddress) {
        let candidate = Candidate { score, address };
        if self.heap.len() < self.capacity {
            self.heap.push(candidate);
        } else if self.heap.peek().is_some_and(|worst| candidate < *worst) {
            self.heap.pop();
            self.heap.push(candidate);
        }
    }

    /// The raw score a new document must beat to matter: once the heap is full, the
    /// worst kept weighed score (weighing never raises a score); before, anything counts.
    fn threshold(&self) -> Score {
        match self.heap.peek() {
            Some(worst) if self.heap.len() >= self.capacity => worst.score,
            _ => Score::MIN,
        }
    }

    fn into_sorted(self) -> Vec<Candidate> {
        // Ascending by `Ord` is best first.
        self.heap.into_sorted_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_keeps_the_best_and_reports_the_worst_kept_as_threshold() {
        let mut heap = TopHeap::new(2);
        assert_eq!(heap.threshold(), Score::MIN);
        for (i, score) in [1.0, 5.0, 3.0, 4.0, 0.5].into_iter().enumerate() {
            heap.push(score, DocAddress::new(0, i as u32));
        }
        assert_eq!(heap.threshold(), 4.0);
        let kept: Vec<Score> = heap.into_sorted().iter().map(|c| c.score).collect();
        assert_eq!(kept, vec![5.0, 4.0]);
    }

    /// The pruned pass must return exactly what scoring every matching chunk returns.
    mod pruning {
        use proptest::prelude::*;
        use tantivy::collector::TopDocs;
        use tantivy::query::{BooleanQuery, Occur, TermQuery};
        use tantivy::schema::IndexRecordOption;
        use tantivy::{Index, SegmentReader, TantivyDocument, Term};

        use super::super::*;
        use crate::index::schema::{kind_bit, register, Fields};
        use crate::source::SourceKind;

        const WORDS: [&str; 8] = [
            "alpha", "bravo", "cedar", "delta", "ember", "fjord", "grove", "harp",
        ];

        fn index(docs: &[(Vec<usize>, i64, usize)]) -> (Index, Fields) {
            let (schema, fields) = Fields::schema();
            let index = Index::create_in_ram(schema);
            register(&index);
            let mut writer = index.writer_with_num_threads(1, 15_000_000).unwrap();
            for (i, (words, day, kind)) in docs.iter().enumerate() {
                let text: Vec<&str> = words.iter().map(|w| WORDS[*w]).collect();
                let mut doc = TantivyDocument::default();
                doc.add_text(fields.body, text.join(" "));
                doc.add_text(fields.heading, WORDS[i % WORDS.len()]);
                doc.add_i64(fields.day, *day);
                doc.add_u64(fields.kind, kind_bit(SourceKind::ALL[*kind]));
                writer.add_document(doc).unwrap();
                // Several segments, so thresholds carry across them.
                if i % 97 == 96 {
                    writer.commit().unwrap();
                }
            }
            writer.commit().unwrap();
            (index, fields)
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(24))]
            #[test]
            fn pruned_top_matches_exhaustive_scoring(
                docs in proptest::collection::vec(
                    (proptest::collection::vec(0usize..8, 1..12), 0i64..200, 0usize..5),
                    50..400,
                ),
                query in proptest::collection::vec(0usize..8, 1..4),
                kinds in 1u64..32,
                limit in 1usize..15,
            ) {
                let (index, fields) = index(&docs);
                let searcher = index.reader().unwrap().searcher();
                let clauses: Vec<(Occur, Box<dyn Query>)> = query
                    .iter()
                    .map(|w| {
                        let term = Term::from_field_text(fields.body, WORDS[*w]);
                        let q: Box<dyn Query> =
                            Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                        (Occur::Should, q)
                    })
                    .collect();
                let words = BooleanQuery::new(clauses);
                // A strong recency and a window, so that weighing changes the order.
                let weighing = Weighing::new(150, 0.9, 30.0, false, Some((60, 140)));
                let ranking = Ranking {
                    words: &words,
                    phrase: None,
                    phrase_boost: 0.0,
                    limit,
                    kinds,
                    weighing,
                };
                let pruned = top_docs(&searcher, &ranking).unwrap();
                // Everything scored, then filtered and weighed.
                let all = TopDocs::with_limit(10_000).tweak_score(move |segment: &SegmentReader| {
                    let days = segment.fast_fields().i64("day").unwrap().first_or_default_col(0);
                    let bits = segment.fast_fields().u64("kind").unwrap().first_or_default_col(0);
                    move |doc: DocId, score: Score| {
                        if bits.get_val(doc) & kinds == 0 {
                            return f32::MIN;
                        }
                        score * weighing.factor(days.get_val(doc))
                    }
                });
                let mut exhaustive: Vec<(Score, DocAddress)> = searcher
                    .search(&words, &all)
                    .unwrap()
                    .into_iter()
                    .filter(|(s, _)| *s > f32::MIN)
                    .collect();
                exhaustive.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
                exhaustive.truncate(limit);
                // Block-max WAND sums the same terms in another order: equal up to rounding.
                prop_assert_eq!(pruned.len(), exhaustive.len());
                for ((a, _), (b, _)) in pruned.iter().zip(&exhaustive) {
                    prop_assert!((a - b).abs() <= 1e-5 * a.abs().max(1.0), "{pruned:?} vs {exhaustive:?}");
                }
            }
        }
    }
}
