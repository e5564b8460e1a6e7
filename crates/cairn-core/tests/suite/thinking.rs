//! A model's reasoning through the harness: streamed apart from the answer, kept in the
//! session in order, and kept when the answer is cut short.

use std::sync::Arc;

use cairn_core::agent::Upkeep;
use cairn_core::session::SessionStore;
use cairn_core::tools::ToolRegistry;
use cairn_core::{Agent, AgentConfig, AgentParts};
use cairn_llm::{ScriptStep, ScriptedProvider, ScriptedTurn};
use cairn_protocol::{AgentEvent, ContentBlock, EntryKind, Message, Outcome, ThinkingLevel};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::harness;

/// The assistant messages' blocks, as `thinking: …`, `text: …` and `call: name`.
fn blocks(messages: &[Message]) -> Vec<Vec<String>> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => Some(
                a.content
                    .iter()
                    .map(|b| match b {
                        ContentBlock::Thinking { text, .. } => format!("thinking: {text}"),
                        ContentBlock::Text { text } => format!("text: {text}"),
                        ContentBlock::ToolCall(call) => format!("call: {}", call.name),
                        ContentBlock::Image(p) => format!("picture: {}", p.sha256),
                        ContentBlock::ServerTool { raw } => format!("server tool: {}", raw["type"]),
                    })
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn reasoning_streams_apart_from_the_answer_and_is_kept_in_order() {
    let mut h = harness(vec![
        ScriptedTurn::steps(vec![
            ScriptStep::Thinking("Which file? ".into()),
            ScriptStep::Thinking("a.md.".into()),
            ScriptStep::ToolCall {
                id: None,
                name: "read_file".into(),
                arguments: json!({"path": "a.md"}),
            },
        ]),
        ScriptedTurn::steps(vec![
            ScriptStep::Thinking("It says alpha.".into()),
            ScriptStep::Text("Alpha.".into()),
        ]),
    ])
    .file("a.md", "alpha\n")
    .build()
    .await;
    let report = h.agent.prompt("what is in a.md?").await.unwrap();
    assert_eq!(report.outcome, Outcome::Completed);

    let thoughts: Vec<String> = h
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::ThinkingDelta { text } => Some(text),
            // Reasoning is never passed on as answer text.
            AgentEvent::MessageDelta { text } => {
                assert!(!text.contains("Which file") && !text.contains("says alpha"));
                None
            }
            _ => None,
        })
        .collect();
    assert_eq!(thoughts, ["Which file? ", "a.md.", "It says alpha."]);
    assert_eq!(
        blocks(&h.reloaded_context().await),
        [
            vec!["thinking: Which file? a.md.", "call: read_file"],
            vec!["thinking: It says alpha.", "text: Alpha."],
        ]
    );
}

#[tokio::test]
async fn reasoning_before_an_abort_is_kept_with_the_partial_answer() {
    let mut h = harness(vec![ScriptedTurn::steps(vec![
        ScriptStep::Thinking("Let me see".into()),
        ScriptStep::Hang,
    ])])
    .build()
    .await;
    let report = h
        .abort_at("long question", |e| {
            matches!(e, AgentEvent::ThinkingDelta { .. })
        })
        .await;
    assert_eq!(report.outcome, Outcome::Aborted);
    assert_eq!(
        blocks(&h.reloaded_context().await),
        [vec!["thinking: Let me see"]]
    );
}

/// The conversation's thinking level reaches every request from the next save point, is
/// recorded in the session, and is read back by an agent over the reopened session; a
/// provider's notice about it is told once, and the run goes on.
#[tokio::test]
async fn the_thinking_level_is_sent_recorded_and_read_back() {
    let declined = ScriptedTurn::steps(vec![
        ScriptStep::Notice("m does not take a reasoning effort".into()),
        ScriptStep::Text("fine".into()),
    ]);
    let mut h = harness(vec![
        ScriptedTurn::text("default"),
        declined.clone(),
        declined,
    ])
    .build()
    .await;
    h.agent.prompt("one").await.unwrap();
    assert_eq!(h.agent.thinking(), None);
    h.agent.set_thinking(ThinkingLevel::High);
    assert_eq!(h.agent.thinking(), Some(ThinkingLevel::High));
    let run = h.agent.prompt("two").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    h.agent.prompt("three").await.unwrap();
    let sent: Vec<_> = h.requests().iter().map(|r| r.thinking).collect();
    assert_eq!(
        sent,
        [None, Some(ThinkingLevel::High), Some(ThinkingLevel::High)]
    );
    let told = h.notices_about("reasoning effort");
    assert_eq!(told.len(), 1, "{told:?}");

    let store = SessionStore::new(h.workspace.sessions_dir());
    let opened = store.open(&h.agent.session_id()).await.unwrap();
    assert_eq!(opened.tree.thinking_level(), Some(ThinkingLevel::High));
    let recorded = opened
        .tree
        .entries()
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::ThinkingLevel { .. }))
        .count();
    assert_eq!(recorded, 1, "a level set once is recorded once");
    let provider = Arc::new(ScriptedProvider::new(vec![ScriptedTurn::text("again")]));
    let reopened = Agent::new(AgentParts {
        workspace: h.workspace.clone(),
        provider: provider.clone(),
        session: opened,
        config: AgentConfig::default(),
        tools: ToolRegistry::builtin(),
        hooks: Vec::new(),
        memory: None,
        upkeep: Upkeep::default(),
        mcp: None,
        models: None,
    });
    assert_eq!(reopened.thinking(), Some(ThinkingLevel::High));
    reopened.prompt("four").await.unwrap();
    assert_eq!(provider.requests()[0].thinking, Some(ThinkingLevel::High));
}
