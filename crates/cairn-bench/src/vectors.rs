//! `cairn-bench vectors`: where comparing every stored vector stops being fast enough,
//! and what the alternatives cost and find beside it, on the same vectors:
//! - exact: the index's quantised vectors (`VectorStore`), every one compared;
//! - shortlist: the vectors' signs pick `shortlist_size(10)` candidates by Hamming
//!   distance and only those are compared exactly (what search by meaning does past
//!   `IndexOptions::exact_search_up_to`);
//! - HNSW: a graph over the full-precision vectors (`instant-distance`: M = 32, ef 100),
//!   built on every core.
//!
//! Recall is the share of the exact top ten (full precision) each method finds. The
//! vectors are generated from a seed: unit vectors around cluster centres, so that
//! neighbours are like the notes of one topic (two of one cluster have a cosine of about
//! 0.5), and each query is a stored vector moved a little, as a question lies near the
//! note it asks about.

use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use cairn_memory::index::{shortlist_size, signs, Quantized, VectorStore};
use instant_distance::{Builder, HnswMap, Point, Search};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use crate::fsinfo::{load_average, resident_bytes};
use crate::report::{build, Report, Row, Section};
use crate::stats::{ms, round3, Samples};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Vector counts, comma-separated (each gets its own vectors and queries).
    #[arg(long, value_delimiter = ',', default_value = "20000,100000")]
    sizes: Vec<usize>,
    /// Queries timed per size and method, after one warm-up pass.
    #[arg(long, default_value_t = 200)]
    queries: usize,
    /// Leave out the HNSW graph (building it takes minutes at a million vectors).
    #[arg(long)]
    no_hnsw: bool,
}

/// The bundled embedding model's length.
const DIMENSIONS: usize = 384;
/// Hits asked for, as a search asks for ten.
const KEEP: usize = 10;
/// Vectors per cluster centre.
const PER_CLUSTER: usize = 100;
/// A vector is its centre plus a random unit vector this long, normalised.
const SPREAD: f32 = 1.0;
/// A query is a stored vector plus a random unit vector this long, normalised.
const QUERY_SPREAD: f32 = 0.6;
/// HNSW's candidate list, building and searching.
const EF: usize = 100;
/// A method counts as finding what exact search finds within this many points of recall.
const RECALL_SLACK: f64 = 0.05;

pub async fn run(args: Args) -> anyhow::Result<Report> {
    anyhow::ensure!(
        !args.sizes.is_empty() && args.sizes.iter().all(|n| *n >= KEEP),
        "--sizes wants counts of at least {KEEP}"
    );
    anyhow::ensure!(args.queries > 0, "--queries wants at least 1");
    let load_before = load_average();
    let sizes = tokio::task::spawn_blocking(move || {
        args.sizes
            .iter()
            .map(|n| measure(*n, args.queries, !args.no_hnsw))
            .collect::<Vec<_>>()
    })
    .await?;
    let load = format!(
        "load average {load_before} before, {} after",
        load_average()
    );
    Ok(report(&sizes, &load))
}

/// A method's query times and recall.
struct Method {
    times: Samples,
    recall: f64,
}

/// What one size measured.
struct Size {
    vectors: usize,
    queries: usize,
    /// Bytes of the index's vector store per vector (values, signs, scale).
    store_bytes: usize,
    exact: Method,
    shortlist: Method,
    hnsw: Option<Hnsw>,
}

struct Hnsw {
    method: Method,
    build: Duration,
    /// Resident memory the graph and its full-precision copy of the vectors added.
    bytes: u64,
}

fn measure(vectors: usize, queries: usize, hnsw: bool) -> Size {
    eprintln!("{vectors} vectors: generating");
    let data = Data::generate(vectors, queries, 0x5eed ^ vectors as u64);
    eprintln!("{vectors} vectors: the exact top ten of {queries} queries");
    let truth = data.truth();
    let mut store = VectorStore::new("generated".into());
    for (i, vector) in data.vectors.iter().enumerate() {
        store.insert(i as u64, &Quantized::new(vector));
    }
    // Inserted in order into an empty store: slot i holds vector i.
    assert_eq!(store.slot(vectors as u64 - 1), Some(vectors as u32 - 1));
    eprintln!("{vectors} vectors: exact and shortlisted scans");
    let exact = time(&data.queries, &truth, |q| exact(&store, q));
    let shortlist = time(&data.queries, &truth, |q| shortlisted(&store, q));
    let hnsw = hnsw.then(|| {
        eprintln!("{vectors} vectors: building HNSW");
        let before = resident_bytes();
        let started = Instant::now();
        let points = data.vectors.iter().cloned().map(Unit).collect();
        let map: HnswMap<Unit, u32> = Builder::default()
            .ef_construction(EF)
            .ef_search(EF)
            .seed(7)
            .build(points, (0..vectors as u32).collect());
        let build = started.elapsed();
        let bytes = resident_bytes().saturating_sub(before);
        eprintln!(
            "{vectors} vectors: HNSW built in {:.1} s",
            build.as_secs_f64()
        );
        let mut search = Search::default();
        let method = time(&data.queries, &truth, |q| {
            map.search(&Unit(q.to_vec()), &mut search)
                .take(KEEP)
                .map(|item| *item.value)
                .collect()
        });
        Hnsw {
            method,
            build,
            bytes,
        }
    });
    Size {
        vectors,
        queries,
        store_bytes: DIMENSIONS + DIMENSIONS.div_ceil(64) * 8 + 4,
        exact,
        shortlist,
        hnsw,
    }
}

/// Every vector compared, as search does up to `exact_search_up_to` vectors.
fn exact(store: &VectorStore, query: &[f32]) -> Vec<u32> {
    let query = Quantized::new(query);
    let mut top = Top::default();
    for slot in 0..store.len() as u32 {
        top.offer(store.similarity(&query, slot), slot);
    }
    top.slots()
}

/// The signs shortlist, then the shortlist compared exactly, as search does past
/// `exact_search_up_to` vectors.
fn shortlisted(store: &VectorStore, query: &[f32]) -> Vec<u32> {
    let query = Quantized::new(query);
    let bits = signs(&query.values);
    let size = shortlist_size(KEEP);
    // The worst (most differing signs) on top.
    let mut shortlist: BinaryHeap<(u32, u32)> = BinaryHeap::with_capacity(size + 1);
    for slot in 0..store.len() as u32 {
        let distance = store.hamming(&bits, slot);
        if shortlist.len() < size {
            shortlist.push((distance, slot));
        } else if shortlist.peek().is_some_and(|worst| distance < worst.0) {
            shortlist.pop();
            shortlist.push((distance, slot));
        }
    }
    let mut top = Top::default();
    for (_, slot) in shortlist {
        top.offer(store.similarity(&query, slot), slot);
    }
    top.slots()
}

/// One warm-up pass, then one timed pass; recall against `truth`.
fn time(
    queries: &[Vec<f32>],
    truth: &[Vec<u32>],
    mut search: impl FnMut(&[f32]) -> Vec<u32>,
) -> Method {
    for query in queries {
        std::hint::black_box(search(query));
    }
    let mut times = Vec::with_capacity(queries.len());
    let mut found = 0;
    for (query, best) in queries.iter().zip(truth) {
        let started = Instant::now();
        let hits = std::hint::black_box(search(query));
        times.push(started.elapsed());
        found += hits.iter().filter(|slot| best.contains(slot)).count();
    }
    Method {
        times: Samples::new(times),
        recall: found as f64 / (queries.len() * KEEP) as f64,
    }
}

/// The best [`KEEP`] scores offered, best first.
#[derive(Default)]
struct Top(Vec<(f32, u32)>);

impl Top {
    fn offer(&mut self, score: f32, slot: u32) {
        if self.0.len() == KEEP && score <= self.0[KEEP - 1].0 {
            return;
        }
        let at = self.0.partition_point(|(s, _)| *s >= score);
        self.0.insert(at, (score, slot));
        self.0.truncate(KEEP);
    }

    fn slots(self) -> Vec<u32> {
        self.0.into_iter().map(|(_, slot)| slot).collect()
    }
}

/// A unit vector; HNSW's distance is one minus the cosine.
#[derive(Clone)]
struct Unit(Vec<f32>);

impl Point for Unit {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - dot(&self.0, &other.0)
    }
}

/// Written so the compiler vectorises it: eight running sums.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut sums = [0f32; 8];
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for i in 0..8 {
            sums[i] += x[i] * y[i];
        }
    }
    let tail = a.len() / 8 * 8;
    let rest: f32 = a[tail..].iter().zip(&b[tail..]).map(|(x, y)| x * y).sum();
    sums.iter().sum::<f32>() + rest
}

struct Data {
    vectors: Vec<Vec<f32>>,
    queries: Vec<Vec<f32>>,
}

impl Data {
    fn generate(count: usize, queries: usize, seed: u64) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let centres: Vec<Vec<f32>> = (0..count.div_ceil(PER_CLUSTER))
            .map(|_| random_unit(&mut rng))
            .collect();
        let vectors: Vec<Vec<f32>> = (0..count)
            .map(|_| {
                let centre = &centres[rng.random_range(0..centres.len())];
                moved(centre, SPREAD, &mut rng)
            })
            .collect();
        let queries = (0..queries)
            .map(|_| moved(&vectors[rng.random_range(0..count)], QUERY_SPREAD, &mut rng))
            .collect();
        Self { vectors, queries }
    }

    /// The exact top ten of every query, in full precision, on every core.
    fn truth(&self) -> Vec<Vec<u32>> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let per = self.queries.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = self
                .queries
                .chunks(per)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|query| {
                                let mut top = Top::default();
                                for (slot, vector) in self.vectors.iter().enumerate() {
                                    top.offer(dot(query, vector), slot as u32);
                                }
                                top.slots()
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|part| {
                    part.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        })
    }
}

/// A random direction: components near-normal (a sum of three uniforms), normalised.
fn random_unit(rng: &mut StdRng) -> Vec<f32> {
    normalised(
        (0..DIMENSIONS)
            .map(|_| rng.random::<f32>() + rng.random::<f32>() + rng.random::<f32>() - 1.5)
            .collect(),
    )
}

/// `from` plus a random unit vector `by` long, normalised.
fn moved(from: &[f32], by: f32, rng: &mut StdRng) -> Vec<f32> {
    let step = random_unit(rng);
    normalised(from.iter().zip(&step).map(|(a, b)| a + by * b).collect())
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let length = dot(&v, &v).sqrt().max(f32::MIN_POSITIVE);
    v.iter_mut().for_each(|x| *x /= length);
    v
}

/// The fastest method (by p50) that finds what exact search finds, within
/// [`RECALL_SLACK`].
fn choice(size: &Size) -> &'static str {
    let mut methods = vec![("exact", &size.exact), ("shortlist", &size.shortlist)];
    if let Some(hnsw) = &size.hnsw {
        methods.push(("HNSW", &hnsw.method));
    }
    methods
        .into_iter()
        .filter(|(_, m)| m.recall + RECALL_SLACK >= size.exact.recall)
        .min_by_key(|(_, m)| m.times.p50())
        .map_or("exact", |(name, _)| name)
}

fn times(method: &Method) -> String {
    format!(
        "{:.3} / {:.3} ms",
        ms(method.times.p50()),
        ms(method.times.p99())
    )
}

fn percent(recall: f64) -> String {
    format!("{:.1}%", recall * 100.0)
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn method_json(method: &Method) -> Value {
    json!({
        "p50_ms": round3(ms(method.times.p50())),
        "p99_ms": round3(ms(method.times.p99())),
        "recall_at_10": round3(method.recall),
    })
}

fn report(sizes: &[Size], load: &str) -> Report {
    let mut sections = Vec::new();
    let mut json_sizes = Vec::new();
    for size in sizes {
        let mut rows = vec![
            Row::info("exact (every i8 vector): p50 / p99", times(&size.exact)),
            Row::info("  recall@10", percent(size.exact.recall)),
            Row::info(
                format!(
                    "shortlist ({} by signs), then exact: p50 / p99",
                    shortlist_size(KEEP)
                ),
                times(&size.shortlist),
            ),
            Row::info("  recall@10", percent(size.shortlist.recall)),
        ];
        if let Some(hnsw) = &size.hnsw {
            rows.extend([
                Row::info(
                    format!("HNSW (M 32, ef {EF}): p50 / p99"),
                    times(&hnsw.method),
                ),
                Row::info("  recall@10", percent(hnsw.method.recall)),
                Row::info(
                    "  build (every core)",
                    format!("{:.1} s", hnsw.build.as_secs_f64()),
                ),
                Row::info("  memory (graph + f32 vectors)", mib(hnsw.bytes)),
            ]);
        }
        rows.extend([
            Row::info(
                "index's vectors in memory (i8, signs, scales)",
                mib((size.store_bytes * size.vectors) as u64),
            ),
            Row::info("fastest that finds what exact finds", choice(size)),
        ]);
        sections.push(Section {
            title: format!(
                "{} vectors of {DIMENSIONS} dimensions, {} queries, top {KEEP}",
                size.vectors, size.queries
            ),
            rows,
        });
        json_sizes.push(json!({
            "vectors": size.vectors,
            "queries": size.queries,
            "exact": method_json(&size.exact),
            "shortlist": method_json(&size.shortlist),
            "hnsw": size.hnsw.as_ref().map(|h| json!({
                "search": method_json(&h.method),
                "build_s": round3(h.build.as_secs_f64()),
                "memory_bytes": h.bytes,
            })),
            "store_bytes": size.store_bytes * size.vectors,
            "choice": choice(size),
        }));
    }
    Report {
        title: format!("cairn-bench vectors ({} build)", build()),
        sections,
        notes: vec![
            format!(
                "Vectors: generated unit vectors, {PER_CLUSTER} per cluster centre on average \
                 (centre + a random unit vector x{SPREAD}, normalised); queries: a stored vector \
                 + a random unit vector x{QUERY_SPREAD}, normalised. Recall@10: the share of \
                 the exact full-precision top ten found."
            ),
            "Exact and shortlist run on the index's own vector store (i8 values, sign bits) \
             on one thread, as a search does; HNSW is instant-distance over f32 vectors, \
             searched on one thread. Search by meaning compares every vector up to \
             IndexOptions::exact_search_up_to (20,000) and shortlists past it."
                .into(),
            load.to_string(),
        ],
        json: json!({ "sizes": json_sizes, "load": load }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shortlist_finds_what_exact_search_finds_on_clustered_vectors() {
        let data = Data::generate(3_000, 20, 1);
        let truth = data.truth();
        let mut store = VectorStore::new("t".into());
        for (i, v) in data.vectors.iter().enumerate() {
            store.insert(i as u64, &Quantized::new(v));
        }
        let exact = time(&data.queries, &truth, |q| exact(&store, q));
        let shortlist = time(&data.queries, &truth, |q| shortlisted(&store, q));
        assert!(exact.recall > 0.9, "{}", exact.recall);
        assert!(shortlist.recall > 0.8, "{}", shortlist.recall);
    }

    #[test]
    fn top_keeps_the_best_ten_best_first() {
        let mut top = Top::default();
        for (i, score) in [0.1, 0.9, 0.5, 0.3, 0.8, 0.2, 0.7, 0.4, 0.6, 0.0, 0.95, 0.05]
            .into_iter()
            .enumerate()
        {
            top.offer(score, i as u32);
        }
        assert_eq!(top.slots(), vec![10, 1, 4, 6, 8, 2, 7, 3, 5, 0]);
    }
}
