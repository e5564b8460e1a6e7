//! Models at hand: the model chosen for the open session, and local servers found.

use super::*;
use pretty_assertions::assert_eq;

#[test]
fn a_model_chosen_for_the_session_answers_from_the_next_message_and_is_recorded() {
    let (_rt_a, first) = serve(vec![MockResponse::sse(text_stream("From A."))]);
    let (_rt_b, second) = serve(vec![MockResponse::sse(text_stream("From B."))]);
    let mut app = App::with_config(&format!(
        "default_provider = \"a\"\n\
         [providers.a]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"model-a\"\n\
         [providers.b]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"model-b\"\n\
         [memory]\nflush = false\n",
        first.url(),
        second.url()
    ));
    let body = app.with_channel(json!({"text": "hi"}));
    app.ok("send_message", body);
    assert_eq!(
        app.ok("choose_model", json!({"provider": "b", "model": null})),
        "model-b"
    );
    let body = app.with_channel(json!({"text": "and now?"}));
    app.ok("send_message", body);
    let view = app.ok("open_session", json!({"id": current(&app)}));
    let texts = App::texts(&view);
    assert_eq!(texts.last(), Some(&pair("assistant", "From B.")));
    assert_eq!(
        second.requests()[0].body_json().unwrap()["model"],
        "model-b"
    );
    let file = std::fs::read_to_string(
        app.workspace
            .join("sessions")
            .join(format!("{}.jsonl", current(&app))),
    )
    .unwrap();
    assert!(
        file.lines()
            .any(|l| l.contains("\"model_change\"") && l.contains("model-b")),
        "{file}"
    );
    // Only configured providers: a name the settings do not have is refused.
    assert_eq!(
        app.code(
            "choose_model",
            json!({"provider": "anthropic", "model": "x"})
        ),
        "invalid"
    );
}

#[test]
fn local_servers_are_looked_for_without_failing_when_none_runs() {
    let app = App::new("http://127.0.0.1:9/v1");
    // Whatever runs on this machine, the answer is a list of servers with their models.
    let found = app.ok("discover_local_servers", json!({}));
    for server in found.as_array().unwrap() {
        assert!(server["base_url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:"));
        assert!(server["models"].is_array(), "{server}");
    }
}

#[test]
fn a_reasoning_model_shows_its_thinking_apart_and_never_gets_it_back() {
    let (_rt, server) = serve(vec![
        MockResponse::sse(text_stream(
            "<think>The user greets me. I greet back.</think>\n\nHello!",
        )),
        MockResponse::sse(text_stream("Fine.")),
    ]);
    let mut app = App::new(&format!("{}/v1", server.url()));
    let body = app.with_channel(json!({"text": "hi"}));
    app.ok("send_message", body);
    let view = app.ok("open_session", json!({"id": current(&app)}));
    let answer = &view["items"][1];
    assert_eq!(answer["kind"], "assistant");
    assert_eq!(answer["text"], "Hello!");
    assert_eq!(answer["thinking"], "The user greets me. I greet back.");
    assert_eq!(view["items"][0].get("thinking"), None);

    let body = app.with_channel(json!({"text": "how are you?"}));
    app.ok("send_message", body);
    let sent = server.requests()[1].body_json().unwrap().to_string();
    assert!(sent.contains("Hello!"), "{sent}");
    assert!(
        !sent.contains("greet back"),
        "reasoning was sent back: {sent}"
    );
}

#[test]
fn the_thinking_level_chosen_for_the_session_is_sent_shown_and_kept() {
    let (_rt, server) = serve(vec![
        MockResponse::sse(text_stream("One.")),
        MockResponse::sse(text_stream("Two.")),
    ]);
    let mut app = App::new(&format!("{}/v1", server.url()));
    app.ok("set_thinking", json!({"level": "medium"}));
    let body = app.with_channel(json!({"text": "think about it"}));
    app.ok("send_message", body);
    let view = app.ok("open_session", json!({"id": current(&app)}));
    assert_eq!(view["thinking"], "medium");
    app.ok("set_thinking", json!({"level": "off"}));
    let body = app.with_channel(json!({"text": "now quickly"}));
    app.ok("send_message", body);
    let efforts: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body_json().unwrap()["reasoning_effort"].clone())
        .collect();
    assert_eq!(efforts, [json!("medium"), Value::Null]);
    let view = app.ok("open_session", json!({"id": current(&app)}));
    assert_eq!(view["thinking"], "off");
    assert!(app
        .call("set_thinking", json!({"level": "extreme"}))
        .is_err());
}

#[test]
fn the_slash_menu_lists_prompt_templates_and_skills() {
    let app = App::new("http://127.0.0.1:9/v1");
    let write = |rel: &str, text: &str| {
        let path = app.workspace.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "prompts/review.md",
        "---\ndescription: Review a file\narguments: [file]\n---\nReview $1.\n",
    );
    write(
        "skills/review/SKILL.md",
        "---\ndescription: hidden\n---\nx\n",
    );
    write(
        "skills/pdf/SKILL.md",
        "---\ndescription: Read PDFs\n---\nx\n",
    );
    let listed = app.ok("slash_commands", json!({}));
    let rows: Vec<(String, String, String)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["kind"].as_str().unwrap().to_string(),
                c["usage"].as_str().unwrap().to_string(),
                c["description"].as_str().unwrap().to_string(),
            )
        })
        .filter(|(_, usage, _)| usage == "/review <file>" || usage == "/pdf" || usage == "/review")
        .collect();
    assert_eq!(
        rows,
        [
            ("skill".into(), "/pdf".into(), "Read PDFs".into()),
            (
                "prompt".into(),
                "/review <file>".into(),
                "Review a file".into()
            ),
        ]
    );
}

/// A session left with a run cut short (its checkpoint, no end) as a killed process
/// leaves it: the request and the run's first checkpoint.
fn interrupted_session(app: &App) -> String {
    use cairn_app::cairn_core::session::SessionStore;
    use cairn_protocol::{EntryKind, Message, RunCheckpoint};
    let store = SessionStore::new(app.workspace.join("sessions"));
    let mut opened = store.create().unwrap();
    let id = opened.tree.id().to_string();
    let entries = [
        EntryKind::Message {
            message: Message::user("list the notes"),
        },
        EntryKind::Checkpoint {
            run: RunCheckpoint {
                run_id: "r1".into(),
                message: "list the notes".into(),
                step: 0,
                nudges: 0,
                stop_blocked: false,
                stall: Value::Null,
                follow_ups: vec!["and count them".into()],
                next_turn: Vec::new(),
                summary: Default::default(),
            },
        },
    ];
    for kind in entries {
        let entry = opened.tree.draft(kind);
        opened.tree.apply(entry.clone());
        opened.writer.append(&entry).unwrap();
    }
    tauri::async_runtime::block_on(opened.writer.sync()).unwrap();
    id
}

#[test]
fn an_interrupted_run_is_offered_and_goes_on() {
    let (_rt, server) = serve(vec![
        MockResponse::sse(text_stream("Three notes.")),
        MockResponse::sse(text_stream("Counted: 3.")),
    ]);
    let mut app = App::new(&format!("{}/v1", server.url()));
    let id = interrupted_session(&app);
    let view = app.ok("open_session", json!({"id": id}));
    assert_eq!(
        view["interrupted"],
        json!({"message": "list the notes", "steps": 0, "queued": ["and count them"]})
    );
    let body = app.with_channel(json!({}));
    app.ok("resume_run", body);
    let view = app.ok("open_session", json!({"id": id}));
    assert_eq!(view["interrupted"], Value::Null);
    let texts = App::texts(&view);
    assert_eq!(
        texts[texts.len() - 3..],
        [
            pair("assistant", "Three notes."),
            pair("user", "and count them"),
            pair("assistant", "Counted: 3.")
        ]
    );
    // The request was not asked twice.
    assert_eq!(texts.iter().filter(|t| t.1 == "list the notes").count(), 1);
    // Nothing is left to go on with.
    let body = app.with_channel(json!({}));
    assert_eq!(app.code("resume_run", body), "invalid");
}
