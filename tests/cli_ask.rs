//! `cairn ask` end to end: the real binary against an OpenAI-compatible server on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_e2e::{first_tool_result, interrupt, text_stream, tool_call_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

fn openai_args(server: &MockServer) -> Vec<String> {
    vec![
        "--provider".into(),
        "openai".into(),
        "--base-url".into(),
        server.url(),
        "--model".into(),
        "test-model".into(),
    ]
}

async fn ask(sandbox: &Sandbox, server: &MockServer, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<String> = openai_args(server);
    args.push("ask".into());
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sandbox.cairn(&args).output().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_tool_call_runs_and_every_call_is_answered() {
    let sandbox = Sandbox::new();
    let arguments = json!({"path": "notes/plan.md", "content": "# Plan\n- ship it\n"});
    let server = MockServer::start(vec![
        MockResponse::sse(tool_call_stream("call_abc", "write_file", &arguments, 5)),
        MockResponse::sse(text_stream("I wrote notes/plan.md for you.")),
    ])
    .await;
    let out = ask(&sandbox, &server, &["--yes", "Write", "a", "plan"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "I wrote notes/plan.md for you.\n"
    );
    assert!(stderr.contains("write_file(notes/plan.md)"), "{stderr}");

    // The tool really ran, inside the workspace.
    let written = std::fs::read_to_string(sandbox.workspace().join("notes/plan.md")).unwrap();
    assert_eq!(written, "# Plan\n- ship it\n");

    // The server saw the tool call answered in its second request.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].body_json().unwrap();
    assert_eq!(first["model"], "test-model");
    assert_eq!(first["stream"], true);
    assert!(first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["function"]["name"] == "bash"));
    let messages = requests[1].body_json().unwrap()["messages"]
        .as_array()
        .unwrap()
        .clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    assert_eq!(messages[1]["content"], "Write a plan");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_abc");
    let sent_args: Value = serde_json::from_str(
        messages[2]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(sent_args, arguments);
    assert_eq!(messages[3]["tool_call_id"], "call_abc");
    assert!(messages[3]["content"]
        .as_str()
        .unwrap()
        .contains("notes/plan.md"));

    // The session file holds the whole exchange.
    let lines = sandbox.session_lines();
    assert_eq!(lines[0]["type"], "session");
    let kinds: Vec<String> = lines[1..]
        .iter()
        .map(|l| match l["type"].as_str().unwrap() {
            "message" => format!("message:{}", l["message"]["role"].as_str().unwrap()),
            other => other.to_string(),
        })
        .collect();
    // The run's checkpoints (one per save point) are where they were written.
    assert_eq!(
        kinds[..9],
        [
            "message:user",
            "checkpoint",
            "message:assistant",
            "tool_started",
            "checkpoint",
            "message:tool_result",
            "checkpoint",
            "message:assistant",
            "checkpoint",
        ]
    );
    // How the run ended and the title, whichever is written first.
    let mut after: Vec<&str> = kinds[9..].iter().map(String::as_str).collect();
    after.sort_unstable();
    assert_eq!(after, ["run_end", "session_info"]);
    assert_eq!(lines[6]["message"]["call_id"], "call_abc");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_terminal_tools_that_need_approval_are_denied_and_the_model_is_told() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![
        MockResponse::sse(tool_call_stream(
            "call_1",
            "bash",
            &json!({"command": "touch pwned"}),
            2,
        )),
        MockResponse::sse(text_stream("I was not allowed to run it.")),
    ])
    .await;
    let out = ask(&sandbox, &server, &["run", "it"]).await;
    assert_eq!(out.status.code(), Some(0));
    assert!(!sandbox.workspace().join("pwned").exists());
    let messages = server.requests()[1].body_json().unwrap()["messages"].clone();
    let tool = &messages[3];
    assert_eq!(tool["role"], "tool");
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("did not approve"),
        "{tool}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
}

#[tokio::test(flavor = "multi_thread")]
async fn json_mode_prints_one_event_per_line_ending_with_agent_end() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![MockResponse::sse(text_stream("Paris."))]).await;
    let out = ask(&sandbox, &server, &["--json", "capital", "of", "France?"]).await;
    assert_eq!(out.status.code(), Some(0));
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.first().unwrap()["type"], "agent_start");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "agent_end");
    assert_eq!(last["outcome"], json!({"kind": "completed"}));
    assert_eq!(last["summary"]["steps"], 1);
    assert_eq!(last["summary"]["input_tokens"], 20);
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "message_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Paris.");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_another_process_is_writing_is_refused_untouched() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![MockResponse::sse(text_stream("Hello."))]).await;
    assert_eq!(ask(&sandbox, &server, &["Hi"]).await.status.code(), Some(0));
    let id = sandbox.session_lines()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let lock = sandbox
        .workspace()
        .join(format!(".cairn/locks/session-{id}.lock"));
    // Another process (here a Python one) holds the session's lock.
    let mut holder = tokio::process::Command::new("python3")
        .args([
            "-c",
            "import fcntl, sys, time\n\
             f = open(sys.argv[1], 'a')\n\
             fcntl.flock(f, fcntl.LOCK_EX)\n\
             print('locked', flush=True)\n\
             time.sleep(60)",
        ])
        .arg(&lock)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut said = String::new();
    use tokio::io::AsyncBufReadExt;
    tokio::io::BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut said)
        .await
        .unwrap();
    assert_eq!(said, "locked\n");
    let before = sandbox.session_lines();
    let out = ask(&sandbox, &server, &["--continue", "More?"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is open in another Cairn process"),
        "{stderr}"
    );
    assert_eq!(sandbox.session_lines(), before);
    assert_eq!(server.requests().len(), 1, "no model call was made");
    holder.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_resumes_the_latest_session() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![
        MockResponse::sse(text_stream("Noted: your name is Ada.")),
        MockResponse::sse(text_stream("Your name is Ada.")),
    ])
    .await;
    assert_eq!(
        ask(&sandbox, &server, &["My", "name", "is", "Ada"])
            .await
            .status
            .code(),
        Some(0)
    );
    let out = ask(
        &sandbox,
        &server,
        &["--continue", "What", "is", "my", "name?"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0));
    let messages = server.requests()[1].body_json().unwrap()["messages"].clone();
    let texts: Vec<&str> = messages.as_array().unwrap()[1..]
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        [
            "My name is Ada",
            "Noted: your name is Ada.",
            "What is my name?"
        ]
    );
    let list = sandbox
        .cairn(&["sessions", "list", "--json"])
        .output()
        .await
        .unwrap();
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["messages"], 4);
    assert_eq!(list[0]["title"], "My name is Ada");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_thinking_level_is_asked_for_recorded_and_kept_when_continued() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(
        (0..3)
            .map(|_| MockResponse::sse(text_stream("ok")))
            .collect(),
    )
    .await;
    let runs: [&[&str]; 3] = [
        &["--thinking", "high", "one"],
        &["--continue", "two"],
        &["--continue", "--thinking", "off", "three"],
    ];
    for args in runs {
        let out = ask(&sandbox, &server, args).await;
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let efforts: Vec<Option<String>> = server
        .requests()
        .iter()
        .map(|r| {
            r.body_json().unwrap()["reasoning_effort"]
                .as_str()
                .map(String::from)
        })
        .collect();
    assert_eq!(
        efforts,
        [Some("high".to_string()), Some("high".to_string()), None]
    );
    let id = sandbox.session_lines()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let show = sandbox
        .cairn(&["sessions", "show", &id])
        .output()
        .await
        .unwrap();
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(shown.contains("[thinking: high]"), "{shown}");
    assert!(shown.contains("[thinking: off]"), "{shown}");
    // A level that does not exist is a usage error, and nothing is asked.
    let out = ask(&sandbox, &server, &["--thinking", "extreme", "x"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("off, low, medium or high"));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn exit_status_tells_how_the_run_ended() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![
        MockResponse::sse(tool_call_stream("c1", "list_dir", &json!({"path": "."}), 1)),
        MockResponse::status(
            401,
            r#"{"error": {"message": "Incorrect API key provided"}}"#,
        ),
    ])
    .await;
    // The step budget ends the run: 3.
    let out = ask(&sandbox, &server, &["--max-steps", "1", "look"]).await;
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A provider failure: 1, with the reason.
    let out = ask(&sandbox, &server, &["hello"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Incorrect API key"));
    // Usage errors: 2.
    assert_eq!(ask(&sandbox, &server, &[]).await.status.code(), Some(2));
    assert_eq!(
        ask(&sandbox, &server, &["--max-steps", "0", "x"])
            .await
            .status
            .code(),
        Some(2)
    );
    let out = sandbox.cairn(&["ask", "--bogus"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_stops_the_run_keeps_what_was_said_and_exits_130() {
    let sandbox = Sandbox::new();
    let mut partial = text_stream("Once upon a time");
    partial.truncate(3);
    let server = MockServer::start(vec![MockResponse::sse_then_stall(partial)]).await;
    let mut args = openai_args(&server);
    args.extend(["ask".to_string(), "tell me a story".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = sandbox.cairn(&args).spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("upon") {
        let mut buf = [0u8; 64];
        let n = tokio::io::AsyncReadExt::read(&mut stdout, &mut buf)
            .await
            .unwrap();
        assert!(n > 0, "stream ended early");
        seen.extend_from_slice(&buf[..n]);
    }
    let status = interrupt(&mut child, std::time::Duration::from_secs(10)).await;
    assert_eq!(status.code(), Some(130));
    let lines = sandbox.session_lines();
    let assistant = lines
        .iter()
        .find(|l| l["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(assistant["message"]["stop_reason"], "aborted");
    assert_eq!(assistant["message"]["content"][0]["text"], "Once upon ");
    // How the run ended is kept, and said when the session is shown again.
    let id = lines[0]["id"].as_str().unwrap().to_string();
    let show = |json: bool| {
        let mut args = vec!["sessions", "show", id.as_str()];
        if json {
            args.push("--json");
        }
        sandbox.cairn(&args).output()
    };
    let shown: serde_json::Value =
        serde_json::from_slice(&show(true).await.unwrap().stdout).unwrap();
    assert_eq!(shown["last_run"]["outcome"]["kind"], "aborted", "{shown}");
    assert_eq!(shown["last_run"]["steps"], 1, "{shown}");
    assert_eq!(shown["last_run"]["said"], "stopped by you after 1 step");
    let text = String::from_utf8_lossy(&show(false).await.unwrap().stdout).into_owned();
    assert!(
        text.trim_end().ends_with("[stopped by you after 1 step]"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn after_the_answer_the_flush_writes_the_fact_to_todays_log() {
    let sandbox = Sandbox::new();
    sandbox.write_settings("[memory]\nflush = true\n");
    let server = MockServer::start(vec![
        MockResponse::sse(text_stream("Nice name!")),
        MockResponse::sse(text_stream("- The user's dog is called Rex.")),
    ])
    .await;
    let out = ask(&sandbox, &server, &["My", "dog", "is", "called", "Rex"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Nice name!\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{stderr}");
    let flush = requests[1].body_json().unwrap();
    let asked = flush["messages"].to_string();
    assert!(asked.contains("User: My dog is called Rex"), "{asked}");
    assert!(
        flush["tools"].is_null() || flush["tools"] == json!([]),
        "{flush}"
    );
    let today = the_daily_log(&sandbox);
    let log = std::fs::read_to_string(&today).unwrap();
    assert!(log.contains("\n- The user's dog is called Rex.\n"), "{log}");
    assert!(log.contains("](../sessions/"), "{log}");
}

/// Today's log: the one daily log in the sandbox's workspace.
fn the_daily_log(sandbox: &Sandbox) -> std::path::PathBuf {
    let dir = sandbox.workspace().join("memory");
    let logs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs.into_iter().next().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retried_call_says_so_and_when() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![
        MockResponse::status(503, "busy, try again"),
        MockResponse::sse(text_stream("Here after all.")),
    ])
    .await;
    let out = ask(&sandbox, &server, &["hello"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Here after all.\n");
    assert!(
        stderr.contains("cairn: retrying in 1 s (attempt 1): "),
        "{stderr}"
    );

    let server = MockServer::start(vec![
        MockResponse::status(503, "busy"),
        MockResponse::sse(text_stream("ok")),
    ])
    .await;
    let out = ask(&sandbox, &server, &["--json", "hello"]).await;
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let retry = events.iter().find(|e| e["type"] == "retry").unwrap();
    assert_eq!(retry["attempt"], 1);
    assert!(retry["delay_ms"].as_u64().unwrap() <= 1000);
    let phases: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "phase_changed")
        .map(|e| e["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, vec!["turn", "retry", "turn", "idle"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fetched_page_reaches_the_model_as_untrusted_markdown() {
    let sandbox = Sandbox::new();
    let page = MockServer::start(vec![MockResponse::status(
        200,
        "<html><head><title>Opening hours</title></head><body><article><h1>Opening hours</h1>\
         <p>The library opens at <strong>nine</strong> on weekdays and at ten on Saturdays; it \
         stays closed on Sundays and on public holidays all year.</p></article></body></html>",
    )
    .with_header("content-type", "text/html")])
    .await;
    let url = format!("{}/hours.html", page.url());
    let model = MockServer::start(vec![
        MockResponse::sse(tool_call_stream(
            "call_f",
            "web_fetch",
            &json!({"url": url}),
            3,
        )),
        MockResponse::sse(text_stream("It opens at nine.")),
    ])
    .await;
    sandbox.write_settings("[web]\nallow_private = true\n");
    let out = ask(
        &sandbox,
        &model,
        &["--yes", "When", "does", "the", "library", "open?"],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let result = first_tool_result(&model.requests()[1].body_json().unwrap());
    assert!(
        result.contains("Untrusted content fetched from"),
        "{result}"
    );
    assert!(result.contains("**nine**"), "{result}");
    assert_eq!(page.requests().len(), 1);

    // Without allow_private the same page is refused before anything is sent.
    let refused = MockServer::start(vec![
        MockResponse::sse(tool_call_stream(
            "call_g",
            "web_fetch",
            &json!({"url": url}),
            1,
        )),
        MockResponse::sse(text_stream("Could not.")),
    ])
    .await;
    sandbox.write_settings("");
    let out = ask(&sandbox, &refused, &["--yes", "Again?"]).await;
    assert_eq!(out.status.code(), Some(0));
    let second = refused.requests()[1].body_json().unwrap().to_string();
    assert!(second.contains("a loopback address"), "{second}");
    assert_eq!(page.requests().len(), 1);
}
