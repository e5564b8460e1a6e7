//! `cairn-bench local-model`: the local provider's throughput beside llama.cpp's own.
//!
//! The same GGUF model, thread count, context size and prompt run two ways, alternately:
//! through [`LocalProvider`]'s streaming API (template, tokenizer, engine thread, channel,
//! UTF-8 decoding, cancellation checks), and through llama-cpp-2 directly in a tight decode
//! loop. Prompt processing is timed to the first token, generation from there to the end,
//! and both sides decode the same number of tokens. Goal: Cairn at 90% of llama.cpp or more.

mod cairn;
mod quality;
mod raw;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{ensure, Context as _};
use cairn_llm::{LocalConfig, LocalProvider};
use cairn_models::default_model_path;
use serde_json::json;

use self::cairn::Answer;
use self::raw::{Raw, Timing};
use crate::report::{Report, Row, Section, Verdict};
use crate::stats::round3;

/// Cairn's throughput must be at least this share of llama.cpp's.
pub const GOAL_RATIO: f64 = 0.9;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The GGUF model [default: $CAIRN_MODEL_PATH, else the model scripts/fetch-model.sh
    /// fetches].
    #[arg(long, env = "CAIRN_MODEL_PATH")]
    model: Option<PathBuf>,
    /// Decoding threads for both sides [default: the provider's, one fewer than the cores].
    #[arg(long)]
    threads: Option<i32>,
    /// The approximate prompt length in tokens.
    #[arg(long, default_value_t = 512)]
    prompt_tokens: usize,
    /// Tokens to generate (fewer if the model ends its answer first; both sides then decode
    /// the same number).
    #[arg(long, default_value_t = 128)]
    gen_tokens: u32,
    /// Timed runs of each side (after one warm-up each); the median is reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Answer quality instead of throughput: a dozen known-answer questions through Cairn,
    /// the default workspace beside a bare one.
    #[arg(long)]
    quality: bool,
}

/// Throughput of one side, in tokens per second.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Throughput {
    pp: f64,
    tg: f64,
}

pub async fn run(args: Args) -> anyhow::Result<Report> {
    ensure!(args.runs >= 1, "--runs must be at least 1");
    ensure!(args.gen_tokens >= 2, "--gen-tokens must be at least 2");
    let path = match args.model.clone() {
        Some(path) => path,
        None => default_model_path().context("cannot find the default model path: set --model")?,
    };
    LocalProvider::probe(&path)?;
    if args.quality {
        return quality::run(&path).await;
    }
    let config = LocalConfig {
        threads: args.threads,
        ..LocalConfig::new(&path)
    };
    eprintln!("loading {} twice (Cairn and raw llama.cpp)", path.display());
    let provider = tokio::task::spawn_blocking(move || LocalProvider::load(config)).await??;
    let (threads, n_ctx) = (provider.threads(), provider.context_window());
    let raw = tokio::task::spawn_blocking(move || Raw::load(&path, threads, n_ctx)).await??;
    let raw = Arc::new(raw);

    let mut cairn_runs = Vec::new();
    let mut raw_runs = Vec::new();
    let (mut prompt_len, mut gen_len) = (0, 0);
    for run in 0..=args.runs {
        if run == 0 {
            eprintln!("warm-up: cairn, then llama.cpp");
        } else {
            eprintln!("run {run}/{}: cairn, then llama.cpp", args.runs);
        }
        let pair = measure_pair(&provider, &raw, run, &args).await?;
        if run > 0 {
            prompt_len = pair.answer.usage.input_tokens;
            gen_len = pair.answer.usage.output_tokens;
            cairn_runs.push(cairn_throughput(&pair.answer));
            raw_runs.push(throughput(pair.raw, prompt_len, pair.answer.steps()));
        }
    }
    let cairn = median(&cairn_runs);
    let llama = median(&raw_runs);
    Ok(report(
        threads, n_ctx, prompt_len, gen_len, args.runs, cairn, llama,
    ))
}

/// One answer through Cairn, then the same work through raw llama.cpp.
struct Pair {
    answer: Answer,
    raw: Timing,
}

async fn measure_pair(
    provider: &LocalProvider,
    raw: &Arc<Raw>,
    run: usize,
    args: &Args,
) -> anyhow::Result<Pair> {
    // A different first line each run, so the provider's prompt cache cannot help.
    let system = format!("Session {run}. You are a storyteller who writes long stories.");
    let user = user_prompt(args.prompt_tokens);
    let answer = cairn::answer(provider, &system, &user, args.gen_tokens).await?;
    let steps = answer.steps() as usize;
    let raw = raw.clone();
    let (tokens, timing) = tokio::task::spawn_blocking(move || {
        let tokens = raw.prompt(&system, &user)?;
        anyhow::Ok((tokens.len() as u64, raw.run(&tokens, steps)?))
    })
    .await??;
    ensure!(
        tokens == answer.usage.input_tokens,
        "the two sides tokenized the prompt differently ({tokens} vs {} tokens)",
        answer.usage.input_tokens
    );
    Ok(Pair {
        answer,
        raw: timing,
    })
}

/// About `tokens` tokens of text (a line is about 20), then the request for a long story.
fn user_prompt(tokens: usize) -> String {
    let line = "The harbour town woke slowly; fishermen mended nets while gulls argued above.\n";
    let mut text = line.repeat((tokens / 20).max(1));
    text.push_str("Continue this scene as a very long story with many chapters.");
    text
}

fn cairn_throughput(answer: &Answer) -> Throughput {
    throughput(answer.timing, answer.decoded_prompt(), answer.steps())
}

fn throughput(timing: Timing, prompt: u64, steps: u64) -> Throughput {
    Throughput {
        pp: prompt as f64 / timing.prompt.as_secs_f64().max(1e-9),
        tg: steps as f64 / timing.generation.as_secs_f64().max(1e-9),
    }
}

/// The median of each figure on its own.
fn median(runs: &[Throughput]) -> Throughput {
    let mid = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    Throughput {
        pp: mid(runs.iter().map(|t| t.pp).collect()),
        tg: mid(runs.iter().map(|t| t.tg).collect()),
    }
}

fn report(
    threads: i32,
    n_ctx: u32,
    prompt_tokens: u64,
    gen_tokens: u64,
    runs: usize,
    cairn: Throughput,
    llama: Throughput,
) -> Report {
    let ratio = Throughput {
        pp: cairn.pp / llama.pp.max(1e-9),
        tg: cairn.tg / llama.tg.max(1e-9),
    };
    let row = |name: &str, figure: f64, baseline: f64, ratio: f64| Row {
        name: name.into(),
        figure: format!("{figure:.1} tok/s ({:.0}%)", ratio * 100.0),
        baseline: format!("{baseline:.1} tok/s"),
        goal: format!(">= {:.0}% of llama.cpp", GOAL_RATIO * 100.0),
        verdict: Verdict::of(ratio >= GOAL_RATIO),
    };
    let section = Section {
        title: "Local model throughput: Cairn (figure) vs raw llama.cpp (baseline)".into(),
        rows: vec![
            row("prompt processing", cairn.pp, llama.pp, ratio.pp),
            row("generation", cairn.tg, llama.tg, ratio.tg),
        ],
    };
    let notes = vec![
        format!(
            "{prompt_tokens} prompt tokens, {gen_tokens} generated tokens, {threads} threads, \
             context {n_ctx}; median of {runs} runs each, the two sides alternating"
        ),
        "prompt processing: start of the call to the first token; generation: first token to \
         the end, per decode step"
            .into(),
    ];
    let r = |t: Throughput| json!({"pp_tps": round3(t.pp), "tg_tps": round3(t.tg)});
    Report {
        title: "cairn-bench local-model".into(),
        sections: vec![section],
        notes,
        json: json!({
            "threads": threads,
            "prompt_tokens": prompt_tokens,
            "gen_tokens": gen_tokens,
            "cairn": r(cairn),
            "llama_cpp": r(llama),
            "ratio": {"pp": round3(ratio.pp), "tg": round3(ratio.tg)},
        }),
    }
}
