//! Tool calls of one step: concurrency and order.

use cairn_llm::{ScriptStep, ScriptedTurn};
use cairn_protocol::{AgentEvent, Outcome};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{briefs, gate_tool, harness, with_tool};

fn calls(tags: &[&str]) -> ScriptedTurn {
    ScriptedTurn::steps(
        tags.iter()
            .map(|t| ScriptStep::ToolCall {
                id: None,
                name: "gate".into(),
                arguments: json!({"tag": t}),
            })
            .collect(),
    )
}

#[tokio::test]
async fn independent_calls_run_concurrently_and_answer_in_call_order() {
    let (tool, mut gate) = gate_tool("gate", true);
    let mut h = harness(vec![calls(&["a", "b", "c"]), ScriptedTurn::text("done")])
        .tools(with_tool(tool))
        .build()
        .await;
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("go").await });
    // All three are running before any is released: they run side by side.
    let mut started = vec![
        gate.wait_started().await,
        gate.wait_started().await,
        gate.wait_started().await,
    ];
    started.sort();
    assert_eq!(started, ["a", "b", "c"]);
    gate.release(3);
    assert_eq!(run.await.unwrap().unwrap().outcome, Outcome::Completed);
    let results: Vec<_> = briefs(&h.requests()[1].messages)
        .into_iter()
        .skip(2)
        .collect();
    assert_eq!(
        results,
        ["result: done a", "result: done b", "result: done c"]
    );
    let ends = h
        .drain()
        .into_iter()
        .filter(|e| matches!(e, AgentEvent::ToolEnd { .. }))
        .count();
    assert_eq!(ends, 3);
}

#[tokio::test]
async fn calls_that_change_things_run_one_at_a_time() {
    let (tool, mut gate) = gate_tool("gate", false);
    let h = harness(vec![calls(&["a", "b"]), ScriptedTurn::text("done")])
        .tools(with_tool(tool))
        .build()
        .await;
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("go").await });
    assert_eq!(gate.wait_started().await, "a");
    tokio::task::yield_now().await;
    assert!(gate.started.try_recv().is_err(), "b must wait for a");
    gate.release(1);
    assert_eq!(gate.wait_started().await, "b");
    gate.release(1);
    assert_eq!(run.await.unwrap().unwrap().outcome, Outcome::Completed);
}

/// A call to `write_file` with the id `id`, as a server that numbers its calls afresh in
/// every answer sends it.
fn write_as(id: &str, path: &str) -> ScriptStep {
    ScriptStep::ToolCall {
        id: Some(id.into()),
        name: "write_file".into(),
        arguments: json!({"path": path, "content": format!("# {path}\n")}),
    }
}

#[tokio::test]
async fn calls_that_reuse_an_id_get_their_own_and_keep_their_own_changes() {
    let mut h = harness(vec![
        ScriptedTurn::steps(vec![
            write_as("call_0", "knowledge/a.md"),
            write_as("call_0", "knowledge/b.md"),
        ]),
        ScriptedTurn::steps(vec![write_as("call_0", "knowledge/c.md")]),
        ScriptedTurn::text("done"),
    ])
    .build()
    .await;
    let run = h.agent.prompt("write three notes").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    let started: Vec<String> = h
        .drain()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolStart { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["call_0", "call_0-2", "call_0-3"]);
    // Each change is kept under its own call, for its own card.
    let kept = cairn_memory::changes::list(&h.workspace, &h.agent.session_id()).unwrap();
    let mut by_call: Vec<(String, String)> = kept
        .iter()
        .map(|c| (c.note.call_id.clone(), c.note.path.clone()))
        .collect();
    by_call.sort();
    assert_eq!(
        by_call,
        [
            ("call_0".to_string(), "knowledge/a.md".to_string()),
            ("call_0-2".into(), "knowledge/b.md".into()),
            ("call_0-3".into(), "knowledge/c.md".into()),
        ]
    );
    // The model is shown each result answering its own call.
    let last = h.provider.requests().pop().unwrap();
    let answered: Vec<String> = last
        .messages
        .iter()
        .filter_map(|m| match m {
            cairn_protocol::Message::ToolResult(r) => Some(r.call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(answered, ["call_0", "call_0-2", "call_0-3"]);
}

/// An active tool subset: only those tools are offered and run, an unknown name is
/// refused naming it, and the getters say what the next request will use.
#[tokio::test]
async fn set_active_tools_offers_and_runs_only_the_named_tools() {
    let h = harness(vec![
        ScriptedTurn::tool_call("write_file", json!({"path": "a.txt", "content": "x"})),
        ScriptedTurn::text("ok"),
        ScriptedTurn::text("all back"),
    ])
    .build()
    .await;
    let err = h
        .agent
        .set_active_tools(Some(vec!["read_file".into(), "teleport".into()]))
        .unwrap_err();
    assert!(
        err.to_string().contains("no tool named `teleport`"),
        "{err}"
    );
    assert!(h.agent.tool_names().contains(&"write_file".to_string()));
    h.agent
        .set_active_tools(Some(vec!["read_file".into(), "list_dir".into()]))
        .unwrap();
    assert_eq!(h.agent.tool_names(), ["list_dir", "read_file"]);
    h.agent.set_model("model-b", None);
    h.agent.set_system_prompt(Some("Be brief.".into()));
    assert_eq!(h.agent.model(), "model-b");
    assert_eq!(h.agent.system_prompt().as_deref(), Some("Be brief."));
    h.agent.prompt("write a file").await.unwrap();
    let offered: Vec<String> = h.requests()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(offered, ["list_dir", "read_file"]);
    assert!(
        !h.workspace.root().join("a.txt").exists(),
        "an inactive tool never runs"
    );
    let context = briefs(&h.reloaded_context().await);
    assert!(
        context[2].starts_with("result!: There is no tool named `write_file`"),
        "{context:?}"
    );
    h.agent.set_active_tools(None).unwrap();
    h.agent.prompt("again").await.unwrap();
    let offered = h.requests()[2].tools.len();
    assert!(offered > 2, "{offered}");
}
