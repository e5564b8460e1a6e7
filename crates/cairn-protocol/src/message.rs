//! Conversation messages and their content blocks.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::tool::ToolCall;

/// One block of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    ToolCall(ToolCall),
    /// The model's reasoning before its answer: shown apart from the answer and kept in
    /// the session. It goes back to a model only where the provider asks for it: signed
    /// blocks (or redacted ones) to the provider that made them; never to OpenAI-style
    /// servers, which refuse reasoning in the input.
    Thinking {
        #[serde(default)]
        text: String,
        /// The provider's signature of `text` (Anthropic), needed to send it back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// Reasoning the provider encrypted (Anthropic `redacted_thinking`): never shown,
        /// sent back as it came.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        redacted: Option<String>,
    },
}

impl ContentBlock {
    /// A thinking block with plain text and nothing to send back.
    pub fn thinking(text: impl Into<String>) -> Self {
        ContentBlock::Thinking {
            text: text.into(),
            signature: None,
            redacted: None,
        }
    }
}

/// Why the model stopped producing output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model asked for tool calls.
    ToolUse,
    /// The output hit the token limit.
    MaxTokens,
    /// The model declined to go on (content filter or refusal).
    Refusal,
    /// The request was cancelled while streaming.
    Aborted,
    /// The stream failed part way.
    Error,
}

/// Token counts reported by a provider (or estimated when it reports none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
    }
}

/// What the model said in one step: text and tool calls, in the order produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub struct AssistantMessage {
    pub content: Vec<ContentBlock>,
    pub stop_reason: StopReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl AssistantMessage {
    /// All text blocks joined.
    pub fn text(&self) -> String {
        blocks_text(&self.content)
    }

    /// The tool calls, in the order the model produced them.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolCall(call) => Some(call),
            ContentBlock::Text { .. } | ContentBlock::Thinking { .. } => None,
        })
    }

    /// The reasoning shown with the answer, its thinking blocks joined.
    pub fn thinking(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Thinking { text, .. } = block {
                out.push_str(text);
            }
        }
        out
    }
}

/// The answer to one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub struct ToolResultMessage {
    pub call_id: String,
    pub tool_name: String,
    pub content: String,
    #[serde(default)]
    pub is_error: bool,
}

/// A message in a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User { content: Vec<ContentBlock> },
    Assistant(AssistantMessage),
    ToolResult(ToolResultMessage),
}

impl Message {
    /// A user message holding one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User {
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    /// The text a person would read in this message.
    pub fn text(&self) -> String {
        match self {
            Message::User { content } => blocks_text(content),
            Message::Assistant(a) => a.text(),
            Message::ToolResult(r) => r.content.clone(),
        }
    }
}

fn blocks_text(blocks: &[ContentBlock]) -> String {
    let mut out = String::new();
    for block in blocks {
        if let ContentBlock::Text { text } = block {
            out.push_str(text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn messages_round_trip_with_role_tags() {
        let msg = Message::Assistant(AssistantMessage {
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
        });
        let value = serde_json::to_value(&msg).unwrap();
        assert_eq!(
            value,
            json!({"role": "assistant", "stop_reason": "tool_use", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_call", "id": "c1", "name": "read_file", "arguments": {"path": "a.md"}}
            ]})
        );
        let back: Message = serde_json::from_value(value).unwrap();
        assert_eq!(back, msg);
    }
}
