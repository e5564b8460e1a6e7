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
