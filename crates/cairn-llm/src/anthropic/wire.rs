//! The Messages wire format: the request body, and the stream events and whole messages the
//! server sends back. How a [`ChatRequest`](crate::ChatRequest) becomes a request body is in
//! [`super::request`].
//!
//! Response types are lenient where the API may grow: unknown event, block and delta types
//! (server tools Cairn does not offer ...) decode as `Other` and are skipped, and every
//! usage field is optional. Anthropic's web search is known: its call
//! (`server_tool_use`), its results (`web_search_tool_result`) and the citations of the
//! text that uses them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The body of `POST /v1/messages`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct MessagesRequest {
    pub model: String,
    pub max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    pub messages: Vec<WireMessage>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolParam>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingParam>,
    pub stream: bool,
}

/// `{"type": "enabled", "budget_tokens": N}`: extended thinking on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ThinkingParam {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub budget_tokens: u32,
}

/// One turn of the conversation. Turns alternate between the two roles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct WireMessage {
    pub role: Role,
    pub content: Vec<RequestBlock>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    User,
    Assistant,
}

/// A content block sent to the model, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum RequestBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        /// Always a JSON object: the API refuses anything else.
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        #[serde(skip_serializing_if = "ResultContent::is_empty")]
        content: ResultContent,
        is_error: bool,
    },
    /// A picture, its bytes base64-encoded.
    Image {
        source: ImageSource,
    },
    /// Past reasoning, sent back exactly as it came with its signature.
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    /// A block of a tool the server ran (its call or its result), sent back exactly as it
    /// came.
    #[serde(untagged)]
    Verbatim(Value),
}

/// A tool result's content: its text, or blocks when it holds pictures.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum ResultContent {
    Text(String),
    Blocks(Vec<RequestBlock>),
}

impl ResultContent {
    fn is_empty(&self) -> bool {
        match self {
            ResultContent::Text(text) => text.is_empty(),
            ResultContent::Blocks(blocks) => blocks.is_empty(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ImageSource {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub media_type: String,
    pub data: String,
}

/// A tool offered to the model: one of Cairn's, or one the server runs itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum ToolParam {
    Client(WireTool),
    Server(ServerToolParam),
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct WireTool {
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub input_schema: Value,
}

/// The name the web search tool is offered and called under.
pub(crate) const WEB_SEARCH: &str = "web_search";

/// Anthropic's web search, which its servers run (`[web] search = "provider"` in Cairn's
/// settings): offered with every request that offers tools. Anthropic bills each search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebSearchTool {
    /// The most searches the model may run in one answer (`max_uses`); `None`: no limit.
    pub max_uses: Option<u32>,
}

impl Default for WebSearchTool {
    /// Five searches an answer.
    fn default() -> Self {
        Self { max_uses: Some(5) }
    }
}

/// `{"type": "web_search_20250305", "name": "web_search", "max_uses": N}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ServerToolParam {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_uses: Option<u32>,
}

impl From<WebSearchTool> for ServerToolParam {
    fn from(tool: WebSearchTool) -> Self {
        Self {
            kind: "web_search_20250305",
            name: WEB_SEARCH,
            max_uses: tool.max_uses,
        }
    }
}

/// The `data:` payload of one streamed event, tagged by `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum StreamPayload {
    /// The answer begins; its `usage` counts the prompt.
    MessageStart {
        message: WireAnswer,
    },
    /// A block begins; kept as it came, since a server tool's block goes back verbatim
    /// (read as a [`WireBlock`]).
    ContentBlockStart {
        index: u32,
        content_block: Value,
    },
    ContentBlockDelta {
        index: u32,
        delta: WireDelta,
    },
    ContentBlockStop {
        index: u32,
    },
    /// The stop reason and the final output token count.
    MessageDelta {
        #[serde(default)]
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: WireError,
    },
    #[serde(other)]
    Other,
}

/// A whole message: the non-streamed answer, or the (empty) one `message_start` carries.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct WireAnswer {
    /// The blocks as they came, each read as a [`WireBlock`].
    #[serde(default)]
    pub content: Vec<Value>,
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
}

/// A content block of the answer: whole in a message, or as it starts in a stream.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum WireBlock {
    Text {
        #[serde(default)]
        text: String,
        /// Where the text comes from (whole in a message; streamed as `citations_delta`).
        #[serde(default)]
        citations: Option<Vec<WireCitation>>,
    },
    ToolUse {
        id: String,
        name: String,
        /// Empty (`{}`) at the start of a streamed block: the input arrives in deltas.
        #[serde(default)]
        input: Value,
    },
    /// Reasoning: empty at the start of a streamed block, then `thinking_delta`s and one
    /// `signature_delta`.
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    /// A tool the server runs, called: its input streams like a `tool_use` block's.
    ServerToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    /// The results of a web search, whole at the start of the block.
    WebSearchToolResult {
        tool_use_id: String,
        content: WebSearchContent,
    },
    #[serde(other)]
    Other,
}

/// A source a text block cites. Only web search results (`web_search_result_location`)
/// have an address; other kinds (documents) are not shown.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct WireCitation {
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
}

/// A web search's content: the results, or an error.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum WebSearchContent {
    Results(Vec<WebSearchHit>),
    /// `{"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}`.
    Error(WebSearchError),
    /// Anything else: shown as an answer Cairn cannot read.
    Unknown(Value),
}

/// One result (`web_search_result`); its `encrypted_content` stays in the verbatim block.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct WebSearchHit {
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct WebSearchError {
    pub error_code: String,
}

/// A piece of the content block at some index.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum WireDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    /// A source of the text block, before its text.
    CitationsDelta {
        citation: WireCitation,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct MessageDelta {
    #[serde(default)]
    pub stop_reason: Option<String>,
}

/// Token counts. `input_tokens` leaves out the tokens read from or written to the cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Takes the counts `later` gives: a `message_delta` repeats or updates those of
    /// `message_start`.
    pub fn update(&mut self, later: WireUsage) {
        let take = |field: &mut Option<u64>, new: Option<u64>| *field = new.or(*field);
        take(&mut self.input_tokens, later.input_tokens);
        take(&mut self.output_tokens, later.output_tokens);
        take(
            &mut self.cache_read_input_tokens,
            later.cache_read_input_tokens,
        );
        take(
            &mut self.cache_creation_input_tokens,
            later.cache_creation_input_tokens,
        );
    }
}

/// An error: the `error` of an error body or of a streamed `error` event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub(crate) struct WireError {
    /// `overloaded_error`, `rate_limit_error`, `invalid_request_error` ...
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub message: String,
}

/// An error body: `{"type": "error", "error": {...}}`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ErrorBody {
    pub error: WireError,
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn unknown_types_decode_as_other() {
        let event: StreamPayload =
            serde_json::from_value(json!({"type": "brand_new", "x": 1})).unwrap();
        assert!(matches!(event, StreamPayload::Other));
        let block: WireBlock =
            serde_json::from_value(json!({"type": "web_fetch_tool_result", "id": "x"})).unwrap();
        assert_eq!(block, WireBlock::Other);
        let delta: WireDelta =
            serde_json::from_value(json!({"type": "brand_new_delta", "x": {}})).unwrap();
        assert_eq!(delta, WireDelta::Other);
    }

    #[test]
    fn later_usage_overrides_only_what_it_gives() {
        let mut usage = WireUsage {
            input_tokens: Some(10),
            output_tokens: Some(1),
            cache_read_input_tokens: Some(4),
            cache_creation_input_tokens: None,
        };
        usage.update(
            serde_json::from_value(json!({"output_tokens": 7, "input_tokens": null})).unwrap(),
        );
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            (Some(10), Some(7))
        );
        assert_eq!(usage.cache_read_input_tokens, Some(4));
    }
}
