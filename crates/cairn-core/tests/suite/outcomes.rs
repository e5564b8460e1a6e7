//! Every way a run can end.

use cairn_llm::{ScriptStep, ScriptedTurn};
use cairn_protocol::{ErrorInfo, ErrorKind, Outcome, StopReason};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{briefs, harness, kinds};

#[tokio::test]
async fn a_plain_answer_completes_and_streams_events_in_order() {
    let mut h = harness(vec![ScriptedTurn::steps(vec![
        ScriptStep::Text("Hello ".into()),
        ScriptStep::Text("there.".into()),
        ScriptStep::Usage {
            input_tokens: 12,
            output_tokens: 3,
        },
    ])])
    .build()
    .await;
    let report = h.agent.prompt("hi").await.unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!((report.summary.steps, report.summary.tool_calls), (1, 0));
    assert_eq!(
        (report.summary.input_tokens, report.summary.output_tokens),
        (12, 3)
    );
    assert_eq!(
        kinds(&h.drain()),
        [
            "agent_start",
            "phase_changed",
            "message_start",
            "message_end",
            "context_gathered",
            "turn_start",
            "message_start",
            "message_delta",
            "message_delta",
            "message_end",
            "turn_end",
            "phase_changed",
            "agent_end"
        ]
    );
    assert_eq!(
        briefs(&h.reloaded_context().await),
        ["user: hi", "assistant: Hello there."]
    );
}

#[tokio::test]
async fn tool_results_are_fed_back_until_the_model_stops() {
    let mut h = harness(vec![
        ScriptedTurn::tool_call(
            "write_file",
            json!({"path": "notes/a.md", "content": "alpha\n"}),
        ),
        ScriptedTurn::tool_call("read_file", json!({"path": "notes/a.md"})),
        ScriptedTurn::text("The file says alpha."),
    ])
    .build()
    .await;
    let report = h.agent.prompt("write and read").await.unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!((report.summary.steps, report.summary.tool_calls), (3, 2));
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("notes/a.md")).unwrap(),
        "alpha\n"
    );
    let requests = h.requests();
    assert_eq!(requests.len(), 3);
    let last = briefs(&requests[2].messages);
    assert_eq!(last[0], "user: write and read");
    assert!(last[2].starts_with("result: "), "{last:?}");
    assert!(last[4].contains("alpha"), "{last:?}");
    assert!(requests[0].tools.iter().any(|t| t.name == "bash"));
    assert!(requests[0]
        .system
        .as_deref()
        .unwrap()
        .contains("Workspace instructions (AGENTS.md)"));
    let events = kinds(&h.drain());
    assert_eq!(events.iter().filter(|k| *k == "tool_start").count(), 2);
    assert_eq!(events.iter().filter(|k| *k == "tool_end").count(), 2);
}

#[tokio::test]
async fn a_tool_error_is_told_to_the_model_and_the_run_goes_on() {
    let h = harness(vec![
        ScriptedTurn::tool_call("read_file", json!({"path": "../../etc/passwd"})),
        ScriptedTurn::tool_call("nonexistent_tool", json!({})),
        ScriptedTurn::tool_call("read_file", json!({"wrong": 1})),
        ScriptedTurn::text("I could not read it."),
    ])
    .build()
    .await;
    let report = h.agent.prompt("read passwd").await.unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
    let messages = &h.requests()[3].messages;
    let results: Vec<_> = briefs(messages)
        .into_iter()
        .filter(|m| m.starts_with("result"))
        .collect();
    assert_eq!(results.len(), 3);
    assert!(
        results.iter().all(|r| r.starts_with("result!:")),
        "{results:?}"
    );
    assert!(results[0].contains("outside the workspace"), "{results:?}");
    assert!(
        results[1].contains("no tool named `nonexistent_tool`"),
        "{results:?}"
    );
    assert!(results[2].contains("invalid arguments"), "{results:?}");
}

#[tokio::test]
async fn the_same_call_three_times_in_a_row_stalls() {
    let same = || ScriptedTurn::tool_call("list_dir", json!({"path": "."}));
    let h = harness(vec![same(), same(), same(), ScriptedTurn::text("never")])
        .build()
        .await;
    let report = h.agent.prompt("loop").await.unwrap();
    assert_eq!(
        report.outcome,
        Outcome::Stalled {
            tool: "list_dir".into(),
            repeats: 3,
            detail: None,
        }
    );
    assert_eq!(report.summary.steps, 3);
    assert_eq!(h.provider.remaining(), 1);
    let context = briefs(&h.reloaded_context().await);
    assert!(context
        .last()
        .unwrap()
        .starts_with("result!: Not run: this exact call was made 3 times"));
}

/// A tool that keeps failing, each time differently (no stall yet), is told to the model
/// on its third failure with the errors, and to the user in a notice; the run goes on.
#[tokio::test]
async fn a_tool_failing_three_times_is_told_to_the_model_with_its_errors() {
    let read = |path: &str| ScriptedTurn::tool_call("read_file", json!({"path": path}));
    let mut h = harness(vec![
        read("a.md"),
        ScriptedTurn::tool_call("list_dir", json!({})),
        read("b.md"),
        read("c.md"),
        ScriptedTurn::text("I cannot find the notes"),
    ])
    .build()
    .await;
    let report = h.agent.prompt("read my notes").await.unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
    let results = h.tool_results().await;
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(!results[2].contains("[Cairn]"), "{}", results[2]);
    let told = &results[3];
    assert!(
        told.contains("`read_file` has now failed 3 times in this run"),
        "{told}"
    );
    for path in ["a.md", "b.md", "c.md"] {
        assert!(told.contains(path), "{told}");
    }
    let noticed = h.drain().into_iter().any(|e| matches!(e,
        cairn_protocol::AgentEvent::Notice { message, .. } if message.contains("`read_file` failed 3 times")));
    assert!(noticed);
}

#[tokio::test]
async fn different_calls_do_not_stall_but_the_step_budget_ends_the_run() {
    let turns = (0..5)
        .map(|i| ScriptedTurn::tool_call("list_dir", json!({"path": format!("dir{i}")})))
        .collect();
    let h = harness(turns).config(|c| c.max_steps = 3).build().await;
    let report = h.agent.prompt("explore").await.unwrap();
    assert_eq!(report.outcome, Outcome::MaxSteps { steps: 3 });
    assert_eq!(report.outcome.exit_code(), 3);
    // Every call of the last step is still answered.
    let context = h.reloaded_context().await;
    assert!(briefs(&context).last().unwrap().starts_with("result"));
}

#[tokio::test]
async fn a_refusal_blocks_the_run() {
    let h = harness(vec![ScriptedTurn::steps(vec![
        ScriptStep::Text("I can't help with that.".into()),
        ScriptStep::Finish(StopReason::Refusal),
    ])])
    .build()
    .await;
    let report = h.agent.prompt("do something bad").await.unwrap();
    assert_eq!(
        report.outcome,
        Outcome::Blocked {
            reason: "the model declined to go on: I can't help with that.".into()
        }
    );
}

#[tokio::test]
async fn a_provider_error_fails_the_run_and_keeps_partial_text() {
    let h = harness(vec![ScriptedTurn::steps(vec![
        ScriptStep::Text("Half an ans".into()),
        ScriptStep::Error {
            kind: ErrorKind::Transient,
            message: "connection reset".into(),
        },
    ])])
    .build()
    .await;
    let report = h.agent.prompt("hi").await.unwrap();
    assert_eq!(
        report.outcome,
        Outcome::Failed {
            error: ErrorInfo::new(
                ErrorKind::Transient,
                "temporary provider failure: connection reset"
            )
        }
    );
    assert_eq!(report.outcome.exit_code(), 1);
    assert_eq!(
        briefs(&h.reloaded_context().await),
        ["user: hi", "assistant: Half an ans"]
    );
}

#[tokio::test]
async fn abort_stops_a_streaming_answer_promptly_and_keeps_what_was_said() {
    let mut h = harness(vec![ScriptedTurn::steps(vec![
        ScriptStep::Text("Thinking about".into()),
        ScriptStep::Hang,
    ])])
    .build()
    .await;
    let report = h
        .abort_at("long question", |e| {
            matches!(e, cairn_protocol::AgentEvent::MessageDelta { .. })
        })
        .await;
    assert_eq!(report.outcome, Outcome::Aborted);
    assert_eq!(report.outcome.exit_code(), 130);
    assert_eq!(
        briefs(&h.reloaded_context().await),
        ["user: long question", "assistant: Thinking about"]
    );
}

#[tokio::test]
async fn abort_during_a_tool_call_answers_it_and_ends_the_run() {
    let mut h = harness(vec![
        ScriptedTurn::tool_call("bash", json!({"command": "sleep 30"})),
        ScriptedTurn::text("never"),
    ])
    .config(|c| c.approval = cairn_core::ApprovalPolicy::allow_all())
    .build()
    .await;
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("sleep").await });
    while let Some(event) = h.events.recv().await {
        if matches!(event, cairn_protocol::AgentEvent::ToolStart { .. }) {
            break;
        }
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let report = h.abort_promptly(run).await.unwrap();
    assert_eq!(report.outcome, Outcome::Aborted);
    let context = briefs(&h.reloaded_context().await);
    assert!(context[2].starts_with("result!:"), "{context:?}");
    assert_eq!(h.provider.remaining(), 1);
}

/// How each run ended is kept in the session, and the one that ended at the active leaf is
/// what a reopened session says under its last message.
#[tokio::test]
async fn how_a_run_ended_is_kept_and_read_back_with_the_session() {
    use cairn_core::session::SessionStore;
    let mut h = harness(vec![
        ScriptedTurn::text("done"),
        ScriptedTurn::tool_call("list_dir", json!({})),
        ScriptedTurn::steps(vec![ScriptStep::Text("Looking".into()), ScriptStep::Hang]),
    ])
    .build()
    .await;
    let last_run = |h: &super::support::Harness| {
        let store = SessionStore::new(h.workspace.sessions_dir());
        let loaded = store.load(&h.agent.session_id()).unwrap();
        loaded
            .tree
            .last_run()
            .map(|(outcome, steps, _)| (outcome.clone(), steps, outcome.ended(steps)))
    };
    h.agent.prompt("first").await.unwrap();
    assert_eq!(
        last_run(&h),
        Some((Outcome::Completed, 1, "completed after 1 step".into()))
    );
    h.drain();
    let report = h
        .abort_at("second", |e| {
            matches!(e, cairn_protocol::AgentEvent::MessageDelta { .. })
        })
        .await;
    assert_eq!(report.outcome, Outcome::Aborted);
    assert_eq!(
        last_run(&h),
        Some((Outcome::Aborted, 2, "stopped by you after 2 steps".into()))
    );
}
