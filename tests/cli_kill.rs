//! The kill -9 matrix: the real `cairn` binary, a loopback model server, and SIGKILL at
//! points spread over runs that stream, run bash, write a file, flush memory, consolidate
//! and compact. After every kill:
//! - each session opens, and every line saved before the kill is still there, in order;
//! - `cairn ask --continue` works, and the model is sent no tool call without a result;
//! - MEMORY.md and the file being written are the old or the new version, never partial;
//! - the memory index answers.
//!
//! `make test` runs the short mode (3 kill points per scenario). For the figures in the
//! README, `CAIRN_KILL_POINTS=40 cargo nextest run -p cairn-e2e --test cli_kill
//! --no-capture` spreads 40 points over each scenario and prints the tally. (The index's
//! own kill test is `cli_index_crash`.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cairn_e2e::{text_stream, tool_call_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer, RecordedRequest};
use serde_json::{json, Value};

const MEMORY_MD: &str = "# Memory\n\n## People\n- Ana leads the garden project.\n\
                         - Ben fixes the bikes.\n\n## Preferences\n- Prefers tea over coffee.\n";
const MERGED: &str = "# Memory\n\n## People\n\
                      - Ana leads the garden project; its meeting is on Thursdays.\n\
                      - Ben fixes the bikes.\n\n## Preferences\n- Prefers tea over coffee.\n\n\
                      ## Dates\n- Dentist on March 14.\n";
const FACTS: usize = 30;
const OLD_NOTE: &str = "old note\n";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Point {
    /// A long streamed answer.
    Stream,
    /// A bash call that writes for a while.
    Bash,
    /// write_file replacing a note with 2 MB.
    WriteFile,
    /// The memory flush after the run.
    Flush,
    /// `cairn consolidate` rewriting MEMORY.md.
    Consolidation,
    /// A compaction before the model call.
    Compaction,
}

const POINTS: [Point; 6] = [
    Point::Stream,
    Point::Bash,
    Point::WriteFile,
    Point::Flush,
    Point::Consolidation,
    Point::Compaction,
];

fn big_note() -> String {
    "All work and no play makes a dull note.\n".repeat(50_000)
}

fn system_prompt(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn slow(events: Vec<String>, delay_ms: u64) -> MockResponse {
    MockResponse::sse(events).with_chunk_delay(Duration::from_millis(delay_ms))
}

/// The model's side of each scenario.
fn answer(point: Point, request: &RecordedRequest) -> MockResponse {
    let body = request.body_json().unwrap_or(Value::Null);
    let system = system_prompt(&body);
    let answered = body["messages"]
        .as_array()
        .is_some_and(|m| m.last().is_some_and(|m| m["role"] == "tool"));
    if system.contains("durable facts worth remembering") {
        let facts: String = (1..=FACTS)
            .map(|n| format!("- Fact number {n}.\n"))
            .collect();
        let delay = if point == Point::Flush { 30 } else { 0 };
        return slow(text_stream(&facts), delay);
    }
    if system.contains("working memory of an AI assistant") {
        let summary = "## Goal\n- story\n".repeat(20);
        return slow(text_stream(&summary), 25);
    }
    match point {
        Point::Consolidation => slow(text_stream(MERGED), 25),
        Point::Stream => slow(
            text_stream(&"Once upon a time there was a story. ".repeat(6)),
            25,
        ),
        Point::Bash if !answered => MockResponse::sse(tool_call_stream(
            "call_bash",
            "bash",
            &json!({"command": "for i in $(seq 1 10); do echo $i >> count.txt; sleep 0.08; done"}),
            3,
        )),
        Point::WriteFile if !answered => slow(
            tool_call_stream(
                "call_write",
                "write_file",
                &json!({"path": "notes/big.md", "content": big_note()}),
                40,
            ),
            15,
        ),
        _ => MockResponse::sse(text_stream("Done.")),
    }
}

/// The recovery run's model: answers every request at once.
fn recovery(point: Point, request: &RecordedRequest) -> MockResponse {
    let body = request.body_json().unwrap_or(Value::Null);
    let text = if system_prompt(&body).contains("durable facts worth remembering") {
        "NOTHING"
    } else if point == Point::Consolidation {
        MERGED
    } else {
        "Recovered."
    };
    MockResponse::sse(text_stream(text))
}

fn settings(point: Point, url: &str) -> String {
    let mut text = format!(
        "[providers.loop]\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"m\"\n\
         context_window = 6000\n\n[context]\nreserve_tokens = 1000\nkeep_recent_tokens = 300\n"
    );
    if point == Point::Flush {
        text.push_str("\n[memory]\nflush = true\n");
    }
    text
}

fn today_log() -> String {
    format!("memory/{}.md", chrono::Local::now().format("%Y-%m-%d"))
}

fn write(sandbox: &Sandbox, path: &str, text: &str) {
    let path = sandbox.workspace().join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(sandbox: &Sandbox, path: &str) -> String {
    std::fs::read_to_string(sandbox.workspace().join(path)).unwrap_or_default()
}

fn args(point: Point) -> Vec<&'static str> {
    match point {
        Point::Consolidation => vec!["--provider", "loop", "consolidate"],
        Point::Compaction => vec!["--provider", "loop", "ask", "--continue", "And then?"],
        _ => vec!["--provider", "loop", "ask", "--yes", "Tell me a story."],
    }
}

/// A fresh workspace set up for `point`, its settings pointing at `server`.
async fn prepare(point: Point, server: &MockServer) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_settings(&settings(point, &server.url()));
    write(&sandbox, "notes/big.md", OLD_NOTE);
    write(&sandbox, "MEMORY.md", MEMORY_MD);
    if point == Point::Consolidation {
        write(
            &sandbox,
            &today_log(),
            "# Today\n\n- 09:00 — Ana moved the garden meeting to Thursdays.\n\
             - 10:00 — Booked the dentist for March 14.\n",
        );
    }
    if point == Point::Compaction {
        // A long first exchange, so the next request passes the window.
        let long = "The story so far, told at length. ".repeat(600);
        let out = sandbox
            .cairn(&["--provider", "loop", "ask", &long])
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    sandbox
}

fn session_files(sandbox: &Sandbox) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(sandbox.workspace().join("sessions"))
        .map(|dir| dir.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "jsonl"));
    files.sort();
    files
}

/// Each session file's complete lines (those ending in a newline).
fn saved_lines(sandbox: &Sandbox) -> BTreeMap<PathBuf, Vec<String>> {
    session_files(sandbox)
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let whole = text.rfind('\n').map_or("", |end| &text[..end]);
            let lines = whole.lines().map(str::to_string).collect();
            (path, lines)
        })
        .collect()
}

/// Tool calls sent to the model without a result for them.
fn unanswered_calls(body: &Value) -> Vec<String> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let answered: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .filter_map(|call| call["id"].as_str().map(str::to_string))
        .filter(|id| !answered.contains(&id.as_str()))
        .collect()
}

/// Everything that must hold after a kill; the problems found.
async fn check_after_kill(point: Point, sandbox: &Sandbox, new_memory: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let before = saved_lines(sandbox);

    let memory = read(sandbox, "MEMORY.md");
    if memory != MEMORY_MD && memory != new_memory {
        problems.push(format!("MEMORY.md is neither version:\n{memory}"));
    }
    let note = read(sandbox, "notes/big.md");
    if note != OLD_NOTE && note != big_note() {
        problems.push(format!("notes/big.md is partial ({} bytes)", note.len()));
    }
    let log = read(sandbox, &today_log());
    let facts = (1..=FACTS)
        .filter(|n| log.contains(&format!("Fact number {n}.")))
        .count();
    if facts != 0 && facts != FACTS {
        problems.push(format!("the daily log holds {facts} of {FACTS} facts"));
    }

    // The next run goes on where the killed one stopped.
    let server = MockServer::respond_with(move |r| recovery(point, r)).await;
    sandbox.write_settings(&settings(point, &server.url()));
    let recover: Vec<&str> = if point == Point::Consolidation {
        vec!["--provider", "loop", "consolidate"]
    } else if before.is_empty() {
        vec!["--provider", "loop", "ask", "Again."]
    } else {
        vec!["--provider", "loop", "ask", "--continue", "Again."]
    };
    let out = sandbox.cairn(&recover).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        problems.push(format!(
            "{recover:?} failed after the kill: {}{}",
            stdout,
            String::from_utf8_lossy(&out.stderr)
        ));
    } else if point != Point::Consolidation && !stdout.contains("Recovered.") {
        problems.push(format!("the next run answered {stdout:?}"));
    }
    for request in server.requests() {
        let body = request.body_json().unwrap_or(Value::Null);
        let open = unanswered_calls(&body);
        if !open.is_empty() {
            problems.push(format!(
                "the model was sent calls without results: {open:?}"
            ));
        }
    }
    let after = saved_lines(sandbox);
    for (path, lines) in &before {
        let now = after.get(path).cloned().unwrap_or_default();
        if !now.starts_with(lines) {
            problems.push(format!(
                "{}: {} saved lines, {} of them kept in order",
                path.display(),
                lines.len(),
                lines.iter().zip(&now).take_while(|(a, b)| a == b).count()
            ));
        }
    }
    if point == Point::Consolidation && read(sandbox, "MEMORY.md") != new_memory {
        problems.push("the next consolidation did not write the merged memory".into());
    }

    let search = sandbox
        .cairn(&["search", "--json", "garden"])
        .output()
        .await
        .unwrap();
    if !search.status.success() {
        problems.push(format!(
            "search failed: {}",
            String::from_utf8_lossy(&search.stderr)
        ));
    }
    problems
}

/// One whole run of `point`: how long it takes, and what MEMORY.md says after it.
async fn calibrate(point: Point) -> (Duration, String) {
    let server = MockServer::respond_with(move |r| answer(point, r)).await;
    let sandbox = prepare(point, &server).await;
    let before = server.requests().len();
    let started = Instant::now();
    let out = sandbox.cairn(&args(point)).output().await.unwrap();
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{point:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The run really reached the point the kills aim at.
    let systems: Vec<String> = server.requests()[before..]
        .iter()
        .map(|r| system_prompt(&r.body_json().unwrap_or(Value::Null)))
        .collect();
    let reached = match point {
        Point::Flush => systems
            .iter()
            .any(|s| s.contains("durable facts worth remembering")),
        Point::Compaction => systems
            .iter()
            .any(|s| s.contains("working memory of an AI assistant")),
        Point::Consolidation => read(&sandbox, "MEMORY.md") != MEMORY_MD,
        Point::WriteFile => read(&sandbox, "notes/big.md") == big_note(),
        Point::Bash => read(&sandbox, "count.txt").lines().count() == 10,
        Point::Stream => String::from_utf8_lossy(&out.stdout).contains("story"),
    };
    assert!(reached, "{point:?}: the whole run did not reach its point");
    (took, read(&sandbox, "MEMORY.md"))
}

/// How many kill points per scenario: `CAIRN_KILL_POINTS`, else 3.
fn points_per_scenario() -> usize {
    std::env::var("CAIRN_KILL_POINTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3)
        .max(1)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_kill_leaves_a_workspace_that_opens_and_goes_on() {
    let per_scenario = points_per_scenario();
    let mut runs = 0;
    let mut cut_short = 0;
    let mut failures = Vec::new();
    for point in POINTS {
        let (whole, new_memory) = calibrate(point).await;
        for k in 0..per_scenario {
            // Spread evenly over the run, first and last points included.
            let fraction = (k as f64 + 0.5) / per_scenario as f64;
            let server = MockServer::respond_with(move |r| answer(point, r)).await;
            let sandbox = prepare(point, &server).await;
            let mut child = sandbox.cairn(&args(point)).spawn().unwrap();
            tokio::time::sleep(whole.mul_f64(fraction)).await;
            let _ = child.start_kill();
            let status = child.wait().await.unwrap();
            runs += 1;
            if status.signal() == Some(9) {
                cut_short += 1;
            }
            let problems = check_after_kill(point, &sandbox, &new_memory).await;
            if !problems.is_empty() {
                failures.push(format!(
                    "{point:?} killed at {:.0}% of {whole:?}:\n  {}",
                    fraction * 100.0,
                    problems.join("\n  ")
                ));
            }
            drop(server);
            // The workspace of a failed case is kept for a look.
            if failures.is_empty() {
                drop(sandbox);
            } else {
                let kept: &Path = sandbox.dir.path();
                eprintln!("kept {}", kept.display());
                std::mem::forget(sandbox);
            }
        }
    }
    println!(
        "kill -9 matrix: {} of {runs} kills survived ({cut_short} hit a running process)",
        runs - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Most kills must land while the process still runs for this test to mean anything.
    assert!(
        cut_short * 3 >= runs * 2,
        "only {cut_short} of {runs} kills hit a running process"
    );
}
