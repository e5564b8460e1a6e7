//! The generated workspace a search run measures, and the timing of its queries on both
//! engines.

use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use cairn_memory::{MemoryIndex, Workspace};
use rand::rngs::StdRng;
use rand::SeedableRng;

use super::corpus::{self, Corpus};
use super::fts5::Fts5;
use super::memory_index;
use super::queries;
use super::vocab::Vocabulary;
use crate::stats::Samples;

const CORPUS_SEED: u64 = 0x00c0_ffee_cafe;
const QUERY_SEED: u64 = 0x0005_eed5;

/// Query latencies of both engines over the same queries, and how their answers compare.
#[derive(Debug, Default)]
pub struct QueryTimes {
    pub tantivy: Samples,
    pub fts5: Samples,
    /// Queries with at least one hit.
    pub tantivy_hits: usize,
    pub fts5_hits: usize,
    /// Mean share of the top ten (by file and first line) the two engines have in common.
    pub overlap: f64,
}

/// A generated workspace and the words it was written with.
pub(crate) struct Bench {
    pub workspace: Workspace,
    pub vocab: Vocabulary,
    pub corpus: Corpus,
}

impl Bench {
    /// A fresh workspace in `dir/workspace` holding about `chunks` chunks.
    pub(crate) fn generate(dir: &Path, chunks: usize) -> anyhow::Result<Self> {
        let workspace = Workspace::open_or_create(&dir.join("workspace"))?;
        let mut rng = StdRng::seed_from_u64(CORPUS_SEED);
        let vocab = Vocabulary::new(&mut rng);
        let corpus = corpus::generate(workspace.root(), &vocab, chunks, CORPUS_SEED)?;
        Ok(Self {
            workspace,
            vocab,
            corpus,
        })
    }

    pub(super) fn queries(&self, count: usize) -> Vec<String> {
        queries::generate(&self.vocab, &self.corpus.phrases, count, QUERY_SEED)
    }
}

/// Runs every query on both engines once untimed (counting hits and how far the two agree),
/// then once timed, alternating engines query by query.
pub(super) fn time_queries(
    index: &MemoryIndex,
    fts5: &Fts5,
    queries: &[String],
) -> anyhow::Result<QueryTimes> {
    let mut times = QueryTimes::default();
    let mut overlap = 0.0;
    for query in queries {
        let ours = memory_index::search(index, query)?.results;
        let theirs = fts5.search(query)?;
        times.tantivy_hits += usize::from(!ours.is_empty());
        times.fts5_hits += usize::from(!theirs.is_empty());
        let units: HashSet<(&str, i64)> = theirs
            .iter()
            .map(|h| (h.path.as_str(), h.start_line))
            .collect();
        let shared = ours
            .iter()
            .filter(|h| units.contains(&(h.path.as_str(), h.start_line as i64)))
            .count();
        overlap += shared as f64 / ours.len().max(theirs.len()).max(1) as f64;
    }
    times.overlap = overlap / queries.len().max(1) as f64;
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for query in queries {
        let started = Instant::now();
        let results = memory_index::search(index, query)?;
        ours.push(started.elapsed());
        std::hint::black_box(results);
        let started = Instant::now();
        let hits = fts5.search(query)?;
        theirs.push(started.elapsed());
        std::hint::black_box(hits);
    }
    times.tantivy = Samples::new(ours);
    times.fts5 = Samples::new(theirs);
    Ok(times)
}
