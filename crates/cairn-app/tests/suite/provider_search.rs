//! `[web] search = "provider"`: Anthropic's own web search, through the agent a front end
//! builds. The search shows as a `web_search` tool call with its results, the answer names
//! its sources, the next request sends the search back as it came; with a chat provider
//! that has no search of its own, the start warns and nothing searches.

use std::path::Path;
use std::sync::Arc;

use cairn_app::cairn_core::Agent;
use cairn_app::cairn_memory::Workspace;
use cairn_app::launch::{self, build_agent, AgentOptions, ChatModel, Config};
use cairn_app::settings::{EnvOverrides, Purpose, SecretStore, Settings};
use cairn_testkit::{MockResponse, MockServer};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

const SEARCH_ID: &str = "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE";
const PARIS: &str = "https://en.wikipedia.org/wiki/Paris";

struct Setup {
    _dir: tempfile::TempDir,
    config: Config,
    workspace: Arc<Workspace>,
}

/// `provider` as the chat provider (its table's lines), no memory flush, provider search.
fn setup(provider: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "default_provider = \"chat\"\n[providers.chat]\n{provider}\n[memory]\nflush = false\n\
         [web]\nsearch = \"provider\"\n"
    );
    let config = Config {
        settings: Settings::parse(&text, Path::new("config.toml")).unwrap(),
        settings_path: dir.path().join("config.toml"),
        secrets: SecretStore::file(dir.path().join("secrets.toml")),
        overrides: EnvOverrides {
            anthropic_key: Some("sk-ant-test".into()),
            openai_key: Some("sk-test".into()),
            ..EnvOverrides::default()
        },
    };
    let workspace = Arc::new(Workspace::open_or_create(&dir.path().join("ws")).unwrap());
    Setup {
        _dir: dir,
        config,
        workspace,
    }
}

/// The agent a front end would build with the configured chat model (every call allowed),
/// and the warnings of the start.
async fn start(setup: &Setup) -> (Agent, Vec<String>) {
    let chat: ChatModel = setup.config.chat().await.unwrap();
    let mut warnings = Vec::new();
    let options = {
        let mut warn = |w: String| warnings.push(w);
        AgentOptions::from_config(&setup.config, &chat, true, None, &mut warn).await
    };
    let session = launch::store(&setup.workspace).create().unwrap();
    let agent = build_agent(
        setup.workspace.clone(),
        chat.0,
        chat.1,
        session,
        options,
        None,
    );
    (agent, warnings)
}

fn sse(events: Vec<Value>) -> MockResponse {
    MockResponse::sse_raw(
        events
            .into_iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect(),
    )
}

fn search_block() -> Value {
    json!({"type": "server_tool_use", "id": SEARCH_ID, "name": "web_search",
           "input": {"query": "capital of France"}})
}

fn results_block() -> Value {
    json!({"type": "web_search_tool_result", "tool_use_id": SEARCH_ID, "content": [
        {"type": "web_search_result", "url": PARIS, "title": "Paris - Wikipedia",
         "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5", "page_age": "2 days ago"}
    ]})
}

fn start_block(index: u32, block: Value) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": block})
}

fn delta(index: u32, delta: Value) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": delta})
}

fn stop(index: u32) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

fn message_start() -> Value {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
           "role": "assistant", "content": [], "model": "claude-test",
           "usage": {"input_tokens": 50, "output_tokens": 1}}})
}

fn message_end() -> [Value; 2] {
    [
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
               "usage": {"output_tokens": 20}}),
        json!({"type": "message_stop"}),
    ]
}

/// An answer that searches the web, then cites a result.
fn searched_answer() -> Vec<Value> {
    let citation = json!({"type": "web_search_result_location", "url": PARIS,
                          "title": "Paris - Wikipedia", "cited_text": "Paris is the capital.",
                          "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0"});
    let mut events = vec![
        message_start(),
        start_block(
            0,
            json!({"type": "server_tool_use", "id": SEARCH_ID, "name": "web_search",
                   "input": {}}),
        ),
        delta(
            0,
            json!({"type": "input_json_delta",
                   "partial_json": "{\"query\": \"capital of France\"}"}),
        ),
        stop(0),
        start_block(1, results_block()),
        stop(1),
        start_block(2, json!({"type": "text", "text": ""})),
        delta(2, json!({"type": "citations_delta", "citation": citation})),
        delta(
            2,
            json!({"type": "text_delta", "text": "Paris is the capital of France."}),
        ),
        stop(2),
    ];
    events.extend(message_end());
    events
}

fn plain_answer(text: &str) -> Vec<Value> {
    let mut events = vec![
        message_start(),
        start_block(0, json!({"type": "text", "text": ""})),
        delta(0, json!({"type": "text_delta", "text": text})),
        stop(0),
    ];
    events.extend(message_end());
    events
}

#[tokio::test]
async fn anthropic_searches_on_its_servers_and_the_search_goes_back_as_it_came() {
    let server = MockServer::start(vec![sse(searched_answer()), sse(plain_answer("Rome."))]).await;
    let setup = setup(&format!(
        "kind = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"",
        server.url()
    ));
    assert!(setup.config.resolve(Purpose::Chat).unwrap().provider_search);
    let (agent, warnings) = start(&setup).await;
    assert_eq!(warnings, Vec::<String>::new());
    assert!(!agent.tool_names().contains(&"web_search".to_string()));
    let mut events = agent.subscribe();

    let report = agent
        .prompt("What is the capital of France?")
        .await
        .unwrap();
    assert_eq!(
        report.answer.as_deref(),
        Some(&*format!(
            "Paris is the capital of France. [1]\n\nSources:\n1. [Paris - Wikipedia]({PARIS})"
        ))
    );
    let mut tools = Vec::new();
    while let Ok(event) = events.try_recv() {
        let event = serde_json::to_value(&event).unwrap();
        if ["tool_start", "tool_end"].contains(&event["type"].as_str().unwrap()) {
            tools.push(event);
        }
    }
    assert_eq!(
        tools,
        [
            json!({"type": "tool_start", "call_id": SEARCH_ID, "name": "web_search",
                   "arguments": {"query": "capital of France"}}),
            json!({"type": "tool_end", "call_id": SEARCH_ID, "name": "web_search",
                   "content": format!("1. Paris - Wikipedia\n   {PARIS}"), "is_error": false,
                   "pictures": []}),
        ]
    );

    agent.prompt("And of Italy?").await.unwrap();
    let requests = server.requests();
    let first = requests[0].body_json().unwrap();
    let server_tool = json!({"type": "web_search_20250305", "name": "web_search",
                             "max_uses": 5});
    assert!(
        first["tools"].as_array().unwrap().contains(&server_tool),
        "{}",
        first["tools"]
    );
    let second = requests[1].body_json().unwrap();
    assert_eq!(
        second["messages"][1]["content"],
        json!([
            search_block(),
            results_block(),
            {"type": "text", "text": format!(
                "Paris is the capital of France. [1]\n\nSources:\n1. [Paris - Wikipedia]({PARIS})"
            )}
        ])
    );
}

#[tokio::test]
async fn another_chat_provider_gets_a_warning_and_no_search() {
    let setup =
        setup("kind = \"openai\"\nmodel = \"gpt-test\"\nbase_url = \"http://127.0.0.1:9/v1\"");
    let (agent, warnings) = start(&setup).await;
    assert_eq!(
        warnings,
        [
            "[web] search = \"provider\" needs the Anthropic provider, and the chat model \
             `gpt-test` is openai's: no web search is offered (choose an Anthropic model, or \
             set [web] search to brave, tavily, exa or searxng)"
        ]
    );
    assert!(!agent.tool_names().contains(&"web_search".to_string()));
}
