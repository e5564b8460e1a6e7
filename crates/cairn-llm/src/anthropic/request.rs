//! Building a Messages request body from a [`ChatRequest`].
//!
//! The Messages API is stricter than Cairn's conversation: roles must alternate, every tool
//! result answering one assistant turn goes in the *one* user message that follows it (before
//! any text), text blocks may not be empty, and a tool call's input must be a JSON object.
//! Consecutive messages of the same role are therefore merged, tool results first.
//! Anthropic's web search, when configured, is offered beside the tools, and the blocks of
//! past searches go back as they came.

use cairn_protocol::{ContentBlock, Message, ToolCall, ToolResultMessage, ToolSpec};
use serde_json::{Map, Value};

use cairn_protocol::Picture;

use super::wire::{
    ImageSource, MessagesRequest, RequestBlock, ResultContent, Role, ThinkingParam, ToolParam,
    WebSearchTool, WireMessage, WireTool, WEB_SEARCH,
};
use crate::provider::ChatRequest;

/// The smallest thinking budget the API takes.
pub const MIN_THINKING_BUDGET: u32 = 1024;

impl MessagesRequest {
    /// The streaming request for `request`, sent as `model`, asking for at most
    /// `request.max_tokens` or else `default_max_tokens` tokens of answer. With a
    /// `thinking_budget` (at least the API's 1,024 tokens), extended thinking is on: the
    /// budget comes on top of the answer's tokens (the API counts both in `max_tokens`), and
    /// no temperature is sent (the API allows none with thinking). The API keeps one thinking
    /// setting per assistant turn (a tool-use loop): a turn under way that began without
    /// reasoning the API can check goes on without thinking. A model that `sees` is sent
    /// pictures as image blocks, with the text read in them beside; otherwise that text.
    /// `web_search` is offered beside the request's tools (see `offers_web_search`).
    pub fn new(
        request: &ChatRequest,
        model: &str,
        default_max_tokens: u32,
        thinking_budget: Option<u32>,
        web_search: Option<WebSearchTool>,
        sees: bool,
    ) -> Self {
        let answer_tokens = request.max_tokens.unwrap_or(default_max_tokens);
        let budget = thinking_budget
            .map(|b| b.max(MIN_THINKING_BUDGET))
            .filter(|_| !turn_began_unthinking(&request.messages));
        let search = web_search.filter(|_| offers_web_search(&request.tools));
        let carry = Carry {
            thinking: budget.is_some(),
            sees,
            server_tools: search.is_some(),
        };
        let tools = request
            .tools
            .iter()
            .map(|t| ToolParam::Client(wire_tool(t)));
        let server = search.map(|tool| ToolParam::Server(tool.into()));
        Self {
            model: model.to_string(),
            max_tokens: answer_tokens.saturating_add(budget.unwrap_or(0)),
            system: request.system.clone().filter(|s| !s.trim().is_empty()),
            messages: wire_messages(&request.messages, carry),
            tools: tools.chain(server).collect(),
            temperature: request.temperature.filter(|_| budget.is_none()),
            thinking: budget.map(|budget_tokens| ThinkingParam {
                kind: "enabled",
                budget_tokens,
            }),
            stream: true,
        }
    }
}

/// Whether the assistant turn under way (the answers after the user's last words) began
/// without a thinking block the API can check: made by another provider before a switch,
/// or while thinking was off. A new turn (no answer yet) did not.
fn turn_began_unthinking(messages: &[Message]) -> bool {
    let said = |content: &[ContentBlock]| {
        content.iter().any(|b| match b {
            ContentBlock::Text { text } => !text.trim().is_empty(),
            ContentBlock::Image(_) => true,
            _ => false,
        })
    };
    let start = messages
        .iter()
        .rposition(|m| matches!(m, Message::User { content } if said(content)))
        .map_or(0, |i| i + 1);
    let first_answer = messages[start..].iter().find_map(|m| match m {
        Message::Assistant(answer) => Some(answer),
        _ => None,
    });
    let checkable = |block: &ContentBlock| match block {
        ContentBlock::Thinking {
            text,
            signature,
            redacted,
        } => thinking_block(text, signature.as_deref(), redacted.as_deref()).is_some(),
        _ => false,
    };
    first_answer.is_some_and(|answer| !answer.content.first().is_some_and(checkable))
}

/// Whether web search goes with a request offering `tools`: only beside other tools (a
/// request without any, for a summary or notes, has no use for it), and not when one of
/// them already has its name (the API refuses two tools of one name).
fn offers_web_search(tools: &[ToolSpec]) -> bool {
    !tools.is_empty() && tools.iter().all(|t| t.name != WEB_SEARCH)
}

/// What goes back to the model besides text, calls and results.
#[derive(Debug, Clone, Copy)]
struct Carry {
    /// Past reasoning: only when thinking is on (the API then wants the signed blocks of a
    /// tool-use turn back, as they came).
    thinking: bool,
    /// Pictures as pictures (else as their text).
    sees: bool,
    /// The blocks of past server tool calls and results, as they came: only when the
    /// server tool is offered again (without it they stay in the session only, and the
    /// answer's text keeps what they gave).
    server_tools: bool,
}

/// The conversation with roles alternating: messages that end up empty are left out and
/// neighbours of the same role merged.
fn wire_messages(messages: &[Message], carry: Carry) -> Vec<WireMessage> {
    let mut wire: Vec<WireMessage> = Vec::new();
    for message in messages {
        let (role, content) = blocks_of(message, carry);
        if content.is_empty() {
            continue;
        }
        match wire.last_mut() {
            Some(last) if last.role == role => last.content.extend(content),
            _ => wire.push(WireMessage { role, content }),
        }
    }
    for message in wire.iter_mut().filter(|m| m.role == Role::User) {
        // A stable sort: results keep their order, and so does the text after them.
        message
            .content
            .sort_by_key(|block| !matches!(block, RequestBlock::ToolResult { .. }));
    }
    wire
}

fn blocks_of(message: &Message, carry: Carry) -> (Role, Vec<RequestBlock>) {
    let Carry {
        thinking,
        sees,
        server_tools,
    } = carry;
    match message {
        Message::User { content } => {
            let mut blocks = Vec::new();
            for block in content {
                match block {
                    ContentBlock::Text { text } => blocks.extend(text_block(text)),
                    ContentBlock::Image(picture) => blocks.extend(picture_blocks(picture, sees)),
                    ContentBlock::ToolCall(_)
                    | ContentBlock::Thinking { .. }
                    | ContentBlock::ServerTool { .. } => {}
                }
            }
            (Role::User, blocks)
        }
        Message::Assistant(assistant) => {
            let blocks = assistant.content.iter().filter_map(|block| match block {
                ContentBlock::Text { text } => text_block(text),
                ContentBlock::ToolCall(call) => Some(tool_use(call)),
                // A model's answer holds no pictures; one that did is left out.
                ContentBlock::Image(_) => None,
                ContentBlock::Thinking {
                    text,
                    signature,
                    redacted,
                } => thinking
                    .then(|| thinking_block(text, signature.as_deref(), redacted.as_deref()))
                    .flatten(),
                ContentBlock::ServerTool { raw } => {
                    server_tools.then(|| RequestBlock::Verbatim(raw.clone()))
                }
            });
            (Role::Assistant, blocks.collect())
        }
        Message::ToolResult(result) => (Role::User, vec![tool_result(result, sees)]),
    }
}

/// Reasoning to send back: a signed thinking block, or a redacted one. Reasoning without a
/// signature (from another provider, or cut short) cannot be checked by the API, which
/// refuses it, so it stays in the session only.
fn thinking_block(
    text: &str,
    signature: Option<&str>,
    redacted: Option<&str>,
) -> Option<RequestBlock> {
    if let Some(data) = redacted.filter(|d| !d.is_empty()) {
        return Some(RequestBlock::RedactedThinking {
            data: data.to_string(),
        });
    }
    let signature = signature.filter(|s| !s.is_empty())?;
    Some(RequestBlock::Thinking {
        thinking: text.to_string(),
        signature: signature.to_string(),
    })
}

/// A text block, unless the text is blank (which the API refuses).
fn text_block(text: &str) -> Option<RequestBlock> {
    (!text.trim().is_empty()).then(|| RequestBlock::Text {
        text: text.to_string(),
    })
}

fn tool_use(call: &ToolCall) -> RequestBlock {
    RequestBlock::ToolUse {
        id: call.id.clone(),
        name: call.name.clone(),
        input: tool_input(&call.arguments),
    }
}

/// The input of a past tool call as an object. Arguments the model got wrong (kept as the
/// raw text, or not an object) are sent as `{}`: the tool result that follows already told
/// the model what was wrong, and the API refuses any input that is not an object.
fn tool_input(arguments: &Value) -> Value {
    let parsed = match arguments {
        Value::String(raw) => serde_json::from_str(raw).ok(),
        other => Some(other.clone()),
    };
    match parsed {
        Some(object @ Value::Object(_)) => object,
        _ => Value::Object(Map::new()),
    }
}

fn tool_result(result: &ToolResultMessage, sees: bool) -> RequestBlock {
    let content = if result.pictures.is_empty() {
        ResultContent::Text(result.content.clone())
    } else if sees {
        let mut blocks: Vec<RequestBlock> = text_block(&result.content).into_iter().collect();
        for picture in &result.pictures {
            blocks.extend(picture_blocks(picture, true));
        }
        ResultContent::Blocks(blocks)
    } else {
        ResultContent::Text(result.content_for_model())
    };
    RequestBlock::ToolResult {
        tool_use_id: result.call_id.clone(),
        content,
        is_error: result.is_error,
    }
}

/// A picture as blocks: the picture itself (when the model sees and its copy was
/// attached) and the text read in it, else its description as text.
fn picture_blocks(picture: &Picture, sees: bool) -> Vec<RequestBlock> {
    match picture.sent.as_deref().filter(|_| sees) {
        Some(sent) => {
            let mut blocks = vec![RequestBlock::Image {
                source: ImageSource {
                    kind: "base64",
                    media_type: sent.media_type.clone(),
                    data: sent.base64.clone(),
                },
            }];
            if let Some(note) = picture.ocr_note() {
                blocks.push(RequestBlock::Text { text: note });
            }
            blocks
        }
        None => vec![RequestBlock::Text {
            text: picture.as_text(),
        }],
    }
}

/// A tool. Its schema must describe an object; a spec without one gets an empty object schema.
fn wire_tool(spec: &ToolSpec) -> WireTool {
    let input_schema = if spec.parameters.is_object() {
        spec.parameters.clone()
    } else {
        serde_json::json!({"type": "object", "properties": {}})
    };
    WireTool {
        name: spec.name.clone(),
        description: spec.description.clone(),
        input_schema,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn inputs_are_always_objects() {
        assert_eq!(tool_input(&json!({"a": 1})), json!({"a": 1}));
        assert_eq!(tool_input(&json!("{\"a\": 1}")), json!({"a": 1}));
        assert_eq!(tool_input(&json!("{\"a\": ")), json!({}));
        assert_eq!(tool_input(&json!([1, 2])), json!({}));
        assert_eq!(tool_input(&Value::Null), json!({}));
    }

    fn answer(content: Vec<ContentBlock>) -> Message {
        Message::Assistant(cairn_protocol::AssistantMessage {
            content,
            stop_reason: cairn_protocol::StopReason::ToolUse,
            usage: None,
            model: None,
        })
    }

    fn request(messages: Vec<Message>) -> MessagesRequest {
        let chat = ChatRequest {
            messages: std::sync::Arc::new(messages),
            temperature: Some(0.5),
            ..ChatRequest::default()
        };
        MessagesRequest::new(&chat, "claude", 1000, Some(2048), None, true)
    }

    #[test]
    fn a_tool_loop_that_began_without_checkable_reasoning_goes_on_without_thinking() {
        let call = ContentBlock::ToolCall(ToolCall {
            id: "c1".into(),
            name: "ls".into(),
            arguments: json!({}),
        });
        let result = Message::ToolResult(ToolResultMessage {
            call_id: "c1".into(),
            tool_name: "ls".into(),
            content: "a.md".into(),
            is_error: false,
            pictures: Vec::new(),
        });
        let signed = ContentBlock::Thinking {
            text: "look first".into(),
            signature: Some("sig".into()),
            redacted: None,
        };
        // Begun by another provider (its reasoning unsigned): no thinking, a temperature.
        let unsigned = ContentBlock::thinking("look first");
        let body = request(vec![
            Message::user("list"),
            answer(vec![unsigned, call.clone()]),
            result.clone(),
        ]);
        assert_eq!(
            (body.thinking.is_some(), body.temperature),
            (false, Some(0.5))
        );
        assert_eq!(body.max_tokens, 1000);
        // Begun with signed reasoning: thinking goes on, the block sent back.
        let body = request(vec![
            Message::user("list"),
            answer(vec![signed, call.clone()]),
            result.clone(),
        ]);
        assert_eq!((body.thinking.is_some(), body.temperature), (true, None));
        assert!(matches!(
            body.messages[1].content[0],
            RequestBlock::Thinking { .. }
        ));
        // The user's next words start a new turn: thinking on again.
        let body = request(vec![
            Message::user("list"),
            answer(vec![call]),
            result,
            Message::user("and now?"),
        ]);
        assert!(body.thinking.is_some());
    }

    #[test]
    fn a_tool_without_a_schema_gets_an_object_schema() {
        let spec = ToolSpec {
            name: "now".into(),
            description: String::new(),
            parameters: Value::Null,
        };
        assert_eq!(
            serde_json::to_value(wire_tool(&spec)).unwrap(),
            json!({"name": "now", "input_schema": {"type": "object", "properties": {}}})
        );
    }
}
