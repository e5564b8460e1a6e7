//! Work items, strict completion, the block tool and stall detection by cycle.

use cairn_core::tools::{handlers, ToolRegistry};
use cairn_core::Completion;
use cairn_llm::ScriptedTurn;
use cairn_protocol::{AgentEvent, Outcome, WorkStatus};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

use super::support::{briefs, harness};

fn tools() -> ToolRegistry {
    let mut tools = ToolRegistry::builtin();
    for tool in handlers::work::tools() {
        tools.register(tool);
    }
    tools
}

fn two_items() -> ScriptedTurn {
    ScriptedTurn::tool_call(
        "todo_write",
        json!({"items": [
            {"text": "read the notes", "status": "done"},
            {"text": "write the summary", "status": "in_progress"}
        ]}),
    )
}

#[tokio::test]
async fn the_work_list_is_kept_in_the_session_and_shown_live() {
    let mut h = harness(vec![
        two_items(),
        ScriptedTurn::tool_call("todo_list", json!({})),
        ScriptedTurn::text("ok"),
    ])
    .tools(tools())
    .build()
    .await;
    let run = h.agent.prompt("plan").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    let live = h.drain().into_iter().find_map(|e| match e {
        AgentEvent::WorkItems { items } => Some(items),
        _ => None,
    });
    let live = live.unwrap();
    assert_eq!(live[1].status, WorkStatus::InProgress);
    assert_eq!(live[1].id, "2");
    let listed = h.requests()[2].messages.last().unwrap().text();
    assert_eq!(listed, "[x] 1. read the notes\n[~] 2. write the summary");
    // Reloaded from disk, the list is there.
    let store = cairn_core::session::SessionStore::new(h.workspace.sessions_dir());
    let tree = store.load(&h.agent.session_id()).unwrap().tree;
    assert_eq!(tree.work_items(), live);
}

#[tokio::test]
async fn strict_completion_nudges_then_ends_blocked_naming_the_open_items() {
    let h = harness(vec![
        two_items(),
        ScriptedTurn::text("all done!"),
        ScriptedTurn::text("really done"),
        ScriptedTurn::text("done, promise"),
        ScriptedTurn::text("never asked"),
    ])
    .tools(tools())
    .config(|c| c.completion = Completion::Strict { nudges: 2 })
    .build()
    .await;
    let run = h.agent.prompt("summarise").await.unwrap();
    assert_eq!(
        run.outcome,
        Outcome::Blocked {
            reason: "work items still open: 2. write the summary".into()
        }
    );
    assert_eq!(run.outcome.exit_code(), 3);
    assert_eq!(h.requests().len(), 4);
    let nudges: Vec<String> = briefs(&h.reloaded_context().await)
        .into_iter()
        .filter(|m| m.starts_with("user: [Cairn]"))
        .collect();
    assert_eq!(nudges.len(), 2);
    assert!(nudges[0].contains("2. write the summary"));
}

#[tokio::test]
async fn strict_completion_completes_once_the_items_are_done_and_lenient_never_nudges() {
    let finish = ScriptedTurn::tool_call(
        "todo_write",
        json!({"items": [
            {"id": "1", "text": "read the notes", "status": "done"},
            {"id": "2", "text": "write the summary", "status": "done"}
        ]}),
    );
    let h = harness(vec![
        two_items(),
        ScriptedTurn::text("done?"),
        finish,
        ScriptedTurn::tool_call("work_complete", json!({"summary": "done."})),
        ScriptedTurn::text("never asked"),
    ])
    .tools(tools())
    .config(|c| c.completion = Completion::Strict { nudges: 2 })
    .build()
    .await;
    let run = h.agent.prompt("summarise").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    assert_eq!(run.answer.as_deref(), Some("done."));
    assert_eq!(h.requests().len(), 4);

    let h = harness(vec![two_items(), ScriptedTurn::text("done")])
        .tools(tools())
        .build()
        .await;
    assert_eq!(
        h.agent.prompt("x").await.unwrap().outcome,
        Outcome::Completed
    );
}

/// `work_complete` ends the run once the work checks out: refused while an item is
/// open, or while a deliverable or a done item's artifact is not in the workspace (the
/// model is told which); accepted, its summary and deliverables are the run's answer.
#[tokio::test]
async fn work_complete_ends_the_run_only_when_the_work_checks_out() {
    let items = |status: &str| {
        ScriptedTurn::tool_call(
            "todo_write",
            json!({"items": [
                {"id": "1", "text": "draft", "status": status, "priority": "high", "artifact": "notes/draft.md"},
                {"id": "2", "text": "tidy", "status": "done", "priority": "low"}
            ]}),
        )
    };
    let complete = |deliverables: Value| {
        ScriptedTurn::tool_call(
            "work_complete",
            json!({"summary": "Drafted the notes.", "deliverables": deliverables}),
        )
    };
    let h = harness(vec![
        items("in_progress"),
        complete(json!([])),
        items("done"),
        complete(json!(["notes/draft.md"])),
        ScriptedTurn::tool_call(
            "write_file",
            json!({"path": "notes/draft.md", "content": "# Draft\n"}),
        ),
        complete(json!(["notes/draft.md", "../outside.md"])),
        complete(json!(["notes/draft.md"])),
        ScriptedTurn::text("never asked"),
    ])
    .tools(tools())
    .config(|c| c.approval = cairn_core::ApprovalPolicy::allow_all())
    .build()
    .await;
    let run = h.agent.prompt("draft the notes").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    assert_eq!(
        run.answer.as_deref(),
        Some("Drafted the notes.\n\nDeliverables:\n- notes/draft.md")
    );
    let results = h.tool_results().await;
    assert!(
        results[0].contains("[~] 1. draft (high priority) → notes/draft.md"),
        "{results:?}"
    );
    assert!(
        results[0].contains("[x] 2. tidy (low priority)"),
        "{results:?}"
    );
    assert!(
        results[1].contains("work items are still open: 1. draft"),
        "{results:?}"
    );
    assert!(
        results[3].contains("not in the workspace: notes/draft.md"),
        "{results:?}"
    );
    assert!(
        results[5].contains("is not a path in the workspace"),
        "{results:?}"
    );
    assert!(
        results[6].starts_with("The run ends as completed."),
        "{results:?}"
    );
    assert_eq!(h.requests().len(), 7);
}

/// A strict run whose model answers without `work_complete` is asked to finish, a bounded
/// number of times, then ends blocked; a lenient run completes on a plain answer.
#[tokio::test]
async fn a_strict_run_needs_work_complete_to_complete() {
    let h = harness(vec![
        ScriptedTurn::text("all done"),
        ScriptedTurn::text("really"),
        ScriptedTurn::text("truly"),
        ScriptedTurn::text("never asked"),
    ])
    .tools(tools())
    .config(|c| c.completion = Completion::Strict { nudges: 2 })
    .build()
    .await;
    let run = h.agent.prompt("do it").await.unwrap();
    let Outcome::Blocked { reason } = &run.outcome else {
        panic!("{:?}", run.outcome);
    };
    assert!(reason.contains("without calling work_complete"), "{reason}");
    assert_eq!(h.requests().len(), 3);
    let asked: Vec<String> = briefs(&h.reloaded_context().await)
        .into_iter()
        .filter(|m| m.starts_with("user: [Cairn]"))
        .collect();
    assert_eq!(asked.len(), 2);
    assert!(asked[0].contains("call work_complete"), "{asked:?}");
}

#[tokio::test]
async fn a_blocked_item_ends_a_strict_run_blocked_with_its_note() {
    let h = harness(vec![
        ScriptedTurn::tool_call(
            "todo_write",
            json!({"items": [{"text": "deploy", "status": "blocked", "note": "no access to the server"}]}),
        ),
        ScriptedTurn::text("cannot deploy"),
    ])
    .tools(tools())
    .config(|c| c.completion = Completion::Strict { nudges: 2 })
    .build()
    .await;
    let run = h.agent.prompt("deploy").await.unwrap();
    assert_eq!(
        run.outcome,
        Outcome::Blocked {
            reason: "item 1. deploy is blocked (no access to the server)".into()
        }
    );
}

#[tokio::test]
async fn the_block_tool_ends_the_run_blocked_with_the_models_reason() {
    let mut h = harness(vec![
        ScriptedTurn::tool_call("block", json!({"reason": "I need the API token"})),
        ScriptedTurn::text("never asked"),
    ])
    .tools(tools())
    .build()
    .await;
    let run = h.agent.prompt("call the API").await.unwrap();
    assert_eq!(
        run.outcome,
        Outcome::Blocked {
            reason: "I need the API token".into()
        }
    );
    assert_eq!(h.requests().len(), 1);
    let ended = h.drain().into_iter().any(|e| {
        matches!(
            e,
            AgentEvent::AgentEnd {
                outcome: Outcome::Blocked { .. },
                ..
            }
        )
    });
    assert!(ended);
    let last = briefs(&h.reloaded_context().await).pop().unwrap();
    assert_eq!(
        last,
        "result: The run ends as blocked: I need the API token"
    );
}

#[tokio::test]
async fn a_cycle_of_two_calls_stalls_the_run() {
    let a = || ScriptedTurn::tool_call("list_dir", json!({"path": "."}));
    let b = || ScriptedTurn::tool_call("read_file", json!({"path": "AGENTS.md"}));
    let h = harness(vec![
        a(),
        b(),
        a(),
        b(),
        a(),
        b(),
        ScriptedTurn::text("never"),
    ])
    .build()
    .await;
    let run = h.agent.prompt("loop").await.unwrap();
    let Outcome::Stalled { detail, .. } = &run.outcome else {
        panic!("{:?}", run.outcome);
    };
    assert!(
        detail.as_deref().unwrap().contains("list_dir → read_file"),
        "{detail:?}"
    );
    assert_eq!(run.summary.steps, 6);
    assert_eq!(run.outcome.exit_code(), 3);
}
