//! Work items, strict completion, the block tool and stall detection by cycle.

use cairn_core::tools::{handlers, ToolRegistry};
use cairn_core::Completion;
use cairn_llm::ScriptedTurn;
use cairn_protocol::{AgentEvent, Outcome, WorkStatus};
use pretty_assertions::assert_eq;
use serde_json::json;

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
        ScriptedTurn::text("done."),
    ])
    .tools(tools())
    .config(|c| c.completion = Completion::Strict { nudges: 2 })
    .build()
    .await;
    let run = h.agent.prompt("summarise").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    assert_eq!(run.answer.as_deref(), Some("done."));

    let h = harness(vec![two_items(), ScriptedTurn::text("done")])
        .tools(tools())
        .build()
        .await;
    assert_eq!(
        h.agent.prompt("x").await.unwrap().outcome,
        Outcome::Completed
    );
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
