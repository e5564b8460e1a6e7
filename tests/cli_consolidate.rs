//! `cairn consolidate` end to end: the real binary merges a workspace's daily log into
//! MEMORY.md with a model served on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;

use cairn_e2e::{at_server, text_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

const MEMORY_MD: &str = "# Memory\n\n## People\n- Ana leads the garden project.\n\
                         - Ben fixes the bikes.\n\n## Preferences\n- Prefers tea over coffee.\n\
                         - Works from home on Fridays.\n";

const MERGED: &str = "# Memory\n\n## People\n\
                      - Ana leads the garden project; its meeting is on Thursdays.\n\
                      - Ben fixes the bikes.\n\n## Preferences\n- Prefers tea over coffee.\n\
                      - Works from home on Fridays.\n\n## Dates\n- Dentist on March 14.\n";

/// A workspace with MEMORY.md and today's daily log; returns the log's path.
fn workspace(sandbox: &Sandbox) -> String {
    let log = format!("memory/{}.md", chrono::Local::now().format("%Y-%m-%d"));
    write(sandbox, "MEMORY.md", MEMORY_MD);
    write(
        sandbox,
        &log,
        "# Today\n\n- 09:00 — Ana moved the garden meeting to Thursdays.\n\
         - 10:00 — Booked the dentist for March 14.\n",
    );
    log
}

fn write(sandbox: &Sandbox, path: &str, text: &str) {
    let path = sandbox.workspace().join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(sandbox: &Sandbox, path: &str) -> String {
    std::fs::read_to_string(sandbox.workspace().join(path)).unwrap()
}

async fn consolidate(sandbox: &Sandbox, server: &MockServer, extra: &[&str]) -> Output {
    let url = server.url();
    let mut args = at_server(&url, "consolidate");
    args.extend_from_slice(extra);
    sandbox.cairn(&args).output().await.unwrap()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// The report without the fields that vary from run to run.
fn settled(mut report: Value) -> Value {
    report["took_ms"] = json!(0);
    if report["backup"].is_string() {
        report["backup"] = json!("<backup>");
    }
    report
}

#[tokio::test(flavor = "multi_thread")]
async fn consolidate_rewrites_memory_after_a_backup_and_then_finds_nothing_new() {
    let sandbox = Sandbox::new();
    let log = workspace(&sandbox);
    let server = MockServer::start(vec![MockResponse::sse(text_stream(MERGED))]).await;

    let out = consolidate(&sandbox, &server, &["--json"]).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json_of(&out);
    let backup = report["backup"].as_str().unwrap().to_string();
    assert!(backup.starts_with("memory/archive/MEMORY-"), "{backup}");
    assert_eq!(
        settled(report),
        json!({
            "status": "written", "added": 1, "removed": 0, "kept": 4, "backup": "<backup>",
            "merged_logs": [log], "archived_logs": [], "reason": null,
            "chars": MERGED.chars().count(), "added_bullets": ["Dentist on March 14."],
            "removed_bullets": [], "took_ms": 0
        })
    );
    assert_eq!(read(&sandbox, "MEMORY.md"), MERGED);
    assert_eq!(read(&sandbox, &backup), MEMORY_MD);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = requests[0].body_json().unwrap();
    assert_eq!(body["model"], "test-model");
    assert!(body["messages"]
        .to_string()
        .contains("garden meeting to Thursdays"));

    // The log is merged: a second run asks no model.
    let again = consolidate(&sandbox, &server, &[]).await;
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        "nothing new: no daily log changed since the last consolidation\n"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_shows_the_changes_and_writes_nothing() {
    let sandbox = Sandbox::new();
    workspace(&sandbox);
    let server = MockServer::start(vec![
        MockResponse::sse(text_stream(MERGED)),
        MockResponse::sse(text_stream(MERGED)),
    ])
    .await;

    let out = consolidate(&sandbox, &server, &["--dry-run"]).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("dry run: MEMORY.md would get 1 added, 0 removed, 4 kept (1 daily log); nothing was written\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("added:\n  - Dentist on March 14.\n"),
        "{stdout}"
    );
    assert_eq!(read(&sandbox, "MEMORY.md"), MEMORY_MD);
    assert!(!sandbox.workspace().join("memory/archive").exists());

    // The log is still new for a real run.
    let out = consolidate(&sandbox, &server, &["--json"]).await;
    assert_eq!(json_of(&out)["status"], "written");
    assert_eq!(read(&sandbox, "MEMORY.md"), MERGED);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rewrite_over_the_configured_budget_exits_1_with_the_reason() {
    let sandbox = Sandbox::new();
    workspace(&sandbox);
    sandbox.write_settings("[memory]\nmemory_budget_chars = 100\n");
    let server = MockServer::start(vec![MockResponse::sse(text_stream(MERGED))]).await;

    let out = consolidate(&sandbox, &server, &["--json"]).await;
    assert_eq!(out.status.code(), Some(1));
    let report = json_of(&out);
    assert_eq!(report["status"], "rejected");
    assert_eq!(report["backup"], Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the rewrite was rejected: the new MEMORY.md would have"),
        "{stderr}"
    );
    assert!(stderr.contains("over the budget of 100"), "{stderr}");
    assert_eq!(read(&sandbox, "MEMORY.md"), MEMORY_MD);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_failure_exits_1_and_leaves_memory_alone() {
    let sandbox = Sandbox::new();
    workspace(&sandbox);
    let server = MockServer::start(vec![MockResponse::status(401, "bad key")]).await;

    let out = consolidate(&sandbox, &server, &["--json"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the consolidation model failed"),
        "{stderr}"
    );
    assert_eq!(read(&sandbox, "MEMORY.md"), MEMORY_MD);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_is_loaded_only_when_there_are_logs_to_merge() {
    let sandbox = Sandbox::new();
    let model = sandbox.home().join("broken.gguf");
    std::fs::create_dir_all(sandbox.home()).unwrap();
    std::fs::write(&model, "not a model").unwrap();
    sandbox.write_settings(&format!(
        "default_provider = \"here\"\n[providers.here]\nkind = \"local\"\nmodel_path = {:?}\n",
        model.display().to_string()
    ));
    write(&sandbox, "MEMORY.md", MEMORY_MD);

    // Nothing to merge: the run answers without touching the model file.
    let out = sandbox.cairn(&["consolidate"]).output().await.unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "nothing new: no daily log changed since the last consolidation\n"
    );

    // A log to merge needs the model: its failure is named and nothing is written.
    let log = workspace(&sandbox);
    let out = sandbox.cairn(&["consolidate"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the local model `") && stderr.contains("could not be loaded"),
        "{stderr}"
    );
    // Said once, with what to do once.
    assert_eq!(
        stderr.matches("not a GGUF model file").count(),
        1,
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("scripts/fetch-model.sh").count(),
        1,
        "{stderr}"
    );
    assert_eq!(read(&sandbox, "MEMORY.md"), MEMORY_MD);
    assert!(!read(&sandbox, &log).is_empty());
    let archive = sandbox.workspace().join("memory/archive");
    assert!(!archive.exists() || std::fs::read_dir(archive).unwrap().next().is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_consolidates_in_the_background_and_on_request() {
    use tokio::io::AsyncWriteExt;
    let sandbox = Sandbox::new();
    sandbox.write_settings("[memory]\nflush = true\n");
    workspace(&sandbox);
    let server = MockServer::start(vec![MockResponse::sse(text_stream(MERGED))]).await;
    let url = server.url();
    let args = at_server(&url, "chat");
    let mut child = sandbox
        .cairn(&args)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"/consolidate\n/exit\n").await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("consolidating MEMORY.md"), "{stderr}");
    // The first run (at start, none had run before) merged the log; the one asked for
    // found nothing new. Either way the model was asked once.
    assert_eq!(read(&sandbox, "MEMORY.md"), MERGED);
    assert_eq!(server.requests().len(), 1, "{stderr}");
    let backups = std::fs::read_dir(sandbox.workspace().join("memory/archive"))
        .unwrap()
        .count();
    assert_eq!(backups, 1);
}
