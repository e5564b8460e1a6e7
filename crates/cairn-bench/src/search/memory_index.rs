//! Cairn's side: the memory index (Tantivy) opened on the workspace and synced, then
//! searched the way the app searches it.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::ensure;
use cairn_memory::{Corpus, IndexOptions, MemoryIndex, SearchQuery, SearchResults, Workspace};

use super::corpus::TODAY;
use super::fts5::Fts5;

/// What building the index took.
#[derive(Debug, Clone, Copy)]
pub struct Built {
    /// `MemoryIndex::open` and `sync` (scan, read, chunk, index, commit, catalog); the
    /// median of `builds` when [`build_both`] built it several times.
    pub build: Duration,
    pub builds: usize,
    /// Of those builds, how many were faster than the FTS5 build made right after.
    pub faster: usize,
    pub files: u64,
    pub chunks: u64,
    /// `.cairn/index`, right after the sync.
    pub bytes: u64,
    /// Segments of the index right after the sync.
    pub segments: usize,
    /// A second `sync` with nothing changed (as at a start of the app, or whenever the
    /// watcher asks for a reconcile).
    pub resync: Duration,
}

impl Built {
    /// Whether this build was no slower than FTS5's (`fts5`, its median when built
    /// several times). Several builds by turns are judged pair by pair, each against the
    /// FTS5 build made right after it: the machine's load drifts over the run, and a
    /// pair shares it, where two medians taken apart do not. No worse: faster in at
    /// least half of the pairs.
    pub fn no_worse_than(&self, fts5: Duration) -> bool {
        match self.builds {
            1 => self.build <= fts5,
            n => self.faster * 2 >= n,
        }
    }
}

/// Opens the workspace's index (a fresh one) and indexes every file.
pub fn build(workspace: &Workspace, options: IndexOptions) -> anyhow::Result<(MemoryIndex, Built)> {
    let started = Instant::now();
    let index = MemoryIndex::open(workspace, options)?;
    let report = index.sync()?;
    let build = started.elapsed();
    ensure!(
        report.skipped.is_empty(),
        "the index skipped files: {:?}",
        report.skipped
    );
    let dir = workspace.state_dir().join("index");
    let (bytes, segments) = (dir_bytes(&dir), segments(&dir));
    let started = Instant::now();
    index.sync()?;
    let resync = started.elapsed();
    Ok((
        index,
        Built {
            build,
            builds: 1,
            faster: 0,
            files: report.files,
            chunks: report.chunks,
            bytes,
            segments,
            resync,
        },
    ))
}

/// Workspaces up to this many chunks are built [`SMALL_BUILD_RUNS`] times: their builds
/// take a fifth of a second, which one run leaves at the mercy of the machine's load.
const SMALL: u64 = 20_000;
const SMALL_BUILD_RUNS: usize = 9;

/// Both engines built from nothing, by turns: 9 times each for a small workspace, once
/// otherwise. The build times are the medians; the last builds are kept for the queries.
pub fn build_both(
    workspace: &Workspace,
    fts5_db: &Path,
    options: IndexOptions,
) -> anyhow::Result<(MemoryIndex, Built, Fts5)> {
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    loop {
        let (index, built) = build(workspace, options.clone())?;
        let fts5 = Fts5::build(workspace.root(), fts5_db)?;
        ours.push(built.build);
        theirs.push(fts5.built.build);
        if built.chunks > SMALL || ours.len() == SMALL_BUILD_RUNS {
            let (mut built, mut fts5) = (built, fts5);
            // Pairs first: the medians sort the times.
            built.faster = ours.iter().zip(&theirs).filter(|(a, b)| a < b).count();
            built.build = median(&mut ours);
            built.builds = ours.len();
            fts5.built.build = median(&mut theirs);
            return Ok((index, built, fts5));
        }
        // From nothing again: the index and its catalog, the database.
        drop((index, fts5));
        fs::remove_dir_all(workspace.state_dir())?;
        fs::remove_file(fts5_db)?;
    }
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Top ten over every corpus, with snippets, recency measured from [`TODAY`].
pub fn query(text: &str) -> SearchQuery {
    SearchQuery {
        text: text.to_string(),
        limit: 10,
        corpus: Corpus::All,
        today: Some(TODAY),
        mode: None,
    }
}

pub fn search(index: &MemoryIndex, text: &str) -> anyhow::Result<SearchResults> {
    Ok(index.search_now(&query(text))?)
}

/// Bytes of the files under `dir`.
pub fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => dir_bytes(&entry.path()),
            Ok(kind) if kind.is_file() => entry.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// The segments listed in the index's `meta.json` (0 when it cannot be read).
pub fn segments(dir: &Path) -> usize {
    fs::read(dir.join("meta.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .and_then(|meta| meta.get("segments")?.as_array().map(Vec::len))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built(build_ms: u64, builds: usize, faster: usize) -> Built {
        Built {
            build: Duration::from_millis(build_ms),
            builds,
            faster,
            files: 1,
            chunks: 1,
            bytes: 0,
            segments: 1,
            resync: Duration::ZERO,
        }
    }

    #[test]
    fn builds_by_turns_are_judged_by_their_pairs() {
        let fts5 = Duration::from_millis(200);
        // A slower median, but faster in most pairs: the load drifted between them.
        assert!(built(210, 9, 7).no_worse_than(fts5));
        // A faster median, but slower in most pairs.
        assert!(!built(190, 9, 4).no_worse_than(fts5));
        // One build each: the two times.
        assert!(built(200, 1, 0).no_worse_than(fts5));
        assert!(!built(201, 1, 0).no_worse_than(fts5));
    }
}
