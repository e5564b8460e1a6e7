//! `cairn-bench`: side-by-side benchmarks of Cairn's hot paths.
//!
//! Each subcommand measures a figure and its baseline in the same process run, then prints
//! a table (or, with `--json`, one JSON object holding the same figures). Progress goes to
//! stderr so that stdout stays machine-readable.
//!
//! Map: `report.rs` renders every subcommand's [`report::Report`]; `stats.rs` holds timing
//! helpers; `fsinfo.rs` picks and labels the directories runs write to; one folder per
//! subcommand (`harness/`, `local_model/`, `search/`, `recall/`, `compaction.rs`, `desktop/`,
//! `vectors.rs`, `sandbox.rs`).

mod compaction;
mod desktop;
mod embed;
mod fsinfo;
mod harness;
mod knowledge;
mod local_model;
mod recall;
mod report;
mod sandbox;
mod search;
mod stats;
mod vectors;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Side-by-side benchmarks of Cairn. Measure release builds only:
/// `cargo run -p cairn-bench --release -- <benchmark>`.
#[derive(Debug, Parser)]
#[command(name = "cairn-bench", version)]
struct Cli {
    /// Print one JSON object with the figures instead of the table.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Harness overhead per step (scripted zero-latency provider, session on tmpfs and on
    /// disk) and the time to open a long session, each beside its baseline.
    Harness(harness::Args),
    /// The local GGUF provider's prompt and generation throughput beside raw llama.cpp's
    /// on the same model and threads.
    LocalModel(local_model::Args),
    /// The memory index (Tantivy) beside SQLite FTS5 on the same chunks of a generated
    /// workspace: build time, size, query latency, and edit-to-searchable with the watcher.
    Search(search::Args),
    /// Memory search on a year of generated conversations (daily logs and session
    /// transcripts): recall of facts by category, each mode beside SQLite FTS5.
    Recall(recall::Args),
    /// One compaction of a generated 200-turn session: its cost in tokens and time beside
    /// the tokens it saves.
    Compaction(compaction::Args),
    /// The desktop app's start-up time and memory (all its processes) beside an empty
    /// Tauri window built the same way, on a new and on a 200-message session.
    Desktop(desktop::Args),
    /// What the OS sandbox adds to a bash call (`true`, and `git status` in a 1,000-file
    /// repository), with the sandbox on and off in turns.
    Sandbox(sandbox::Args),
    /// The bundled embedding model on each engine (candle, llama.cpp f32 and Q8_0, ONNX
    /// Runtime f32 and int8, OpenVINO int8, and as the app runs it): chunks/s, query time alone and while
    /// chunks are embedded, closeness to the reference vectors, memory.
    Embed(embed::Args),
    /// A folder of notes and PDFs searched in place: files/s and MB/s by type, the first
    /// search answer while it is indexed, a reopen with nothing changed, peak memory.
    Knowledge(knowledge::Args),
    /// Search by meaning's vector scans (every vector, or a shortlist by signs) beside an
    /// HNSW graph on the same generated vectors: query time, recall, build time, memory.
    Vectors(vectors::Args),
}

fn main() -> ExitCode {
    cairn_app::tune_allocator();
    // Documents are read in child processes, as the app reads them.
    cairn_extract::guard::serve_if_asked();
    cairn_embed::candle::settle_threads();
    let cli = Cli::parse();
    if cfg!(debug_assertions) {
        eprintln!("cairn-bench: this is a debug build; measure with `--release`");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cairn-bench: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    // The benchmark runs as a spawned task, like a run in the desktop app, not on the
    // thread that blocks on the runtime.
    let result = runtime.block_on(async move {
        match tokio::spawn(run(cli.command)).await {
            Ok(result) => result,
            Err(e) => Err(anyhow::anyhow!("the benchmark task failed: {e}")),
        }
    });
    match result.and_then(|report| report.print(cli.json)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cairn-bench: {e:#}");
            ExitCode::from(1)
        }
    }
}

async fn run(command: Command) -> anyhow::Result<report::Report> {
    match command {
        Command::Harness(args) => harness::run(args).await,
        Command::LocalModel(args) => local_model::run(args).await,
        Command::Search(args) => search::run(args).await,
        Command::Recall(args) => recall::run(args).await,
        Command::Compaction(args) => compaction::run(args).await,
        Command::Desktop(args) => desktop::run(args).await,
        Command::Vectors(args) => vectors::run(args).await,
        Command::Sandbox(args) => sandbox::run(args).await,
        Command::Knowledge(args) => knowledge::run(args).await,
        Command::Embed(args) => embed::run(args).await,
    }
}
