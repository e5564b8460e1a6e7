//! The Provider trait and the data it exchanges with the harness.

use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use cairn_protocol::{Message, StopReason, ToolCall, ToolSpec, Usage};
use futures::Stream;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::LlmError;

/// Everything a provider needs for one model call. Messages and tool specs are shared with
/// the session they come from (a request is built every step; copying a long conversation
/// each time would cost more than the rest of the step). Change them with `Arc::make_mut`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub system: Option<String>,
    pub messages: Arc<Vec<Message>>,
    pub tools: Arc<Vec<ToolSpec>>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    /// How much the model reasons first; `None`: as the provider's settings say. `Off`
    /// sends no reasoning request at all.
    pub thinking: Option<cairn_protocol::ThinkingLevel>,
}

/// One item of a model's streamed answer.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A piece of answer text.
    TextDelta(String),
    /// A piece of the model's reasoning, shown apart from the answer.
    ThinkingDelta(String),
    /// The end of a piece of reasoning, with the provider's signature of it when it gave
    /// one (needed to send it back). Reasoning also ends where text or a tool call begins.
    ThinkingEnd { signature: Option<String> },
    /// Reasoning the provider encrypted: kept to send back, never shown.
    RedactedThinking(String),
    /// A complete tool call (arguments fully received and parsed).
    ToolCall(ToolCall),
    /// The provider ran one of its own tools on its servers (Anthropic's web search): shown
    /// like a tool call, never run by the harness. `block` is the provider's block as it
    /// came, kept in the answer to be sent back to that provider.
    ServerToolCall {
        id: String,
        name: String,
        input: Value,
        block: Value,
    },
    /// What the provider's tool `call_id` gave, as shown to the user (for a web search:
    /// the results' titles and addresses, or what went wrong); `block` as it came.
    ServerToolResult {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
        block: Value,
    },
    /// Token counts for the request.
    Usage(Usage),
    /// The end of the answer.
    Finish(StopReason),
    /// Something the user should know about the call that is not an error (the model
    /// does not take the thinking level asked for, and answers without it).
    Notice(String),
    /// The attempt failed before any output and the call is tried again after `delay`
    /// (attempt numbers count from 1 for the first retry). Nothing of the answer.
    Retrying {
        attempt: u32,
        delay: std::time::Duration,
        reason: String,
    },
}

pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, LlmError>> + Send>>;

/// Static facts about a provider instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderInfo {
    /// Wire format / kind: `openai`, `anthropic`, `local`, `scripted`.
    pub kind: String,
    pub model: String,
    /// Whether the model can be offered tools.
    pub supports_tools: bool,
    /// The model's context window in tokens, when known.
    pub context_window: Option<u64>,
    /// Whether the model sees pictures: it is sent them (scaled to `image_max_side`);
    /// otherwise it gets their text (see `Picture::as_text`).
    pub vision: bool,
    /// The longest side of a picture sent to the model, in pixels.
    pub image_max_side: u32,
}

/// The longest side of a picture sent to a model when its provider says nothing else: the
/// size past which Anthropic's API scales pictures down itself.
pub const DEFAULT_IMAGE_MAX_SIDE: u32 = 1568;

/// A model behind one streaming call.
#[async_trait]
pub trait Provider: Send + Sync {
    fn info(&self) -> ProviderInfo;

    /// Starts a model call. The returned stream ends after `Finish` or an error; dropping
    /// it or cancelling `cancel` stops the request.
    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, LlmError>;

    /// The request's input tokens as the model counts them, and how they were counted;
    /// `None` when this provider has no tokenizer at hand (the caller estimates).
    async fn count_tokens(&self, _request: &ChatRequest) -> Option<TokenCount> {
        None
    }
}

/// A request's input tokens, counted by the model's own tokenizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenCount {
    pub tokens: u64,
    /// How: "the o200k_base tokenizer", "Anthropic's token count", "the model's vocabulary".
    pub by: String,
}
