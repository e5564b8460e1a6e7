//! Subagents end to end: `cairn ask` against an OpenAI-compatible server on 127.0.0.1,
//! the parent starting two subagents in the background and collecting both.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_e2e::{text_stream, tool_calls_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer, RecordedRequest};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

const ROLE: &str = "# Your role: the subagent `";

/// The messages of a request.
fn messages(request: &RecordedRequest) -> Vec<Value> {
    request.body_json().unwrap()["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

fn role_text(request: &RecordedRequest, role: &str) -> Vec<String> {
    messages(request)
        .iter()
        .filter(|m| m["role"] == role)
        .map(text_of)
        .collect()
}

/// The model: the parent spawns two subagents, collects both, then answers with both
/// answers; a subagent answers its task in capitals.
fn answer(request: &RecordedRequest) -> MockResponse {
    let system = role_text(request, "system").join("\n");
    if system.contains(ROLE) {
        let task = role_text(request, "user")
            .last()
            .cloned()
            .unwrap_or_default();
        return MockResponse::sse(text_stream(&format!("DONE: {}", task.to_uppercase())));
    }
    let results = role_text(request, "tool");
    match results.len() {
        0 => MockResponse::sse(tool_calls_stream(&[
            (
                "call_a",
                "agent_spawn",
                json!({"agent": "helper", "task": "count the apples"}),
            ),
            (
                "call_b",
                "agent_spawn",
                json!({"agent": "helper", "task": "count the pears"}),
            ),
        ])),
        2 => {
            let ids: Vec<String> = results
                .iter()
                .map(|r| {
                    serde_json::from_str::<Value>(r).unwrap()["task_id"]
                        .as_str()
                        .unwrap()
                        .to_string()
                })
                .collect();
            MockResponse::sse(tool_calls_stream(&[
                ("call_c", "task_output", json!({"task_id": ids[0]})),
                ("call_d", "task_output", json!({"task_id": ids[1]})),
            ]))
        }
        _ => {
            let answers: Vec<String> = results[2..]
                .iter()
                .map(|r| {
                    serde_json::from_str::<Value>(r).unwrap()["report"]["answer"]
                        .as_str()
                        .unwrap()
                        .to_string()
                })
                .collect();
            MockResponse::sse(text_stream(&answers.join(" and ")))
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_parent_collects_two_background_subagents_with_linked_sessions() {
    let sandbox = Sandbox::new();
    let helper =
        "---\ndescription: Does one small task\ntools: [read_file]\n---\nAnswer briefly.\n";
    let folder = sandbox.workspace().join("subagents");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("helper.md"), helper).unwrap();
    let server = MockServer::respond_with(answer).await;
    let out = sandbox
        .cairn(&[
            "--provider",
            "openai",
            "--base-url",
            &server.url(),
            "--model",
            "test-model",
            "ask",
            "--yes",
            "Count",
            "the",
            "fruit",
        ])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stdout, "DONE: COUNT THE APPLES and DONE: COUNT THE PEARS\n",
        "{stderr}"
    );
    // The subagents' activity is shown prefixed, on stderr.
    assert!(
        stderr.contains("[helper] started on openai/test-model"),
        "{stderr}"
    );
    assert!(stderr.contains("[helper] done"), "{stderr}");

    // The parent lists the subagent among its context.
    let first = &server.requests()[0];
    assert!(role_text(first, "system")[0].contains("- helper: Does one small task"));

    // Three sessions: the parent's and two children linked to it.
    let list = sandbox
        .cairn(&["sessions", "list", "--json", "--all"])
        .output()
        .await
        .unwrap();
    let all: Vec<Value> = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(all.len(), 3, "{all:?}");
    let parent = all
        .iter()
        .find(|s| s.get("parent_session").is_none())
        .unwrap();
    let children: Vec<&Value> = all
        .iter()
        .filter(|s| s.get("parent_session").is_some())
        .collect();
    assert_eq!(children.len(), 2);
    for child in &children {
        assert_eq!(child["parent_session"], parent["id"]);
        let path = sandbox
            .workspace()
            .join("sessions")
            .join(format!("{}.jsonl", child["id"].as_str().unwrap()));
        let header: Value = serde_json::from_str(
            std::fs::read_to_string(path)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(header["parent"]["session_id"], parent["id"]);
        assert_eq!(header["parent"]["agent"], "helper");
        assert!(header["parent"]["entry_id"].is_string());
    }
    // Without --all only the parent is listed.
    let list = sandbox
        .cairn(&["sessions", "list", "--json"])
        .output()
        .await
        .unwrap();
    let shown: Vec<Value> = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0]["id"], parent["id"]);
}
