//! A user editing MEMORY.md, as editors save (in place, and by renaming a new file over
//! it), all through 100 consolidations: no edit of theirs may be lost.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cairn_core::upkeep::{ConsolidationOptions, ConsolidationStatus, RunMode};
use cairn_llm::ScriptedTurn;
use rand::Rng;

use super::{fixture, run, LOG};

const RUNS: usize = 100;

/// The MEMORY.md the consolidation showed the model, from its prompt.
fn shown_memory(prompt: &str) -> String {
    let start = prompt.find("<current_memory_md>\n").map(|i| i + 20);
    let end = prompt.find("\n</current_memory_md>");
    match (start, end) {
        (Some(start), Some(end)) if start <= end => prompt[start..end].to_string(),
        _ => panic!("no MEMORY.md in the prompt: {prompt}"),
    }
}

/// The user: read MEMORY.md, add a line, save; over and over until told to stop. Counts
/// the edits saved in `saved`, and returns how many.
fn edit_until(path: &Path, stop: &AtomicBool, saved: &AtomicUsize) -> usize {
    let mut rng = rand::rng();
    let mut edits = 0;
    while !stop.load(Ordering::Relaxed) {
        let old = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read: {e}"));
        let new = format!("{old}- User edit {}.\n", edits + 1);
        if edits % 2 == 0 {
            std::fs::write(path, new).unwrap_or_else(|e| panic!("write: {e}"));
        } else {
            let temp = path.with_file_name(".MEMORY.md.swp");
            std::fs::write(&temp, new).unwrap_or_else(|e| panic!("write: {e}"));
            std::fs::rename(&temp, path).unwrap_or_else(|e| panic!("rename: {e}"));
        }
        edits += 1;
        saved.store(edits, Ordering::Relaxed);
        // Bursts of quick saves with a pause now and then, as a person types and stops:
        // without pauses, a loaded machine may never finish a consolidation between two.
        let pause = if edits % 16 == 0 {
            30_000
        } else {
            rng.random_range(200..3000)
        };
        std::thread::sleep(Duration::from_micros(pause));
    }
    edits
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_editing_memory_through_100_consolidations_loses_no_edit() {
    // The model keeps everything it was shown and adds the fact of the run.
    let f = fixture(&[]).responding(|request| {
        let prompt = request.messages[0].text();
        let run = prompt.matches("- Fact ").count();
        ScriptedTurn::text(format!("{}\n- Fact {run} kept.\n", shown_memory(&prompt)))
    });
    let consolidator = f.consolidator_with(ConsolidationOptions {
        budget_chars: 1 << 20,
        ..ConsolidationOptions::default()
    });
    let path = f.workspace.root().join("MEMORY.md");
    let stop = Arc::new(AtomicBool::new(false));
    let saved = Arc::new(AtomicUsize::new(0));
    let user = std::thread::spawn({
        let (path, stop, saved) = (path.clone(), stop.clone(), saved.clone());
        move || edit_until(&path, &stop, &saved)
    });

    let mut written = 0;
    let mut deferred = 0;
    // At least RUNS consolidations, and on until the user has saved at least RUNS edits
    // (on a fast machine the consolidations may be done first).
    let mut n = 0;
    while n < RUNS || saved.load(Ordering::Relaxed) < RUNS {
        n += 1;
        f.append(LOG, &format!("- 12:00 — Fact {n} of the day.\n"));
        let report = run(&consolidator, RunMode::Write).await;
        match report.status {
            ConsolidationStatus::Written => written += 1,
            ConsolidationStatus::Deferred => deferred += 1,
            other => panic!("run {n}: {other:?}: {:?}", report.reason),
        }
    }
    stop.store(true, Ordering::Relaxed);
    let edits = user.join().unwrap();

    let memory = f.read("MEMORY.md");
    let lost: Vec<usize> = (1..=edits)
        .filter(|k| !memory.contains(&format!("- User edit {k}.\n")))
        .collect();
    println!(
        "{n} consolidations ({written} written, {deferred} deferred) under {edits} edits: \
         {} lost",
        lost.len()
    );
    assert!(lost.is_empty(), "edits lost: {lost:?}\n{memory}");
    assert!(edits >= RUNS, "the user made only {edits} edits");
    assert!(written > 0, "no consolidation got through");
}
