//! Many processes on one workspace at once: runs that flush memory, searches that bring
//! the index up to date, and a consolidation, round after round. Nothing may fail or be
//! lost: every run answers and keeps its session, every flushed fact reaches the daily
//! log, MEMORY.md is whole, and the index holds every file once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use cairn_e2e::{text_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer, RecordedRequest};
use serde_json::Value;

const ROUNDS: usize = 3;
const RUNS: usize = 4;
const MERGED_HEAD: &str = "# Memory\n\n## Facts\n";

fn answer(request: &RecordedRequest) -> MockResponse {
    let body = request.body_json().unwrap_or(Value::Null);
    let system = body["messages"][0]["content"].as_str().unwrap_or("");
    let text = body["messages"].to_string();
    let asked = |n: usize, r: usize| text.contains(&format!("Question {r}.{n}?"));
    if system.contains("durable facts worth remembering") {
        // The fact of each question in the excerpt.
        let facts: String = (0..ROUNDS)
            .flat_map(|r| (0..RUNS).map(move |n| (r, n)))
            .filter(|(r, n)| asked(*n, *r))
            .map(|(r, n)| format!("- Fact {r}.{n} holds.\n"))
            .collect();
        return MockResponse::sse(text_stream(if facts.is_empty() {
            "NOTHING"
        } else {
            &facts
        }));
    }
    if system.contains("You maintain MEMORY.md") {
        // Keeps every fact the logs hold.
        let mut merged = MERGED_HEAD.to_string();
        for r in 0..ROUNDS {
            for n in 0..RUNS {
                if text.contains(&format!("Fact {r}.{n} holds.")) {
                    merged.push_str(&format!("- Fact {r}.{n} holds.\n"));
                }
            }
        }
        return MockResponse::sse(text_stream(&merged));
    }
    MockResponse::sse(text_stream("Answered."))
}

async fn output(sandbox: &Sandbox, args: Vec<String>) -> (Vec<String>, std::process::Output) {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sandbox.cairn(&refs).output().await.unwrap();
    (args, out)
}

fn today_log(sandbox: &Sandbox) -> String {
    let name = format!("memory/{}.md", chrono::Local::now().format("%Y-%m-%d"));
    std::fs::read_to_string(sandbox.workspace().join(name)).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_searches_and_consolidation_share_a_workspace_without_loss() {
    let sandbox = Sandbox::new();
    let server = MockServer::respond_with(answer).await;
    sandbox.write_settings(&format!(
        "[providers.loop]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n\n\
         [memory]\nflush = true\nconsolidation_interval_hours = 0\nmax_dropped_share = 1.0\n",
        server.url()
    ));
    let mut failures = Vec::new();
    for round in 0..ROUNDS {
        let mut jobs = Vec::new();
        for n in 0..RUNS {
            let question = format!("Question {round}.{n}?");
            jobs.push(
                ["--provider", "loop", "ask", &question]
                    .map(String::from)
                    .to_vec(),
            );
        }
        for word in ["question", "fact", "memory"] {
            jobs.push(["search", "--json", word].map(String::from).to_vec());
        }
        jobs.push(
            ["--provider", "loop", "consolidate"]
                .map(String::from)
                .to_vec(),
        );
        let all = futures::future::join_all(jobs.into_iter().map(|args| output(&sandbox, args)));
        for (args, out) in all.await {
            if !out.status.success() {
                failures.push(format!(
                    "{args:?}: {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // Every run kept its session, with its question and answer.
    let sessions: Vec<String> = std::fs::read_dir(sandbox.workspace().join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    for round in 0..ROUNDS {
        for n in 0..RUNS {
            let question = format!("Question {round}.{n}?");
            let kept = sessions
                .iter()
                .filter(|s| s.contains(&question) && s.contains("Answered."))
                .count();
            assert_eq!(kept, 1, "{question} is in {kept} sessions");
        }
    }
    // Every flushed fact reached the daily log, and MEMORY.md is a whole rewrite.
    let log = today_log(&sandbox);
    let lost: Vec<String> = (0..ROUNDS)
        .flat_map(|r| (0..RUNS).map(move |n| format!("- Fact {r}.{n} holds.")))
        .filter(|fact| !log.contains(fact.as_str()))
        .collect();
    assert!(lost.is_empty(), "facts lost: {lost:?}\n{log}");
    let memory = std::fs::read_to_string(sandbox.workspace().join("MEMORY.md")).unwrap();
    assert!(memory.starts_with(MERGED_HEAD), "{memory}");
    let facts: BTreeSet<&str> = memory.lines().filter(|l| l.starts_with("- Fact")).collect();
    assert_eq!(
        facts.len(),
        memory.lines().filter(|l| l.starts_with("- ")).count()
    );

    // The index holds every file once: indexing again changes nothing.
    let index = |sandbox: &Sandbox| {
        let out = sandbox.cairn(&["index", "--json"]).output();
        async move {
            let out = out.await.unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            serde_json::from_slice::<Value>(&out.stdout).unwrap()
        }
    };
    index(&sandbox).await;
    let again = index(&sandbox).await;
    assert_eq!(again["changed"], 0, "{again}");
    let found = sandbox
        .cairn(&[
            "search", "--json", "--limit", "100", "--corpus", "sessions", "Answered",
        ])
        .output()
        .await
        .unwrap();
    let found: Value = serde_json::from_slice(&found.stdout).unwrap();
    let hits: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    let unique: BTreeSet<&&str> = hits.iter().collect();
    assert_eq!(unique.len(), ROUNDS * RUNS, "{hits:?}");
}
