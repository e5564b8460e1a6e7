//! Limits that keep a run from being stuck: the run's deadline and each purpose's limit
//! on one model call.

use std::sync::Arc;
use std::time::Duration;

use cairn_core::agent::Upkeep;
use cairn_core::upkeep::ModelChoice;
use cairn_llm::{ScriptStep, ScriptedProvider, ScriptedTurn};
use cairn_protocol::{AgentEvent, ErrorKind, NoticeLevel, Outcome};

use super::support::harness;

fn hang() -> ScriptedTurn {
    ScriptedTurn::steps(vec![ScriptStep::Hang])
}

async fn within<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), future)
        .await
        .expect("the run must not be left stuck")
}

#[tokio::test]
async fn a_chat_call_past_its_limit_fails_the_run_saying_which_limit() {
    let h = harness(vec![hang()])
        .config(|c| c.timeouts.chat = Some(Duration::from_secs(1)))
        .build()
        .await;
    let run = within(h.agent.prompt("hi")).await.unwrap();
    let Outcome::Failed { error } = &run.outcome else {
        panic!("{:?}", run.outcome);
    };
    assert_eq!(error.code, ErrorKind::Transient);
    assert!(error.message.contains("[timeouts] chat"), "{error:?}");
    // The agent is usable again.
    assert_eq!(h.agent.phase(), cairn_protocol::Phase::Idle);
}

#[tokio::test]
async fn a_run_past_its_deadline_fails_with_a_timeout() {
    let h = harness(vec![
        ScriptedTurn::tool_call("list_dir", serde_json::json!({})),
        hang(),
    ])
    .config(|c| c.deadline = Some(Duration::from_secs(1)))
    .build()
    .await;
    let run = within(h.agent.prompt("hi")).await.unwrap();
    let Outcome::Failed { error } = &run.outcome else {
        panic!("{:?}", run.outcome);
    };
    assert_eq!(error.code, ErrorKind::Timeout);
    assert!(error.message.contains("deadline of 1 s"), "{error:?}");
    assert_eq!(run.summary.steps, 2);
}

#[tokio::test]
async fn a_flush_past_its_limit_is_reported_and_the_run_still_completes() {
    let flush = Arc::new(ScriptedProvider::new(vec![hang()]));
    let mut h = harness(vec![ScriptedTurn::text("hello")])
        .upkeep(Upkeep {
            flush: Some(ModelChoice::new(flush, "flush-model")),
            ..Upkeep::default()
        })
        .config(|c| c.timeouts.memory_flush = Some(Duration::from_secs(1)))
        .build()
        .await;
    let run = within(h.agent.prompt("remember this")).await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    let warned = h.drain().into_iter().any(|e| {
        matches!(e, AgentEvent::Notice { level: NoticeLevel::Warning, message }
            if message.contains("[timeouts] limit"))
    });
    assert!(warned);
}
