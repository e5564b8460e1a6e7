//! Session files: what is written, branching, and repair after a crash.

use std::io::Write;

use cairn_core::session::{OpenedSession, Repair, SessionStore};
use cairn_llm::ScriptedTurn;
use cairn_protocol::{EntryKind, Message};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

use super::support::{briefs, harness};

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn the_session_file_has_a_versioned_header_and_linked_entries() {
    let h = harness(vec![
        ScriptedTurn::tool_call("list_dir", json!({})),
        ScriptedTurn::text("done"),
    ])
    .build()
    .await;
    h.agent
        .prompt("Look around the workspace please")
        .await
        .unwrap();
    let lines = lines(&h.session_path());
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["version"], 1);
    assert_eq!(lines[0]["id"], h.agent.session_id());
    let types: Vec<_> = lines[1..]
        .iter()
        .map(|l| l["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "message",
            "checkpoint",
            "message",
            "tool_started",
            "message",
            "checkpoint",
            "message",
            "checkpoint",
            "session_info",
            "run_end"
        ]
    );
    assert_eq!(lines[10]["outcome"]["kind"], "completed");
    assert_eq!(lines[10]["steps"], 2);
    // Each message hangs off the one before it.
    assert_eq!(lines[1]["parent_id"], Value::Null);
    assert_eq!(lines[3]["parent_id"], lines[1]["id"]);
    assert_eq!(lines[5]["parent_id"], lines[3]["id"]);
    assert_eq!(lines[9]["title"], "Look around the workspace please");
    // Each save point of the run checkpoints it, hanging off the entry it follows.
    assert_eq!(lines[2]["run"]["step"], 0);
    assert_eq!(
        lines[2]["run"]["message"],
        "Look around the workspace please"
    );
    assert_eq!(lines[6]["run"]["step"], 1);
    assert_eq!(lines[6]["parent_id"], lines[5]["id"]);
    assert_eq!(lines[8]["run"]["step"], 2);
}

#[tokio::test]
async fn a_torn_last_line_is_set_aside_and_the_rest_loads() {
    let h = harness(vec![ScriptedTurn::text("first answer")])
        .build()
        .await;
    h.agent.prompt("hello").await.unwrap();
    let path = h.session_path();
    let intact = std::fs::read(&path).unwrap();
    let torn =
        br#"{"type":"message","id":"deadbeef","parent_id":null,"ts":"2026-01-01T00:00:00Z","mess"#;
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(torn)
        .unwrap();

    let store = SessionStore::new(h.workspace.sessions_dir());
    let mut opened = store.open(&h.agent.session_id()).await.unwrap();
    let [Repair::TornLine { moved_to, .. }] = opened.repairs.as_slice() else {
        panic!("{:?}", opened.repairs)
    };
    assert_eq!(std::fs::read(moved_to).unwrap(), torn);
    assert_eq!(std::fs::read(&path).unwrap(), intact);
    assert_eq!(
        briefs(&opened.tree.context_messages()),
        ["user: hello", "assistant: first answer"]
    );

    // Appending after the repair produces a clean file.
    let entry = opened.tree.draft(EntryKind::Message {
        message: Message::user("more"),
    });
    opened.writer.append(&entry).unwrap();
    opened.writer.sync().await.unwrap();
    // The header, the exchange with its two checkpoints, its title, how the run ended, and
    // the new message.
    assert_eq!(lines(&path).len(), 8);
}

#[tokio::test]
async fn a_tool_call_without_a_result_is_answered_interrupted_on_load() {
    let h = harness(vec![ScriptedTurn::text("x")]).build().await;
    h.agent.prompt("hello").await.unwrap();
    let path = h.session_path();
    let tree = h.agent.session_snapshot();
    let leaf = tree.leaf().unwrap().to_string();
    let orphan = json!({"type": "message", "id": "0rphan01", "parent_id": leaf, "ts": "2026-01-01T00:00:00Z",
        "message": {"role": "assistant", "stop_reason": "tool_use", "content": [
            {"type": "tool_call", "id": "call_9", "name": "bash", "arguments": {"command": "make"}},
            {"type": "tool_call", "id": "call_8", "name": "write_file", "arguments": {"path": "a", "content": "b"}}]}});
    let started = json!({"type": "tool_started", "id": "st000001", "parent_id": "0rphan01",
        "ts": "2026-01-01T00:00:00Z", "call_id": "call_9", "tool_name": "bash"});
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(file, "{orphan}\n{started}").unwrap();

    let store = SessionStore::new(h.workspace.sessions_dir());
    let mut opened = store.open(&h.agent.session_id()).await.unwrap();
    assert_eq!(
        opened.repairs,
        [Repair::InterruptedCalls {
            ran: vec!["call_9".into()],
            not_run: vec!["call_8".into()],
        }]
    );
    assert_eq!(
        opened.repairs[0].to_string(),
        "1 tool call(s) were running and may have partly run, 1 never started; each was answered so"
    );
    // The call that had started may have done part of its work; the other did nothing.
    let results: Vec<(String, String)> = opened
        .tree
        .context_messages()
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((r.call_id.clone(), r.content.clone())),
            _ => None,
        })
        .collect();
    let of = |id: &str| &results.iter().find(|(c, _)| c == id).unwrap().1;
    assert!(of("call_9").contains("may have partly run"), "{results:?}");
    assert!(of("call_9").contains("Check what it changed before repeating it"));
    assert!(of("call_8").starts_with("Not run: the session stopped before this tool call started"));
    // The repair is on disk: opening again repairs nothing.
    drop(opened);
    let again = store.open(&h.agent.session_id()).await.unwrap();
    assert_eq!(again.repairs, []);
}

#[tokio::test]
async fn entries_from_a_newer_version_are_kept_and_skipped() {
    let h = harness(vec![ScriptedTurn::text("x")]).build().await;
    h.agent.prompt("hello").await.unwrap();
    let path = h.session_path();
    let leaf = h.agent.session_snapshot().leaf().unwrap().to_string();
    let future =
        json!({"type": "hologram", "id": "f0000001", "parent_id": leaf, "ts": "t", "beam": 3});
    let broken = r#"{"type": "message", "id": "b0000001"}"#;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(file, "{future}\n{broken}").unwrap();
    let before = std::fs::read(&path).unwrap();

    let store = SessionStore::new(h.workspace.sessions_dir());
    let mut opened = store.open(&h.agent.session_id()).await.unwrap();
    assert!(
        matches!(&opened.repairs[0], Repair::UnknownEntry { entry_type, .. } if entry_type == "hologram")
    );
    assert!(matches!(&opened.repairs[1], Repair::SkippedLine { .. }));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "nothing is rewritten"
    );
    assert_eq!(
        briefs(&opened.tree.context_messages()),
        ["user: hello", "assistant: x"]
    );
}

#[tokio::test]
async fn navigating_back_starts_a_branch_and_the_old_one_is_kept() {
    let h = harness(vec![
        ScriptedTurn::text("Paris"),
        ScriptedTurn::text("Berlin"),
        ScriptedTurn::text("Rome"),
    ])
    .build()
    .await;
    h.agent.prompt("capital of France?").await.unwrap();
    let first_answer = h.agent.session_snapshot().leaf().unwrap().to_string();
    h.agent.prompt("capital of Germany?").await.unwrap();
    h.agent.navigate(Some(&first_answer)).await.unwrap();
    h.agent.prompt("capital of Italy?").await.unwrap();
    assert_eq!(
        briefs(&h.requests()[2].messages),
        [
            "user: capital of France?",
            "assistant: Paris",
            "user: capital of Italy?"
        ]
    );
    // After a restart the active branch is the same.
    assert_eq!(
        briefs(&h.reloaded_context().await),
        [
            "user: capital of France?",
            "assistant: Paris",
            "user: capital of Italy?",
            "assistant: Rome"
        ]
    );
    let tree = h.agent.session_snapshot();
    assert_eq!(tree.children(Some(&first_answer)).len(), 2);
}

#[tokio::test]
async fn list_and_prefix_lookup() {
    let h = harness(vec![ScriptedTurn::text("x")]).build().await;
    h.agent.prompt("Plan the trip to Lisbon").await.unwrap();
    let store = SessionStore::new(h.workspace.sessions_dir());
    let list = store.list().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].title.as_deref(), Some("Plan the trip to Lisbon"));
    assert_eq!(list[0].messages, 2);
    let id = h.agent.session_id();
    assert_eq!(store.resolve(&id[..13]).unwrap(), id);
    assert!(store.resolve("zzz").is_err());
    assert!(store.resolve("../etc").is_err());
}

#[tokio::test]
async fn a_listing_follows_sessions_that_grow_are_renamed_or_go() {
    let h = harness(vec![ScriptedTurn::text("x"), ScriptedTurn::text("y")])
        .build()
        .await;
    h.agent.prompt("Plan the trip to Lisbon").await.unwrap();
    let store = SessionStore::new(h.workspace.sessions_dir());
    assert_eq!(store.list().unwrap()[0].messages, 2);
    // The same store (and its clones) sees the file grow and the title change.
    let clone = store.clone();
    h.agent.prompt("And Porto?").await.unwrap();
    h.agent.set_title("Portugal").await.unwrap();
    let list = clone.list().unwrap();
    assert_eq!(list[0].messages, 4);
    assert_eq!(list[0].title.as_deref(), Some("Portugal"));
    // A file rewritten with other content (and a broken one) is read again, not remembered.
    let path = store.path_of(&h.agent.session_id());
    let text = std::fs::read_to_string(&path).unwrap();
    let header = text.lines().next().unwrap();
    std::fs::write(&path, format!("{header}\n")).unwrap();
    assert_eq!(store.list().unwrap()[0].messages, 0);
    std::fs::write(&path, "not json\n").unwrap();
    assert!(store.list().unwrap().is_empty());
    std::fs::write(&path, text).unwrap();
    assert_eq!(store.list().unwrap()[0].messages, 4);
    std::fs::remove_file(&path).unwrap();
    assert!(store.list().unwrap().is_empty());
}

#[tokio::test]
async fn a_session_another_process_writes_is_refused_and_its_line_in_flight_left_alone() {
    let h = harness(vec![ScriptedTurn::text("first answer")])
        .build()
        .await;
    h.agent.prompt("hello").await.unwrap();
    let id = h.agent.session_id();
    let path = h.session_path();
    let super::support::Harness {
        dir: _dir,
        workspace,
        agent,
        ..
    } = h;
    drop(agent);
    // Another process holds the session's lock and is half way through a line.
    let lock_path = workspace
        .root()
        .join(format!(".cairn/locks/session-{id}.lock"));
    let other = std::fs::File::options()
        .write(true)
        .open(&lock_path)
        .unwrap();
    // (The agent's writer lets go of it once it has written everything.)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while other.try_lock().is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the writer kept the lock"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let in_flight = br#"{"type":"message","id":"0badf00d","parent_id":null,"ts":"2026-01-01T00:0"#;
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(in_flight)
        .unwrap();
    let before = std::fs::read(&path).unwrap();

    let store = SessionStore::new(workspace.sessions_dir());
    let refused = store.open(&id).await.unwrap_err();
    assert!(matches!(refused, cairn_core::HarnessError::SessionInUse(_)));
    assert!(
        refused
            .to_string()
            .contains("open in another Cairn process"),
        "{refused}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing was cut");
    // Reading it is fine.
    assert_eq!(store.load(&id).unwrap().tree.message_count(), 2);

    // Once the other process is gone, the torn line is set aside as usual.
    drop(other);
    let opened = store.open(&id).await.unwrap();
    assert!(matches!(
        opened.repairs.as_slice(),
        [Repair::TornLine { .. }]
    ));
}

#[tokio::test]
async fn writers_of_one_process_share_a_sessions_lock() {
    let h = harness(vec![ScriptedTurn::text("x")]).build().await;
    h.agent.prompt("hello").await.unwrap();
    // The agent still has the session open: this process may open it again.
    let store = SessionStore::new(h.workspace.sessions_dir());
    let opened = store.open(&h.agent.session_id()).await.unwrap();
    assert_eq!(opened.tree.message_count(), 2);
}

#[cfg(unix)]
#[tokio::test]
async fn a_deleted_session_is_kept_in_the_workspace_and_never_moved_out_through_a_link() {
    let h = harness(vec![ScriptedTurn::text("hi"), ScriptedTurn::text("hi")])
        .build()
        .await;
    h.agent.prompt("hello").await.unwrap();
    let id = h.agent.session_id();
    let store = SessionStore::new(h.workspace.sessions_dir());
    let ws = h.workspace.root();
    // A planted link where deleted sessions go: refused, the session stays where it is.
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.join(".cairn")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.join(".cairn/deleted-sessions")).unwrap();
    let err = store.delete(&id).await.unwrap_err();
    assert!(err.to_string().contains("leads out"), "{err}");
    assert!(h.session_path().is_file());
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    // Without the link it moves into .cairn/deleted-sessions/, listed no more.
    std::fs::remove_file(ws.join(".cairn/deleted-sessions")).unwrap();
    let kept = store.delete(&id).await.unwrap();
    assert_eq!(kept, format!(".cairn/deleted-sessions/{id}.jsonl"));
    assert!(ws.join(&kept).is_file() && !h.session_path().exists());
    assert!(store.list().unwrap().iter().all(|s| s.id != id));
}

#[tokio::test]
async fn the_summary_its_writer_keeps_is_the_one_reading_the_file_gives() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let store = SessionStore::with_catalog(&sessions, dir.path().join("state.db"));
    let mut opened = store.create().unwrap();
    let user = |text: &str| EntryKind::Message {
        message: Message::user(text),
    };
    write(&mut opened, user("Plan the trip to Lisbon"));
    opened.writer.sync().await.unwrap();
    assert_eq!(store.list().unwrap()[0].messages, 1);
    // The writer moves the listed summary on as it appends.
    write(&mut opened, user("And Porto?"));
    let title = "Portugal".to_string();
    write(&mut opened, EntryKind::SessionInfo { title });
    write(&mut opened, user("Trains or buses?"));
    opened.writer.sync().await.unwrap();
    let kept = store.list().unwrap();
    assert_eq!(kept[0].messages, 3);
    assert_eq!(kept[0].title.as_deref(), Some("Portugal"));
    // What a process that reads the file makes of it, field for field.
    assert_eq!(kept, SessionStore::new(&sessions).list().unwrap());
}

/// Appends an entry of `kind` at the session's leaf.
fn write(opened: &mut OpenedSession, kind: EntryKind) {
    let entry = opened.tree.draft(kind);
    opened.writer.append(&entry).unwrap();
    opened.tree.apply(entry);
}

/// Logs what the persistence hook is asked to do, in order.
struct SaveLog(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

#[async_trait::async_trait]
impl cairn_core::hooks::Hook for SaveLog {
    fn name(&self) -> &str {
        "save-log"
    }

    fn subscribes(&self, kind: cairn_core::hooks::HookKind) -> bool {
        use cairn_core::hooks::HookKind;
        matches!(kind, HookKind::Entry | HookKind::SavePoint)
    }

    async fn on(
        &self,
        _ctx: &cairn_core::hooks::HookCtx,
        point: &mut cairn_core::hooks::HookPoint<'_>,
    ) -> Result<cairn_core::hooks::HookDecision, cairn_core::hooks::HookError> {
        use cairn_core::hooks::HookPoint;
        let line = match point {
            HookPoint::Entry { entry } => match &entry.kind {
                EntryKind::ToolStarted { .. } => "tool_started",
                EntryKind::Checkpoint { .. } => "checkpoint",
                _ => "entry",
            },
            HookPoint::SavePoint { wait: true } => "saved",
            _ => "save point",
        };
        self.0.lock().unwrap().push(line.to_string());
        Ok(cairn_core::hooks::HookDecision::Continue)
    }
}

/// A call's start marker is on disk (a waited save point) before the tool runs, so a
/// repair that finds no marker can say the call never started.
#[tokio::test]
async fn a_calls_start_marker_is_saved_before_the_tool_runs() {
    use super::support::{gate_tool, with_tool};
    let (tool, mut gate) = gate_tool("gate", false);
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let h = harness(vec![
        ScriptedTurn::tool_call("gate", json!({"tag": "g"})),
        ScriptedTurn::text("done"),
    ])
    .tools(with_tool(tool))
    .hook(std::sync::Arc::new(SaveLog(log.clone())))
    .build()
    .await;
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("go").await });
    gate.wait_started().await;
    let seen = log.lock().unwrap().clone();
    let marker = seen.iter().position(|l| l == "tool_started").unwrap();
    // The run's checkpoint goes with it: the step the call belongs to, for going on.
    assert_eq!(seen[marker + 1..], ["checkpoint", "saved"], "{seen:?}");
    gate.release(1);
    run.await.unwrap().unwrap();
}
