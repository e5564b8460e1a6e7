//! A run killed with SIGKILL goes on with `cairn ask --continue --resume`: from its last
//! checkpoint, with the interrupted call answered, without the request asked again.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use cairn_e2e::{at_server, text_stream, tool_call_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

/// Starts `cairn ask --yes REQUEST` against `server`, waits until the session holds a
/// checkpoint that `ready` accepts, then kills the process with SIGKILL.
async fn kill_when(sandbox: &Sandbox, server: &MockServer, ready: impl Fn(&[Value]) -> bool) {
    let url = server.url();
    let mut args = at_server(&url, "ask");
    args.extend(["--yes", "tidy the notes folder"]);
    let mut child = sandbox.cairn(&args).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let dir = sandbox.workspace().join("sessions");
        let started = std::fs::read_dir(&dir).is_ok_and(|d| d.flatten().count() > 0);
        if started && ready(&sandbox.session_lines()) {
            break;
        }
        assert!(Instant::now() < deadline, "the run never reached the point");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.start_kill().unwrap();
    let status = child.wait().await.unwrap();
    assert!(!status.success());
}

fn checkpoint_at(lines: &[Value], step: u64) -> bool {
    lines
        .iter()
        .any(|l| l["type"] == "checkpoint" && l["run"]["step"] == step)
}

/// `cairn ask --continue --resume` against a server answering `answer`.
async fn resume(sandbox: &Sandbox, answer: &str) -> (std::process::Output, MockServer) {
    let server = MockServer::start(vec![MockResponse::sse(text_stream(answer))]).await;
    let url = server.url();
    let mut args = at_server(&url, "ask");
    args.extend(["--yes", "--continue", "--resume"]);
    let out = sandbox.cairn(&args).output().await.unwrap();
    (out, server)
}

/// The texts of the messages a request sent, after the system prompt.
fn sent(server: &MockServer) -> Vec<String> {
    let body = server.requests()[0].body_json().unwrap();
    body["messages"].as_array().unwrap()[1..]
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_killed_at_a_save_point_goes_on_with_resume() {
    let sandbox = Sandbox::new();
    let write = json!({"path": "notes/plan.md", "content": "# Plan\n"});
    let mut stalled = text_stream("Now I will");
    stalled.truncate(2);
    let server = MockServer::start(vec![
        MockResponse::sse(tool_call_stream("call_w", "write_file", &write, 3)),
        MockResponse::sse_then_stall(stalled),
    ])
    .await;
    // Killed while the second model call streams: the first step's save point, after its
    // call's result, is on disk.
    kill_when(&sandbox, &server, |lines| {
        let result = lines
            .iter()
            .position(|l| l["message"]["role"] == "tool_result");
        result.is_some_and(|at| checkpoint_at(&lines[at..], 1))
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(sandbox.workspace().join("notes/plan.md")).unwrap(),
        "# Plan\n"
    );

    let (out, again) = resume(&sandbox, "Done: the plan is in notes/plan.md.").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Done: the plan is in notes/plan.md.\n"
    );
    assert!(
        stderr.contains("going on with the run interrupted after 1 model call"),
        "{stderr}"
    );
    // The request is not asked again; the write's real result goes with it.
    let sent = sent(&again);
    assert_eq!(
        sent.iter()
            .filter(|m| *m == "tidy the notes folder")
            .count(),
        1,
        "{sent:?}"
    );
    assert!(sent.last().unwrap().contains("notes/plan.md"), "{sent:?}");
    // The run's end is kept with its steps counted across the interruption.
    let lines = sandbox.session_lines();
    let end = lines.iter().rev().find(|l| l["type"] == "run_end").unwrap();
    assert_eq!(end["outcome"]["kind"], "completed");
    assert_eq!(end["steps"], 2);
    // Nothing is left to go on with.
    let (out, _) = resume(&sandbox, "never").await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no interrupted run"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_killed_while_a_tool_runs_goes_on_with_the_call_marked_interrupted() {
    let sandbox = Sandbox::new();
    let sleep = json!({"command": "sleep 30"});
    let server = MockServer::start(vec![MockResponse::sse(tool_call_stream(
        "call_s", "bash", &sleep, 2,
    ))])
    .await;
    kill_when(&sandbox, &server, |lines| {
        lines.iter().any(|l| l["type"] == "tool_started") && checkpoint_at(lines, 1)
    })
    .await;
    let (out, again) = resume(&sandbox, "The sleep was cut short; nothing else to do.").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let sent = sent(&again);
    assert!(
        sent.last().unwrap().starts_with("Interrupted: "),
        "{sent:?}"
    );
    assert_eq!(
        sent.iter()
            .filter(|m| *m == "tidy the notes folder")
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn resume_is_refused_without_a_session_or_with_a_message() {
    let sandbox = Sandbox::new();
    let out = sandbox.cairn(&["ask", "--resume"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = sandbox
        .cairn(&["ask", "--continue", "--resume", "hello"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("takes no message"));
}
