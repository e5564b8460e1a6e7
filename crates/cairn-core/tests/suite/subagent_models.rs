//! Subagent definitions that name a model: built by the agent's `ModelResolver`, or
//! refused with the reason.

use std::sync::Arc;

use cairn_core::subagents::ModelResolver;
use cairn_llm::{Provider, ScriptedProvider, ScriptedTurn};
use cairn_protocol::Outcome;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::subagents::{call, report_of, results, scripted, subagent_of};

/// Builds `fast` (on its own scripted provider) and refuses every other model.
struct FastOnly(Arc<ScriptedProvider>);

#[async_trait::async_trait]
impl ModelResolver for FastOnly {
    async fn resolve(&self, spec: &str) -> Result<(Arc<dyn Provider>, String), String> {
        match spec {
            "local/fast" => Ok((self.0.clone(), "fast".into())),
            other => Err(format!("`{other}` is not configured")),
        }
    }
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
    let h = scripted(
        vec![
            ScriptedTurn::steps(vec![
                call("agent_send", json!({"agent": "fast", "message": "2+2?"})),
                call("agent_send", json!({"agent": "elsewhere", "message": "hi"})),
            ]),
            ScriptedTurn::text("done"),
        ],
        |name, _| ScriptedTurn::text(format!("{name} ran on the parent's model")),
    )
    .file("subagents/fast.md", FAST)
    .file("subagents/elsewhere.md", ELSEWHERE)
    .models(Arc::new(FastOnly(fast.clone())))
    .build()
    .await;
    let run = h.agent.prompt("go").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    let found = results(h.requests().last().unwrap());
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
