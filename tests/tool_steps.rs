//! What the shell and trust tests share: `cairn ask go` against a loopback model that makes
//! one step of tool calls and then answers, and the tool results it was sent back.

use cairn_e2e::{text_stream, tool_calls_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer};
use serde_json::{json, Value};

/// `cairn ask [--yes] go` against `server`, with `env` set for the process.
pub async fn ask_go(
    sandbox: &Sandbox,
    server: &MockServer,
    yes: bool,
    env: &[(&str, &str)],
) -> std::process::Output {
    let url = server.url();
    let mut args = vec![
        "--provider",
        "openai",
        "--base-url",
        &url,
        "--model",
        "m",
        "ask",
    ];
    if yes {
        args.push("--yes");
    }
    args.push("go");
    let mut command = sandbox.cairn(&args);
    command.envs(env.iter().copied());
    command.output().await.unwrap()
}

/// One model turn making `calls` (tool name, arguments), then a closing answer.
pub fn step(calls: &[(&str, Value)]) -> Vec<MockResponse> {
    let ids: Vec<String> = (0..calls.len()).map(|n| format!("call_{n}")).collect();
    let calls: Vec<(&str, &str, Value)> = calls
        .iter()
        .zip(&ids)
        .map(|((name, args), id)| (id.as_str(), *name, args.clone()))
        .collect();
    vec![
        MockResponse::sse(tool_calls_stream(&calls)),
        MockResponse::sse(text_stream("Done.")),
    ]
}

/// A `bash` call of `line`.
pub fn bash(line: &str) -> (&'static str, Value) {
    ("bash", json!({ "command": line }))
}

/// The tool results the model was sent back last, in call order.
pub fn tool_results(server: &MockServer) -> Vec<String> {
    let requests = server.requests();
    let body = requests.last().unwrap().body_json().unwrap();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}
