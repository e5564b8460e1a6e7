//! Conversation messages and their content blocks.

use std::sync::Arc;

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
    /// A picture (pasted, dropped, attached or read by a tool).
    Image(Picture),
    /// A tool the provider ran on its own servers while answering (Anthropic's web
    /// search): the call or its result, exactly as the provider sent it, encrypted parts
    /// included. Cairn runs nothing. It goes back only to the provider that made it, which
    /// wants it unchanged; other providers and the message's text leave it out. The page
    /// is told of such a search by `tool_start` and `tool_end` events, not by this block.
    #[ts(skip)]
    ServerTool {
        raw: serde_json::Value,
    },
}

/// A picture in a conversation. Its bytes are kept once in the workspace by content hash
/// (`.cairn/attachments/<sha256>.<ext>`); a message records what it is, never the bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub struct Picture {
    /// The SHA-256 of its bytes, in lowercase hex: its name in the attachments folder.
    pub sha256: String,
    /// `image/png`, `image/jpeg`, `image/webp` or `image/gif`, from its bytes.
    pub media_type: String,
    /// Its size in bytes.
    #[ts(type = "number")]
    pub bytes: u64,
    pub width: u32,
    pub height: u32,
    /// The name it had (a file's name), when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The text read in it (OCR), when there is any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The copy a model that sees is sent: attached before a request, never saved.
    #[serde(skip)]
    #[ts(skip)]
    pub sent: Option<Arc<SentPicture>>,
}

/// The encoded copy of a picture a model is sent, scaled to its provider's limits.
#[derive(Clone, PartialEq, Eq)]
pub struct SentPicture {
    pub media_type: String,
    /// The bytes, base64-encoded (both wire formats take them so).
    pub base64: String,
    pub width: u32,
    pub height: u32,
}

impl std::fmt::Debug for SentPicture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentPicture")
            .field("media_type", &self.media_type)
            .field("base64_len", &self.base64.len())
            .field("width", &self.width)
            .field("height", &self.height)
            .finish()
    }
}

impl Picture {
    /// The file name it is kept under in the attachments folder.
    pub fn file_name(&self) -> String {
        let ext = match self.media_type.as_str() {
            "image/png" => "png",
            "image/jpeg" => "jpg",
            "image/webp" => "webp",
            "image/gif" => "gif",
            _ => "bin",
        };
        format!("{}.{ext}", self.sha256)
    }

    /// How a model that does not see it is told of it: its name, size and hash, and the
    /// text read in it, marked as read from a picture.
    pub fn as_text(&self) -> String {
        let name = self.name.as_deref().unwrap_or("picture");
        let short = self.sha256.get(..12).unwrap_or(&self.sha256);
        let head = format!(
            "[picture {name}, {} × {} px, sha256:{short}]",
            self.width, self.height
        );
        match self
            .text
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            Some(text) => format!(
                "{head}\nText read from the picture (OCR; the picture itself was not sent):\n\
                 <picture-text>\n{text}\n</picture-text>"
            ),
            None => {
                format!("{head} (no text could be read from it; the picture itself was not sent)")
            }
        }
    }

    /// The text read in it, labelled, to go beside the picture itself; `None` when there
    /// is none.
    pub fn ocr_note(&self) -> Option<String> {
        let text = self
            .text
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())?;
        Some(format!(
            "Text read from the picture above (OCR, may hold errors):\n<picture-text>\n{text}\n</picture-text>"
        ))
    }

    /// One line naming it, as a compacted conversation keeps it.
    pub fn mention(&self) -> String {
        let name = self.name.as_deref().unwrap_or("picture");
        let short = self.sha256.get(..12).unwrap_or(&self.sha256);
        format!(
            "[picture {name}, {} × {} px, sha256:{short}]",
            self.width, self.height
        )
    }
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
            ContentBlock::Text { .. }
            | ContentBlock::Thinking { .. }
            | ContentBlock::Image(_)
            | ContentBlock::ServerTool { .. } => None,
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
    /// Pictures the tool gave (`read_file` on a picture).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pictures: Vec<Picture>,
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

    /// What a model that does not see pictures is given for this message: its text, and
    /// each picture as its name, size and the text read in it.
    pub fn text_for_model(&self) -> String {
        match self {
            Message::User { content } => blocks_text_for_model(content),
            Message::Assistant(a) => a.text(),
            Message::ToolResult(r) => r.content_for_model(),
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

impl ToolResultMessage {
    /// The result's text, and each picture it gave as text (see [`Picture::as_text`]).
    pub fn content_for_model(&self) -> String {
        let mut out = self.content.clone();
        for picture in &self.pictures {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&picture.as_text());
        }
        out
    }
}

/// Text blocks joined, and each picture as text, on lines of its own.
pub fn blocks_text_for_model(blocks: &[ContentBlock]) -> String {
    let mut out = String::new();
    for block in blocks {
        match block {
            ContentBlock::Text { text } => out.push_str(text),
            ContentBlock::Image(picture) => {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(&picture.as_text());
                out.push('\n');
            }
            ContentBlock::ToolCall(_)
            | ContentBlock::Thinking { .. }
            | ContentBlock::ServerTool { .. } => {}
        }
    }
    out
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

    #[test]
    fn a_server_tool_block_is_kept_as_it_came_and_is_no_text() {
        let raw = json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
                         "content": [{"type": "web_search_result", "url": "https://a.example",
                                      "encrypted_content": "Eq8B"}]});
        let answer = AssistantMessage {
            content: vec![
                ContentBlock::ServerTool { raw: raw.clone() },
                ContentBlock::Text {
                    text: "Found it.".into(),
                },
            ],
            stop_reason: StopReason::EndTurn,
            usage: None,
            model: None,
        };
        let value = serde_json::to_value(&answer).unwrap();
        assert_eq!(
            value["content"][0],
            json!({"type": "server_tool", "raw": raw})
        );
        let back: AssistantMessage = serde_json::from_value(value).unwrap();
        assert_eq!(back, answer);
        assert_eq!(back.text(), "Found it.");
        assert_eq!(back.tool_calls().count(), 0);
    }
}
