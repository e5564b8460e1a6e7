//! A model's reasoning through the harness: streamed apart from the answer, kept in the
//! session in order, and kept when the answer is cut short.

use cairn_llm::{ScriptStep, ScriptedTurn};
use cairn_protocol::{AgentEvent, ContentBlock, Message, Outcome};
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
