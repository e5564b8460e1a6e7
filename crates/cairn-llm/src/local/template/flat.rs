//! A conversation flattened to `(role, text)` turns, for templates that know no tool
//! calls: tool calls become text in the assistant turn, and tool results become `tool`
//! turns when the template knows that role, otherwise user turns that name the tool.

use cairn_protocol::{ContentBlock, Message};

/// Whether a template's source handles messages of role `tool`.
pub(crate) fn mentions_tool_role(template: &str) -> bool {
    ["'tool'", "\"tool\"", "<|tool|>", "[|tool|]"]
        .iter()
        .any(|marker| template.contains(marker))
}

/// The conversation as `(role, text)` turns, NUL bytes removed (llama.cpp takes C strings).
pub(crate) fn turns(
    system: Option<&str>,
    messages: &[Message],
    tool_role: bool,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    if let Some(system) = system.filter(|s| !s.trim().is_empty()) {
        out.push(("system", clean(system.to_string())));
    }
    for message in messages {
        let turn = match message {
            Message::User { .. } => ("user", message.text_for_model()),
            Message::Assistant(a) => ("assistant", assistant_text(&a.content)),
            Message::ToolResult(r) if tool_role => ("tool", r.content_for_model()),
            Message::ToolResult(r) => {
                let status = if r.is_error { "failed" } else { "returned" };
                let text = format!(
                    "[tool `{}` {status}]\n{}",
                    r.tool_name,
                    r.content_for_model()
                );
                ("user", text)
            }
        };
        out.push((turn.0, clean(turn.1)));
    }
    out
}

/// An assistant turn's text, its tool calls written out in order.
fn assistant_text(content: &[ContentBlock]) -> String {
    let mut text = String::new();
    for block in content {
        match block {
            ContentBlock::Text { text: t } => text.push_str(t),
            ContentBlock::ToolCall(call) => {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&format!(
                    "[called tool `{}` with {}]",
                    call.name, call.arguments
                ));
            }
            // Reasoning is the model's own scratch: chat templates leave it out of the
            // history, and so does this one.
            ContentBlock::Thinking { .. } => {}
            // A model's answer holds no pictures.
            ContentBlock::Image(_) => {}
            // Another provider's server tool: only that provider reads it back.
            ContentBlock::ServerTool { .. } => {}
        }
    }
    text
}

fn clean(text: String) -> String {
    if text.contains('\0') {
        text.replace('\0', "")
    } else {
        text
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use cairn_protocol::{AssistantMessage, StopReason, ToolCall, ToolResultMessage};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    /// A user asks, the assistant calls a tool, the tool answers.
    pub(crate) fn conversation() -> Vec<Message> {
        vec![
            Message::user("read a.md"),
            Message::Assistant(AssistantMessage {
                content: vec![
                    ContentBlock::Text {
                        text: "Let me look.".into(),
                    },
                    ContentBlock::ToolCall(ToolCall {
                        id: "c1".into(),
                        name: "read_file".into(),
                        arguments: json!({"path": "a.md"}),
                    }),
                ],
                stop_reason: StopReason::ToolUse,
                usage: None,
                model: None,
            }),
            Message::ToolResult(ToolResultMessage {
                call_id: "c1".into(),
                tool_name: "read_file".into(),
                content: "hello\0".into(),
                is_error: false,
                pictures: Vec::new(),
            }),
        ]
    }

    #[test]
    fn tool_results_become_user_turns_without_a_tool_role() {
        let got = turns(Some("be brief"), &conversation(), false);
        let want = vec![
            ("system", "be brief".to_string()),
            ("user", "read a.md".to_string()),
            (
                "assistant",
                "Let me look.\n[called tool `read_file` with {\"path\":\"a.md\"}]".to_string(),
            ),
            ("user", "[tool `read_file` returned]\nhello".to_string()),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn tool_results_keep_their_role_when_the_template_has_one() {
        let got = turns(Some("  "), &conversation(), true);
        assert_eq!(got.len(), 3, "a blank system prompt is left out");
        assert_eq!(got[2], ("tool", "hello".to_string()));
    }

    #[test]
    fn detects_a_tool_role_in_template_source() {
        assert!(mentions_tool_role("{% if message['role'] == 'tool' %}"));
        assert!(!mentions_tool_role("<|im_start|>{{ message['role'] }}"));
    }
}
