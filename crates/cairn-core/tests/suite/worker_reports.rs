//! A subagent's `report`: findings, learnings and escalations reach the parent's result,
//! an escalation reaches the user, and learnings reach the daily log with a link to the
//! subagent's session when the parent's memory flush is on.

use std::sync::Arc;

use cairn_core::agent::Upkeep;
use cairn_core::upkeep::ModelChoice;
use cairn_llm::{ScriptedProvider, ScriptedTurn};
use cairn_protocol::{AgentEvent, Outcome};
use serde_json::json;

use super::subagents::{report_of, results, scripted};

fn reported() -> serde_json::Value {
    json!({
        "findings": [{"claim": "x is 42", "evidence": "notes.md#L1"}],
        "learnings": ["x is kept in notes.md"],
        "escalations": [{"reason": "the budget is not in the notes", "needs": "the user's budget"}]
    })
}

#[tokio::test]
async fn a_subagents_report_reaches_the_parent_the_user_and_the_log() {
    let flush = Arc::new(ScriptedProvider::new(vec![ScriptedTurn::text("NOTHING")]));
    let mut h = scripted(
        vec![
            ScriptedTurn::tool_call(
                "agent_send",
                json!({"agent": "researcher", "message": "What is x?"}),
            ),
            ScriptedTurn::text("x is 42"),
        ],
        |_, request| match results(request).len() {
            0 => ScriptedTurn::tool_call("report", reported()),
            _ => ScriptedTurn::text("x is 42"),
        },
    )
    .upkeep(Upkeep {
        flush: Some(ModelChoice::new(flush, "flush-model")),
        ..Upkeep::default()
    })
    .build()
    .await;
    let run = h.agent.prompt("find x").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    let parent_last = h.requests().last().unwrap().clone();
    let report = report_of(&results(&parent_last)[0]);
    assert_eq!(report["findings"], reported()["findings"]);
    assert_eq!(report["learnings"], reported()["learnings"]);
    assert_eq!(report["escalations"], reported()["escalations"]);
    let told = h.drain().into_iter().any(|e| {
        matches!(e, AgentEvent::Notice { message, .. }
            if message.contains("escalates: the budget is not in the notes; it needs: the user's budget"))
    });
    assert!(told);
    let today = chrono::Local::now().format("%Y-%m-%d").to_string();
    let log =
        std::fs::read_to_string(h.workspace.root().join(format!("memory/{today}.md"))).unwrap();
    let child = report["session_id"].as_str().unwrap();
    assert!(log.contains("- x is kept in notes.md"), "{log}");
    assert!(
        log.contains(&format!("(../sessions/{child}.jsonl#")),
        "{log}"
    );
}

/// Without the parent's flush nothing is logged; a report that carries nothing, or
/// too much, is refused with the reason and nothing of it is kept.
#[tokio::test]
async fn learnings_wait_for_the_flush_and_a_bad_report_is_refused() {
    let mut h = scripted(
        vec![
            ScriptedTurn::tool_call(
                "agent_send",
                json!({"agent": "researcher", "message": "What is x?"}),
            ),
            ScriptedTurn::text("done"),
        ],
        |_, request| match results(request).len() {
            0 => ScriptedTurn::tool_call("report", json!({"learnings": []})),
            1 => ScriptedTurn::tool_call("report", json!({"learnings": vec!["a"; 21]})),
            2 => ScriptedTurn::tool_call("report", json!({"learnings": ["x lives in notes.md"]})),
            _ => ScriptedTurn::text("x is 42"),
        },
    )
    .build()
    .await;
    h.agent.prompt("find x").await.unwrap();
    let parent_last = h.requests().last().unwrap().clone();
    let report = report_of(&results(&parent_last)[0]);
    assert_eq!(report["learnings"], json!(["x lives in notes.md"]));
    let child_results: Vec<String> = h
        .requests()
        .iter()
        .filter(|r| super::subagents::subagent_of(r).is_some())
        .flat_map(results)
        .collect();
    assert!(
        child_results
            .iter()
            .any(|r| r.contains("give at least one finding")),
        "{child_results:?}"
    );
    assert!(
        child_results
            .iter()
            .any(|r| r.contains("at most 20 of each kind")),
        "{child_results:?}"
    );
    assert!(
        !h.workspace.root().join("memory").exists()
            || std::fs::read_dir(h.workspace.root().join("memory"))
                .unwrap()
                .count()
                == 0
    );
    let _ = h.drain();
}
