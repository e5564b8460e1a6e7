//! The command layer through Tauri's mock runtime: the page's calls (names, snake_case arguments,
//! `{code, message}` errors) against a real workspace and a model server on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use cairn_desktop::{Desktop, Paths};
use cairn_e2e::{text_stream, tool_call_stream};
use cairn_protocol::AgentEvent;
use cairn_testkit::{MockResponse, MockServer};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{
    get_ipc_response, mock_builder, mock_context, noop_assets, MockRuntime, INVOKE_KEY,
};
use tauri::webview::InvokeRequest;
use tauri::WebviewWindow;

struct App {
    _dir: tempfile::TempDir,
    desktop: Arc<Desktop>,
    workspace: std::path::PathBuf,
    _app: tauri::App<MockRuntime>,
    webview: WebviewWindow<MockRuntime>,
    channels: u32,
}

/// As the app does at exit: the test's process must not end while the embedding model
/// loads or runs in the background.
impl Drop for App {
    fn drop(&mut self) {
        cairn_app::launch::settle_embedder(std::time::Duration::from_secs(10));
    }
}

impl App {
    /// The app over a new workspace whose chat model is the server at `url`.
    fn new(url: &str) -> Self {
        Self::with_config(&format!(
            "default_provider = \"mock\"\n[providers.mock]\nkind = \"openai\"\n\
             base_url = \"{url}\"\nmodel = \"test-model\"\n[memory]\nflush = false\n"
        ))
    }

    /// The app over a new workspace with `config_toml` as its settings.
    fn with_config(config_toml: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join("config.toml"), config_toml).unwrap();
        let workspace = dir.path().join("workspace");
        let paths = Paths {
            config_dir: Some(config),
            workspace: Some(workspace.clone()),
        };
        let desktop: Arc<Desktop> =
            tauri::async_runtime::block_on(Desktop::open(paths, std::time::Instant::now()))
                .unwrap();
        let app = mock_builder()
            .manage(desktop.clone())
            .invoke_handler(cairn_desktop::commands::handler())
            .build(mock_context(noop_assets()))
            .unwrap();
        let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
            .build()
            .unwrap();
        Self {
            _dir: dir,
            desktop,
            workspace,
            _app: app,
            webview,
            channels: 0,
        }
    }

    fn call(&self, cmd: &str, body: Value) -> Result<Value, Value> {
        get_ipc_response(
            &self.webview,
            InvokeRequest {
                cmd: cmd.into(),
                callback: CallbackFn(0),
                error: CallbackFn(1),
                url: "tauri://localhost".parse().unwrap(),
                body: InvokeBody::Json(body),
                headers: Default::default(),
                invoke_key: INVOKE_KEY.to_string(),
            },
        )
        .map(|b| b.deserialize::<Value>().unwrap())
    }

    fn ok(&self, cmd: &str, body: Value) -> Value {
        self.call(cmd, body)
            .unwrap_or_else(|e| panic!("{cmd} failed: {e}"))
    }

    fn code(&self, cmd: &str, body: Value) -> String {
        let err = self.call(cmd, body).expect_err(cmd);
        err["code"]
            .as_str()
            .unwrap_or_else(|| panic!("{err}"))
            .to_string()
    }

    /// A run command's arguments with a fresh channel.
    fn with_channel(&mut self, mut body: Value) -> Value {
        self.channels += 1;
        body["on_event"] = json!(format!("__CHANNEL__:{}", self.channels));
        body
    }

    fn texts(view: &Value) -> Vec<(String, String)> {
        view["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["kind"].as_str().unwrap().to_string(),
                    i["text"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }
}

fn pair(kind: &str, text: &str) -> (String, String) {
    (kind.to_string(), text.to_string())
}

#[test]
fn every_listed_command_is_registered_and_no_other() {
    let app = App::new("http://127.0.0.1:9/v1");
    let unknown = |cmd: &str| match app.call(cmd, json!({})) {
        Err(Value::String(message)) => message.contains("not found"),
        _ => false,
    };
    // `restart_app` would restart the process, which the mock runtime cannot do: it is
    // not called here.
    for cmd in cairn_desktop::commands::COMMANDS
        .iter()
        .filter(|c| **c != "restart_app")
    {
        assert!(!unknown(cmd), "{cmd} is listed but not registered");
    }
    assert!(unknown("read_any_file"), "an unlisted command must not run");
}

/// A model server on its own runtime (the app's commands run on Tauri's).
fn serve(responses: Vec<MockResponse>) -> (tokio::runtime::Runtime, MockServer) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start(responses));
    (runtime, server)
}

#[test]
fn a_message_runs_and_the_session_keeps_it() {
    let (_rt, server) = serve(vec![MockResponse::sse(text_stream("Hello **there**."))]);
    let mut app = App::new(&format!("{}/v1", server.url()));
    {
        let body = app.with_channel(json!({"text": "hi"}));
        assert_eq!(app.ok("send_message", body), Value::Null);
        let view = app.ok("open_session", json!({"id": null}));
        // A new session: the one that ran is listed, with its messages.
        assert_eq!(App::texts(&view), vec![]);
        let list = app.ok("list_sessions", json!({}));
        let id = list[0]["id"].as_str().unwrap().to_string();
        assert_eq!(list[0]["messages"], 2);
        let view = app.ok("open_session", json!({"id": id}));
        assert_eq!(
            App::texts(&view),
            vec![pair("user", "hi"), pair("assistant", "Hello **there**.")]
        );
        assert_eq!(app.code("send_message", app_body("  ")), "invalid");
    }
}

#[test]
fn the_context_meter_reads_the_open_session_and_compact_now_summarises_it() {
    // The answer, then whatever the upkeep asks (a title, the flush, the summary).
    let mut answers = vec![MockResponse::sse(text_stream("Hello."))];
    answers.extend((0..8).map(|_| MockResponse::sse(text_stream("We greeted each other."))));
    let (_rt, server) = serve(answers);
    let mut app = App::new(&format!("{}/v1", server.url()));
    // No model has been needed yet: nothing to report, and nothing is loaded to say so.
    assert_eq!(app.ok("context_usage", json!({})), Value::Null);
    let body = app.with_channel(json!({"text": "hi"}));
    app.ok("send_message", body);
    let usage = app.ok("context_usage", json!({}));
    let used = usage["used"].as_u64().unwrap();
    let window = usage["window"].as_u64().unwrap();
    assert!(used > 0 && used < window, "{usage}");
    assert!(usage["reserve"].as_u64().unwrap() < window, "{usage}");
    let view = app.ok("compact_now", json!({"focus": "the greeting"}));
    let kinds: Vec<&str> = view["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"summary"), "{view}");
    // The summary was asked with the focus.
    let asked = server.requests().iter().any(|r| {
        r.body_json()
            .map(|b| b.to_string().contains("the greeting"))
            .unwrap_or(false)
    });
    assert!(asked, "no request carried the focus");
}

fn app_body(text: &str) -> Value {
    json!({"text": text, "on_event": "__CHANNEL__:99"})
}

#[test]
fn an_edit_makes_a_branch_and_switching_brings_the_first_back() {
    let (_rt, server) = serve(vec![
        MockResponse::sse(text_stream("Answer one.")),
        MockResponse::sse(text_stream("Answer two.")),
        MockResponse::sse(text_stream("The first way was tried: answer one.")),
    ]);
    let mut app = App::new(&format!("{}/v1", server.url()));
    {
        let body = app.with_channel(json!({"text": "first"}));
        app.ok("send_message", body);
        let view = app.ok("open_session", json!({"id": current(&app)}));
        let first = view["items"][0]["entry_id"].as_str().unwrap().to_string();

        let body = app.with_channel(json!({"entry_id": first, "text": "second"}));
        app.ok("edit_message", body);
        let view = app.ok("open_session", json!({"id": current(&app)}));
        assert_eq!(
            App::texts(&view),
            vec![pair("user", "second"), pair("assistant", "Answer two.")]
        );
        assert_eq!(view["items"][0]["siblings"]["index"], 1);
        assert_eq!(view["branches"], 2);

        let view = app.ok("switch_branch", json!({"entry_id": first}));
        assert_eq!(
            App::texts(&view),
            vec![pair("user", "first"), pair("assistant", "Answer one.")]
        );
        assert_eq!(view["items"][0]["siblings"]["index"], 0);

        // Back to the second, keeping a summary of the first where the talk goes on.
        let second = view["items"][0]["siblings"]["ids"][1]
            .as_str()
            .unwrap()
            .to_string();
        let view = app.ok(
            "switch_branch",
            json!({"entry_id": second, "summarize": true}),
        );
        assert_eq!(
            App::texts(&view),
            vec![
                pair("user", "second"),
                pair("assistant", "Answer two."),
                pair("summary", "The first way was tried: answer one.")
            ]
        );
        let asked = server.requests()[2].body_json().unwrap().to_string();
        assert!(asked.contains("Answer one."), "{asked}");
    }
}

#[test]
fn sessions_are_renamed_even_when_the_model_cannot_be_loaded() {
    let app = App::with_config(
        "default_provider = \"here\"\n[providers.here]\nkind = \"local\"\n\
         model_path = \"/nonexistent/model.gguf\"\n",
    );
    let id = app.ok("open_session", json!({"id": null}))["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The new session gets its file with the title; a second rename follows it.
    for title in ["Plans", "Trip to Porto"] {
        app.ok("rename_session", json!({"id": id, "title": title}));
        let list = app.ok("list_sessions", json!({}));
        assert_eq!(list[0]["title"], title);
        assert_eq!(app.ok("open_session", json!({"id": id}))["title"], title);
    }
    // The model really cannot be loaded: a message says so.
    assert_ne!(app.call("send_message", app_body("hi")), Ok(Value::Null));
    assert_eq!(
        app.code("rename_session", json!({"id": id, "title": "  "})),
        "invalid"
    );
}

/// Events of a run as one page got them.
type Seen = Arc<std::sync::Mutex<Vec<AgentEvent>>>;

fn page(seen: &Seen) -> impl FnMut(AgentEvent) -> bool + Send + 'static {
    let seen = seen.clone();
    move |event| {
        seen.lock().unwrap().push(event);
        true
    }
}

#[test]
fn a_page_loaded_again_takes_up_the_run_where_it_waits() {
    let plan = json!({"path": "notes/plan.md", "content": "# Plan\n"});
    let (_rt, server) = serve(vec![
        MockResponse::sse(text_stream("Earlier answer.")),
        MockResponse::sse(tool_call_stream("call_w", "write_file", &plan, 3)),
        MockResponse::sse(text_stream("Written.")),
    ]);
    let mut app = App::with_config(&format!(
        "default_provider = \"mock\"\n[providers.mock]\nkind = \"openai\"\n\
         base_url = \"{}/v1\"\nmodel = \"test-model\"\n[memory]\nflush = false\n\
         [approval]\ndefault = \"allow\"\ntools = {{ write_file = \"ask\" }}\n",
        server.url()
    ));
    assert_eq!(
        tauri::async_runtime::block_on(app.desktop.attach(|_: AgentEvent| true)),
        None
    );
    let body = app.with_channel(json!({"text": "earlier"}));
    app.ok("send_message", body);

    // The first page is gone after two events; the run goes on without it.
    let first: Seen = Arc::default();
    let desktop = app.desktop.clone();
    let run = tauri::async_runtime::spawn({
        let first = first.clone();
        async move {
            let mut sink = page(&first);
            let mut left = 2;
            let gone = move |event| {
                sink(event);
                left -= 1;
                left > 0
            };
            desktop
                .drive(gone, |agent| async move {
                    agent.prompt("write the plan").await?;
                    Ok(())
                })
                .await
        }
    });
    // The page loaded again comes back while the run waits for the user.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let (again, view) = loop {
        assert!(std::time::Instant::now() < deadline, "never asked");
        std::thread::sleep(std::time::Duration::from_millis(20));
        let again: Seen = Arc::default();
        let attached = tauri::async_runtime::block_on(app.desktop.attach(page(&again)));
        let asked = again
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, AgentEvent::ApprovalRequested { .. }));
        if asked {
            break (again, attached.expect("a run goes on"));
        }
    };
    assert_eq!(first.lock().unwrap().len(), 2);
    // The session as it was before the run; the events hold the run from its start.
    assert_eq!(
        App::texts(&serde_json::to_value(&view).unwrap()),
        vec![
            pair("user", "earlier"),
            pair("assistant", "Earlier answer.")
        ]
    );
    assert!(view.running);
    let request_id = {
        let events = again.lock().unwrap();
        assert!(
            matches!(events[0], AgentEvent::AgentStart { .. }),
            "{events:?}"
        );
        assert!(events.iter().any(|e| matches!(e,
            AgentEvent::MessageEnd { message, .. } if message.text() == "write the plan")));
        events
            .iter()
            .find_map(|e| match e {
                AgentEvent::ApprovalRequested {
                    request_id, name, ..
                } => {
                    assert_eq!(name, "write_file");
                    Some(request_id.clone())
                }
                _ => None,
            })
            .unwrap()
    };
    // Allowed from the page that came back: the run finishes there.
    app.ok(
        "resolve_approval",
        json!({"request_id": request_id, "decision": "allow_once"}),
    );
    tauri::async_runtime::block_on(run).unwrap().unwrap();
    assert_eq!(
        std::fs::read_to_string(app.workspace.join("notes/plan.md")).unwrap(),
        "# Plan\n"
    );
    let events = again.lock().unwrap().clone();
    assert!(
        matches!(events.last(), Some(AgentEvent::AgentEnd { .. })),
        "{events:?}"
    );
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::ToolEnd {
            is_error: false,
            ..
        }
    )));
    assert_eq!(first.lock().unwrap().len(), 2);
    // After the end there is nothing to take up.
    assert_eq!(
        tauri::async_runtime::block_on(app.desktop.attach(|_: AgentEvent| true)),
        None
    );
}

fn current(app: &App) -> String {
    app.ok("list_sessions", json!({}))[0]["id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn files_save_with_a_version_check_and_hostile_paths_are_refused() {
    let app = App::new("http://127.0.0.1:9/v1");
    let saved = app.ok(
        "write_file",
        json!({"path": "knowledge/plan.md", "text": "# Plan\nquokka\n", "base_version": null}),
    );
    let read = app.ok("read_file", json!({"path": "knowledge/plan.md"}));
    assert_eq!(read["version"], saved["version"]);
    std::fs::write(app.workspace.join("knowledge/plan.md"), "edited outside").unwrap();
    let err = app
        .call(
            "write_file",
            json!({"path": "knowledge/plan.md", "text": "mine", "base_version": read["version"]}),
        )
        .unwrap_err();
    assert_eq!(err["code"], "conflict");
    assert_eq!(
        std::fs::read_to_string(app.workspace.join("knowledge/plan.md")).unwrap(),
        "edited outside"
    );
    for path in ["../escape.md", "/etc/passwd", ".cairn/state.db"] {
        assert_eq!(
            app.code(
                "write_file",
                json!({"path": path, "text": "x", "base_version": null})
            ),
            "invalid_path",
            "{path}"
        );
    }
    assert_eq!(
        app.code("read_file", json!({"path": "../../etc/passwd"})),
        "invalid_path"
    );
    let tree = app.ok("list_files", json!({}));
    let names: Vec<&str> = tree
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"knowledge") && !names.contains(&".cairn"),
        "{names:?}"
    );
}

#[test]
fn a_saved_file_is_found_by_memory_search_with_its_lines() {
    let app = App::new("http://127.0.0.1:9/v1");
    app.ok(
        "write_file",
        json!({"path": "knowledge/animals.md", "text": "# Animals\n\nThe quokka smiles a lot.\n", "base_version": null}),
    );
    let results = app.ok("memory_search", json!({"query": "quokka", "limit": 5}));
    let hit = &results["hits"][0];
    assert_eq!(hit["path"], "knowledge/animals.md");
    assert!(hit["start_line"].as_u64().unwrap() >= 1);
    let marked: Vec<&str> = hit["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["hit"] == true)
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    assert_eq!(marked, vec!["quokka"]);
    let status = app.ok("index_status", json!({}));
    assert!(status["chunks"].as_u64().unwrap() > 0);
}

#[test]
fn sessions_are_found_by_what_was_said_one_hit_each() {
    let (_rt, server) = serve(vec![
        MockResponse::sse(text_stream("The quokkaberry jam needs sugar.")),
        MockResponse::sse(text_stream("More quokkaberry notes: pick them in May.")),
    ]);
    let mut app = App::new(&format!("{}/v1", server.url()));
    let body = app.with_channel(json!({"text": "How do I make quokkaberry jam?"}));
    app.ok("send_message", body);
    let body = app.with_channel(json!({"text": "And when to pick a quokkaberry?"}));
    app.ok("send_message", body);
    let id = app.ok("list_sessions", json!({}))[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The watcher is not running here: the index is brought up to date by hand.
    app.desktop.index().unwrap().sync().unwrap();
    let hits = app.ok("search_sessions", json!({"query": "quokkaberry"}));
    let hits = hits.as_array().unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["id"], id.as_str());
    assert!(
        hits[0]["snippet"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("quokkaberry"),
        "{hits:?}"
    );
    // Notes with the word are not sessions.
    app.ok(
        "write_file",
        json!({"path": "knowledge/q.md", "text": "quokkaberry", "base_version": null}),
    );
    let hits = app.ok("search_sessions", json!({"query": "quokkaberry"}));
    assert_eq!(hits.as_array().unwrap().len(), 1);
    assert_eq!(
        app.ok("search_sessions", json!({"query": "zzzz"})),
        json!([])
    );
}

mod changes;
mod dropped;
mod models;
mod pictures;
mod settings;
