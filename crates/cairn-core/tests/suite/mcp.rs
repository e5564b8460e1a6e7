//! MCP servers' tools in runs: offered with their schemas, asked about, and every way a
//! server can fail ending as an error result or a notice, never a hung run.

use std::sync::Arc;

use cairn_core::mcp::{HubOptions, McpHub, McpServerSettings, McpSettings};
use cairn_core::Policy;
use cairn_llm::ScriptedTurn;
use cairn_protocol::{AgentEvent, ApprovalDecision, McpState, Message, Outcome};
use cairn_testkit::mcp::{everything, flaky};
use serde_json::json;

use super::support::harness;

pub(super) fn server((command, args): (String, Vec<String>)) -> McpServerSettings {
    McpServerSettings {
        command: Some(command),
        args,
        approval: Some(Policy::Allow),
        ..Default::default()
    }
}

fn hub(servers: Vec<(&str, McpServerSettings)>) -> Arc<McpHub> {
    hub_with(servers, HubOptions::default())
}

pub(super) fn hub_with(
    servers: Vec<(&str, McpServerSettings)>,
    options: HubOptions,
) -> Arc<McpHub> {
    let settings = McpSettings {
        servers: servers
            .into_iter()
            .map(|(name, s)| (name.to_string(), s))
            .collect(),
    };
    Arc::new(McpHub::new(&settings, options))
}

pub(super) fn call(name: &str, args: serde_json::Value) -> ScriptedTurn {
    ScriptedTurn::tool_call(name, args)
}

/// A tool result's whole text.
pub(super) fn full(message: &Message) -> String {
    match message {
        Message::ToolResult(r) => {
            format!("{}{}", if r.is_error { "error: " } else { "" }, r.content)
        }
        other => panic!("not a tool result: {other:?}"),
    }
}

fn notices(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_tool_with_a_nested_schema_is_offered_whole_and_called() {
    let order = json!({"items": [{"sku": "A-1", "qty": 2}], "ship": {"city": "Oslo"}});
    let hub = hub(vec![("flaky", server(flaky(&[])))]);
    let mut h = harness(vec![
        call("flaky__nested", json!({ "order": order })),
        ScriptedTurn::text("sent"),
    ])
    .mcp(hub.clone())
    .build()
    .await;
    let report = h.agent.prompt("order two").await.unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
    let requests = h.requests();
    let spec = requests[0]
        .tools
        .iter()
        .find(|t| t.name == "flaky__nested")
        .expect("the server's tool is offered");
    assert_eq!(
        spec.parameters["properties"]["order"]["properties"]["items"]["items"]["properties"]["qty"]
            ["minimum"],
        json!(1)
    );
    assert!(spec.description.contains("[MCP server `flaky`]"));
    let result = full(&requests[1].messages[2]);
    assert!(result.contains("untrusted"), "{result}");
    assert!(
        result
            .contains(r#"order: {"items": [{"qty": 2, "sku": "A-1"}], "ship": {"city": "Oslo"}}"#),
        "{result}"
    );
    assert!(notices(&h.drain()).is_empty());
    hub.shutdown().await;
}

#[tokio::test]
async fn a_server_that_crashes_mid_call_gives_an_error_and_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let hub = hub(vec![(
        "flaky",
        server(flaky(&["--count", starts.to_str().unwrap()])),
    )]);
    let h = harness(vec![
        call("flaky__crash", json!({})),
        call("flaky__echo", json!({"text": "again"})),
        ScriptedTurn::text("done"),
    ])
    .mcp(hub.clone())
    .build()
    .await;
    let report = h.agent.prompt("go").await.unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
    let requests = h.requests();
    let crashed = full(&requests[1].messages[2]);
    assert!(crashed.starts_with("error: "), "{crashed}");
    assert!(crashed.contains("exited during the call"), "{crashed}");
    assert!(
        crashed.contains("crashing in the middle of a call"),
        "{crashed}"
    );
    let echoed = full(&requests[2].messages[4]);
    assert!(echoed.contains("echo: again"), "{echoed}");
    let started = std::fs::read_to_string(&starts).unwrap();
    assert_eq!(started.lines().count(), 2, "started again once");
    let status = hub.status();
    assert_eq!(status[0].state, McpState::Running);
    assert_eq!(status[0].restarts, 1);
    hub.shutdown().await;
}

#[tokio::test]
async fn a_server_that_never_starts_is_reported_with_its_command_and_error() {
    let hub = hub(vec![
        ("dead", server(flaky(&["--die-at-start"]))),
        (
            "missing",
            server(("cairn-no-such-server".into(), vec!["--stdio".into()])),
        ),
        ("flaky", server(flaky(&[]))),
    ]);
    let mut h = harness(vec![
        ScriptedTurn::text("hello"),
        ScriptedTurn::text("again"),
    ])
    .mcp(hub.clone())
    .build()
    .await;
    let report = h.agent.prompt("hi").await.unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
    let told = notices(&h.drain());
    assert!(
        told.contains("the MCP server `dead` is not available"),
        "{told}"
    );
    assert!(told.contains("flaky_server.py --die-at-start"), "{told}");
    assert!(told.contains("the token is missing"), "{told}");
    assert!(
        told.contains("`cairn-no-such-server --stdio` could not be started"),
        "{told}"
    );
    let offered: Vec<String> = h.requests()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert!(offered.contains(&"flaky__echo".to_string()));
    assert!(!offered.iter().any(|n| n.starts_with("dead__")));
    // Told once: the next run does not repeat it.
    h.agent.prompt("again").await.unwrap();
    assert!(notices(&h.drain()).is_empty());
    let status = hub.status();
    let dead = status.iter().find(|s| s.name == "dead").unwrap();
    assert_eq!(dead.state, McpState::Failed);
    assert!(dead
        .error
        .as_deref()
        .unwrap()
        .contains("the token is missing"));
    hub.shutdown().await;
}

#[tokio::test]
async fn server_tools_ask_first_and_a_denied_call_never_reaches_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls");
    let mut settings = server(flaky(&["--calls", calls.to_str().unwrap()]));
    settings.approval = None;
    settings.tools.insert("fail".into(), Policy::Allow);
    let hub = hub(vec![("flaky", settings)]);
    let h = harness(vec![
        call("flaky__echo", json!({"text": "secret"})),
        call("flaky__fail", json!({})),
        ScriptedTurn::text("ok"),
    ])
    .mcp(hub.clone())
    .build()
    .await;
    let agent = h.agent.clone();
    let mut events = agent.subscribe();
    let answers = tokio::spawn(async move {
        let mut asked = Vec::new();
        while let Some(event) = events.recv().await {
            match event {
                AgentEvent::ApprovalRequested {
                    request_id, name, ..
                } => {
                    asked.push(name);
                    agent
                        .resolve_approval(&request_id, ApprovalDecision::Deny, None)
                        .unwrap();
                }
                AgentEvent::AgentEnd { .. } => break,
                _ => {}
            }
        }
        asked
    });
    h.agent.prompt("go").await.unwrap();
    assert_eq!(answers.await.unwrap(), vec!["flaky__echo".to_string()]);
    let called = std::fs::read_to_string(&calls).unwrap_or_default();
    assert_eq!(called, "fail\n", "only the allowed tool reached the server");
    let failed = full(&h.requests()[2].messages[4]);
    assert!(failed.contains("the thing failed"), "{failed}");
    hub.shutdown().await;
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_an_abort_ends_the_wait() {
    let mut settings = server(flaky(&[]));
    settings.call_timeout_s = Some(1);
    let hub = hub(vec![("flaky", settings)]);
    let h = harness(vec![
        call("flaky__hang", json!({})),
        ScriptedTurn::text("ok"),
    ])
    .mcp(hub.clone())
    .build()
    .await;
    assert_eq!(
        h.agent.prompt("go").await.unwrap().outcome,
        Outcome::Completed
    );
    let result = full(&h.requests()[1].messages[2]);
    assert!(result.contains("did not answer within 1 s"), "{result}");
    hub.shutdown().await;

    let hub = hub_without_timeout();
    let mut h = harness(vec![
        call("flaky__hang", json!({})),
        ScriptedTurn::text("ok"),
    ])
    .mcp(hub.clone())
    .build()
    .await;
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("go").await.unwrap() });
    while let Some(event) = h.events.recv().await {
        if matches!(event, AgentEvent::ToolStart { .. }) {
            break;
        }
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let report = h.abort_promptly(run).await;
    assert_eq!(report.outcome, Outcome::Aborted);
    hub.shutdown().await;
}

fn hub_without_timeout() -> Arc<McpHub> {
    hub(vec![("flaky", server(flaky(&[])))])
}

#[tokio::test]
async fn servers_get_no_keys_from_cairns_environment() {
    let options = HubOptions {
        workspace: None,
        env: cairn_core::tools::handlers::bash::EnvScrub {
            also_remove: vec!["HOME".into()],
            pass: Vec::new(),
            allow_only: false,
        },
        sandbox: None,
    };
    let hub = hub_with(vec![("flaky", server(flaky(&[])))], options);
    let h = harness(vec![
        call("flaky__env", json!({"name": "HOME"})),
        call("flaky__env", json!({"name": "PATH"})),
        ScriptedTurn::text("ok"),
    ])
    .mcp(hub.clone())
    .build()
    .await;
    h.agent.prompt("go").await.unwrap();
    let requests = h.requests();
    assert!(full(&requests[1].messages[2]).contains("HOME is not set"));
    assert!(full(&requests[2].messages[4]).contains("PATH is set"));
    hub.shutdown().await;
}

#[tokio::test]
async fn stdio_servers_start_outside_the_workspace_and_are_told_where_it_is() {
    let workspace = tempfile::tempdir().unwrap();
    let options = HubOptions {
        workspace: Some(workspace.path().to_path_buf()),
        ..HubOptions::default()
    };
    let hub = hub_with(vec![("flaky", server(flaky(&[])))], options);
    let h = harness(vec![
        call("flaky__where", json!({})),
        ScriptedTurn::text("ok"),
    ])
    .mcp(hub.clone())
    .build()
    .await;
    h.agent.prompt("go").await.unwrap();
    let answer = full(&h.requests()[1].messages[2]);
    let shown = workspace.path().display().to_string();
    assert!(answer.contains(&format!("workspace={shown}")), "{answer}");
    assert!(!answer.contains(&format!("cwd={shown}")), "{answer}");
    assert!(
        !answer.contains(&format!("cwd={}", h.workspace.root().display())),
        "{answer}"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn the_ecosystems_everything_server_answers_through_a_run() {
    let hub = hub(vec![("everything", server(everything()))]);
    let h = harness(vec![
        call("everything__echo", json!({"message": "hello from cairn"})),
        call("everything__get-sum", json!({"a": 2, "b": 40})),
        ScriptedTurn::text("ok"),
    ])
    .mcp(hub.clone())
    .build()
    .await;
    assert_eq!(
        h.agent.prompt("go").await.unwrap().outcome,
        Outcome::Completed
    );
    let requests = h.requests();
    assert!(full(&requests[1].messages[2]).contains("Echo: hello from cairn"));
    assert!(full(&requests[2].messages[4]).contains("42"));
    let status = hub.status();
    assert_eq!(status[0].state, McpState::Running);
    assert!(status[0]
        .tools
        .iter()
        .any(|t| t.name == "everything__get-sum"));
    hub.shutdown().await;
    assert_eq!(hub.status()[0].state, McpState::Stopped);
}

#[tokio::test]
async fn a_streamable_http_server_is_reached_by_its_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (node, mut args) = everything();
    *args.last_mut().unwrap() = "streamableHttp".into();
    let _server = tokio::process::Command::new(node)
        .args(&args)
        .env("PORT", port.to_string())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the HTTP server did not start"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let settings = McpServerSettings {
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        headers: [("X-Client".to_string(), "cairn-test".to_string())].into(),
        approval: Some(Policy::Allow),
        ..Default::default()
    };
    let hub = hub(vec![("web", settings)]);
    let h = harness(vec![
        call("web__echo", json!({"message": "over http"})),
        ScriptedTurn::text("ok"),
    ])
    .mcp(hub.clone())
    .build()
    .await;
    assert_eq!(
        h.agent.prompt("go").await.unwrap().outcome,
        Outcome::Completed
    );
    assert!(full(&h.requests()[1].messages[2]).contains("Echo: over http"));
    assert_eq!(
        hub.status()[0].transport,
        cairn_protocol::McpTransport::Http
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn custom_headers_never_follow_a_redirect_to_another_host() {
    let elsewhere =
        cairn_testkit::MockServer::start(vec![cairn_testkit::MockResponse::status(500, "no"); 4])
            .await;
    let redirect = || {
        cairn_testkit::MockResponse::status(307, "")
            .with_header("location", format!("{}/mcp", elsewhere.url()))
    };
    let server = cairn_testkit::MockServer::start(vec![redirect(), redirect(), redirect()]).await;
    let settings = McpServerSettings {
        url: Some(format!("{}/mcp", server.url())),
        headers: [("X-Api-Key".to_string(), "sk-mcp-secret".to_string())].into(),
        approval: Some(Policy::Allow),
        ..Default::default()
    };
    let hub = hub(vec![("web", settings)]);
    hub.tools().await;
    assert!(!server.requests().is_empty(), "the server was not tried");
    assert_eq!(
        server.requests()[0].header("x-api-key"),
        Some("sk-mcp-secret"),
        "the configured host gets its header"
    );
    let leaked = elsewhere
        .requests()
        .iter()
        .any(|r| r.header("x-api-key").is_some());
    assert!(!leaked, "the header followed the redirect to another host");
    hub.shutdown().await;
}

#[tokio::test]
async fn an_eager_server_starts_before_any_run_needs_it() {
    let mut settings = server(flaky(&[]));
    settings.eager = Some(true);
    let hub = hub(vec![("flaky", settings), ("lazy", server(flaky(&[])))]);
    hub.start_eager();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let status = hub.status();
        if status[0].state == McpState::Running {
            assert_eq!(
                status[1].state,
                McpState::Stopped,
                "only the eager one started"
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{status:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    hub.shutdown().await;
}
