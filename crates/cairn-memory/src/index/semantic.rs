//! Search by meaning, and its fusion with keyword search.
//!
//! Semantic: every live chunk of the allowed kinds that has a vector is scored by cosine
//! with the query (exact search over the quantised vectors), weighed by its day like
//! keyword hits, and the best kept. Hybrid: the keyword and semantic candidate lists are
//! fused by their calibrated scores (see [`fuse`]), then MMR picks the hits so that five
//! near-identical chunks do not crowd out the rest.

use std::collections::{BinaryHeap, HashMap};
use std::ops::Sub;

use tantivy::{DocAddress, DocId, Score, Searcher};

use super::search::Coverage;
use super::slots::{SlotCache, NO_SLOT};
use super::vectors::{signs, Quantized, VectorStore};
use super::weigh::Weighing;

/// MMR's balance of relevance against novelty (1: relevance only).
pub(super) const MMR_LAMBDA: f32 = 0.5;
/// The cosine from which two chunks count as saying the same thing: MMR's penalty grows
/// from nothing here to its whole at identical vectors, so related but distinct notes
/// keep their places and only near-copies give way.
pub(super) const ALIKE_FROM: f32 = 0.85;
/// The least cosine a chunk found only by meaning needs to be shown at all.
pub(super) const MIN_SIMILARITY: f32 = 0.2;
/// Every kind's bit (see `schema::kind_bit`).
const ALL_KINDS: u64 = (1 << crate::source::SourceKind::ALL.len()) - 1;
/// A chunk found by meaning.
#[derive(Debug, Clone, Copy)]
pub(super) struct Near {
    pub score: Score,
    pub address: DocAddress,
    pub slot: u32,
}

/// What a semantic ranking needs besides the query vector.
pub(super) struct Filter {
    pub kinds: u64,
    pub weighing: Weighing,
    /// Up to this many vectors, search compares every one exactly.
    pub exact_up_to: usize,
}

/// The `keep` chunks nearest `query` (cosine, weighed by day), best first; chunks below
/// [`MIN_SIMILARITY`] are left out. Also how many of the index's chunks had a vector.
///
/// Up to `filter.exact_up_to` vectors, every one is compared exactly. Past that, the
/// vectors' signs shortlist the candidates first (a 384-component vector is six 64-bit
/// words, compared with XOR and popcount, instead of 384 bytes read from memory), and
/// only the shortlist is compared exactly.
pub(super) fn nearest(
    searcher: &Searcher,
    store: &VectorStore,
    cache: &mut SlotCache,
    query: &Quantized,
    filter: &Filter,
    keep: usize,
) -> tantivy::Result<(Vec<Near>, Coverage)> {
    cache.keep_only(searcher);
    let mut coverage = Coverage::default();
    let all_kinds = filter.kinds & ALL_KINDS == ALL_KINDS;
    let query_signs = (store.len() > filter.exact_up_to).then(|| signs(&query.values));
    let shortlist_size = shortlist_size(keep);
    // The shortlist: the worst (most differing signs) on top.
    let mut shortlist: BinaryHeap<(u32, u32, DocId, u32)> = BinaryHeap::new();
    let mut top = Top::new(keep);
    let mut days_of = Vec::new();
    for (ord, reader) in searcher.segment_readers().iter().enumerate() {
        let ord = ord as u32;
        let slots = cache.slots(reader, store)?;
        let fast = reader.fast_fields();
        let days = fast.i64("day")?.first_or_default_col(0);
        let kinds = fast.u64("kind")?.first_or_default_col(u64::MAX);
        let alive = reader.alive_bitset();
        for (doc, slot) in slots.iter().enumerate() {
            let doc = doc as DocId;
            if alive.is_some_and(|a| !a.is_alive(doc)) {
                continue;
            }
            coverage.chunks += 1;
            if *slot == NO_SLOT {
                continue;
            }
            coverage.embedded += 1;
            if let Some(bits) = &query_signs {
                if !all_kinds && kinds.get_val(doc) & filter.kinds == 0 {
                    continue;
                }
                let distance = store.hamming(bits, *slot);
                if shortlist.len() < shortlist_size {
                    shortlist.push((distance, ord, doc, *slot));
                } else if shortlist.peek().is_some_and(|worst| distance < worst.0) {
                    shortlist.pop();
                    shortlist.push((distance, ord, doc, *slot));
                }
                continue;
            }
            // The dot product first: most chunks stop here, before any fast-field read.
            // Weighing only lowers a score: below the worst kept one, a chunk cannot matter.
            let similarity = store.similarity(query, *slot);
            if similarity < MIN_SIMILARITY || similarity < top.floor {
                continue;
            }
            if !all_kinds && kinds.get_val(doc) & filter.kinds == 0 {
                continue;
            }
            let day = days.get_val(doc);
            top.offer(similarity, day, filter, DocAddress::new(ord, doc), *slot);
        }
        days_of.push(days);
    }
    for (_, ord, doc, slot) in shortlist {
        let similarity = store.similarity(query, slot);
        if similarity < MIN_SIMILARITY {
            continue;
        }
        let day = days_of[ord as usize].get_val(doc);
        top.offer(similarity, day, filter, DocAddress::new(ord, doc), slot);
    }
    Ok((top.into_best(), coverage))
}

/// Shortlisted candidates per hit asked for, when the signs shortlist.
const SHORTLIST_PER_HIT: usize = 10;
/// The fewest candidates shortlisted.
const MIN_SHORTLIST: usize = 400;

/// How many candidates the signs shortlist for the exact cosine when `keep` hits are
/// asked for (`cairn-bench vectors` measures what this finds beside exact search).
pub fn shortlist_size(keep: usize) -> usize {
    (keep * SHORTLIST_PER_HIT).max(MIN_SHORTLIST)
}

/// The best chunks seen so far.
struct Top {
    found: Vec<Near>,
    keep: usize,
    /// The worst weighed score kept once the list is full (none before).
    floor: f32,
}

impl Top {
    fn new(keep: usize) -> Self {
        Self {
            found: Vec::new(),
            keep: keep.max(1),
            floor: f32::MIN,
        }
    }

    fn offer(
        &mut self,
        similarity: f32,
        day: i64,
        filter: &Filter,
        address: DocAddress,
        slot: u32,
    ) {
        let score = similarity * filter.weighing.factor(day);
        if score < self.floor {
            return;
        }
        self.found.push(Near {
            score,
            address,
            slot,
        });
        // Keep the list short: past twice `keep`, cut to the best `keep` and raise the
        // floor to the worst kept.
        if self.found.len() >= self.keep * 2 {
            sort_best_first(&mut self.found);
            self.found.truncate(self.keep);
            self.floor = self.found.last().map_or(self.floor, |n| n.score);
        }
    }

    fn into_best(mut self) -> Vec<Near> {
        sort_best_first(&mut self.found);
        self.found.truncate(self.keep);
        self.found
    }
}

fn sort_best_first(found: &mut [Near]) {
    found.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.address.cmp(&b.address))
    });
}

/// A candidate of a hybrid search: its fused score, its keyword share of it (calibrated,
/// 0 to 1) and its vector, if it has one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Fused {
    pub score: Score,
    pub address: DocAddress,
    pub slot: Option<u32>,
    pub keyword: f32,
}

/// The share of a hybrid score that is the keyword score.
pub(super) const KEYWORD_SHARE: f32 = 0.5;
/// The cosine from which meaning counts fully: above it, a chunk is as near as the
/// bundled model places paraphrases.
pub(super) const COSINE_FULL: f32 = 0.7;
/// From this calibrated keyword score, a hit is strong: MMR never drops it for novelty.
pub(super) const STRONG_KEYWORD: f32 = 0.5;

/// A weighed cosine on the scale of a calibrated keyword score: 0 at [`MIN_SIMILARITY`],
/// 1 from [`COSINE_FULL`].
pub(super) fn calibrated_cosine(cosine: f32) -> f32 {
    ((cosine - MIN_SIMILARITY) / (COSINE_FULL - MIN_SIMILARITY)).clamp(0.0, 1.0)
}

/// The slot and weighed cosine of each keyword hit the semantic list does not have, for
/// [`fuse`].
pub(super) fn meaning_of_hits(
    searcher: &Searcher,
    store: &VectorStore,
    cache: &mut SlotCache,
    query: &Quantized,
    weighing: &Weighing,
    keyword: &[(Score, DocAddress)],
    near: &[Near],
) -> tantivy::Result<HashMap<DocAddress, (u32, f32)>> {
    let mut meanings = HashMap::new();
    for (_, address) in keyword {
        if near.iter().any(|n| n.address == *address) {
            continue;
        }
        let reader = searcher.segment_reader(address.segment_ord);
        let slots = cache.slots(reader, store)?;
        let Some(&slot) = slots
            .get(address.doc_id as usize)
            .filter(|s| **s != NO_SLOT)
        else {
            continue;
        };
        let days = reader.fast_fields().i64("day")?.first_or_default_col(0);
        let cosine = store.similarity(query, slot) * weighing.factor(days.get_val(address.doc_id));
        meanings.insert(*address, (slot, cosine));
    }
    Ok(meanings)
}

/// Score fusion of the keyword list (weighed BM25, best first) and the semantic list
/// (weighed cosines). Each score is calibrated to an absolute scale before they are
/// added: BM25 over `most`, the most the query's words can score (so a list whose best
/// hit matched only common words counts little, and one that holds the query's rare
/// words counts fully), and the cosine by [`calibrated_cosine`]. Ranks are not fused:
/// a strong keyword hit keeps its lead over chunks that are only vaguely near, and a
/// near paraphrase over chunks that share a common word.
///
/// `meaning_of` gives a keyword hit's vector slot and weighed cosine when the semantic
/// list does not have it, so each candidate is scored on both halves.
pub(super) fn fuse(
    keyword: &[(Score, DocAddress)],
    most: f32,
    semantic: &[Near],
    meaning_of: impl Fn(DocAddress) -> Option<(u32, f32)>,
) -> Vec<Fused> {
    let mut by_doc: HashMap<DocAddress, (f32, Option<(u32, f32)>)> = HashMap::new();
    for near in semantic {
        by_doc.insert(near.address, (0.0, Some((near.slot, near.score))));
    }
    let most = most.max(f32::EPSILON);
    for (score, address) in keyword {
        let entry = by_doc.entry(*address).or_insert((0.0, None));
        entry.0 = (score / most).clamp(0.0, 1.0);
        if entry.1.is_none() {
            entry.1 = meaning_of(*address);
        }
    }
    let mut fused: Vec<Fused> = by_doc
        .into_iter()
        .map(|(address, (keyword, meaning))| {
            let cosine = meaning.map_or(0.0, |(_, cosine)| calibrated_cosine(cosine));
            Fused {
                score: KEYWORD_SHARE * keyword + (1.0 - KEYWORD_SHARE) * cosine,
                address,
                slot: meaning.map(|(slot, _)| slot),
                keyword,
            }
        })
        .collect();
    fused.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.address.cmp(&b.address))
    });
    fused
}

/// Maximal marginal relevance: picks `limit` of `candidates` (best first), each time the
/// one whose relevance, less its likeness to what is already picked, is highest. A strong
/// keyword hit ([`STRONG_KEYWORD`]) is never made to give way: its likeness counts for
/// nothing.
pub(super) fn diversify(candidates: Vec<Fused>, store: &VectorStore, limit: usize) -> Vec<Fused> {
    let best = candidates
        .first()
        .map_or(1.0, |c| c.score)
        .max(f32::EPSILON);
    let mut left = candidates;
    let mut picked: Vec<Fused> = Vec::with_capacity(limit);
    while picked.len() < limit && !left.is_empty() {
        let mut choice = 0;
        let mut choice_value = f32::MIN;
        for (i, candidate) in left.iter().enumerate() {
            let strong = candidate.keyword >= STRONG_KEYWORD;
            let likeness = candidate.slot.filter(|_| !strong).map_or(0.0, |slot| {
                picked
                    .iter()
                    .filter_map(|p| p.slot)
                    .map(|other| store.similarity_between(slot, other))
                    .fold(0.0, f32::max)
                    .sub(ALIKE_FROM)
                    .max(0.0)
                    / (1.0 - ALIKE_FROM)
            });
            let value = MMR_LAMBDA * candidate.score / best - (1.0 - MMR_LAMBDA) * likeness;
            if value > choice_value {
                choice_value = value;
                choice = i;
            }
        }
        picked.push(left.remove(choice));
    }
    picked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(doc: u32) -> DocAddress {
        DocAddress::new(0, doc)
    }

    fn near(score: f32, doc: u32, slot: u32) -> Near {
        Near {
            score,
            address: at(doc),
            slot,
        }
    }

    #[test]
    fn fusion_favours_chunks_both_lists_found() {
        let keyword = [(9.0, at(1)), (8.0, at(2)), (7.0, at(3))];
        let semantic = [near(0.6, 4, 0), near(0.55, 3, 1)];
        let fused = fuse(&keyword, 10.0, &semantic, |_| None);
        let order: Vec<u32> = fused.iter().map(|f| f.address.doc_id).collect();
        assert_eq!(order[0], 3, "{fused:?}");
        assert_eq!(fused.len(), 4);
        assert_eq!(fused[0].slot, Some(1));
    }

    #[test]
    fn a_strong_keyword_hit_outranks_chunks_that_are_only_vaguely_near() {
        // The keyword list's best holds all the query's rare words; the semantic list is
        // full of chunks a little near the question, none of them the answer.
        let keyword = [(9.0, at(1)), (2.0, at(2))];
        let semantic: Vec<Near> = (0..10)
            .map(|i| near(0.45 - i as f32 * 0.01, 10 + i, i))
            .collect();
        let fused = fuse(&keyword, 10.0, &semantic, |a| {
            (a == at(1)).then_some((99, 0.3))
        });
        assert_eq!(fused[0].address, at(1), "{fused:?}");
        assert_eq!(
            fused[0].slot,
            Some(99),
            "the keyword hit's own vector was looked up"
        );
        // A list that matched only common words counts little beside a near paraphrase.
        let weak = [(0.8, at(1))];
        let fused = fuse(&weak, 10.0, &[near(0.68, 5, 0)], |_| None);
        assert_eq!(fused[0].address, at(5), "{fused:?}");
    }

    #[test]
    fn mmr_skips_a_near_copy_of_a_picked_hit() {
        let mut store = VectorStore::new("m".into());
        store.insert(1, &Quantized::new(&[1.0, 0.0]));
        store.insert(2, &Quantized::new(&[0.999, 0.045]));
        store.insert(3, &Quantized::new(&[0.0, 1.0]));
        let slot = |c| store.slot(c);
        let fused = |score, doc, keyword| Fused {
            score,
            address: at(doc),
            slot: slot(u64::from(doc)),
            keyword,
        };
        let candidates = vec![fused(1.0, 1, 0.0), fused(0.95, 2, 0.0), fused(0.7, 3, 0.0)];
        let picked = diversify(candidates, &store, 2);
        let order: Vec<u32> = picked.iter().map(|f| f.address.doc_id).collect();
        assert_eq!(order, vec![1, 3]);
        // A strong keyword hit keeps its place, near copy or not.
        let candidates = vec![fused(1.0, 1, 0.9), fused(0.95, 2, 0.8), fused(0.7, 3, 0.0)];
        let picked = diversify(candidates, &store, 2);
        let order: Vec<u32> = picked.iter().map(|f| f.address.doc_id).collect();
        assert_eq!(order, vec![1, 2]);
    }
}
