//! Edit to searchable: a line holding a new word is added to a knowledge note the way an
//! outside editor saves (the whole file rewritten), and the index is searched until it finds
//! the word there. First without the watcher, the index told of the change directly
//! (`MemoryIndex::changed`: what indexing and committing one file costs); then with the
//! watcher running and nothing told (what a user sees). The CPU the process uses while
//! nothing is edited is measured without and with the watcher.

use std::fs;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use cairn_memory::MemoryIndex;

use super::memory_index;
use crate::fsinfo;
use crate::stats::Samples;

/// How often the index is searched while waiting.
const POLL: Duration = Duration::from_millis(1);
/// Longest wait for one edit.
const TIMEOUT: Duration = Duration::from_secs(20);
/// How long the CPU use of an idle index is measured.
const IDLE: Duration = Duration::from_secs(2);

pub struct EditTimes {
    /// Watcher on: from the save to the first search that finds the word.
    pub found: Samples,
    /// The same minus the debounce.
    pub after_debounce: Samples,
    /// Watcher off: from the save, then `MemoryIndex::changed`, to the first search that
    /// finds the word.
    pub direct: Samples,
    pub debounce: Duration,
    pub edits: usize,
    /// Watched edits found before the debounce was over: the index took them in some
    /// other way than the watcher's event for that save (a reconcile that happened to run).
    pub early: usize,
    /// Share of a core the process used with nothing edited, without the watcher and with
    /// it running.
    pub idle_cpu: Option<f64>,
    pub idle_cpu_watching: Option<f64>,
}

/// `edits` edits of each kind spread over `notes` (workspace-relative), one at a time.
pub fn measure(
    index: &MemoryIndex,
    root: &Path,
    notes: &[String],
    edits: usize,
    debounce: Duration,
) -> anyhow::Result<EditTimes> {
    ensure!(!notes.is_empty(), "no knowledge note to edit");
    let note = |i: usize| &notes[i * notes.len() / edits];
    let idle_cpu = cpu_share(IDLE);
    let mut direct = Vec::with_capacity(edits);
    for i in 0..edits {
        let word = format!("cairndirect{i}marker");
        direct.push(edit_once(index, root, note(i), &word, true)?);
    }
    let watch = index.watch()?;
    // Let the watcher settle before measuring.
    thread::sleep(debounce * 2);
    let idle_cpu_watching = cpu_share(IDLE);
    let mut found = Vec::with_capacity(edits);
    for i in 0..edits {
        let word = format!("cairnwatched{i}marker");
        found.push(edit_once(index, root, note(i), &word, false)?);
        // Let trailing events of this save pass before the next one.
        thread::sleep(debounce * 2);
    }
    drop(watch);
    Ok(EditTimes {
        after_debounce: Samples::new(found.iter().map(|t| t.saturating_sub(debounce)).collect()),
        early: found.iter().filter(|&&t| t < debounce).count(),
        found: Samples::new(found),
        direct: Samples::new(direct),
        debounce,
        edits,
        idle_cpu,
        idle_cpu_watching,
    })
}

/// Appends a line with `word` to `note` (telling the index when `tell`) and waits until a
/// search finds it there.
fn edit_once(
    index: &MemoryIndex,
    root: &Path,
    note: &str,
    word: &str,
    tell: bool,
) -> anyhow::Result<Duration> {
    let path = root.join(note);
    let mut text =
        fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("- Remember {word} when this comes up again.\n"));
    let started = Instant::now();
    fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    if tell {
        index.changed(&[note])?;
    }
    loop {
        let found = memory_index::search(index, word)?;
        if found.results.iter().any(|hit| hit.path == note) {
            return Ok(started.elapsed());
        }
        if started.elapsed() > TIMEOUT {
            bail!("{word}, added to {note}, was not searchable after {TIMEOUT:?}");
        }
        thread::sleep(POLL);
    }
}

/// The share of a core this process uses over the next `wall` while this thread sleeps.
fn cpu_share(wall: Duration) -> Option<f64> {
    let before = fsinfo::process_cpu_time()?;
    let started = Instant::now();
    thread::sleep(wall);
    let used = fsinfo::process_cpu_time()?.saturating_sub(before);
    Some(used.as_secs_f64() / started.elapsed().as_secs_f64())
}
