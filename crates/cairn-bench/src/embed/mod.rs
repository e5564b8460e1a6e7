//! `cairn-bench embed`: the bundled embedding model (all-MiniLM-L6-v2) on each engine, side
//! by side in one run: candle (pure Rust), and llama.cpp on the GGUF written from the same
//! weights (f32, and Q8_0 matrices), ONNX Runtime on the graph written from them (f32,
//! and int8 matrices with per-channel scales), and OpenVINO on the graph written for it
//! (int8 weights, its own quantisation of the inputs). For each: chunks/s on full
//! 256-token chunks in batches, a one-line query's time, the lowest cosine to the
//! reference vectors (sentence-transformers), and the memory it adds. The ONNX Runtime
//! engines run a second time as on a CPU with AVX2 alone (`avx2.rs`).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use cairn_embed::candle::{default_embedder_dir, LocalEmbedder};
use serde_json::json;

use crate::fsinfo::resident_bytes;
use crate::report::{self, Report, Row, Section, Verdict};
use crate::stats::{ms, round3, Samples};

mod avx2;

const GOAL_CHUNKS_PER_S: f64 = 80.0;
/// On a CPU with AVX2 alone (no AVX-512, no VNNI: AMD Zen 2 and 3, Intel before Ice Lake).
const GOAL_AVX2_CHUNKS_PER_S: f64 = 50.0;
const GOAL_QUERY_P50_MS: f64 = 2.0;
const GOAL_COSINE: f32 = 0.99;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Full-size chunks embedded per engine.
    #[arg(long, default_value_t = 160)]
    chunks: usize,
    /// Chunks per call, as the index embeds them.
    #[arg(long, default_value_t = 16)]
    batch: usize,
    /// One-line queries timed per engine.
    #[arg(long, default_value_t = 200)]
    queries: usize,
    /// Threads for llama.cpp, ONNX Runtime and OpenVINO (candle uses RAYON_NUM_THREADS, all
    /// cores by default).
    #[arg(long, default_value_t = 2)]
    threads: i32,
    /// The engines to run, by name (all by default): run one alone to see its memory.
    #[arg(long, value_delimiter = ',')]
    engines: Vec<String>,
    /// Skip the second run of the ONNX Runtime engines as on a CPU with AVX2 alone.
    #[arg(long)]
    this_cpu_only: bool,
}

/// Every engine, in the order they run; `app` is the bundled model as the app runs it
/// (chunks at background priority on every core, queries on an engine of their own).
const ENGINES: [&str; 7] = [
    "candle",
    "llama.cpp f32",
    "llama.cpp q8_0",
    "onnxruntime f32",
    "onnxruntime int8",
    "openvino int8",
    "app",
];

type Embed<'a> = Box<dyn Fn(&[&str]) -> Result<Vec<Vec<f32>>, String> + Send + Sync + 'a>;
type Query<'a> = Box<dyn Fn(&str) -> Result<Vec<f32>, String> + Send + Sync + 'a>;

struct Figures {
    name: String,
    load: Duration,
    chunks_per_s: f64,
    query: Samples,
    /// Queries while chunks are embedded.
    under_load: Samples,
    min_cosine: f32,
    extra_mib: f64,
}

/// One engine's figures as reported, and as a second process hands them back in its JSON.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Measured {
    engine: String,
    chunks_per_s: f64,
    query_p50_ms: f64,
    query_p99_ms: f64,
    query_under_load_p50_ms: f64,
    query_under_load_p99_ms: f64,
    min_cosine: f32,
    load_ms: f64,
    extra_mib: f64,
}

impl From<Figures> for Measured {
    fn from(f: Figures) -> Self {
        Measured {
            engine: f.name,
            chunks_per_s: round3(f.chunks_per_s),
            query_p50_ms: round3(ms(f.query.p50())),
            query_p99_ms: round3(ms(f.query.p99())),
            query_under_load_p50_ms: round3(ms(f.under_load.p50())),
            query_under_load_p99_ms: round3(ms(f.under_load.p99())),
            min_cosine: f.min_cosine,
            load_ms: round3(ms(f.load)),
            extra_mib: round3(f.extra_mib),
        }
    }
}

/// What was measured, or why an engine could not run: `(engine, why)`.
type Outcome = Result<Measured, (String, String)>;

pub async fn run(args: Args) -> anyhow::Result<Report> {
    tokio::task::spawn_blocking(move || measure(&args)).await?
}

fn measure(args: &Args) -> anyhow::Result<Report> {
    let dir = default_embedder_dir().context("no models folder")?;
    let cache = tempfile::tempdir()?;
    let texts = Texts {
        chunks: chunk_texts(args.chunks),
        queries: query_texts(args.queries),
    };
    let models = dir.parent().context("no models folder")?;
    let files = Files {
        dir: &dir,
        runtime: &models.join(cairn_models::fetch::EMBED_RUNTIME_FILE),
        openvino: &models.join(cairn_embed::openvino::LIBRARY),
        cache: cache.path(),
    };
    let chosen: Vec<&str> = ENGINES
        .into_iter()
        .filter(|e| args.engines.is_empty() || args.engines.iter().any(|a| a == e))
        .collect();
    let mut all = Vec::new();
    for &engine in &chosen {
        eprintln!("cairn-bench embed: {engine}");
        match measure_engine(engine, args, &files, &texts) {
            Ok(figures) => all.push(Ok(figures.into())),
            // An engine that is not installed here (OpenVINO's libraries come only with
            // `make test`) is a row that says so, not the end of the run.
            Err(error) => {
                eprintln!("cairn-bench embed: {engine} is missing: {error:#}");
                all.push(Err((engine.to_string(), format!("{error:#}"))));
            }
        }
    }
    let alone = avx2::measure(args, &chosen);
    Ok(report(args, &all, &alone))
}

/// Where the engines' files are.
struct Files<'a> {
    dir: &'a Path,
    runtime: &'a Path,
    openvino: &'a Path,
    cache: &'a Path,
}

/// What each engine embeds.
struct Texts {
    chunks: Vec<String>,
    queries: Vec<String>,
}

/// One engine's figures, or why it cannot run here.
fn measure_engine(
    engine: &str,
    args: &Args,
    files: &Files<'_>,
    texts: &Texts,
) -> anyhow::Result<Figures> {
    let (dir, runtime, openvino) = (files.dir, files.runtime, files.openvino);
    let (chunks, queries) = (&texts.chunks, &texts.queries);
    let before = resident_bytes();
    let started = Instant::now();
    let mut query: Option<Query<'_>> = None;
    let (embed, holder): (Embed<'_>, Box<dyn std::any::Any>) = match engine {
        "app" => {
            let model = std::sync::Arc::new(
                cairn_embed::bundled::Bundled::installed()
                    .context("the bundled model is not installed")?,
            );
            let (m, q) = (model.clone(), model.clone());
            query = Some(Box::new(move |t: &str| q.embed_query(t)));
            (Box::new(move |t: &[&str]| m.embed(t)), Box::new(model))
        }
        "candle" => {
            let model = std::sync::Arc::new(LocalEmbedder::load(dir).map_err(anyhow::Error::msg)?);
            let m = model.clone();
            (Box::new(move |t: &[&str]| m.embed(t)), Box::new(model))
        }
        "openvino int8" => {
            let model = std::sync::Arc::new(
                cairn_embed::openvino::OvEmbedder::load(
                    dir,
                    openvino,
                    files.cache,
                    args.threads.max(1) as usize,
                )
                .map_err(anyhow::Error::msg)?,
            );
            let m = model.clone();
            (Box::new(move |t: &[&str]| m.embed(t)), Box::new(model))
        }
        ort if ort.starts_with("onnxruntime") => {
            let precision = if ort.ends_with("int8") {
                cairn_embed::onnx::Precision::Int8
            } else {
                cairn_embed::onnx::Precision::F32
            };
            let model = std::sync::Arc::new(
                cairn_embed::runtime::OrtEmbedder::load(
                    dir,
                    runtime,
                    files.cache,
                    precision,
                    args.threads.max(1) as usize,
                )
                .map_err(anyhow::Error::msg)?,
            );
            let m = model.clone();
            (Box::new(move |t: &[&str]| m.embed(t)), Box::new(model))
        }
        other => {
            let quantise = other.ends_with("q8_0");
            let model = std::sync::Arc::new(
                cairn_embed::LlamaEmbedder::load(dir, files.cache, quantise, args.threads)
                    .map_err(anyhow::Error::msg)?,
            );
            let m = model.clone();
            (Box::new(move |t: &[&str]| m.embed(t)), Box::new(model))
        }
    };
    let load = started.elapsed();
    let min_cosine = cairn_embed::lowest_cosine(&embed)
        .map_err(anyhow::Error::msg)?
        .cosine;
    // Warm up, then time.
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    embed(&refs[..args.batch.min(refs.len())]).map_err(anyhow::Error::msg)?;
    let started = Instant::now();
    for batch in refs.chunks(args.batch) {
        embed(batch).map_err(anyhow::Error::msg)?;
    }
    let chunks_per_s = refs.len() as f64 / started.elapsed().as_secs_f64();
    let query: Query<'_> = query.unwrap_or_else(|| {
        Box::new(|t: &str| embed(&[t]).map(|mut v| v.pop().unwrap_or_default()))
    });
    let mut times = Vec::new();
    for q in queries {
        let asked = Instant::now();
        query(q).map_err(anyhow::Error::msg)?;
        times.push(asked.elapsed());
    }
    // The same queries while chunks are embedded without pause on another thread.
    let busy = std::sync::atomic::AtomicBool::new(true);
    let under_load = std::thread::scope(|scope| -> anyhow::Result<Samples> {
        let worker = scope.spawn(|| {
            while busy.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = embed(&refs[..args.batch.min(refs.len())]);
            }
        });
        std::thread::sleep(Duration::from_millis(200));
        let mut times = Vec::new();
        for q in queries.iter().take(50) {
            let asked = Instant::now();
            let answer = query(q);
            times.push(asked.elapsed());
            if answer.is_err() {
                break;
            }
        }
        busy.store(false, std::sync::atomic::Ordering::Relaxed);
        let _ = worker.join();
        Ok(Samples::new(times))
    })?;
    let extra_mib = resident_bytes().saturating_sub(before) as f64 / (1 << 20) as f64;
    drop(query);
    drop(embed);
    drop(holder);
    Ok(Figures {
        name: engine.to_string(),
        load,
        chunks_per_s,
        query: Samples::new(times),
        under_load,
        min_cosine,
        extra_mib,
    })
}

/// Texts of well over 256 tokens (cut to the window by the tokenizer), all different.
fn chunk_texts(n: usize) -> Vec<String> {
    let words = "harbour ledger tomato vehicle winter garden project quiet morning fishing boats \
                 return before dawn compost basil review Thursday agenda meeting notes travel \
                 ferry island summer budget invoice kitchen window library paper tide";
    let words: Vec<&str> = words.split_whitespace().collect();
    (0..n)
        .map(|i| {
            (0..320)
                .map(|k| words[(i * 7 + k * 13 + k / 5) % words.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn query_texts(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("what did we decide about the garden project in week {i}"))
        .collect()
}

fn report(args: &Args, results: &[Outcome], alone: &avx2::Alone) -> Report {
    let all: Vec<&Measured> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    let baseline = all.iter().find(|f| f.engine == "candle").copied();
    let mut rows = missing_rows(results, "");
    for f in &all {
        rows.extend(engine_rows(f, args.batch, baseline, GOAL_CHUNKS_PER_S, ""));
    }
    let mut sections = vec![Section {
        title: "The bundled embedding model on each engine".into(),
        rows,
    }];
    let mut notes = vec![
        format!("llama.cpp threads: {}; candle: its thread pool", args.threads),
        "memory added: resident memory after loading and using the engine, less before (engines run one after the other in this process: `--engines NAME` runs one alone)".into(),
        "app: the bundled model as the app runs it: chunks at background priority on every core, each query on an engine of its own (one thread, normal priority)".into(),
    ];
    if let Some(section) = alone.section(args.batch) {
        sections.push(section);
        notes.push(avx2::NOTE.into());
    }
    notes.push(format!(
        "machine load at the end: {}",
        crate::fsinfo::load_average()
    ));
    notes.push(format!(
        "model: {}",
        Path::new("all-MiniLM-L6-v2").display()
    ));
    let cpu = cairn_embed::cpu::Cpu::this();
    let json = json!({
        "build": report::build(),
        "cpu": {"model": cpu.model, "avx2": cpu.avx2, "avx512": cpu.avx512, "vnni": cpu.vnni},
        "missing": missing_json(results),
        "engines": all,
        "avx2_alone": alone.json(),
    });
    Report {
        title: format!("cairn-bench embed ({} build)\nCPU: {cpu}", report::build()),
        sections,
        notes,
        json,
    }
}

/// A row for each engine that could not run, saying why.
fn missing_rows(results: &[Outcome], suffix: &str) -> Vec<Row> {
    results
        .iter()
        .filter_map(|r| r.as_ref().err())
        .map(|(engine, why)| {
            Row::info(
                format!("{engine}{suffix}: not measured"),
                format!("missing: {why}"),
            )
        })
        .collect()
}

fn missing_json(results: &[Outcome]) -> Vec<serde_json::Value> {
    results
        .iter()
        .filter_map(|r| r.as_ref().err())
        .map(|(engine, why)| json!({"engine": engine, "why": why}))
        .collect()
}

/// One engine's rows; `baseline` is candle's figures when it ran (candle has none itself).
fn engine_rows(
    f: &Measured,
    batch: usize,
    baseline: Option<&Measured>,
    goal_chunks_per_s: f64,
    suffix: &str,
) -> Vec<Row> {
    let name = format!("{}{suffix}", f.engine);
    let is_base = f.engine == "candle";
    let base = |s: String| if is_base { "-".to_string() } else { s };
    vec![
        Row {
            name: format!("{name}: chunks/s (256 tokens, batches of {batch})"),
            figure: format!("{:.1}", f.chunks_per_s),
            baseline: base(baseline.map_or_else(String::new, |b| format!("{:.1}", b.chunks_per_s))),
            goal: format!(">= {goal_chunks_per_s}"),
            verdict: Verdict::of(f.chunks_per_s >= goal_chunks_per_s),
        },
        Row {
            name: format!("{name}: one-line query p50 / p99"),
            figure: format!("{:.2} / {:.2} ms", f.query_p50_ms, f.query_p99_ms),
            baseline: base(
                baseline.map_or_else(String::new, |b| format!("{:.2} ms", b.query_p50_ms)),
            ),
            goal: format!("p50 < {GOAL_QUERY_P50_MS} ms"),
            verdict: Verdict::of(f.query_p50_ms < GOAL_QUERY_P50_MS),
        },
        Row::info(
            format!("{name}: the same while chunks are embedded, p50 / p99"),
            format!(
                "{:.2} / {:.2} ms",
                f.query_under_load_p50_ms, f.query_under_load_p99_ms
            ),
        ),
        Row {
            name: format!("{name}: lowest cosine to the reference"),
            figure: format!("{:.5}", f.min_cosine),
            baseline: "-".into(),
            goal: format!(">= {GOAL_COSINE}"),
            verdict: Verdict::of(f.min_cosine >= GOAL_COSINE),
        },
        Row::info(
            format!("{name}: load, memory added"),
            format!("{:.0} ms, {:.0} MiB", f.load_ms, f.extra_mib),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine that cannot run here is a row saying why, beside the others; the CPU the
    /// figures ran on heads the report.
    #[test]
    fn a_missing_engine_is_a_row_and_the_cpu_is_named() {
        let args = Args {
            chunks: 1,
            batch: 16,
            queries: 1,
            threads: 2,
            engines: Vec::new(),
            this_cpu_only: true,
        };
        let why = "the OpenVINO library is not installed (/x/libopenvino_c.so)";
        let results = vec![Err(("openvino int8".to_string(), why.to_string()))];
        let report = report(&args, &results, &avx2::Alone::Skipped);
        let text = report.render();
        assert!(
            text.contains("openvino int8: not measured")
                && text.contains(&format!("missing: {why}")),
            "{text}"
        );
        let cpu = text.lines().nth(1).unwrap_or_default();
        assert!(cpu.starts_with("CPU: ") && cpu.contains("AVX2"), "{text}");
        assert_eq!(report.json["missing"][0]["engine"], "openvino int8");
    }
}
