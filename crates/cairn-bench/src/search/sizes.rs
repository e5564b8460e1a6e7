//! `cairn-bench search --sizes 10000,100000,1000000`: the index beside SQLite FTS5 at
//! several sizes in one run. Each size gets its own generated workspace (removed before the
//! next one is made): build time of both engines, keyword query times of both, and hybrid
//! query times with the bundled model embedding every query. Search quality does not depend
//! on the size and is measured once, after the sizes.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use cairn_memory::index::Embedder;
use cairn_memory::IndexOptions;
use serde_json::{json, Value};

use super::bench::QueryTimes;
use super::bench::{time_queries, Bench};
use super::figures::GOAL_SPEEDUP;
use super::meaning::{self, Quality, Speed};
use super::meaning_figures::{GOAL_HYBRID_P50_MS, GOAL_HYBRID_P99_MS};
use super::{fts5, memory_index};
use crate::fsinfo;
use crate::report::{self, Report, Row, Section, Verdict};
use crate::stats::{ms, round3};

/// The size the hybrid query goals are set at.
const HYBRID_GOAL_CHUNKS: usize = 100_000;

/// What one size measured.
struct Size {
    asked: usize,
    built: memory_index::Built,
    fts5: fts5::Built,
    times: QueryTimes,
    hybrid: Result<Speed, String>,
}

impl Size {
    fn speedup(&self) -> f64 {
        ms(self.times.fts5.p50()) / ms(self.times.tantivy.p50()).max(1e-9)
    }

    fn build_ok(&self) -> bool {
        self.built.no_worse_than(self.fts5.build)
    }
}

pub fn run(
    parent: &Path,
    sizes: &[usize],
    queries: usize,
    meaning_chunks: Option<usize>,
) -> anyhow::Result<Report> {
    let load_before = fsinfo::load_average();
    // Quality first, while the process is small: the memory the model adds is counted from
    // just before it loads, and the sizes' indexes would leave their freed memory behind.
    let loaded = match meaning_chunks {
        Some(_) => meaning::load_model().map_err(|e| format!("no embedding model: {e}")),
        None => Err("left out (--no-meaning)".to_string()),
    };
    let quality: Result<Quality, String> = match (&loaded, meaning_chunks) {
        (Ok(loaded), Some(distractors)) => {
            eprintln!("search by meaning: quality among {distractors} chunks");
            let scratch = fsinfo::scratch_in(parent)?;
            meaning::quality(&scratch.path().join("meaning"), loaded, distractors)
                .map_err(|e| format!("quality: {e}"))
        }
        (Err(why), _) => Err(why.clone()),
        (Ok(_), None) => Err("left out".to_string()),
    };
    let model = loaded.ok().map(|l| l.model);
    let mut measured = Vec::new();
    for &asked in sizes {
        measured.push(measure(parent, asked, queries, model.as_ref())?);
    }
    let load = format!("{load_before} before, {} after", fsinfo::load_average());
    Ok(report(&measured, quality, queries, &load))
}

/// One size: a fresh workspace, both engines built and queried, then hybrid queries.
fn measure(
    parent: &Path,
    asked: usize,
    queries: usize,
    model: Option<&Arc<dyn Embedder>>,
) -> anyhow::Result<Size> {
    let scratch = fsinfo::scratch_in(parent)?;
    eprintln!("{asked} chunks: generating in {}", scratch.path().display());
    let bench = Bench::generate(scratch.path(), asked)?;
    eprintln!("{asked} chunks: Tantivy open + sync, then FTS5");
    let (index, built, fts5) = memory_index::build_both(
        &bench.workspace,
        &scratch.path().join("fts5.db"),
        IndexOptions::default(),
    )?;
    anyhow::ensure!(
        built.chunks == fts5.built.rows,
        "the engines hold different chunks: Tantivy {}, FTS5 {}",
        built.chunks,
        fts5.built.rows
    );
    let queries = bench.queries(queries);
    eprintln!("{asked} chunks: {} keyword queries", queries.len());
    let times = time_queries(&index, &fts5, &queries)?;
    let fts5 = fts5.built;
    drop(index);
    let hybrid = match model {
        Some(model) => {
            eprintln!("{asked} chunks: hybrid queries");
            let started = Instant::now();
            let speed = meaning::speed(&bench.workspace, model, &queries)
                .map_err(|e| format!("speed: {e}"));
            eprintln!(
                "{asked} chunks: hybrid done in {:.1} s",
                started.elapsed().as_secs_f64()
            );
            speed
        }
        None => Err("no embedding model".into()),
    };
    Ok(Size {
        asked,
        built,
        fts5,
        times,
        hybrid,
    })
}

/// How a build figure was taken, after its name.
pub(super) fn runs(built: &memory_index::Built) -> String {
    match built.builds {
        1 => String::new(),
        n => format!(" (median of {n}; faster in {} of {n} pairs)", built.faster),
    }
}

fn report(sizes: &[Size], quality: Result<Quality, String>, queries: usize, load: &str) -> Report {
    let mut rows = Vec::new();
    for size in sizes {
        let chunks = size.built.chunks;
        let (t, speedup) = (&size.times, size.speedup());
        rows.push(Row {
            name: format!("{chunks} chunks: build{}", runs(&size.built)),
            figure: format!("{:.2} s", size.built.build.as_secs_f64()),
            baseline: format!("FTS5 {:.2} s", size.fts5.build.as_secs_f64()),
            goal: "<= FTS5".into(),
            verdict: Verdict::of(size.build_ok()),
        });
        rows.push(Row {
            name: format!("{chunks} chunks: keyword p50 / p99"),
            figure: format!(
                "{:.3} / {:.3} ms ({speedup:.1}x)",
                ms(t.tantivy.p50()),
                ms(t.tantivy.p99())
            ),
            baseline: format!("FTS5 {:.3} / {:.3} ms", ms(t.fts5.p50()), ms(t.fts5.p99())),
            goal: format!("p50 >= {GOAL_SPEEDUP}x faster"),
            verdict: Verdict::of(speedup >= GOAL_SPEEDUP),
        });
        rows.push(match &size.hybrid {
            Ok(s) => {
                let (p50, p99) = (ms(s.hybrid.p50()), ms(s.hybrid.p99()));
                let at_goal_size = size.asked == HYBRID_GOAL_CHUNKS;
                Row {
                    name: format!("{chunks} chunks: hybrid p50 / p99"),
                    figure: format!("{p50:.2} / {p99:.2} ms"),
                    baseline: format!("query embedding {:.2} ms", ms(s.query_embedding.p50())),
                    goal: if at_goal_size {
                        format!("< {GOAL_HYBRID_P50_MS} / < {GOAL_HYBRID_P99_MS} ms")
                    } else {
                        "-".into()
                    },
                    verdict: if at_goal_size {
                        Verdict::of(p50 < GOAL_HYBRID_P50_MS && p99 < GOAL_HYBRID_P99_MS)
                    } else {
                        Verdict::Info
                    },
                }
            }
            Err(why) => Row::info(format!("{chunks} chunks: hybrid"), why.clone()),
        });
    }
    let mut sections = vec![Section {
        title: format!(
            "Across sizes ({queries} queries each, top 10 with snippets; baseline: SQLite FTS5 \
             on the same chunks)"
        ),
        rows,
    }];
    let mut notes = vec![
        "Each size: a seeded workspace generated afresh (as in a single-size run), \
         MemoryIndex::open + sync against FTS5's insert + optimize, the same queries on both \
         (one warm-up pass, one timed), then hybrid queries on the index with a hash vector \
         per chunk and the bundled model embedding each query. The hybrid goals are set at \
         100,000 chunks. Quality and memory were measured first, on their own workspace."
            .to_string(),
        format!("load average {load}"),
    ];
    match &quality {
        Ok(q) => sections.push(super::meaning_figures::quality_section(q)),
        Err(why) => notes.push(format!("Search by meaning, quality: not measured: {why}.")),
    }
    let json_sizes: Vec<Value> = sizes.iter().map(size_json).collect();
    Report {
        title: format!(
            "cairn-bench search --sizes ({} build, {} sizes)",
            report::build(),
            sizes.len()
        ),
        sections,
        notes,
        json: json!({
            "benchmark": "search",
            "build": report::build(),
            "load_average": load,
            "queries": queries,
            "sizes": json_sizes,
            "quality": quality.as_ref().map(super::meaning_figures::quality_json).map_err(Clone::clone),
        }),
    }
}

fn size_json(size: &Size) -> Value {
    let (t, b, f) = (&size.times, &size.built, &size.fts5);
    json!({
        "asked": size.asked,
        "chunks": b.chunks,
        "tantivy": {
            "build_s": round3(b.build.as_secs_f64()),
            "build_runs": b.builds,
            "build_runs_faster": b.faster,
            "bytes": b.bytes,
            "p50_ms": round3(ms(t.tantivy.p50())),
            "p99_ms": round3(ms(t.tantivy.p99())),
        },
        "fts5": {
            "build_s": round3(f.build.as_secs_f64()),
            "bytes": f.bytes,
            "p50_ms": round3(ms(t.fts5.p50())),
            "p99_ms": round3(ms(t.fts5.p99())),
        },
        "speedup_p50": round3(size.speedup()),
        "build_no_worse": size.build_ok(),
        "hybrid": match &size.hybrid {
            Ok(s) => json!({
                "p50_ms": round3(ms(s.hybrid.p50())),
                "p99_ms": round3(ms(s.hybrid.p99())),
                "keyword_p50_ms": round3(ms(s.keyword.p50())),
                "query_embedding_p50_ms": round3(ms(s.query_embedding.p50())),
            }),
            Err(why) => json!({"skipped": why}),
        },
    })
}
