//! `cairn-bench search`: the memory index (Tantivy) beside SQLite FTS5 on the same chunks.
//!
//! 1. A workspace is generated from a seeded random source (`corpus.rs`, words from
//!    `vocab.rs`): MEMORY.md, two years of daily logs and knowledge notes, until the chunks
//!    reach `--chunks`.
//! 2. Build: `MemoryIndex::open` + `sync` on it; then FTS5 (porter stemmer) over the same
//!    chunks, cut by the same chunker from the same files (`files.rs`, `fts5.rs`).
//! 3. Queries (`queries.rs`): the same `--queries` on both, top ten with snippets, one
//!    warm-up pass then one timed pass, the two engines alternating query by query.
//! 4. Edit to searchable (`edit.rs`): with the watcher running, a note is saved with a new
//!    word and the index searched until it finds it.
//!
//! Goals: Tantivy's median query at least [`GOAL_SPEEDUP`] times faster than FTS5's, its
//! p99 under [`GOAL_P99_MS`], and an edit searchable within [`GOAL_EDIT_MS`] of the
//! debounce.

pub(crate) mod bench;
pub(crate) mod corpus;
mod edit;
mod figures;
mod files;
mod fts5;
pub(crate) mod meaning;
mod meaning_figures;
mod memory_index;
mod placement;
mod queries;
mod sizes;
pub(crate) mod vocab;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::ensure;
use cairn_memory::{IndexOptions, MemoryIndex, Workspace};

use self::bench::{time_queries, Bench};
use self::figures::Figures;
#[cfg(doc)]
use self::figures::{GOAL_EDIT_MS, GOAL_P99_MS, GOAL_SPEEDUP};
use crate::fsinfo;
use crate::report::Report;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Chunks the generated workspace aims for (the index's own count is reported).
    #[arg(long, default_value_t = 100_000)]
    chunks: usize,
    /// Queries, the same for both engines (one warm-up pass, then one timed pass).
    #[arg(long, default_value_t = 1000)]
    queries: usize,
    /// Saves timed for edit-to-searchable.
    #[arg(long, default_value_t = 10)]
    edits: usize,
    /// Where the workspace and the database are written (a scratch folder is made inside)
    /// [default: the system temp dir].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Leave out search by meaning (quality with the bundled embedding model, hybrid query
    /// times).
    #[arg(long)]
    no_meaning: bool,
    /// Generated chunks the known answers of search by meaning hide among.
    #[arg(long, default_value_t = 3000)]
    meaning_chunks: usize,
    /// Several sizes in one run, e.g. `10000,100000,1000000`: build, keyword and hybrid
    /// query times of each beside FTS5 in one table (instead of `--chunks`; no edit
    /// figures), then search quality once.
    #[arg(long, value_delimiter = ',', conflicts_with = "chunks")]
    sizes: Vec<usize>,
}

pub async fn run(args: Args) -> anyhow::Result<Report> {
    ensure!(args.chunks >= 1, "--chunks must be at least 1");
    ensure!(args.queries >= 1, "--queries must be at least 1");
    ensure!(args.edits >= 1, "--edits must be at least 1");
    if !args.sizes.is_empty() {
        ensure!(
            args.sizes.iter().all(|&n| n >= 1),
            "every size must be at least 1 chunk"
        );
        return tokio::task::spawn_blocking(move || {
            let parent = args.dir.clone().unwrap_or_else(fsinfo::default_disk_parent);
            let meaning = (!args.no_meaning).then_some(args.meaning_chunks);
            sizes::run(&parent, &args.sizes, args.queries, meaning)
        })
        .await?;
    }
    let figures = tokio::task::spawn_blocking(move || measure(&args)).await??;
    Ok(figures.report())
}

fn measure(args: &Args) -> anyhow::Result<Figures> {
    let load_before = fsinfo::load_average();
    let parent = args.dir.clone().unwrap_or_else(fsinfo::default_disk_parent);
    let scratch = fsinfo::scratch_in(&parent)?;
    eprintln!(
        "generating about {} chunks in {}",
        args.chunks,
        scratch.path().display()
    );
    let started = Instant::now();
    let bench = Bench::generate(scratch.path(), args.chunks)?;
    let generated = started.elapsed();
    eprintln!(
        "{} files, {:.1} MiB, {} chunks in {:.1} s; Tantivy: open + sync",
        bench.corpus.files,
        bench.corpus.bytes as f64 / (1024.0 * 1024.0),
        bench.corpus.chunks,
        generated.as_secs_f64()
    );
    let options = IndexOptions::default();
    let debounce = options.debounce;
    let fts5_db = scratch.path().join("fts5.db");
    let (index, built, fts5) = memory_index::build_both(&bench.workspace, &fts5_db, options)?;
    ensure!(
        built.chunks == fts5.built.rows && built.chunks == bench.corpus.chunks as u64,
        "the engines hold different chunks: Tantivy {}, FTS5 {}, generated {}",
        built.chunks,
        fts5.built.rows,
        bench.corpus.chunks
    );
    let queries = bench.queries(args.queries);
    eprintln!("{} queries: warm-up, then timed", queries.len());
    let times = time_queries(&index, &fts5, &queries)?;
    let segments_after = memory_index::segments(&bench.workspace.state_dir().join("index"));
    eprintln!("edit to searchable: {} saves", args.edits);
    let edits = edit::measure(
        &index,
        bench.workspace.root(),
        &bench.corpus.notes,
        args.edits,
        debounce,
    )?;
    let meaning = if args.no_meaning {
        Err("left out (--no-meaning)".to_string())
    } else {
        by_meaning(
            scratch.path(),
            &bench.workspace,
            index,
            &queries,
            args.meaning_chunks,
        )
    };
    Ok(Figures {
        meaning,
        corpus: bench.corpus,
        generated,
        built,
        segments_after,
        fts5: fts5.built,
        queries,
        times,
        edits,
        dir: scratch.path().to_path_buf(),
        fs_type: scratch.fs_type.clone(),
        load: format!("{load_before} before, {} after", fsinfo::load_average()),
    })
}

/// Search by meaning: the quality run on its own workspace, then hybrid query times on the
/// benchmark's index (which `index` is dropped for, to be opened again with vectors).
fn by_meaning(
    dir: &Path,
    workspace: &Workspace,
    index: MemoryIndex,
    queries: &[String],
    distractors: usize,
) -> Result<(meaning::Quality, meaning::Speed), String> {
    let loaded = meaning::load_model().map_err(|e| format!("no embedding model: {e}"))?;
    eprintln!(
        "search by meaning: {} known answers among {} other chunks",
        meaning::pairs().len(),
        distractors
    );
    let quality = meaning::quality(&dir.join("meaning"), &loaded, distractors)
        .map_err(|e| format!("quality: {e}"))?;
    drop(index);
    eprintln!(
        "hybrid queries: a vector for every chunk, then {} queries",
        queries.len()
    );
    let speed =
        meaning::speed(workspace, &loaded.model, queries).map_err(|e| format!("speed: {e}"))?;
    Ok((quality, speed))
}

#[cfg(test)]
mod tests {
    use super::fts5::Fts5;
    use super::*;

    /// A small workspace end to end: both engines index the same chunks, and both find a
    /// word the generator wrote and answer the generated queries.
    #[test]
    fn both_engines_search_the_same_generated_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let bench = Bench::generate(dir.path(), 300).unwrap();
        assert!(bench.corpus.chunks >= 300, "{}", bench.corpus.chunks);
        assert!(bench.corpus.notes.len() >= 3);
        let (index, built) =
            memory_index::build(&bench.workspace, IndexOptions::default()).unwrap();
        let fts5 = Fts5::build(bench.workspace.root(), &dir.path().join("fts5.db")).unwrap();
        assert_eq!(built.chunks, bench.corpus.chunks as u64);
        assert_eq!(fts5.built.rows, built.chunks);
        assert!(built.bytes > 0 && fts5.built.bytes > 0);

        let word = bench
            .corpus
            .phrases
            .iter()
            .flatten()
            .find(|w| w.len() > 6)
            .unwrap()
            .clone();
        let ours = memory_index::search(&index, &word).unwrap().results;
        let theirs = fts5.search(&word).unwrap();
        assert!(!ours.is_empty(), "Tantivy found no {word}");
        assert!(!theirs.is_empty(), "FTS5 found no {word}");
        assert!(theirs.iter().any(|h| h.snippet.contains('[')), "{theirs:?}");

        let queries = bench.queries(30);
        assert_eq!(queries, bench.queries(30), "queries are deterministic");
        let times = time_queries(&index, &fts5, &queries).unwrap();
        assert!(times.tantivy_hits > 0 && times.fts5_hits > 0);
    }
}
