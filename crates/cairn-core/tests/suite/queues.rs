//! Busy, steer, follow-up, next-turn, abort and settings changes during a run.

use cairn_core::HarnessError;
use cairn_llm::ScriptedTurn;
use cairn_protocol::{EntryKind, Outcome, Phase, QueueMode};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{brief, briefs, gate_tool, harness, with_tool, Gate, Harness, ABORT_LIMIT};

fn gate_call() -> ScriptedTurn {
    ScriptedTurn::tool_call("gate", json!({"tag": "g"}))
}

type Running = tokio::task::JoinHandle<Result<cairn_core::agent::RunReport, HarnessError>>;

/// A run of `prompt` held in the gate tool (started), the model answering `then` after.
async fn held_in_the_gate(prompt: &str, then: &str) -> (Harness, Running, Gate) {
    let (tool, mut gate) = gate_tool("gate", false);
    let h = harness(vec![gate_call(), ScriptedTurn::text(then)])
        .tools(with_tool(tool))
        .build()
        .await;
    let agent = h.agent.clone();
    let prompt = prompt.to_string();
    let run = tokio::spawn(async move { agent.prompt(&prompt).await });
    gate.wait_started().await;
    (h, run, gate)
}

#[tokio::test]
async fn prompt_while_running_is_busy_and_changes_nothing() {
    let (h, run, gate) = held_in_the_gate("first", "done").await;
    assert_eq!(h.agent.phase(), Phase::Turn);
    let before = h.agent.session_snapshot().entries().len();
    let err = h.agent.prompt("second").await.unwrap_err();
    assert!(matches!(err, HarnessError::Busy(_)), "{err}");
    assert!(matches!(
        h.agent.navigate(None).await,
        Err(HarnessError::Busy(_))
    ));
    assert_eq!(h.agent.session_snapshot().entries().len(), before);
    gate.release(1);
    assert_eq!(run.await.unwrap().unwrap().outcome, Outcome::Completed);
    assert_eq!(h.agent.phase(), Phase::Idle);
    assert_eq!(h.requests().len(), 2);
    assert!(!briefs(&h.requests()[1].messages)
        .iter()
        .any(|m| m.contains("second")));
}

#[tokio::test]
async fn steering_arrives_after_the_steps_tool_results() {
    let (tool, mut gate) = gate_tool("gate", false);
    let two_calls = ScriptedTurn::steps(vec![
        cairn_llm::ScriptStep::ToolCall {
            id: None,
            name: "gate".into(),
            arguments: json!({"tag": "a"}),
        },
        cairn_llm::ScriptStep::ToolCall {
            id: None,
            name: "gate".into(),
            arguments: json!({"tag": "b"}),
        },
    ]);
    let h = harness(vec![two_calls, ScriptedTurn::text("ok, in French")])
        .tools(with_tool(tool))
        .build()
        .await;
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("translate").await });
    assert_eq!(gate.wait_started().await, "a");
    h.agent.steer("answer in French");
    gate.release(2);
    let report = run.await.unwrap().unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!(
        briefs(&h.requests()[1].messages),
        [
            "user: translate",
            r#"assistant: gate({"tag":"a"}) gate({"tag":"b"})"#,
            "result: done a",
            "result: done b",
            "user: answer in French",
        ]
    );
}

#[tokio::test]
async fn a_follow_up_continues_the_run_after_it_would_have_ended() {
    let (tool, mut gate) = gate_tool("gate", false);
    let h = harness(vec![
        gate_call(),
        ScriptedTurn::text("first answer"),
        ScriptedTurn::text("second"),
    ])
    .tools(with_tool(tool))
    .build()
    .await;
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("go").await });
    gate.wait_started().await;
    h.agent.follow_up("and then summarise");
    gate.release(1);
    let report = run.await.unwrap().unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!(report.summary.steps, 3);
    let last = briefs(&h.requests()[2].messages);
    assert_eq!(
        last[last.len() - 2..],
        ["assistant: first answer", "user: and then summarise"]
    );
}

/// Two follow-ups queued in a run: `all` gives both in one turn; `one-at-a-time` gives
/// the first, lets the model answer it, then the second.
#[tokio::test]
async fn follow_ups_come_all_at_once_or_one_at_a_time() {
    for mode in [QueueMode::All, QueueMode::OneAtATime] {
        let (tool, mut gate) = gate_tool("gate", false);
        let h = harness(vec![
            gate_call(),
            ScriptedTurn::text("first answer"),
            ScriptedTurn::text("second answer"),
            ScriptedTurn::text("third answer"),
        ])
        .tools(with_tool(tool))
        .build()
        .await;
        h.agent.set_queue_modes(None, Some(mode));
        let agent = h.agent.clone();
        let run = tokio::spawn(async move { agent.prompt("go").await });
        gate.wait_started().await;
        h.agent.follow_up("one");
        h.agent.follow_up("two");
        gate.release(1);
        assert_eq!(run.await.unwrap().unwrap().outcome, Outcome::Completed);
        let requests = h.requests();
        let tail = |i: usize| {
            let all = briefs(&requests[i].messages);
            all[all.len() - 3..].to_vec()
        };
        match mode {
            QueueMode::All => {
                assert_eq!(requests.len(), 3, "{mode:?}");
                assert_eq!(
                    tail(2),
                    ["assistant: first answer", "user: one", "user: two"]
                );
            }
            QueueMode::OneAtATime => {
                assert_eq!(requests.len(), 4, "{mode:?}");
                assert_eq!(
                    tail(2),
                    ["result: done g", "assistant: first answer", "user: one"]
                );
                assert_eq!(
                    tail(3),
                    ["user: one", "assistant: second answer", "user: two"]
                );
            }
        }
    }
}

/// Steering one at a time: each save point delivers the oldest steering message.
#[tokio::test]
async fn steering_one_at_a_time_arrives_one_per_save_point() {
    let (tool, mut gate) = gate_tool("gate", false);
    let h = harness(vec![
        gate_call(),
        ScriptedTurn::text("took the first"),
        ScriptedTurn::text("took the second"),
    ])
    .tools(with_tool(tool))
    .build()
    .await;
    h.agent.set_queue_modes(Some(QueueMode::OneAtATime), None);
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("go").await });
    gate.wait_started().await;
    h.agent.steer("in French");
    h.agent.steer("and short");
    gate.release(1);
    assert_eq!(run.await.unwrap().unwrap().outcome, Outcome::Completed);
    let requests = h.requests();
    assert_eq!(requests.len(), 3);
    let second = briefs(&requests[1].messages);
    assert_eq!(second.last().map(String::as_str), Some("user: in French"));
    let third = briefs(&requests[2].messages);
    assert_eq!(
        third[third.len() - 2..],
        ["assistant: took the first", "user: and short"]
    );
}

#[tokio::test]
async fn abort_drops_steering_and_follow_ups_but_next_turn_survives() {
    let (h, run, _gate) = held_in_the_gate("go", "fresh start").await;
    h.agent.steer("steer text");
    h.agent.follow_up("follow text");
    h.agent.next_turn("remember the budget");
    assert_eq!(
        h.abort_promptly(run).await.unwrap().outcome,
        Outcome::Aborted
    );
    let report = h.agent.prompt("new question").await.unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
    let messages = briefs(&h.requests()[1].messages);
    assert!(!messages
        .iter()
        .any(|m| m.contains("steer text") || m.contains("follow text")));
    assert_eq!(
        messages[messages.len() - 2..],
        ["user: remember the budget", "user: new question"]
    );
}

#[tokio::test]
async fn settings_change_at_the_next_save_point_not_mid_request() {
    let (h, run, gate) = held_in_the_gate("go", "done").await;
    h.agent.set_model("bigger-model", None);
    h.agent.set_system_prompt(Some("You are terse.".into()));
    let mut tools = cairn_core::tools::ToolRegistry::builtin();
    tools.retain(&["read_file".to_string()]);
    h.agent.set_tools(tools);
    gate.release(1);
    run.await.unwrap().unwrap();
    let requests = h.requests();
    assert_eq!(
        (requests[0].model.as_str(), requests[1].model.as_str()),
        ("test-model", "bigger-model")
    );
    assert!(requests[1]
        .system
        .as_deref()
        .unwrap()
        .starts_with("You are terse."));
    let names: Vec<_> = requests[1].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["read_file"]);
    let tree = h.agent.session_snapshot();
    assert!(tree.entries().iter().any(|e| matches!(
        &e.kind,
        EntryKind::ModelChange { model, .. } if model == "bigger-model"
    )));
    assert!(brief(&requests[1].messages[2]).starts_with("result:"));
}

/// `abort` returns when the agent is idle: the run has ended and saved, and a new prompt
/// is taken at once; on an idle agent it returns at once.
#[tokio::test]
async fn abort_returns_when_the_agent_is_idle() {
    let (h, run, _gate) = held_in_the_gate("first", "again").await;
    tokio::time::timeout(ABORT_LIMIT, h.agent.abort())
        .await
        .expect("abort returns once the run has stopped");
    assert_eq!(h.agent.phase(), Phase::Idle);
    let report = h.agent.prompt("second").await.unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!(run.await.unwrap().unwrap().outcome, Outcome::Aborted);
    tokio::time::timeout(std::time::Duration::from_millis(100), h.agent.abort())
        .await
        .expect("idle: at once");
}

/// Each change of the follow-up queue is an event: queued, delivered at the stop, taken
/// back by the user, or given back when the run is stopped.
#[tokio::test]
async fn follow_ups_are_told_as_they_change_and_given_back_on_a_stop() {
    use cairn_protocol::AgentEvent;
    let queues = |events: Vec<AgentEvent>| -> Vec<(Vec<String>, Vec<String>)> {
        events
            .into_iter()
            .filter_map(|e| match e {
                AgentEvent::FollowUps { queued, returned } => Some((queued, returned)),
                _ => None,
            })
            .collect()
    };
    let s = |v: &[&str]| v.iter().map(|t| t.to_string()).collect::<Vec<_>>();
    let (mut h, run, gate) = held_in_the_gate("go", "done").await;
    h.agent.follow_up("one");
    h.agent.follow_up("two");
    assert_eq!(h.agent.take_follow_up(0).as_deref(), Some("one"));
    assert_eq!(h.agent.follow_ups(), ["two"]);
    gate.release(1);
    run.await.unwrap().unwrap();
    assert_eq!(
        queues(h.drain()),
        [
            (s(&["one"]), s(&[])),
            (s(&["one", "two"]), s(&[])),
            (s(&["two"]), s(&[])),
            (s(&[]), s(&[])),
        ]
    );

    let (mut h, run, _gate) = held_in_the_gate("go", "done").await;
    h.agent.follow_up("keep me");
    assert_eq!(
        h.abort_promptly(run).await.unwrap().outcome,
        Outcome::Aborted
    );
    let told = queues(h.drain());
    assert_eq!(told.last(), Some(&(s(&[]), s(&["keep me"]))), "{told:?}");
}
