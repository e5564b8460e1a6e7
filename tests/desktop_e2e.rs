//! The desktop app end to end: the real window (WebKitGTK) driven through WebKitWebDriver
//! on a virtual display, against an OpenAI-compatible server on 127.0.0.1. Each step
//! checks what a user would see or find on disk.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use cairn_e2e::desktop::DesktopApp;
use cairn_e2e::webdriver::{keys, wait_for, Session, WdError, WdResult, PATIENCE};
use cairn_e2e::{text_stream, tool_call_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

#[path = "desktop_bundle.rs"]
mod bundle;
#[path = "desktop_changes.rs"]
mod changes;
#[path = "desktop_inert.rs"]
mod inert;
#[path = "desktop_knowledge.rs"]
mod knowledge;
#[path = "desktop_mcp.rs"]
mod mcp;
#[path = "desktop_pictures.rs"]
mod pictures;
#[path = "desktop_shared.rs"]
mod shared;
#[path = "desktop_single.rs"]
mod single;
#[path = "desktop_tree.rs"]
mod tree;

const ANSWER: &str = "The plan, in **bold** so you see it:\n\n- first step\n- second step\n";
/// The reasoning the first answer opens with, as a model without a reasoning parser writes it.
const THOUGHT: &str = "The user asks for the steps. Two will do.";
const FOLLOW_UP: &str = "I wrote notes/plan.md for you.";
const PLAN: &str = "# Plan\n- ship it\n";
const HOSTILE: &str = "Look <img src=x onerror=\"window.__pwned=1\"> here, \
    [click me](javascript:window.__pwned=2) and ![x](https://example.invalid/a.png) too.";
const WORD: &str = "quokkaberry";

#[tokio::test(flavor = "multi_thread")]
async fn the_window_chats_asks_before_writing_edits_finds_and_keeps_model_html_inert() {
    let server = MockServer::start(vec![
        // Slow enough for the page to be seen half way through the answer.
        MockResponse::sse(text_stream(&format!(
            "<think>{THOUGHT}</think>\n\n{ANSWER}"
        )))
        .with_chunk_delay(Duration::from_millis(150)),
        MockResponse::sse(tool_call_stream(
            "call_w",
            "write_file",
            &json!({"path": "notes/plan.md", "content": PLAN}),
            4,
        )),
        MockResponse::sse(text_stream(FOLLOW_UP)),
        MockResponse::sse(text_stream(HOSTILE)),
    ])
    .await;
    let sandbox = Sandbox::new();
    sandbox.write_settings(&format!(
        "default_provider = \"mock\"\n\
         [providers.mock]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\n\
         [approval]\ndefault = \"allow\"\ntools = {{ write_file = \"ask\" }}\n\
         [memory]\nflush = false\nconsolidation_interval_hours = 0\n",
        server.url()
    ));
    let knowledge = sandbox.workspace().join("knowledge");
    std::fs::create_dir_all(&knowledge).unwrap();
    std::fs::write(
        knowledge.join("alpha.md"),
        "# Alpha\n\nNotes about the garden.\n\n",
    )
    .unwrap();
    std::fs::write(
        knowledge.join("beta.md"),
        "# Beta\n\nNotes about the kitchen.\n",
    )
    .unwrap();

    DesktopApp::drive(&sandbox, "desktop_e2e", async |s| {
        chat_shows_a_streamed_markdown_answer(s).await;
        a_write_waits_for_approval_then_runs(s, &sandbox).await;
        tree::a_deleted_file_waits_in_the_trash_and_comes_back(s, &sandbox, "notes/plan.md", PLAN)
            .await;
        changes::a_change_is_reverted_from_its_card_unless_the_file_changed(
            s,
            &sandbox,
            "notes/plan.md",
            PLAN,
        )
        .await;
        inert::model_html_and_script_links_stay_inert(s).await;
        a_saved_edit_is_found_with_ctrl_k(s, &sandbox).await;
    })
    .await;

    // The model saw the approved call answered, and nothing else asked it anything.
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let third = requests[2].body_json().unwrap();
    let tool = third["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(tool["tool_call_id"], "call_w");
    // The reasoning was shown, never sent back.
    assert!(!requests[1]
        .body_json()
        .unwrap()
        .to_string()
        .contains("Two will do"));
}

#[tokio::test(flavor = "multi_thread")]
async fn documents_and_folders_outside_the_workspace_are_searched_and_shown_read_only() {
    let sandbox = Sandbox::new();
    let folders = knowledge::prepare(&sandbox);
    sandbox.write_settings(&format!(
        "[memory]\nflush = false\nconsolidation_interval_hours = 0\nembedder = \"none\"\n{folders}"
    ));
    DesktopApp::drive(&sandbox, "desktop_knowledge", async |s| {
        knowledge::documents_and_folders_searched_in_place(s, &sandbox).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_arriving_while_typing_waits_for_a_deliberate_click() {
    let server = MockServer::start(vec![
        // The call streams in while the user goes on typing.
        MockResponse::sse(tool_call_stream(
            "call_b",
            "bash",
            &json!({"command": "echo ran > ran.txt"}),
            6,
        ))
        .with_chunk_delay(Duration::from_millis(100)),
        MockResponse::sse(text_stream("It ran.")),
    ])
    .await;
    let sandbox = Sandbox::new();
    // The default policy: bash asks.
    sandbox.write_settings(&format!(
        "default_provider = \"mock\"\n\
         [providers.mock]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\n\
         [memory]\nflush = false\nconsolidation_interval_hours = 0\n",
        server.url()
    ));
    DesktopApp::drive(&sandbox, "desktop_e2e_focus", async |s| {
        keys_in_the_composer_do_not_approve(s, &sandbox).await
    })
    .await;
    // The model heard the command's result and the message typed meanwhile.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].body_json().unwrap().to_string();
    assert!(second.contains("call_b"), "{second}");
    assert!(second.contains("draft"), "{second}");
}

/// The model's side of the subagent test: the parent writes its work list, then gives the
/// helper a task; the helper runs a command (which asks), then reports.
fn subagent_script(request: &cairn_testkit::RecordedRequest) -> MockResponse {
    let body = request.body_json().unwrap();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let child = messages.iter().any(|m| {
        m["role"] == "system"
            && m["content"]
                .to_string()
                .contains("# Your role: the subagent `helper`")
    });
    let results = messages.iter().filter(|m| m["role"] == "tool").count();
    let call =
        |id: &str, name: &str, args: Value| MockResponse::sse(tool_call_stream(id, name, &args, 2));
    match (child, results) {
        (true, 0) => call("call_c", "bash", json!({"command": "echo sub > sub.txt"})),
        (true, _) => MockResponse::sse(text_stream("made sub.txt")),
        (false, 0) => call(
            "call_t",
            "todo_write",
            json!({"items": [{"text": "Ask the helper for the file", "status": "in_progress"}]}),
        ),
        (false, 1) => call(
            "call_s",
            "agent_send",
            json!({"agent": "helper", "message": "make sub.txt"}),
        ),
        (false, _) => MockResponse::sse(text_stream("All done.")),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subagents_request_is_asked_on_the_card_that_started_it() {
    let server = MockServer::respond_with(subagent_script).await;
    let sandbox = Sandbox::new();
    sandbox.write_settings(&format!(
        "default_provider = \"mock\"\n\
         [providers.mock]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\n\
         [memory]\nflush = false\nconsolidation_interval_hours = 0\n",
        server.url()
    ));
    let folder = sandbox.workspace().join("subagents");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("helper.md"),
        "---\ndescription: Does one thing\n---\nDo it.\n",
    )
    .unwrap();
    DesktopApp::drive(&sandbox, "desktop_e2e_subagent", async |s| {
        the_subagent_asks_through_the_parent(s, &sandbox).await
    })
    .await;
}

async fn the_subagent_asks_through_the_parent(s: &Session, sandbox: &Sandbox) {
    send(s, "Get the helper to make sub.txt").await;
    let card = "[data-testid=tool-card][data-tool=agent_send]";
    let asking = format!("{card}[data-status=approval]");
    let asking = asking.as_str();
    wait_for("the agent_send card to ask", PATIENCE, || async move {
        s.find(asking).await
    })
    .await;
    let reason = text_of(s, "[data-testid=approval-reason]").await.unwrap();
    assert!(
        reason.contains("The subagent helper asks to run bash"),
        "{reason}"
    );
    let asked = text_of(s, "[data-testid=asked-args]").await.unwrap();
    assert!(asked.contains("echo sub > sub.txt"), "{asked}");
    let made = sandbox.workspace().join("sub.txt");
    assert!(!made.exists(), "the subagent ran before approval");
    click(s, "[data-testid=approval-allow-once]:not([disabled])").await;
    wait_for("the agent_send card to be done", PATIENCE, || async move {
        let status = attribute_of(s, card, "data-status").await;
        status.map(|v| (v.as_deref() == Some("done")).then_some(()))
    })
    .await;
    assert_eq!(std::fs::read_to_string(&made).unwrap(), "sub\n");
    // Answers 1 and 2 are the parent's calls; the third is its reply.
    let answer = answer_facts(s, 3, "return m.textContent;").await;
    assert!(answer.as_str().unwrap().contains("All done."), "{answer}");
    click(s, "#tab-run").await;
    wait_for(
        "the work list in the run details",
        PATIENCE,
        || async move {
            match text_of(s, "[data-testid=work-items]").await {
                Ok(text) if text.contains("Ask the helper for the file") => Ok(Some(())),
                Ok(text) => Err(WdError(format!("it reads {text:?}"))),
                Err(e) => Err(e),
            }
        },
    )
    .await;
}

/// A request that arrives while the user types leaves the focus in the composer: Space
/// and Enter there neither approve nor run anything (Enter sends the text to the run);
/// a click on Allow does.
async fn keys_in_the_composer_do_not_approve(s: &Session, sandbox: &Sandbox) {
    send(s, "Run the command").await;
    s.type_keys("draft").await.unwrap();
    let asking = "[data-testid=tool-card][data-tool=bash][data-status=approval]";
    wait_for("the bash card to ask", PATIENCE, || async move {
        s.find(asking).await
    })
    .await;
    // Once the buttons take clicks, keys still go where the user types.
    let allow = "[data-testid=approval-allow-once]:not([disabled])";
    wait_for("Allow to take clicks", PATIENCE, || async move {
        s.find(allow).await
    })
    .await;
    s.type_keys(" ").await.unwrap();
    let page = "const c = document.querySelector('[data-testid=composer]');
        return {focused: document.activeElement === c, text: c.value,
                status: document.querySelector('[data-testid=tool-card]').dataset.status};";
    let seen = s.execute(page, vec![]).await.unwrap();
    assert_eq!(
        seen,
        json!({"focused": true, "text": "draft ", "status": "approval"})
    );
    s.press(&[keys::ENTER]).await.unwrap();
    let last = "const m = document.querySelectorAll('[data-testid=message-user]');
        return m.length ? m[m.length - 1].textContent.trim() : null;";
    wait_for("the typed text sent to the run", PATIENCE, || async move {
        let text = s.execute(last, vec![]).await?;
        Ok((text == "draft").then_some(()))
    })
    .await;
    let seen = s.execute(page, vec![]).await.unwrap();
    assert_eq!(
        seen,
        json!({"focused": true, "text": "", "status": "approval"})
    );
    let ran = sandbox.workspace().join("ran.txt");
    assert!(!ran.exists(), "the command ran before approval");

    click(s, allow).await;
    wait_for("the bash card to be done", PATIENCE, || async move {
        let status = attribute_of(s, "[data-testid=tool-card]", "data-status").await;
        status.map(|v| (v.as_deref() == Some("done")).then_some(()))
    })
    .await;
    assert_eq!(std::fs::read_to_string(&ran).unwrap(), "ran\n");
}

/// Step 1: Enter sends; the answer streams in (a Stop button meanwhile) and its markdown
/// is rendered.
async fn chat_shows_a_streamed_markdown_answer(s: &Session) {
    send(s, "What is the plan?").await;
    wait_text(s, "[data-testid=message-user]", "What is the plan?").await;
    let partial =
        "const m = document.querySelector('[data-testid=message-assistant][aria-busy=true]');
        const t = m ? m.textContent : '';
        const stop = document.querySelector('[data-testid=stop-button]');
        return t.includes('plan') && !t.includes('second step') && stop !== null;";
    wait_for(
        "part of the answer, with a Stop button",
        PATIENCE,
        || async move {
            let seen = s.execute(partial, vec![]).await?;
            Ok((seen == true).then_some(()))
        },
    )
    .await;
    let shown = answer_facts(
        s,
        1,
        "const md = m.querySelector('.markdown');
         return {strong: [...md.querySelectorAll('strong')].map(e => e.textContent),
                 items: [...md.querySelectorAll('li')].map(e => e.textContent),
                 text: md.textContent};",
    )
    .await;
    assert_eq!(shown["strong"], json!(["bold"]));
    assert_eq!(shown["items"], json!(["first step", "second step"]));
    assert!(!shown["text"].as_str().unwrap().contains("**"), "{shown}");
    assert!(
        !shown["text"].as_str().unwrap().contains(THOUGHT),
        "{shown}"
    );
    // The reasoning is folded above the answer, and opens on a click.
    let thinking = "const d = m.querySelector('[data-testid=thinking]');
         return d && {open: d.open, summary: d.querySelector('summary').textContent};";
    let folded = answer_facts(s, 1, thinking).await;
    assert_eq!(
        folded,
        json!({"open": false, "summary": "Thinking · 9 words"})
    );
    click(s, "[data-testid=thinking] summary").await;
    wait_text(s, "[data-testid=thinking] .thinking-text", THOUGHT).await;
}

/// Step 2: write_file needs approval: the card asks (and asks again when the page is
/// loaded again meanwhile), nothing is written until "Allow once", then the card is done,
/// the file is there and the model's follow-up shows.
async fn a_write_waits_for_approval_then_runs(s: &Session, sandbox: &Sandbox) {
    send(s, "Write the plan to notes/plan.md").await;
    let card = "[data-testid=tool-card][data-tool=write_file]";
    let asking = format!("{card}[data-status=approval]");
    let asking = asking.as_str();
    wait_for(
        "the write_file card to ask for approval",
        PATIENCE,
        || async move { s.find(asking).await },
    )
    .await;
    let plan = sandbox.workspace().join("notes/plan.md");
    assert!(!plan.exists(), "written before approval");
    // The page loaded again meanwhile takes the run up where it waits: the card asks
    // again, after the conversation so far, nothing in it twice.
    s.refresh().await.unwrap();
    wait_for(
        "the card to ask again after a reload",
        PATIENCE,
        || async move { s.find(asking).await },
    )
    .await;
    let asked = s
        .execute(
            "return [...document.querySelectorAll('[data-testid=message-user]')]
                 .map(m => m.textContent.trim());",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        asked,
        json!(["What is the plan?", "Write the plan to notes/plan.md"])
    );
    // Its buttons take clicks a moment after it appears.
    click(s, "[data-testid=approval-allow-once]:not([disabled])").await;
    wait_for("the write_file card to be done", PATIENCE, || async move {
        let status = attribute_of(s, card, "data-status").await;
        status.map(|v| (v.as_deref() == Some("done")).then_some(()))
    })
    .await;
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), PLAN);
    let follow_up = answer_facts(s, 3, "return m.textContent;").await;
    assert!(
        follow_up.as_str().unwrap().contains(FOLLOW_UP),
        "{follow_up}"
    );
    // The new folder shows in the workspace tree, and the file in it once unfolded.
    let folder = wait_for("notes/ in the file tree", PATIENCE, || async move {
        s.find("[data-testid=tree-item][data-path='notes']").await
    })
    .await;
    let unfolded = folder
        .execute("return arguments[0].closest('li').getAttribute('aria-expanded');")
        .await
        .unwrap();
    if unfolded != "true" {
        folder.click().await.unwrap();
    }
    wait_for("notes/plan.md in the file tree", PATIENCE, || async move {
        s.find("[data-testid=tree-item][data-path='notes/plan.md']")
            .await
    })
    .await;
}

/// Step 4: open a note from the tree, type a new word, Ctrl+S; then Ctrl+K finds the word
/// and its hit opens the note at that line.
async fn a_saved_edit_is_found_with_ctrl_k(s: &Session, sandbox: &Sandbox) {
    open_from_tree(s, "knowledge/alpha.md", "Notes about the garden.").await;
    click(s, "[data-testid=editor] .cm-content").await;
    s.press(&[keys::CONTROL, keys::END]).await.unwrap();
    let content = s
        .find("[data-testid=editor] .cm-content")
        .await
        .unwrap()
        .unwrap();
    content.send_keys(WORD).await.unwrap();
    wait_text(s, "[data-testid=editor-status]", "modified").await;
    s.press(&[keys::CONTROL, "s"]).await.unwrap();
    wait_text(s, "[data-testid=editor-status]", "saved").await;
    let disk = std::fs::read_to_string(sandbox.workspace().join("knowledge/alpha.md")).unwrap();
    assert_eq!(
        disk,
        format!("# Alpha\n\nNotes about the garden.\n\n{WORD}")
    );

    // Another file is open when the search starts.
    open_from_tree(s, "knowledge/beta.md", "Notes about the kitchen.").await;
    s.press(&[keys::CONTROL, "k"]).await.unwrap();
    let search = wait_for("the search box", PATIENCE, || async move {
        s.find("[data-testid=search-box]").await
    })
    .await;
    search.send_keys(WORD).await.unwrap();
    let (search, mut tries) = (&search, 0);
    let line = wait_for("a search hit in knowledge/alpha.md", PATIENCE, move || {
        tries += 1;
        async move {
            let hit = s.find("[data-testid=search-hit][data-path='knowledge/alpha.md']");
            match hit.await? {
                Some(hit) => {
                    let line = hit.attribute("data-start-line").await?;
                    hit.click().await.map(|()| Some(line))
                }
                None if tries % 30 == 0 => {
                    // The note may still be indexing: search again, as a user would.
                    search.send_keys(" ").await.map(|()| None)
                }
                None => Ok(None),
            }
        }
    })
    .await;
    // The hit is the section holding the word: it starts at the heading, line 1.
    assert_eq!(line.as_deref(), Some("1"));
    wait_open(s, "knowledge/alpha.md").await;
    let marked = "return [...document.querySelectorAll('.cm-jump-line')].map(l => l.textContent);";
    wait_for(
        "the hit's lines marked in the editor",
        PATIENCE,
        || async move {
            let lines = s.execute(marked, vec![]).await?;
            Ok((lines.as_array().into_iter().flatten())
                .any(|l| l == WORD)
                .then_some(()))
        },
    )
    .await;
    assert!(s.find("[data-testid=search-box]").await.unwrap().is_none());
}

/// Types `text` into the message box and presses Enter, once no run goes on (while one
/// does, the box steers it instead: a run that has shown its answer may still be ending).
async fn send(s: &Session, text: &str) {
    let composer = wait_for("an idle, enabled message box", PATIENCE, || async move {
        s.find("[data-testid=composer][aria-label=Message]:not([disabled])")
            .await
    })
    .await;
    composer
        .send_keys(&format!("{text}\u{E007}"))
        .await
        .unwrap();
}

/// Waits until answer `n` (1-based) has stopped streaming, then returns what `body`
/// returns (JavaScript run in the page with the answer's element as `m`). The page is
/// read in one go: answers are re-rendered when a run ends.
async fn answer_facts(s: &Session, n: usize, body: &str) -> Value {
    let script = format!(
        "const m = document.querySelectorAll('[data-testid=message-assistant]')[arguments[0]];
         if (!m || m.getAttribute('aria-busy') !== 'false') return null;
         {body}"
    );
    let script = script.as_str();
    wait_for(&format!("answer {n} to finish"), PATIENCE, || async move {
        let value = s.execute(script, vec![json!(n - 1)]).await;
        value.map(|v| (!v.is_null()).then_some(v))
    })
    .await
}

/// Clicks the element matching `css`, found again when the page drew it anew between
/// finding and clicking (a stale element).
async fn click(s: &Session, css: &str) {
    wait_for(css, PATIENCE, || async move {
        match s.find(css).await? {
            Some(el) => el.click().await.map(Some),
            None => Ok(None),
        }
    })
    .await;
}

/// Waits until the element matching `css` reads `text`.
async fn wait_text(s: &Session, css: &str, text: &str) {
    wait_for(
        &format!("{css} to read {text:?}"),
        PATIENCE,
        || async move {
            match text_of(s, css).await? {
                shown if shown == text => Ok(Some(())),
                // Reported if it never changes.
                shown => Err(WdError(format!("it reads {shown:?}"))),
            }
        },
    )
    .await;
}

/// Waits until the editor has `path` open. (Its path is read from the title: WebKit's
/// driver takes the ellipsised path for hidden and reads no text from it.)
async fn wait_open(s: &Session, path: &str) {
    wait_for(
        &format!("{path} open in the editor"),
        PATIENCE,
        || async move {
            match attribute_of(s, ".editor-path", "title").await? {
                Some(open) if open == path => Ok(Some(())),
                open => Err(WdError(format!("the editor has {open:?}"))),
            }
        },
    )
    .await;
}

/// Clicks a file in the tree and waits until the editor shows `line` of it.
async fn open_from_tree(s: &Session, path: &str, line: &str) {
    click(s, &format!("[data-testid=tree-item][data-path='{path}']")).await;
    wait_open(s, path).await;
    wait_for(&format!("{path} in the editor"), PATIENCE, || async move {
        let content = text_of(s, "[data-testid=editor] .cm-content").await;
        content.map(|content| content.contains(line).then_some(()))
    })
    .await;
}

async fn text_of(s: &Session, css: &str) -> WdResult<String> {
    match s.find(css).await? {
        Some(el) => el.text().await,
        None => Ok(String::new()),
    }
}

async fn attribute_of(s: &Session, css: &str, name: &str) -> WdResult<Option<String>> {
    match s.find(css).await? {
        Some(el) => el.attribute(name).await,
        None => Ok(None),
    }
}
