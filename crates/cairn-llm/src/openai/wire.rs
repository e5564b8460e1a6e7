//! The chat-completions wire format: request bodies built from a [`ChatRequest`], and the
//! streamed chunks and whole completions the server sends back.
//!
//! Response types are lenient: every field is optional or defaulted, because the
//! OpenAI-compatible servers (Ollama, llama.cpp, vLLM, OpenRouter ...) each leave out or
//! null different ones.

use cairn_protocol::{ContentBlock, Message, Picture, ToolCall, ToolSpec};
use serde::{Deserialize, Serialize};

use crate::provider::ChatRequest;

/// The body of `POST /chat/completions`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct CompletionRequest {
    pub model: String,
    pub messages: Vec<WireMessage>,
    pub stream: bool,
    pub stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<WireTool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// What OpenAI itself takes instead of `max_tokens` (its reasoning models refuse that).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// `low`, `medium` or `high` for a thinking level other than off; never sent for off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct StreamOptions {
    pub include_usage: bool,
}

/// One message, tagged by `role`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub(crate) enum WireMessage {
    System {
        content: String,
    },
    User {
        content: UserContent,
    },
    Assistant {
        /// `null` when the message only holds tool calls.
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A user message's content: text, or parts when it holds pictures.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum UserContent {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Part {
    Text { text: String },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ImageUrl {
    /// A `data:` URL.
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct WireToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: WireFunctionCall,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct WireFunctionCall {
    pub name: String,
    /// The arguments as a JSON *string*, as the API wants them.
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct WireTool {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: WireFunction,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct WireFunction {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// The `reasoning_effort` for `level`: none for off.
fn reasoning_effort(level: cairn_protocol::ThinkingLevel) -> Option<&'static str> {
    use cairn_protocol::ThinkingLevel;
    match level {
        ThinkingLevel::Off => None,
        ThinkingLevel::Low => Some("low"),
        ThinkingLevel::Medium => Some("medium"),
        ThinkingLevel::High => Some("high"),
    }
}

impl CompletionRequest {
    /// The streaming request for `request`, sent as `model`. A model that `sees` is sent
    /// pictures as `image_url` parts (`data:` URLs), with the text read in them beside;
    /// otherwise that text. Tool messages take text only, so the pictures a tool gave
    /// follow its results in a user message of their own.
    pub fn new(request: &ChatRequest, model: &str, sees: bool) -> Self {
        let mut messages: Vec<WireMessage> = request
            .system
            .iter()
            .map(|s| WireMessage::System { content: s.clone() })
            .collect();
        let mut from_tools: Vec<Part> = Vec::new();
        for message in request.messages.iter() {
            if !matches!(message, Message::ToolResult(_)) && !from_tools.is_empty() {
                messages.push(tool_pictures(std::mem::take(&mut from_tools)));
            }
            if let Message::ToolResult(result) = message {
                if sees && !result.pictures.is_empty() {
                    for picture in &result.pictures {
                        from_tools.extend(picture_parts(picture));
                    }
                    messages.push(WireMessage::Tool {
                        tool_call_id: result.call_id.clone(),
                        content: result.content.clone(),
                    });
                    continue;
                }
            }
            messages.push(wire_message(message, sees));
        }
        if !from_tools.is_empty() {
            messages.push(tool_pictures(from_tools));
        }
        Self {
            model: model.to_string(),
            messages,
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            tools: request.tools.iter().map(wire_tool).collect(),
            max_tokens: request.max_tokens,
            max_completion_tokens: None,
            temperature: request.temperature,
            reasoning_effort: request.thinking.and_then(reasoning_effort),
        }
    }

    /// Names the answer's bound `max_completion_tokens`, as OpenAI's own API wants: it
    /// deprecated `max_tokens` there and its reasoning models (o1, o3, o4, gpt-5) refuse
    /// it. Other OpenAI-compatible servers keep `max_tokens`, which they all know.
    pub fn for_server(mut self, base_url: &str) -> Self {
        if wants_max_completion_tokens(base_url, &self.model) {
            self.max_completion_tokens = self.max_tokens.take();
        }
        self
    }
}

fn wants_max_completion_tokens(base_url: &str, model: &str) -> bool {
    let host = reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
    let model = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    host.as_deref() == Some("api.openai.com")
        || ["o1", "o3", "o4", "gpt-5"]
            .iter()
            .any(|family| model == *family || model.starts_with(&format!("{family}-")))
}

/// The user message carrying the pictures tools gave.
fn tool_pictures(parts: Vec<Part>) -> WireMessage {
    let mut content = vec![Part::Text {
        text: "The pictures the tool results above refer to:".into(),
    }];
    content.extend(parts);
    WireMessage::User {
        content: UserContent::Parts(content),
    }
}

/// A picture as parts: the picture and the text read in it, or its description as text
/// when its copy was not attached.
fn picture_parts(picture: &Picture) -> Vec<Part> {
    match picture.sent.as_deref() {
        Some(sent) => {
            let mut parts = vec![Part::ImageUrl {
                image_url: ImageUrl {
                    url: format!("data:{};base64,{}", sent.media_type, sent.base64),
                },
            }];
            if let Some(note) = picture.ocr_note() {
                parts.push(Part::Text { text: note });
            }
            parts
        }
        None => vec![Part::Text {
            text: picture.as_text(),
        }],
    }
}

fn user_content(content: &[ContentBlock], sees: bool) -> UserContent {
    let has_pictures = content.iter().any(|b| matches!(b, ContentBlock::Image(_)));
    if !sees || !has_pictures {
        return UserContent::Text(cairn_protocol::message::blocks_text_for_model(content));
    }
    let mut parts = Vec::new();
    for block in content {
        match block {
            ContentBlock::Text { text } if !text.is_empty() => {
                parts.push(Part::Text { text: text.clone() })
            }
            ContentBlock::Image(picture) => parts.extend(picture_parts(picture)),
            _ => {}
        }
    }
    UserContent::Parts(parts)
}

fn wire_message(message: &Message, sees: bool) -> WireMessage {
    match message {
        Message::User { content } => WireMessage::User {
            content: user_content(content, sees),
        },
        Message::Assistant(assistant) => {
            let tool_calls: Vec<_> = assistant.tool_calls().map(wire_tool_call).collect();
            let text = assistant.text();
            let content = (!text.is_empty() || tool_calls.is_empty()).then_some(text);
            WireMessage::Assistant {
                content,
                tool_calls,
            }
        }
        Message::ToolResult(result) => WireMessage::Tool {
            tool_call_id: result.call_id.clone(),
            content: result.content_for_model(),
        },
    }
}

fn wire_tool_call(call: &ToolCall) -> WireToolCall {
    // Arguments kept as a raw string (invalid JSON from the model) go back verbatim.
    let arguments = match &call.arguments {
        serde_json::Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    WireToolCall {
        id: call.id.clone(),
        kind: "function",
        function: WireFunctionCall {
            name: call.name.clone(),
            arguments,
        },
    }
}

fn wire_tool(spec: &ToolSpec) -> WireTool {
    WireTool {
        kind: "function",
        function: WireFunction {
            name: spec.name.clone(),
            description: spec.description.clone(),
            parameters: spec.parameters.clone(),
        },
    }
}

/// One `data:` payload of a streamed answer.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Chunk {
    #[serde(default)]
    pub choices: Option<Vec<ChunkChoice>>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ChunkChoice {
    #[serde(default)]
    pub delta: Option<Delta>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Delta {
    #[serde(default)]
    pub content: Option<String>,
    /// Reasoning, on servers that split it off (DeepSeek, vLLM and llama.cpp with a
    /// reasoning parser; `reasoning` on Ollama and OpenRouter).
    #[serde(default, alias = "reasoning")]
    pub reasoning_content: Option<String>,
    #[serde(default)]
    pub refusal: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

/// A piece of a tool call; pieces with the same `index` belong together.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ToolCallDelta {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct FunctionDelta {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub(crate) struct PromptTokensDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

/// A whole (non-streamed) chat completion.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Completion {
    #[serde(default)]
    pub choices: Option<Vec<CompletionChoice>>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct CompletionChoice {
    #[serde(default)]
    pub message: Option<CompletionMessage>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct CompletionMessage {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default, alias = "reasoning")]
    pub reasoning_content: Option<String>,
    #[serde(default)]
    pub refusal: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

/// The vectors of an `/embeddings` answer (`{"data": [{"index", "embedding"}]}`), put in
/// input order by their index; `expected` vectors of one length, all finite.
pub(crate) fn embeddings(answer: &str, expected: usize) -> Result<Vec<Vec<f32>>, String> {
    #[derive(Deserialize)]
    struct Answer {
        data: Vec<Item>,
    }
    #[derive(Deserialize)]
    struct Item {
        index: usize,
        embedding: Vec<f32>,
    }
    let answer: Answer = serde_json::from_str(answer).map_err(|e| {
        let start: String = answer.chars().take(200).collect();
        format!("not an embeddings answer ({e}): {start}")
    })?;
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; expected];
    for item in answer.data {
        let slot = vectors
            .get_mut(item.index)
            .ok_or_else(|| format!("a vector for input {} of {expected}", item.index))?;
        if item.embedding.is_empty() || item.embedding.iter().any(|x| !x.is_finite()) {
            return Err(format!(
                "the vector for input {} is empty or not finite",
                item.index
            ));
        }
        *slot = Some(item.embedding);
    }
    let vectors: Vec<Vec<f32>> = vectors
        .into_iter()
        .enumerate()
        .map(|(n, v)| v.ok_or_else(|| format!("no vector for input {n} of {expected}")))
        .collect::<Result<_, _>>()?;
    let dimensions = vectors.first().map_or(0, Vec::len);
    if vectors.iter().any(|v| v.len() != dimensions) {
        return Err("vectors of different lengths".into());
    }
    Ok(vectors)
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{AssistantMessage, StopReason, ToolResultMessage};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn assistant_tool_calls_carry_arguments_as_strings() {
        let call = |id: &str, arguments| ToolCall {
            id: id.into(),
            name: "f".into(),
            arguments,
        };
        let message = Message::Assistant(AssistantMessage {
            content: vec![
                ContentBlock::ToolCall(call("a", json!({"x": 1}))),
                ContentBlock::ToolCall(call("b", json!("{not json"))),
            ],
            stop_reason: StopReason::ToolUse,
            usage: None,
            model: None,
        });
        assert_eq!(
            serde_json::to_value(wire_message(&message, false)).unwrap(),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}},
                {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{not json"}}
            ]})
        );
    }

    #[test]
    fn tool_results_become_tool_messages() {
        let message = Message::ToolResult(ToolResultMessage {
            call_id: "c1".into(),
            tool_name: "f".into(),
            content: "42".into(),
            is_error: false,
            pictures: Vec::new(),
        });
        assert_eq!(
            serde_json::to_value(wire_message(&message, false)).unwrap(),
            json!({"role": "tool", "tool_call_id": "c1", "content": "42"})
        );
    }

    #[test]
    fn lenient_chunks_accept_nulls() {
        let chunk: Chunk = serde_json::from_value(json!({
            "choices": [{"index": 0, "delta": {"content": null, "tool_calls": null},
                         "finish_reason": null}],
            "usage": null
        }))
        .unwrap();
        assert_eq!(chunk.choices.map(|c| c.len()), Some(1));
    }
}
