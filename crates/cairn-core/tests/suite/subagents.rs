//! Subagents through the scripted provider: one responder answers the parent and the
//! subagents, told apart by the role line in the subagent's system prompt.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use cairn_core::session::SessionStore;
use cairn_core::tools::{handlers, ToolRegistry};
use cairn_llm::{ChatRequest, ScriptStep, ScriptedTurn};
use cairn_protocol::{AgentEvent, Message, Outcome};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

use super::support::{harness, Builder};

const RESEARCHER: &str =
    "---\nname: researcher\ndescription: Looks things up in notes\ntools: [read_file, list_dir]\n---\nRead, never write.\n";
const HELPER: &str = "---\ndescription: Does anything\n---\nHelp.\n";

fn tools() -> ToolRegistry {
    let mut tools = ToolRegistry::builtin();
    for tool in handlers::work::tools()
        .into_iter()
        .chain(handlers::subagents::tools())
    {
        tools.register(tool);
    }
    tools
}

/// The subagent a request comes from, if any.
pub(super) fn subagent_of(request: &ChatRequest) -> Option<String> {
    let system = request.system.as_deref().unwrap_or_default();
    let start = system.find("# Your role: the subagent `")? + "# Your role: the subagent `".len();
    Some(system[start..].split('`').next()?.to_string())
}

/// Tool results in a request.
pub(super) fn results(request: &ChatRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some(r.content.clone()),
            _ => None,
        })
        .collect()
}

fn user_text(request: &ChatRequest) -> String {
    request
        .messages
        .iter()
        .find_map(|m| matches!(m, Message::User { .. }).then(|| m.text()))
        .unwrap_or_default()
}

pub(super) fn call(name: &str, arguments: Value) -> ScriptStep {
    ScriptStep::ToolCall {
        id: None,
        name: name.into(),
        arguments,
    }
}

/// A parent that plays `parent` in order, and subagents answered by `child`.
pub(super) fn scripted(
    parent: Vec<ScriptedTurn>,
    child: impl Fn(&str, &ChatRequest) -> ScriptedTurn + Send + Sync + 'static,
) -> Builder {
    reactive(
        move |step, _| {
            parent
                .get(step)
                .cloned()
                .unwrap_or_else(|| ScriptedTurn::text("out of script"))
        },
        child,
    )
}

/// A parent answered by `parent(step, request)`, and subagents by `child`.
fn reactive(
    parent: impl Fn(usize, &ChatRequest) -> ScriptedTurn + Send + Sync + 'static,
    child: impl Fn(&str, &ChatRequest) -> ScriptedTurn + Send + Sync + 'static,
) -> Builder {
    let step = AtomicUsize::new(0);
    harness(Vec::new())
        .tools(tools())
        .file("subagents/researcher.md", RESEARCHER)
        .file("subagents/helper.md", HELPER)
        .file("notes.md", "x is 42\n")
        .responder(move |request| match subagent_of(request) {
            Some(name) => child(&name, request),
            None => parent(step.fetch_add(1, Ordering::SeqCst), request),
        })
}

/// The task ids in a request's `agent_spawn` results.
fn task_ids(request: &ChatRequest) -> Vec<String> {
    results(request)
        .iter()
        .filter_map(|r| serde_json::from_str::<Value>(r).ok())
        .filter_map(|v| v["task_id"].as_str().map(str::to_string))
        .collect()
}

pub(super) fn report_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn nested(events: &[AgentEvent]) -> Vec<(String, AgentEvent)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Subagent { agent, event, .. } => Some((agent.clone(), (**event).clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn agent_send_runs_a_subagent_in_its_own_linked_session_and_reports() {
    let mut h = scripted(
        vec![
            ScriptedTurn::tool_call(
                "agent_send",
                json!({"agent": "researcher", "message": "What is x? See notes.md"}),
            ),
            ScriptedTurn::text("x is 42, says the researcher"),
        ],
        |_, request| match results(request).len() {
            0 => ScriptedTurn::tool_call("read_file", json!({"path": "notes.md"})),
            _ => ScriptedTurn::text("x is 42"),
        },
    )
    .build()
    .await;
    let run = h.agent.prompt("find x").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    assert_eq!(run.answer.as_deref(), Some("x is 42, says the researcher"));
    let requests = h.requests();
    let child_request = requests.iter().find(|r| subagent_of(r).is_some()).unwrap();
    let child_tools: Vec<String> = child_request.tools.iter().map(|t| t.name.clone()).collect();
    assert_eq!(child_tools, vec!["list_dir", "read_file", "report"]);
    assert!(child_request
        .system
        .as_deref()
        .unwrap()
        .contains("Read, never write."));
    assert_eq!(user_text(child_request), "What is x? See notes.md");

    let parent_last = requests.last().unwrap();
    let report = report_of(&results(parent_last)[0]);
    let child_id = report["session_id"].as_str().unwrap().to_string();
    assert_eq!(
        report,
        json!({"agent": "researcher", "task_id": report["task_id"], "status": "completed",
               "answer": "x is 42", "steps": 2, "tools_used": ["read_file"],
               "session_id": child_id, "model_used": "test-model"})
    );

    let store = SessionStore::new(h.workspace.sessions_dir());
    let child = store.load(&child_id).unwrap().tree;
    let link = child.header().parent.clone().unwrap();
    assert_eq!(link.session_id, h.agent.session_id());
    assert_eq!(link.agent, "researcher");
    let parent_tree = h.agent.session_snapshot();
    let asking = parent_tree.get(link.entry_id.as_deref().unwrap()).unwrap();
    assert!(serde_json::to_string(asking)
        .unwrap()
        .contains("agent_send"));
    assert_eq!(child.message_count(), 4);
    let listed = store.list().unwrap();
    let child_line = listed.iter().find(|s| s.id == child_id).unwrap();
    assert_eq!(
        child_line.parent_session.as_deref(),
        Some(h.agent.session_id().as_str())
    );
    assert_eq!(store.latest().unwrap(), Some(h.agent.session_id()));

    let events = nested(&h.drain());
    assert!(events.iter().any(|(agent, e)| agent == "researcher"
        && matches!(e, AgentEvent::ToolStart { name, .. } if name == "read_file")));
    assert!(matches!(
        events.last(),
        Some((_, AgentEvent::AgentEnd { .. }))
    ));
}

#[tokio::test]
async fn unknown_and_broken_subagents_are_told_to_the_model() {
    let h = scripted(
        vec![
            ScriptedTurn::steps(vec![
                call("agent_send", json!({"agent": "nobody", "message": "hi"})),
                call("agent_send", json!({"agent": "broken", "message": "hi"})),
            ]),
            ScriptedTurn::text("ok"),
        ],
        |_, _| ScriptedTurn::text("never"),
    )
    .file(
        "subagents/broken.md",
        "---\ndescription: d\nmax_steps: many\n---\n",
    )
    .build()
    .await;
    let run = h.agent.prompt("go").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    let found = results(h.requests().last().unwrap());
    assert!(
        found[0].contains("no subagent named `nobody`; the subagents are: helper, researcher"),
        "{found:?}"
    );
    assert!(
        found[1].contains("subagents/broken.md: line 3: "),
        "{found:?}"
    );
    assert!(h.requests().iter().all(|r| subagent_of(r).is_none()));
}

#[tokio::test]
async fn a_subagent_that_takes_too_long_reports_a_timeout_with_what_it_did() {
    let h = scripted(
        vec![
            ScriptedTurn::tool_call(
                "agent_send",
                json!({"agent": "helper", "message": "work", "timeout_s": 1}),
            ),
            ScriptedTurn::text("it timed out"),
        ],
        |_, request| match results(request).len() {
            0 => ScriptedTurn::steps(vec![
                ScriptStep::Text("Looking around first.".into()),
                call("list_dir", json!({})),
            ]),
            _ => ScriptedTurn::steps(vec![ScriptStep::Hang]),
        },
    )
    .build()
    .await;
    let run = tokio::time::timeout(Duration::from_secs(20), h.agent.prompt("go"))
        .await
        .expect("the parent must not hang")
        .unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    let report = report_of(&results(h.requests().last().unwrap())[0]);
    assert_eq!(report["status"], "timeout");
    assert_eq!(report["answer"], "Looking around first.");
    assert_eq!(report["tools_used"], json!(["list_dir"]));
    assert_eq!(report["steps"], 2);
}

#[tokio::test]
async fn two_background_subagents_run_at_the_same_time_and_are_collected() {
    let mut h = reactive(
        |step, request| match step {
            0 => ScriptedTurn::steps(vec![
                call("agent_spawn", json!({"agent": "helper", "task": "one"})),
                call("agent_spawn", json!({"agent": "researcher", "task": "two"})),
            ]),
            1 => ScriptedTurn::steps(
                task_ids(request)
                    .into_iter()
                    .map(|id| call("task_output", json!({"task_id": id})))
                    .collect(),
            ),
            _ => {
                let answers: Vec<String> = results(request)
                    .iter()
                    .filter_map(|r| serde_json::from_str::<Value>(r).ok())
                    .filter_map(|v| v["report"]["answer"].as_str().map(str::to_string))
                    .collect();
                ScriptedTurn::text(answers.join(" + "))
            }
        },
        |_, request| {
            ScriptedTurn::steps(vec![
                ScriptStep::DelayMs(300),
                ScriptStep::Text(format!("answer to {}", user_text(request))),
            ])
        },
    )
    .build()
    .await;
    let run = h.agent.prompt("do both").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    assert_eq!(run.answer.as_deref(), Some("answer to one + answer to two"));
    let events = nested(&h.drain());
    let starts: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, (_, e))| matches!(e, AgentEvent::AgentStart { .. }))
        .map(|(i, _)| i)
        .collect();
    let first_end = events
        .iter()
        .position(|(_, e)| matches!(e, AgentEvent::AgentEnd { .. }))
        .unwrap();
    assert_eq!(starts.len(), 2, "{events:?}");
    assert!(
        starts[1] < first_end,
        "the second started only after the first ended: {events:?}"
    );
}

#[tokio::test]
async fn a_cancelled_or_uncollected_background_subagent_is_stopped_and_said() {
    let mut h = reactive(
        |step, request| match step {
            0 => ScriptedTurn::steps(vec![
                call(
                    "agent_spawn",
                    json!({"agent": "helper", "task": "cancel me"}),
                ),
                call(
                    "agent_spawn",
                    json!({"agent": "helper", "task": "forget me"}),
                ),
            ]),
            1 => ScriptedTurn::tool_call("task_cancel", json!({"task_id": task_ids(request)[0]})),
            _ => ScriptedTurn::text("bye"),
        },
        |_, _| ScriptedTurn::steps(vec![ScriptStep::Hang]),
    )
    .build()
    .await;
    let run = tokio::time::timeout(Duration::from_secs(30), h.agent.prompt("go"))
        .await
        .expect("the run must end")
        .unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    let cancelled = report_of(&results(h.requests().last().unwrap())[2]);
    assert_eq!(cancelled["status"], "cancelled");
    let events = h.drain();
    let notice = events.iter().find_map(|e| match e {
        AgentEvent::Notice { message, .. } if message.contains("subagents were stopped") => {
            Some(message.clone())
        }
        _ => None,
    });
    assert!(notice.unwrap().contains("helper (task-"));
    let ends: Vec<Outcome> = nested(&events)
        .into_iter()
        .filter_map(|(_, e)| match e {
            AgentEvent::AgentEnd { outcome, .. } => Some(outcome),
            _ => None,
        })
        .collect();
    assert_eq!(ends, vec![Outcome::Aborted, Outcome::Aborted]);
}

#[tokio::test]
async fn aborting_the_parent_aborts_the_subagent() {
    let mut h = scripted(
        vec![ScriptedTurn::tool_call(
            "agent_send",
            json!({"agent": "helper", "message": "wait", "timeout_s": 600}),
        )],
        |_, _| ScriptedTurn::steps(vec![ScriptStep::Hang]),
    )
    .build()
    .await;
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("go").await });
    loop {
        let event = h.events.recv().await.unwrap();
        if let AgentEvent::Subagent { event, .. } = &event {
            if matches!(**event, AgentEvent::TurnStart { .. }) {
                break;
            }
        }
    }
    let run = h.abort_promptly(run).await.unwrap();
    assert_eq!(run.outcome, Outcome::Aborted);
    let ended = nested(&h.drain()).into_iter().any(|(_, e)| {
        matches!(
            e,
            AgentEvent::AgentEnd {
                outcome: Outcome::Aborted,
                ..
            }
        )
    });
    assert!(ended);
}

#[tokio::test]
async fn nesting_stops_at_the_depth_cap() {
    // Depth 2 (the default): the subagent may start one, whose tools lack the subagent
    // tools.
    let h = scripted(
        vec![
            ScriptedTurn::tool_call(
                "agent_send",
                json!({"agent": "helper", "message": "level one"}),
            ),
            ScriptedTurn::text("done"),
        ],
        |_, request| match (user_text(request).as_str(), results(request).len()) {
            ("level one", 0) => ScriptedTurn::tool_call(
                "agent_send",
                json!({"agent": "helper", "message": "level two"}),
            ),
            _ => ScriptedTurn::text("leaf"),
        },
    )
    .build()
    .await;
    h.agent.prompt("go").await.unwrap();
    let tools_of = |message: &str| -> Vec<String> {
        let requests = h.requests();
        let request = requests.iter().find(|r| user_text(r) == message).unwrap();
        request.tools.iter().map(|t| t.name.clone()).collect()
    };
    assert!(tools_of("level one").contains(&"agent_send".to_string()));
    let deepest = tools_of("level two");
    assert!(
        !deepest
            .iter()
            .any(|t| t.starts_with("agent_") || t.starts_with("task_")),
        "{deepest:?}"
    );
    assert!(deepest.contains(&"read_file".to_string()));

    // Depth 1: the subagent gets no subagent tools at all.
    let h = scripted(
        vec![
            ScriptedTurn::tool_call("agent_send", json!({"agent": "helper", "message": "only"})),
            ScriptedTurn::text("done"),
        ],
        |_, _| ScriptedTurn::text("leaf"),
    )
    .config(|c| c.subagents.max_depth = 1)
    .build()
    .await;
    h.agent.prompt("go").await.unwrap();
    let requests = h.requests();
    let child = requests.iter().find(|r| subagent_of(r).is_some()).unwrap();
    assert!(!child.tools.iter().any(|t| t.name == "agent_spawn"));
}

/// A parent that sends `send` to the helper, whose first step is a bash call that asks.
fn helper_asking(send: Value) -> Builder {
    scripted(
        vec![
            ScriptedTurn::tool_call("agent_send", send),
            ScriptedTurn::text("done"),
        ],
        |_, request| match results(request).len() {
            0 => ScriptedTurn::tool_call("bash", json!({"command": "echo hi > made.txt"})),
            _ => ScriptedTurn::text("wrote it"),
        },
    )
}

#[tokio::test]
async fn a_subagents_approval_is_answered_through_the_parent() {
    let mut h = helper_asking(json!({"agent": "helper", "message": "write"}))
        .build()
        .await;
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("go").await });
    let request_id = loop {
        let event = h.events.recv().await.unwrap();
        let (agents, inner) = event.innermost();
        if let AgentEvent::ApprovalRequested {
            request_id, name, ..
        } = inner
        {
            assert_eq!(agents, vec!["helper"]);
            assert_eq!(name, "bash");
            break request_id.clone();
        }
    };
    assert!(!h.workspace.root().join("made.txt").exists());
    h.agent
        .resolve_approval(
            &request_id,
            cairn_protocol::ApprovalDecision::AllowOnce,
            None,
        )
        .unwrap();
    let run = run.await.unwrap().unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    assert!(h.workspace.root().join("made.txt").exists());
}

#[tokio::test]
async fn a_subagent_that_times_out_while_asking_withdraws_its_request() {
    let mut h = helper_asking(json!({"agent": "helper", "message": "write", "timeout_s": 1}))
        .build()
        .await;
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("go").await });
    let mut asked = None;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), h.events.recv())
            .await
            .expect("the request was never withdrawn")
            .unwrap();
        match event.innermost().1 {
            AgentEvent::ApprovalRequested { request_id, .. } => asked = Some(request_id.clone()),
            AgentEvent::ApprovalResolved { request_id, .. }
                if asked.as_ref() == Some(request_id) =>
            {
                break
            }
            _ => {}
        }
    }
    let late = h.agent.resolve_approval(
        &asked.unwrap(),
        cairn_protocol::ApprovalDecision::AllowOnce,
        None,
    );
    assert!(late.is_err(), "a withdrawn request took an answer");
    let run = run.await.unwrap().unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    assert!(!h.workspace.root().join("made.txt").exists());
}

#[tokio::test]
async fn a_subagents_file_changes_are_kept_with_the_run_that_started_it() {
    let mut h = scripted(
        vec![
            ScriptedTurn::tool_call(
                "agent_send",
                json!({"agent": "helper", "message": "note it"}),
            ),
            ScriptedTurn::text("done"),
        ],
        |_, request| match results(request).len() {
            0 => ScriptedTurn::tool_call(
                "write_file",
                json!({"path": "knowledge/found.md", "content": "# Found\n"}),
            ),
            _ => ScriptedTurn::text("noted"),
        },
    )
    .build()
    .await;
    let run = h.agent.prompt("go").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    let parent = h.agent.session_id();
    let run_id = h
        .drain()
        .iter()
        .find_map(|e| match e {
            AgentEvent::AgentStart { run_id, .. } => Some(run_id.clone()),
            _ => None,
        })
        .unwrap();
    // Listed with the parent's run, where the user reviews it, and revertible there.
    let kept = cairn_memory::changes::list(&h.workspace, &parent).unwrap();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].note.path, "knowledge/found.md");
    assert_eq!(kept[0].note.run_id, run_id);
    cairn_memory::changes::revert(
        &h.workspace,
        &parent,
        &[kept[0].note.id.clone()],
        chrono::Utc::now(),
    )
    .unwrap();
    assert!(!h.workspace.root().join("knowledge/found.md").exists());
}
