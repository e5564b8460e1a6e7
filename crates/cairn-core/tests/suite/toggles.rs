//! Compaction and tool-result eviction switched off (`[compaction] enabled = false`,
//! `[eviction] enabled = false`): each on its own, as independent toggles.

use std::sync::Arc;

use cairn_core::agent::Upkeep;
use cairn_core::upkeep::ModelChoice;
use cairn_core::{AgentConfig, ApprovalPolicy, ContextBudget};
use cairn_llm::{ScriptStep, ScriptedProvider, ScriptedTurn};
use cairn_protocol::{AgentEvent, ErrorKind, Message, Outcome};
use serde_json::json;

use super::support::harness;

#[tokio::test]
async fn with_compaction_off_the_conversation_is_sent_whole_and_an_overflow_says_so() {
    let summariser = Arc::new(ScriptedProvider::new(Vec::new()).recording());
    let mut turns: Vec<ScriptedTurn> = (0..6).map(|_| ScriptedTurn::text("ok")).collect();
    turns.push(ScriptedTurn::steps(vec![ScriptStep::Error {
        kind: ErrorKind::ContextOverflow,
        message: "prompt is too long".into(),
    }]));
    let mut h = harness(turns)
        .config(|c: &mut AgentConfig| {
            c.context = ContextBudget {
                window: Some(3_000),
                reserve_tokens: 500,
                keep_recent_tokens: 500,
                compact: false,
                compaction: false,
                ..ContextBudget::default()
            };
        })
        .upkeep(Upkeep {
            flush: None,
            compaction: Some(ModelChoice::new(summariser.clone(), "summary")),
            intent: None,
            flushed: None,
        })
        .build()
        .await;
    let filler = "lorem ipsum dolor sit amet ".repeat(60);
    for n in 0..6 {
        let report = h.agent.prompt(format!("FACT-{n} {filler}")).await.unwrap();
        assert_eq!(report.outcome, Outcome::Completed);
    }
    // Far past the window, every message still goes to the model, and nothing compacts.
    let last = h.requests().last().cloned().unwrap();
    let sent = format!("{:?}", last.messages);
    for n in 0..6 {
        assert!(sent.contains(&format!("FACT-{n}")), "FACT-{n} was not sent");
    }
    let report = h.agent.prompt("one more").await.unwrap();
    let Outcome::Failed { error } = report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert_eq!(error.code, ErrorKind::ContextOverflow);
    assert!(
        error
            .message
            .contains("compaction is off (`[compaction] enabled = false`)"),
        "{}",
        error.message
    );
    let events = h.drain();
    assert!(!events
        .iter()
        .any(|e| matches!(e, AgentEvent::CompactionStart { .. })));
    assert!(summariser.requests().is_empty());
    // The saved conversation holds every message, with no summary in place of any.
    let context = format!("{:?}", h.reloaded_context().await);
    assert!(!context.contains("[Summary of"));
    assert!(context.contains("FACT-0"));
}

#[tokio::test]
async fn with_eviction_off_a_long_tool_result_reaches_the_model_whole() {
    let mut h = harness(vec![
        ScriptedTurn::tool_call("bash", json!({"command": "seq 1 3000"})),
        ScriptedTurn::text("done"),
    ])
    .config(|c: &mut AgentConfig| {
        // What `[eviction] enabled = false` sets: no result is long enough.
        c.evict_tool_output_chars = usize::MAX;
        c.approval = ApprovalPolicy::allow_all();
    })
    .build()
    .await;
    h.agent.prompt("count").await.unwrap();
    let context = h.reloaded_context().await;
    let Message::ToolResult(bash) = &context[2] else {
        panic!("{context:?}")
    };
    assert!(bash.content.contains("\n1500\n"), "{}", bash.content);
    assert!(!bash.content.contains("not shown"), "{}", bash.content);
    assert!(!h.workspace.root().join(".cairn/tool-results").exists());
    drop(h.drain());
}
