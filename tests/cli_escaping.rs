//! Text from a model or a server reaches the terminal escaped: no clipboard writes, cursor
//! moves or overwritten lines, however the escape sequences are split; `--json` keeps the
//! exact text. The real binary against an OpenAI-compatible server on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_e2e::{chunk, text_stream, tool_call_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

const ESC: u8 = 0x1b;

async fn ask(sandbox: &Sandbox, server: &MockServer, extra: &[&str]) -> std::process::Output {
    sandbox.ask(&server.url(), extra).output().await.unwrap()
}

/// An answer whose escape sequences (an OSC 52 clipboard write, a cursor move, a carriage
/// return that would overwrite the line) are split across stream chunks.
fn hostile_answer() -> Vec<String> {
    let mut events = text_stream("");
    let pieces = [
        "Copied!\x1b]52;c;cHduZWQ=",
        "\x07 Now up\x1b",
        "[3A\rroot# ",
    ];
    for (at, piece) in pieces.iter().enumerate() {
        events.insert(1 + at, chunk(json!({ "content": piece }), None));
    }
    events
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_answer_cannot_drive_the_terminal() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![MockResponse::sse(hostile_answer())]).await;
    let out = ask(&sandbox, &server, &["hello"]).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.stdout.contains(&ESC),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Copied!\\x1b]52;c;cHduZWQ=\\x07 Now up\\x1b[3A\\rroot# \n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn json_output_keeps_the_exact_answer() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![MockResponse::sse(hostile_answer())]).await;
    let out = ask(&sandbox, &server, &["--json", "hello"]).await;
    assert_eq!(out.status.code(), Some(0));
    assert!(!out.stdout.contains(&ESC));
    let text: String = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "message_delta")
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(text, "Copied!\x1b]52;c;cHduZWQ=\x07 Now up\x1b[3A\rroot# ");
}

#[tokio::test(flavor = "multi_thread")]
async fn session_views_show_titles_and_answers_escaped() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![MockResponse::sse(hostile_answer())]).await;
    let out = ask(&sandbox, &server, &["fix\x1b]0;pwned\x07", "the", "build"]).await;
    assert_eq!(out.status.code(), Some(0));
    let id = sandbox.session_lines()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    for view in [
        vec!["sessions", "list"],
        vec!["sessions", "show", &id],
        vec!["sessions", "tree", &id],
    ] {
        let out = sandbox.cairn(&view).output().await.unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{view:?}");
        assert!(!out.stdout.contains(&ESC), "{view:?}: {stdout:?}");
        assert!(
            stdout.contains("fix\\x1b]0;pwned\\x07 the build"),
            "{view:?}: {stdout}"
        );
    }
    let show = sandbox
        .cairn(&["sessions", "show", &id])
        .output()
        .await
        .unwrap();
    let show = String::from_utf8_lossy(&show.stdout);
    assert!(
        show.contains("cairn: Copied!\\x1b]52;c;cHduZWQ=\\x07 Now up\\x1b[3A\\rroot# "),
        "{show}"
    );
}

/// A tool name that would write the clipboard, and how the terminal must show it.
const EVIL_TOOL: &str = "evil\x1b]52;c;cHduZWQ=\x07";
const EVIL_TOOL_SHOWN: &str = "evil\\x1b]52;c;cHduZWQ=\\x07";

#[tokio::test(flavor = "multi_thread")]
async fn tool_names_and_exports_of_a_session_are_escaped() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![
        MockResponse::sse(tool_call_stream("call_1", EVIL_TOOL, &json!({}), 1)),
        MockResponse::sse(hostile_answer()),
    ])
    .await;
    let out = ask(&sandbox, &server, &["hello"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!out.stderr.contains(&ESC), "{stderr:?}");
    assert!(
        stderr.contains(&format!("⏺ {EVIL_TOOL_SHOWN}({{}})")),
        "the tool line names the call: {stderr}"
    );
    let id = sandbox.session_lines()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    for (view, shown) in [
        (
            vec!["sessions", "show", &id],
            format!("⏺ {EVIL_TOOL_SHOWN}({{}})"),
        ),
        (
            vec!["sessions", "tree", &id],
            format!("[{EVIL_TOOL_SHOWN}]"),
        ),
        (
            vec!["sessions", "export", &id],
            format!("**Tool call** `{EVIL_TOOL_SHOWN}`"),
        ),
    ] {
        let out = sandbox.cairn(&view).output().await.unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{view:?}");
        assert!(!out.stdout.contains(&ESC), "{view:?}: {stdout:?}");
        assert!(!out.stderr.contains(&ESC), "{view:?}");
        assert!(stdout.contains(&shown), "{view:?} shows {shown}: {stdout}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_error_that_quotes_the_server_is_escaped() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![MockResponse::status(
        400,
        r#"{"error": {"message": "bad request\u001b[2J\u001b]52;c;eA==\u0007"}}"#,
    )])
    .await;
    let out = ask(&sandbox, &server, &["hello"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!out.stderr.contains(&ESC), "{stderr:?}");
    assert!(
        stderr.contains("bad request\\x1b[2J\\x1b]52;c;eA==\\x07"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn model_names_from_a_server_are_escaped() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![MockResponse::json(
        200,
        json!({"object": "list", "data": [{"id": "alpha"}, {"id": "beta\u{1b}[2J"}]}),
    )])
    .await;
    sandbox.write_settings(&format!(
        "default_provider = \"box\"\n[providers.box]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"alpha\"\n",
        server.url()
    ));
    let out = sandbox.cairn(&["models"]).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(!out.stdout.contains(&ESC), "{stdout:?}");
    assert!(stdout.contains("    beta\\x1b[2J\n"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_error_about_a_file_names_the_line_and_never_prints_its_bytes() {
    let sandbox = Sandbox::new();
    sandbox.write_settings("model = 1\x1b[2J\n");
    let out = sandbox.cairn(&["sessions", "list"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!out.stderr.contains(&ESC), "{stderr:?}");
    assert!(!stderr.contains("[2J"), "{stderr}");
    assert!(stderr.contains("config.toml: line 1:"), "{stderr}");
}
