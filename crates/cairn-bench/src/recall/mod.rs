//! `cairn-bench recall`: does memory search find what was said months ago?
//!
//! 1. Conversations are generated from a seed (`generate.rs`, `facts.rs`, words from
//!    `words.rs` and `values.rs`): `--people` people, each talking with the workspace's
//!    user two or three days a week over `--months` months ending on [`generate::END`],
//!    10 to 30 turns of small talk a day with fact-bearing turns among them (pets,
//!    employers, advice, purchases, trips, decisions, values that changed ...). Each
//!    conversation is written into a workspace of its own twice: as daily logs
//!    (`memory/YYYY-MM-DD.md`) and as session transcripts (`sessions/<id>.jsonl`).
//! 2. Questions are written from the facts alone, never from search results, in five
//!    categories: single, multi (two turns on different days), temporal (a date
//!    expression or "when"), changed (the newer value is the answer; the older is recorded)
//!    and paraphrase (at most one content word in common with the evidence).
//! 3. Measurement (`measure.rs`): each workspace's memory index, with the bundled
//!    embedding model, answers every question by keyword, by meaning and hybrid, top ten;
//!    SQLite FTS5 answers over windows as long as Cairn's median hit (`fts5.rs`). Also the
//!    search benchmark's 40 known paraphrases, 200 questions that are a fact line's own
//!    words, the latency of `MemoryIndex::search`, and of the real `cairn search` (`cli.rs`).
//! 4. The report (`figures.rs`): recall@5, recall@10 and all-evidence@10 by corpus,
//!    category and engine, and the goals.

mod cli;
mod facts;
mod figures;
mod fts5;
mod generate;
mod measure;
#[cfg(test)]
mod tests;
mod values;
mod words;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::ensure;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use self::figures::Figures;
use self::generate::{Form, Generated, Question};
use crate::fsinfo;
use crate::report::Report;

/// Questions that are a fact line's own words.
const EXACT_LINES: usize = 200;
/// `cairn search` runs timed.
const CLI_QUERIES: usize = 30;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Seed of the generated conversations and questions.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// People, each a conversation in a workspace of its own.
    #[arg(long, default_value_t = 10)]
    people: usize,
    /// Months each conversation spans.
    #[arg(long, default_value_t = 13)]
    months: u32,
    /// Questions in all, across people (asked of both forms).
    #[arg(long, default_value_t = 1500)]
    questions: usize,
    /// Generated chunks the 40 known paraphrases hide among.
    #[arg(long, default_value_t = 3000)]
    paraphrase_chunks: usize,
    /// Where the workspaces are written (a scratch folder is made inside)
    /// [default: the system temp dir].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Leave out the embedding model: keyword and FTS5 only.
    #[arg(long)]
    no_meaning: bool,
}

pub async fn run(args: Args) -> anyhow::Result<Report> {
    ensure!(args.people >= 1, "--people must be at least 1");
    ensure!((1..=48).contains(&args.months), "--months must be 1 to 48");
    ensure!(args.questions >= 1, "--questions must be at least 1");
    let figures = tokio::task::spawn_blocking(move || measure(&args)).await??;
    Ok(figures.report())
}

fn measure(args: &Args) -> anyhow::Result<Figures> {
    let started = Instant::now();
    let load_before = fsinfo::load_average();
    let parent = args.dir.clone().unwrap_or_else(fsinfo::default_disk_parent);
    let scratch = fsinfo::scratch_in(&parent)?;
    let generated = generate::generate(args.seed, args.people, args.months, args.questions);
    let exact = exact_lines(&generated, args.seed, EXACT_LINES);
    let asked: usize = generated.people.iter().map(|p| p.questions.len()).sum();
    eprintln!(
        "{} people, {} questions, in {}",
        args.people,
        asked,
        scratch.path().display()
    );
    let model = if args.no_meaning {
        Err("left out (--no-meaning)".to_string())
    } else {
        crate::search::meaning::load_model().map_err(|e| format!("no embedding model: {e:#}"))
    };
    let embedder = model.as_ref().ok().map(|m| &m.model);
    eprintln!("daily logs");
    let logs = measure::run(
        &scratch.path().join("logs"),
        &generated,
        &exact,
        Form::Logs,
        embedder,
    )?;
    eprintln!("sessions");
    let none: Vec<Vec<Question>> = vec![Vec::new(); exact.len()];
    let sessions = measure::run(
        &scratch.path().join("sessions"),
        &generated,
        &none,
        Form::Sessions,
        embedder,
    )?;
    eprintln!("paraphrase set");
    let paraphrase = measure::paraphrase_set(
        &scratch.path().join("paraphrase"),
        embedder,
        args.paraphrase_chunks,
        logs.window,
    )?;
    let questions: Vec<String> = generated.people[0]
        .questions
        .iter()
        .take(CLI_QUERIES)
        .map(|q| q.text.clone())
        .collect();
    let cli = match cli::binary() {
        Some(bin) => {
            eprintln!("`cairn search`: {} runs", questions.len());
            cli::time_search(&bin, &logs.first_workspace, &questions)
        }
        None => Err("build cairn-cli: cargo build --release -p cairn-cli".to_string()),
    };
    Ok(Figures {
        seed: args.seed,
        people: args.people,
        months: args.months,
        days: generated
            .people
            .iter()
            .map(|p| p.conversation.days.len())
            .sum(),
        model: model.map(|m| m.model.model()),
        logs,
        sessions,
        paraphrase,
        cli,
        cli_queries: questions.len(),
        cpu: cairn_embed::cpu::Cpu::this().to_string(),
        dir: scratch.path().display().to_string(),
        fs_type: scratch.fs_type.clone(),
        load: format!("{load_before} before, {} after", fsinfo::load_average()),
        took: started.elapsed(),
    })
}

/// About `n` questions in all that are a fact-bearing turn word for word, spread over
/// the people.
fn exact_lines(generated: &Generated, seed: u64, n: usize) -> Vec<Vec<Question>> {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x00e8_ac71);
    let each = n.div_ceil(generated.people.len().max(1));
    generated
        .people
        .iter()
        .map(|person| {
            let mut facts = person.facts.clone();
            facts.shuffle(&mut rng);
            facts
                .into_iter()
                .take(each)
                .map(|at| {
                    let turn = &person.conversation.days[at.day].turns[at.turn];
                    Question {
                        category: facts::Category::Single,
                        text: turn.text.clone(),
                        evidence: vec![at],
                        older: None,
                        answer: String::new(),
                    }
                })
                .collect()
        })
        .collect()
}
