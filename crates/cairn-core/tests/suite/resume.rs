//! A run cut short (the process gone mid-run) goes on from its last checkpoint: the step
//! count, the queues and the interrupted call's answer taken up, instead of the user asking
//! again.

use std::sync::Arc;

use cairn_core::agent::Upkeep;
use cairn_core::session::SessionStore;
use cairn_core::{Agent, AgentConfig, AgentParts, HarnessError};
use cairn_llm::{ScriptedProvider, ScriptedTurn};
use cairn_protocol::{EntryKind, Message, Outcome};
use serde_json::json;

use super::support::{gate_tool, harness, with_tool};

#[test]
fn a_run_cut_short_goes_on_from_its_checkpoint_with_its_queues() {
    // The first process: a run held in a tool, a follow-up and a next-turn message
    // queued, then everything gone without the run's end being written.
    let first = tokio::runtime::Runtime::new().unwrap();
    let (dir, workspace, session_id) = first.block_on(async {
        let (tool, mut gate) = gate_tool("gate", false);
        let h = harness(vec![
            ScriptedTurn::tool_call("gate", json!({"tag": "a"})),
            ScriptedTurn::tool_call("gate", json!({"tag": "b"})),
        ])
        .tools(with_tool(tool))
        .build()
        .await;
        h.agent.follow_up("and then summarise");
        let agent = h.agent.clone();
        let run = tokio::spawn(async move { agent.prompt("sort the notes").await });
        assert_eq!(gate.wait_started().await, "a");
        h.agent.next_turn("remember the deadline");
        gate.release(1);
        // Held in the second call: the save points since have the queues.
        assert_eq!(gate.wait_started().await, "b");
        std::mem::forget(run);
        let id = h.agent.session_id();
        let (dir, workspace) = (h.dir, h.workspace);
        drop(h.agent);
        (dir, workspace, id)
    });
    first.shutdown_background();

    // The next process opens the session: the run is offered to go on.
    let second = tokio::runtime::Runtime::new().unwrap();
    second.block_on(async {
        let store = SessionStore::new(workspace.sessions_dir());
        let opened = store.open(&session_id).await.unwrap();
        let provider = Arc::new(
            ScriptedProvider::new(vec![
                ScriptedTurn::text("Sorted, though the gate was cut short."),
                ScriptedTurn::text("Summary: sorted."),
                ScriptedTurn::text("Noted."),
            ])
            .recording(),
        );
        let agent = Agent::new(AgentParts {
            workspace: workspace.clone(),
            provider: provider.clone(),
            session: opened,
            config: AgentConfig::default(),
            tools: cairn_core::tools::ToolRegistry::builtin(),
            hooks: Vec::new(),
            memory: None,
            upkeep: Upkeep::default(),
            mcp: None,
            models: None,
        });
        let interrupted = agent.interrupted_run().expect("no interrupted run");
        assert_eq!(interrupted.step, 2);
        assert_eq!(interrupted.message, "sort the notes");
        assert_eq!(interrupted.follow_ups, ["and then summarise"]);
        assert_eq!(interrupted.next_turn, ["remember the deadline"]);

        let report = agent.resume().await.unwrap();
        assert_eq!(report.outcome, Outcome::Completed);
        assert_eq!(report.summary.steps, 4, "2 before the cut, 2 after");
        assert_eq!(report.answer.as_deref(), Some("Summary: sorted."));
        let requests = provider.requests();
        // The interrupted call is answered as the repair says; nothing is asked twice.
        let first_request: Vec<String> = requests[0].messages.iter().map(Message::text).collect();
        assert_eq!(first_request[0], "sort the notes");
        assert_eq!(
            first_request
                .iter()
                .filter(|m| *m == "sort the notes")
                .count(),
            1
        );
        assert!(
            first_request.last().unwrap().starts_with("Interrupted: "),
            "{first_request:?}"
        );
        // The follow-up queued before the cut is delivered where the run would end.
        let second_request: Vec<String> = requests[1].messages.iter().map(Message::text).collect();
        assert_eq!(second_request.last().unwrap(), "and then summarise");
        assert!(agent.interrupted_run().is_none());
        assert!(matches!(
            agent.resume().await,
            Err(HarnessError::NothingToResume)
        ));
        let ended = agent
            .session_snapshot()
            .entries()
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::RunEnd { .. }))
            .count();
        assert_eq!(ended, 1);
        // The next-turn message was kept, and goes just before the next prompt.
        agent.prompt("what next?").await.unwrap();
        let last: Vec<String> = provider.requests()[2]
            .messages
            .iter()
            .map(Message::text)
            .collect();
        assert_eq!(
            last[last.len() - 2..],
            ["remember the deadline", "what next?"]
        );
    });
    drop(dir);
}

/// What is done outside a run (a title, a compaction asked for by hand) writes no
/// checkpoint: a finished session is never offered as cut short.
#[tokio::test]
async fn work_outside_a_run_leaves_nothing_to_resume() {
    let h = harness(vec![
        ScriptedTurn::text("one"),
        ScriptedTurn::text("two"),
        ScriptedTurn::text("## Goal\n- summarised"),
    ])
    .config(|c| {
        c.context = cairn_core::ContextBudget {
            keep_recent_tokens: 1,
            ..cairn_core::ContextBudget::default()
        };
    })
    .build()
    .await;
    h.agent.prompt("first").await.unwrap();
    h.agent.prompt("second").await.unwrap();
    assert!(h.agent.interrupted_run().is_none());
    h.agent.set_title("Renamed").await.unwrap();
    h.agent.compact(None).await.unwrap();
    assert!(h.agent.interrupted_run().is_none());
    let store = SessionStore::new(h.workspace.sessions_dir());
    let reopened = store.load(&h.agent.session_id()).unwrap();
    assert!(reopened.tree.interrupted_run().is_none());
}
