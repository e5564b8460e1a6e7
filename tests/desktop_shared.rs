//! The CLI beside the open app on one workspace: it searches the index the app writes, it
//! cannot write to the session the app is talking in (it says so), and what it saves is
//! found from the app.

use super::{answer_facts, keys, send, wait_for, DesktopApp, Sandbox, Session, Value, PATIENCE};
use cairn_e2e::{text_stream, tool_call_stream};
use cairn_testkit::{MockResponse, MockServer, RecordedRequest};
use serde_json::json;

const FACT: &str = "The wombatine key hangs behind the shed door";

fn answer(request: &RecordedRequest) -> MockResponse {
    let body = request.body_json().unwrap_or(Value::Null);
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    if last["role"] == "tool" {
        return MockResponse::sse(text_stream("Saved."));
    }
    if last["content"].to_string().contains("Remember") {
        return MockResponse::sse(tool_call_stream(
            "call_save",
            "memory_save",
            &json!({ "text": FACT }),
            2,
        ));
    }
    MockResponse::sse(text_stream("Answered."))
}

/// Ctrl+K, `word`, until a hit in `path` shows (searching again now and then, as a user
/// would while a change is indexed).
async fn app_finds(s: &Session, word: &str, path: &str) {
    s.press(&[keys::CONTROL, "k"]).await.unwrap();
    let search = wait_for("the search box", PATIENCE, || async move {
        s.find("[data-testid=search-box]").await
    })
    .await;
    search.send_keys(word).await.unwrap();
    let css = format!("[data-testid=search-hit][data-path='{path}']");
    let (search, css, mut tries) = (&search, &css, 0);
    wait_for(&format!("a hit in {path}"), PATIENCE, move || {
        tries += 1;
        async move {
            match s.find(css).await? {
                Some(_) => Ok(Some(())),
                None if tries % 30 == 0 => search.send_keys(" ").await.map(|()| None),
                None => Ok(None),
            }
        }
    })
    .await;
    s.press(&[keys::ESCAPE]).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_searches_saves_and_stays_off_the_apps_session() {
    let server = MockServer::respond_with(answer).await;
    let sandbox = Sandbox::new();
    sandbox.write_settings(&format!(
        "default_provider = \"mock\"\n\
         [providers.mock]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\n\
         [approval]\ndefault = \"allow\"\n\
         [memory]\nflush = false\nconsolidation_interval_hours = 0\n",
        server.url()
    ));
    let knowledge = sandbox.workspace().join("knowledge");
    std::fs::create_dir_all(&knowledge).unwrap();
    std::fs::write(knowledge.join("alpha.md"), "# Alpha\n\nThe garden gate.\n").unwrap();

    DesktopApp::drive(&sandbox, "desktop_e2e_shared", async |s| {
        // The app writes the index; the CLI reads it (once the app's first sync has
        // committed, which on a loaded machine may come after the window is up).
        let sandbox = &sandbox;
        let found = wait_for(
            "the CLI to find the note the app indexed",
            PATIENCE,
            || async {
                let out = sandbox
                    .cairn(&["search", "--json", "garden"])
                    .output()
                    .await
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let found: Value = serde_json::from_slice(&out.stdout).unwrap();
                Ok((!found["results"].as_array().is_none_or(Vec::is_empty)).then_some(found))
            },
        )
        .await;
        assert_eq!(found["results"][0]["path"], "knowledge/alpha.md", "{found}");

        // Once the app has talked in its session, the session is the app's: the CLI says
        // so and writes nothing.
        send(s, "Hello from the window").await;
        let text = answer_facts(s, 1, "return m.textContent;").await;
        assert!(text.as_str().unwrap_or("").contains("Answered."), "{text}");
        let sessions = sandbox.workspace().join("sessions");
        let before: Vec<_> = std::fs::read_dir(&sessions)
            .unwrap()
            .flatten()
            .map(|e| (e.path(), std::fs::read(e.path()).unwrap()))
            .collect();
        let out = sandbox
            .cairn(&["ask", "--continue", "Hello?"])
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "--continue took the app's session");
        assert!(stderr.contains("open in another Cairn process"), "{stderr}");
        for (path, bytes) in &before {
            assert_eq!(&std::fs::read(path).unwrap(), bytes, "{}", path.display());
        }

        // A new session of the CLI saves a fact; the app, which writes the index, finds it.
        let out = sandbox
            .cairn(&["ask", "--yes", "Remember where the key is."])
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("Saved."));
        let log = format!("memory/{}.md", chrono::Local::now().format("%Y-%m-%d"));
        let text = std::fs::read_to_string(sandbox.workspace().join(&log)).unwrap_or_default();
        assert!(text.contains(FACT), "{log}: {text}");
        app_finds(s, "wombatine", &log).await;
    })
    .await;
}
