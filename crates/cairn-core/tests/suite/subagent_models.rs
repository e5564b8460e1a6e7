//! Subagent definitions that name a model: built by the agent's `ModelResolver`, or
//! refused with the reason.

use std::sync::Arc;

use cairn_core::subagents::{ModelResolver, ResolvedModel};
use cairn_llm::{ScriptStep, ScriptedProvider, ScriptedTurn};
use cairn_protocol::{AgentEvent, Outcome};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::subagents::{call, report_of, results, scripted, subagent_of};
use super::support::{Builder, Harness};

/// Builds `fast` (on its own scripted provider) and refuses every other model.
struct FastOnly(Arc<ScriptedProvider>);

#[async_trait::async_trait]
impl ModelResolver for FastOnly {
    async fn resolve(&self, spec: &str) -> Result<ResolvedModel, String> {
        match spec {
            "local/fast" => Ok(ResolvedModel {
                provider: self.0.clone(),
                model: "fast".into(),
                label: "local/fast".into(),
            }),
            other => Err(format!("`{other}` is not configured")),
        }
    }
}

/// A parent that makes `calls` in one step, then says "done"; subagents on the parent's
/// model say so, and `local/fast` is built as `fast`.
fn with_fast(fast: &Arc<ScriptedProvider>, calls: Vec<ScriptStep>) -> Builder {
    scripted(
        vec![ScriptedTurn::steps(calls), ScriptedTurn::text("done")],
        |name, _| ScriptedTurn::text(format!("{name} ran on the parent's model")),
    )
    .models(Arc::new(FastOnly(fast.clone())))
}

/// Runs the parent to completion: the harness and the results of its calls.
async fn answers(builder: Builder) -> (Harness, Vec<String>) {
    let h = builder.build().await;
    let run = h.agent.prompt("go").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    let found = results(h.requests().last().unwrap());
    (h, found)
}

const FAST: &str = "---\ndescription: Quick answers\nmodel: local/fast\n---\nBe quick.\n";
const ELSEWHERE: &str = "---\ndescription: Elsewhere\nmodel: remote/big\n---\nThink.\n";

/// A definition's `model` runs the subagent on the model the agent's resolver builds; a
/// model it cannot build is told to the model.
#[tokio::test]
async fn a_definition_naming_a_model_runs_on_it() {
    let fast = Arc::new(
        ScriptedProvider::with_responder(|request| match results(request).len() {
            0 => ScriptedTurn::text("quick answer"),
            _ => ScriptedTurn::text("never"),
        })
        .recording(),
    );
    let (h, found) = answers(
        with_fast(
            &fast,
            vec![
                call("agent_send", json!({"agent": "fast", "message": "2+2?"})),
                call("agent_send", json!({"agent": "elsewhere", "message": "hi"})),
            ],
        )
        .file("subagents/fast.md", FAST)
        .file("subagents/elsewhere.md", ELSEWHERE),
    )
    .await;
    assert_eq!(report_of(&found[0])["answer"], "quick answer", "{found:?}");
    assert_eq!(
        found[1],
        "Error: the subagent `elsewhere` names the model `remote/big`, which cannot be used: \
         `remote/big` is not configured"
    );
    let asked = fast.requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].model, "fast");
    assert_eq!(subagent_of(&asked[0]).as_deref(), Some("fast"));
    assert!(h.requests().iter().all(|r| subagent_of(r).is_none()));
}

/// Without a resolver (no other models can be built here), a definition naming a model
/// does not start, and says why.
#[tokio::test]
async fn without_models_a_definition_naming_one_does_not_start() {
    let h = scripted(
        vec![
            ScriptedTurn::tool_call("agent_send", json!({"agent": "fast", "message": "2+2?"})),
            ScriptedTurn::text("done"),
        ],
        |_, _| ScriptedTurn::text("never"),
    )
    .file("subagents/fast.md", FAST)
    .build()
    .await;
    h.agent.prompt("go").await.unwrap();
    let found = results(h.requests().last().unwrap());
    assert_eq!(
        found[0],
        "Error: the subagent `fast` names the model `local/fast`, but no other models can be \
         started here"
    );
    assert!(h.requests().iter().all(|r| subagent_of(r).is_none()));
}

/// A worker call's `model` runs that one subagent on it, over its definition's and the
/// parent's; its report and every event it sends say which model it used; a model that
/// is not configured is refused with the reason, and nothing starts.
#[tokio::test]
async fn a_call_may_name_the_model_and_events_say_which_was_used() {
    let fast = Arc::new(
        ScriptedProvider::with_responder(|_| ScriptedTurn::text("fast answer")).recording(),
    );
    let (mut h, found) = answers(with_fast(
        &fast,
        vec![
            call(
                "agent_send",
                json!({"agent": "researcher", "message": "quick", "model": "local/fast"}),
            ),
            call(
                "agent_send",
                json!({"agent": "researcher", "message": "big", "model": "remote/big"}),
            ),
            call(
                "agent_send",
                json!({"agent": "helper", "message": "as you"}),
            ),
        ],
    ))
    .await;
    let on_fast = report_of(&found[0]);
    assert_eq!(on_fast["answer"], "fast answer");
    assert_eq!(on_fast["model_used"], "local/fast");
    assert_eq!(
        found[1],
        "Error: the call asks for the model `remote/big`, which cannot be used: `remote/big` \
         is not configured"
    );
    let inherited = report_of(&found[2]);
    assert_eq!(inherited["answer"], "helper ran on the parent's model");
    assert_eq!(inherited["model_used"], "test-model");
    assert_eq!(fast.requests().len(), 1);

    let used: Vec<(String, Option<String>)> = h
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Subagent {
                agent, model_used, ..
            } => Some((agent, model_used)),
            _ => None,
        })
        .collect();
    assert!(!used.is_empty());
    for (agent, model) in &used {
        let want = if agent == "helper" {
            "test-model"
        } else {
            "local/fast"
        };
        assert_eq!(model.as_deref(), Some(want), "{used:?}");
    }
}
