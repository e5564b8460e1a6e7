//! `cairn index` killed (SIGKILL) at many points while it indexes and commits: the next run
//! must find the index whole, with every file once, no chunk twice, and no stale text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use cairn_e2e::Sandbox;
use serde_json::Value;

const FILES: usize = 1500;
const GROUPS: usize = 20;

/// Writes every note of generation `generation`: each file one chunk, with a word unique to
/// it and this generation, and a word shared by its group.
fn write_notes(sandbox: &Sandbox, generation: usize) {
    let dir = sandbox.workspace().join("knowledge");
    std::fs::create_dir_all(&dir).unwrap();
    for n in 0..FILES {
        let text = format!(
            "# Note {n}\n\nThe keeper of note {n} writes gen{generation}note{n} in the \
             ledger of group{group}.\n",
            group = n % GROUPS
        );
        std::fs::write(dir.join(format!("note{n:03}.md")), text).unwrap();
    }
}

async fn json(sandbox: &Sandbox, args: &[&str]) -> Value {
    let out = sandbox.cairn(args).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn hit_paths(sandbox: &Sandbox, word: &str) -> Vec<String> {
    let found = json(sandbox, &["search", "--json", "--limit", "100", word]).await;
    found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["path"].as_str().unwrap().to_string())
        .collect()
}

/// How long a whole `cairn index` of one generation takes here, from spawn to exit: the
/// shorter of two runs, so the kill points below fall inside the runs that follow.
async fn full_run_time(sandbox: &Sandbox, generation: &mut usize) -> Duration {
    let mut shortest = Duration::MAX;
    for _ in 0..2 {
        *generation += 1;
        write_notes(sandbox, *generation);
        let started = Instant::now();
        let status = sandbox.cairn(&["index"]).status().await.unwrap();
        assert!(status.success(), "cairn index: {status}");
        shortest = shortest.min(started.elapsed());
    }
    shortest
}

#[tokio::test(flavor = "multi_thread")]
async fn an_index_killed_at_any_point_is_whole_at_the_next_run() {
    let sandbox = Sandbox::new();
    let mut generation = 0;
    // Kill points spread over a run, as fractions of the time a whole run takes on this
    // machine: start-up, reading and chunking, adding documents, the commit, the catalog.
    let whole = full_run_time(&sandbox, &mut generation).await;
    let mut killed = 0;
    let fractions = [
        0.01, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.97,
    ];
    for fraction in fractions {
        // Change every file before each run, so it has deletes and adds to commit.
        generation += 1;
        write_notes(&sandbox, generation);
        let mut child = sandbox.cairn(&["index"]).spawn().unwrap();
        tokio::time::sleep(whole.mul_f64(fraction)).await;
        let _ = child.start_kill();
        let status = child.wait().await.unwrap();
        if status.signal() == Some(9) {
            killed += 1;
        }
    }

    // Most runs must really have been cut short for this test to mean anything.
    assert!(
        killed >= 7,
        "only {killed} of {} runs were still working when killed (a whole run: {whole:?})",
        fractions.len()
    );

    let report = json(&sandbox, &["index", "--json"]).await;
    // The notes, and AGENTS.md / MEMORY.md from the workspace template.
    let chunks = report["chunks"].as_u64().unwrap();
    let files = report["files"].as_u64().unwrap();
    assert!(files >= FILES as u64, "{report}");
    assert_eq!(report["skipped"], serde_json::json!([]), "{report}");

    // Each group's files are found once each: nothing indexed twice, nothing missing.
    let mut seen = 0;
    for group in 0..GROUPS {
        let mut paths = hit_paths(&sandbox, &format!("group{group}")).await;
        let found = paths.len();
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), found, "group{group}: a file is indexed twice");
        assert_eq!(found, FILES / GROUPS, "group{group}: {paths:?}");
        seen += found;
    }
    assert_eq!(seen, FILES);
    // One chunk per note plus the template's: no leftovers of killed runs.
    let again = json(&sandbox, &["index", "--json"]).await;
    assert_eq!(again["chunks"].as_u64().unwrap(), chunks);
    assert_eq!(again["changed"], 0, "{again}");

    // Only the last generation's words are in the index.
    for n in [0, 7, FILES - 1] {
        let current = hit_paths(&sandbox, &format!("gen{generation}note{n}")).await;
        assert_eq!(current, [format!("knowledge/note{n:03}.md")]);
        for old in 0..generation {
            let stale = hit_paths(&sandbox, &format!("gen{old}note{n}")).await;
            assert!(
                stale.is_empty(),
                "gen{old}note{n} is still found: {stale:?}"
            );
        }
    }
}
