//! Search by meaning in the search benchmark.
//!
//! Quality: forty known answers (`paraphrases.txt`): a note, a question that says the same
//! in other words, and words taken from the note. The notes go into a generated workspace
//! among a few thousand other chunks; the index embeds everything with the bundled model,
//! and each question is asked by keyword, by meaning and hybrid (hit@5: the note among the
//! first five). The fusion is measured, not assumed: reciprocal rank fusion beside weighted
//! sums of cosine and normalised BM25, on the same candidate lists.
//!
//! Speed at scale: the main benchmark's index gets a vector for every chunk and hybrid
//! queries are timed with the real query embedding. The chunks' vectors there come from a
//! hash (unit vectors of the model's length, so the scan does exactly the work real ones
//! need) because embedding a hundred thousand chunks with the model takes longer than the
//! rest of the benchmark together; the model's own throughput is measured on the quality
//! workspace.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use cairn_embed::candle::{default_embedder_dir, LocalEmbedder};
use cairn_memory::index::{Embedder, SearchMode};
use cairn_memory::{IndexOptions, MemoryIndex, SearchQuery, Workspace};

use super::bench::Bench;
use super::corpus::TODAY;
use crate::fsinfo::resident_bytes;
use crate::stats::Samples;

const PAIRS: &str = include_str!("paraphrases.txt");
/// The weights of cosine tried in the weighted sums.
const WEIGHTS: [f64; 5] = [0.3, 0.5, 0.7, 0.8, 0.9];

/// A known answer.
pub struct Pair {
    pub note: String,
    pub asked: String,
    pub exact: String,
}

pub fn pairs() -> Vec<Pair> {
    PAIRS
        .split("\n\n")
        .filter_map(|block| {
            let field = |name: &str| {
                block
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.trim().to_string())
            };
            Some(Pair {
                note: field("note:")?,
                asked: field("asked:")?,
                exact: field("exact:")?,
            })
        })
        .collect()
}

/// Names the engine the bundled model runs on here: `candle`, else the one the app uses.
pub const ENGINE_ENV: &str = "CAIRN_BENCH_EMBEDDER";

/// The bundled model, on candle or as the app runs it.
enum Model {
    Candle(Box<LocalEmbedder>),
    Bundled(cairn_embed::bundled::Bundled),
}

impl Embedder for Model {
    fn model(&self) -> String {
        match self {
            Self::Candle(candle) => candle.name().to_string(),
            Self::Bundled(bundled) => bundled.name(),
        }
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        match self {
            Self::Candle(candle) => candle.embed(texts),
            Self::Bundled(bundled) => bundled.embed(texts),
        }
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, String> {
        match self {
            Self::Candle(_) => self.embed(&[text])?.pop().ok_or_else(|| "no vector".into()),
            Self::Bundled(bundled) => bundled.embed_query(text),
        }
    }
}

/// Chunks embedded from a hash on the index's writer thread; queries by the model.
struct Timing(Arc<dyn Embedder>);

impl Embedder for Timing {
    fn model(&self) -> String {
        "hashed-384".into()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        if std::thread::current().name() != Some("cairn-index-writer") {
            return self.0.embed(texts);
        }
        Ok(texts.iter().map(|t| hashed(t, 384)).collect())
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, String> {
        self.0.embed_query(text)
    }
}

/// A unit vector drawn from the text's hash.
fn hashed(text: &str, dimensions: usize) -> Vec<f32> {
    let mut state = cairn_memory::index::chunk_id("", text) | 1;
    let mut v: Vec<f32> = (0..dimensions)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

/// Hits among the first five, of `of`.
#[derive(Debug, Default, Clone, Copy)]
pub struct HitRate {
    pub hits: usize,
    pub of: usize,
}

impl HitRate {
    pub fn percent(self) -> f64 {
        100.0 * self.hits as f64 / self.of.max(1) as f64
    }

    pub(super) fn count(&mut self, hit: bool) {
        self.hits += usize::from(hit);
        self.of += 1;
    }
}

pub struct Quality {
    /// The model's name, which says what runs it.
    pub model: String,
    /// Semantic hit@5 with the answer at a full chunk's start and in its last third: chunks
    /// cut by the old estimate, and cut to the model's window.
    pub by_estimate: super::placement::Placement,
    pub by_window: super::placement::Placement,
    pub chunks: u64,
    /// Embedding every chunk with the model, in the background, after the sync.
    pub embedding: Duration,
    /// Resident memory before the model was loaded and after it embedded everything.
    pub rss_before: u64,
    pub rss_after: u64,
    /// By mode (keyword, semantic, hybrid), for the paraphrases and the note's own words.
    pub paraphrase: [HitRate; 3],
    pub exact: [HitRate; 3],
    /// Fusions of the same candidate lists, without MMR: name, paraphrase, exact.
    pub fusions: Vec<(String, HitRate, HitRate)>,
    /// Hybrid on the paraphrases with the signs shortlisting every search (as past
    /// `exact_search_up_to` vectors).
    pub shortlisted: HitRate,
}

impl Quality {
    pub fn chunks_per_second(&self) -> f64 {
        self.chunks as f64 / self.embedding.as_secs_f64().max(1e-9)
    }
}

/// The bundled model, loaded, and the process's resident memory before it was.
pub struct Loaded {
    pub model: Arc<dyn Embedder>,
    pub rss_before: u64,
}

/// The bundled model, or why it cannot be had.
pub fn load_model() -> anyhow::Result<Loaded> {
    let dir = default_embedder_dir().context("no home folder")?;
    let rss_before = resident_bytes();
    let model = if std::env::var(ENGINE_ENV).is_ok_and(|e| e == "candle") {
        Model::Candle(Box::new(
            LocalEmbedder::load(&dir).map_err(anyhow::Error::msg)?,
        ))
    } else {
        Model::Bundled(
            cairn_embed::bundled::Bundled::installed().context("the model is not installed")?,
        )
    };
    let model: Arc<dyn Embedder> = Arc::new(model);
    Ok(Loaded { model, rss_before })
}

/// The quality run, in `dir`; the memory added is counted from before the model was loaded.
pub fn quality(dir: &Path, loaded: &Loaded, distractors: usize) -> anyhow::Result<Quality> {
    let (model, rss_before) = (&loaded.model, loaded.rss_before);
    let pairs = pairs();
    let bench = Bench::generate(dir, distractors)?;
    let facts = bench.workspace.root().join("knowledge/facts");
    std::fs::create_dir_all(&facts)?;
    for (n, pair) in pairs.iter().enumerate() {
        std::fs::write(facts.join(format!("{n:02}.md")), format!("{}\n", pair.note))?;
    }
    let options = IndexOptions {
        embedder: Some(model.clone()),
        ..IndexOptions::default()
    };
    let index = MemoryIndex::open(&bench.workspace, options)?;
    index.sync()?;
    let started = Instant::now();
    let status = index.wait_embedded(|done, of| {
        if done % 512 < 8 {
            eprint!("\r  embedding {done} / {of}   ");
        }
    });
    let embedding = started.elapsed();
    eprintln!();
    anyhow::ensure!(
        status.embedding_current(),
        "embedding stopped: {:?}",
        status.embed_error
    );
    eprintln!("  the answer at a chunk's start and in its last third");
    let (by_estimate, by_window) = super::placement::measure(&dir.join("placement"), model)?;
    let mut quality = Quality {
        model: model.model(),
        by_estimate,
        by_window,
        chunks: status.to_embed,
        embedding,
        rss_before,
        rss_after: resident_bytes(),
        paraphrase: Default::default(),
        exact: Default::default(),
        fusions: Vec::new(),
        shortlisted: HitRate::default(),
    };
    // A second handle (it reads the index the first writes) that always shortlists.
    let shortlisting = MemoryIndex::open(
        &bench.workspace,
        IndexOptions {
            embedder: Some(model.clone()),
            exact_search_up_to: 0,
            ..IndexOptions::default()
        },
    )?;
    let mut fusions: Vec<(String, HitRate, HitRate)> = std::iter::once("reciprocal rank".into())
        .chain(WEIGHTS.iter().map(|w| format!("weighted, cosine {w}")))
        .map(|name| (name, HitRate::default(), HitRate::default()))
        .collect();
    let modes = [
        SearchMode::Keyword,
        SearchMode::Semantic,
        SearchMode::Hybrid,
    ];
    for (n, pair) in pairs.iter().enumerate() {
        let target = format!("knowledge/facts/{n:02}.md");
        let hits = search(&shortlisting, &pair.asked, SearchMode::Hybrid, 5)?;
        quality
            .shortlisted
            .count(hits.iter().any(|(path, _)| *path == target));
        for (text, rates, paraphrase) in [
            (&pair.asked, &mut quality.paraphrase, true),
            (&pair.exact, &mut quality.exact, false),
        ] {
            for (rate, mode) in rates.iter_mut().zip(modes) {
                let hits = search(&index, text, mode, 5)?;
                rate.count(hits.iter().any(|(path, _)| *path == target));
            }
            let words = search(&index, text, SearchMode::Keyword, 40)?;
            let meaning = search(&index, text, SearchMode::Semantic, 40)?;
            for (i, (_, on_paraphrase, on_exact)) in fusions.iter_mut().enumerate() {
                let fused = if i == 0 {
                    reciprocal_rank(&words, &meaning)
                } else {
                    weighted(&words, &meaning, WEIGHTS[i - 1])
                };
                let hit = fused.iter().take(5).any(|p| *p == target);
                if paraphrase {
                    on_paraphrase.count(hit);
                } else {
                    on_exact.count(hit);
                }
            }
        }
    }
    quality.fusions = fusions;
    Ok(quality)
}

fn search(
    index: &MemoryIndex,
    text: &str,
    mode: SearchMode,
    limit: usize,
) -> anyhow::Result<Vec<(String, f32)>> {
    let query = SearchQuery {
        limit,
        mode: Some(mode),
        today: Some(TODAY),
        ..SearchQuery::new(text)
    };
    Ok(index
        .search_now(&query)?
        .results
        .into_iter()
        .map(|h| (h.citation, h.score))
        .map(|(citation, score)| {
            let path = citation.split('#').next().unwrap_or_default().to_string();
            (path, score)
        })
        .collect())
}

fn best_first(scores: HashMap<String, f64>) -> Vec<String> {
    let mut all: Vec<(String, f64)> = scores.into_iter().collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    all.into_iter().map(|(p, _)| p).collect()
}

fn reciprocal_rank(words: &[(String, f32)], meaning: &[(String, f32)]) -> Vec<String> {
    let mut scores: HashMap<String, f64> = HashMap::new();
    for list in [words, meaning] {
        for (rank, (path, _)) in list.iter().enumerate() {
            *scores.entry(path.clone()).or_default() += 1.0 / (61.0 + rank as f64);
        }
    }
    best_first(scores)
}

/// `weight` × cosine + (1 − `weight`) × BM25 over the best BM25 of the list.
fn weighted(words: &[(String, f32)], meaning: &[(String, f32)], weight: f64) -> Vec<String> {
    let best = words.iter().map(|(_, s)| *s as f64).fold(1e-9, f64::max);
    let mut scores: HashMap<String, f64> = HashMap::new();
    for (path, score) in words {
        *scores.entry(path.clone()).or_default() += (1.0 - weight) * *score as f64 / best;
    }
    for (path, score) in meaning {
        *scores.entry(path.clone()).or_default() += weight * *score as f64;
    }
    best_first(scores)
}

/// Hybrid query latency on the main index, every chunk with a vector.
pub struct Speed {
    /// Storing a vector for every chunk (hash vectors: the writer's own cost).
    pub vectors: Duration,
    pub chunks: u64,
    pub hybrid: Samples,
    pub semantic: Samples,
    pub keyword: Samples,
    /// The query's embedding alone.
    pub query_embedding: Samples,
}

/// Reopens the benchmark's index with vectors and times the queries in every mode.
pub fn speed(
    workspace: &Workspace,
    model: &Arc<dyn Embedder>,
    queries: &[String],
) -> anyhow::Result<Speed> {
    let timing: Arc<dyn Embedder> = Arc::new(Timing(model.clone()));
    let options = IndexOptions {
        embedder: Some(timing),
        ..IndexOptions::default()
    };
    let index = MemoryIndex::open(workspace, options)?;
    index.sync()?;
    let started = Instant::now();
    let status = index.wait_embedded(|_, _| {});
    let vectors = started.elapsed();
    let mut times: [Vec<Duration>; 4] = Default::default();
    for pass in 0..2 {
        for query in queries {
            for (slot, mode) in [
                SearchMode::Hybrid,
                SearchMode::Semantic,
                SearchMode::Keyword,
            ]
            .into_iter()
            .enumerate()
            {
                let query = SearchQuery {
                    mode: Some(mode),
                    today: Some(TODAY),
                    ..SearchQuery::new(query.as_str())
                };
                let started = Instant::now();
                std::hint::black_box(index.search_now(&query)?);
                if pass == 1 {
                    times[slot].push(started.elapsed());
                }
            }
            let started = Instant::now();
            std::hint::black_box(model.embed_query(query).map_err(anyhow::Error::msg)?);
            if pass == 1 {
                times[3].push(started.elapsed());
            }
        }
    }
    let [hybrid, semantic, keyword, query_embedding] = times;
    Ok(Speed {
        vectors,
        chunks: status.to_embed,
        hybrid: Samples::new(hybrid),
        semantic: Samples::new(semantic),
        keyword: Samples::new(keyword),
        query_embedding: Samples::new(query_embedding),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_known_answers_are_whole_and_say_it_in_other_words() {
        let pairs = pairs();
        assert_eq!(pairs.len(), 40);
        for pair in &pairs {
            assert!(!pair.note.is_empty() && !pair.asked.is_empty() && !pair.exact.is_empty());
            assert_ne!(pair.asked, pair.exact);
        }
    }

    #[test]
    fn fusions_rank_what_both_lists_found_first() {
        let words = vec![("a".to_string(), 9.0), ("b".to_string(), 3.0)];
        let meaning = vec![("c".to_string(), 0.9), ("b".to_string(), 0.8)];
        assert_eq!(reciprocal_rank(&words, &meaning)[0], "b");
        assert_eq!(weighted(&words, &meaning, 0.5)[0], "b");
        assert_eq!(weighted(&words, &meaning, 0.0)[0], "a");
        let v = hashed("x", 384);
        assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4);
    }
}
