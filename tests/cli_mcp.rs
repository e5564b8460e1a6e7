//! MCP from the command line: `cairn ask` calling a real server's tool, `cairn mcp list`,
//! and `cairn mcp serve` driven by the SDK's own client.

use cairn_e2e::{
    cairn_bin, first_tool_result, mcp_server_toml, text_stream, tool_call_stream, Sandbox,
};
use cairn_testkit::mcp::{everything, flaky};
use cairn_testkit::{MockResponse, MockServer};
use pretty_assertions::assert_eq;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread")]
async fn ask_calls_a_real_servers_tool() {
    let sandbox = Sandbox::new();
    sandbox.write_settings(&mcp_server_toml(
        "everything",
        everything(),
        "tools = { echo = \"allow\" }",
    ));
    let model = MockServer::start(vec![
        MockResponse::sse(tool_call_stream(
            "call_e",
            "everything__echo",
            &json!({"message": "over the wire"}),
            3,
        )),
        MockResponse::sse(text_stream("The server echoed it.")),
    ])
    .await;
    let out = sandbox
        .cairn(&[
            "--provider",
            "openai",
            "--base-url",
            &model.url(),
            "--model",
            "test-model",
            "ask",
            "Echo",
            "something",
        ])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "The server echoed it.\n"
    );
    let first = model.requests()[0].body_json().unwrap();
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"everything__get-sum"), "{offered:?}");
    let result = first_tool_result(&model.requests()[1].body_json().unwrap());
    assert!(result.contains("Echo: over the wire"), "{result}");
    assert!(result.contains("untrusted"), "{result}");
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_list_shows_each_server_with_its_state_and_tools() {
    let sandbox = Sandbox::new();
    let settings = [
        mcp_server_toml("everything", everything(), ""),
        mcp_server_toml("dead", flaky(&["--die-at-start"]), ""),
        mcp_server_toml("off", flaky(&[]), "enabled = false"),
    ]
    .join("\n");
    sandbox.write_settings(&settings);
    let out = sandbox
        .cairn(&["mcp", "list", "--json"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let servers = listed["servers"].as_array().unwrap();
    let names: Vec<&str> = servers
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["dead", "everything", "off"]);
    assert_eq!(servers[0]["state"], "failed");
    let error = servers[0]["error"].as_str().unwrap();
    assert!(error.contains("flaky_server.py --die-at-start"), "{error}");
    assert!(error.contains("the token is missing"), "{error}");
    assert_eq!(servers[1]["state"], "running");
    let echo = servers[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "everything__echo")
        .unwrap();
    assert_eq!(echo["approval"], "ask");
    assert_eq!(servers[2]["enabled"], false);
    assert_eq!(servers[2]["state"], "stopped");

    let out = sandbox.cairn(&["mcp", "list"]).output().await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("everything  running  stdio  node "), "{text}");
    assert!(text.contains("off  disabled  stdio"), "{text}");
}

/// A client of `cairn mcp serve` on the sandbox's workspace.
async fn memory_client(
    sandbox: &Sandbox,
    extra: &[&str],
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let mut args = vec!["mcp", "serve"];
    args.extend_from_slice(extra);
    let mut command = sandbox.cairn(&args);
    command.stdin(std::process::Stdio::piped());
    let transport = TokioChildProcess::new(command).unwrap_or_else(|e| panic!("start: {e}"));
    ().serve(transport)
        .await
        .unwrap_or_else(|e| panic!("handshake: {e}"))
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_string(&result.content).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_serve_gives_other_agents_the_memory_read_only_unless_allowed() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.workspace()).unwrap();
    std::fs::write(
        sandbox.workspace().join("MEMORY.md"),
        "# Memory\n\n- The user's cat is called Pixel and hates the vacuum.\n",
    )
    .unwrap();
    assert!(cairn_bin().exists());

    let client = memory_client(&sandbox, &[]).await;
    let mut tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    tools.sort();
    assert_eq!(tools, ["memory_get", "memory_search"]);
    let mut found = String::new();
    // The index is brought up to date in the background: ask until it has the file.
    for _ in 0..50 {
        let params = CallToolRequestParams::new("memory_search")
            .with_arguments(json!({"query": "cat vacuum"}).as_object().unwrap().clone());
        found = text_of(&client.call_tool(params).await.unwrap());
        if found.contains("Pixel") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert!(found.contains("Pixel"), "{found}");
    let params = CallToolRequestParams::new("memory_get")
        .with_arguments(json!({"path": "MEMORY.md"}).as_object().unwrap().clone());
    assert!(text_of(&client.call_tool(params).await.unwrap()).contains("hates the vacuum"));
    let save = CallToolRequestParams::new("memory_save")
        .with_arguments(json!({"text": "planted"}).as_object().unwrap().clone());
    let refused = client.call_tool(save.clone()).await;
    assert!(refused.is_err(), "memory_save is not served read-only");
    client.cancel().await.unwrap();
    let logs = sandbox.workspace().join("memory");
    let written = std::fs::read_dir(&logs).map(|d| d.count()).unwrap_or(0);
    assert_eq!(written, 0, "nothing was written");

    let client = memory_client(&sandbox, &["--allow-save"]).await;
    let saved = client.call_tool(save).await.unwrap();
    assert_ne!(saved.is_error, Some(true), "{}", text_of(&saved));
    client.cancel().await.unwrap();
    let today = chrono::Local::now().format("%Y-%m-%d").to_string();
    let log = std::fs::read_to_string(logs.join(format!("{today}.md"))).unwrap();
    assert!(log.contains("planted"), "{log}");
}
