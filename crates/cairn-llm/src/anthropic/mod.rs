//! The Anthropic Messages provider: `POST /v1/messages`, streamed.
//!
//! - [`wire`]: the request body and the events and messages the server sends back.
//! - [`request`]: building the request from a [`ChatRequest`] (alternating roles, grouped
//!   tool results).
//! - [`sse`]: decoding streamed events (and whole messages) into [`StreamEvent`]s.
//! - [`search`]: Anthropic's web search, run on its servers, as the user sees it (results,
//!   errors, the sources an answer cites).
//! - [`errors`]: classifying HTTP statuses, error bodies and streamed `error` events.
//!
//! The HTTP plumbing is shared with the other providers ([`crate::http`]); retries wrap each
//! attempt ([`crate::retry`]).

mod errors;
mod request;
mod search;
mod sse;
mod wire;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;

pub(crate) use self::sse::{message_events, EventDecoder};
use self::wire::MessagesRequest;
pub use self::wire::WebSearchTool;
use crate::error::LlmError;
use crate::http::{self, Call, ErrorAnswer, Target, Waits, WireFormat};
use crate::provider::{ChatRequest, EventStream, Provider, ProviderInfo, StreamEvent};
use crate::remote::{RemoteConfig, Wire};

/// The API version sent as `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// What the Messages API adds to the shared settings. Its server's address is the root
/// (`https://api.anthropic.com`), to which `/v1/messages` is added (a base URL already ending
/// in `/v1` is not given another).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessagesWire {
    /// The answer's token limit when a [`ChatRequest`] sets none (the API requires one).
    pub max_tokens: u32,
    /// Extended thinking with this many tokens of reasoning (at least 1,024) before each
    /// answer, on top of `max_tokens`. `None`: no thinking asked for.
    pub thinking_budget: Option<u32>,
    /// Anthropic's web search, offered beside the request's tools (never to a request
    /// without tools, such as a summary's). `None`: not offered.
    pub web_search: Option<WebSearchTool>,
}

impl Default for MessagesWire {
    fn default() -> Self {
        Self {
            max_tokens: 4096,
            thinking_budget: None,
            web_search: None,
        }
    }
}

impl Wire for MessagesWire {
    const BASE_URL: &'static str = "https://api.anthropic.com";
}

/// Where and how to reach the Messages API.
pub type AnthropicConfig = RemoteConfig<MessagesWire>;

/// A provider speaking the Messages API, streamed.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    config: AnthropicConfig,
    client: http::Client,
    /// `{base_url}/v1`, without a trailing slash.
    api_root: String,
    /// The model refused extended thinking once: it is not asked for again.
    no_thinking: http::Refusals,
}

impl AnthropicProvider {
    /// The waits of a call made now.
    fn waits(&self) -> Waits {
        self.config.waits()
    }

    /// Checks the configuration and prepares the HTTP client (no request is sent).
    pub fn new(config: AnthropicConfig) -> Result<Self, LlmError> {
        let base_url = http::check_base_url(&config.base_url)?;
        let api_root = if base_url.ends_with("/v1") {
            base_url
        } else {
            format!("{base_url}/v1")
        };
        let client = config.client(api_headers(&config)?)?;
        Ok(Self {
            config,
            client,
            api_root,
            no_thinking: http::Refusals::default(),
        })
    }

    /// The ids of the models the API offers (`GET {base_url}/v1/models`, newest first).
    pub async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        // One page of the largest size the API allows (the default is 20).
        let url = format!("{}?limit=1000", self.url("models"));
        let target = Target {
            url: &url,
            model: &self.config.model,
        };
        let request = self.client.get()?.get(&url);
        http::model_ids::<Messages>(request, target, self.waits()).await
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.api_root)
    }

    /// The model `request` names, else the configured one.
    fn model_of<'a>(&'a self, request: &'a ChatRequest) -> &'a str {
        match request.model.is_empty() {
            true => &self.config.model,
            false => &request.model,
        }
    }

    /// The thinking budget for `request`: its level's, else the settings'.
    fn thinking_of(&self, request: &ChatRequest) -> Option<u32> {
        match request.thinking {
            None => self.config.wire.thinking_budget,
            Some(level) => thinking_budget(level),
        }
    }

    /// The Messages request for `request`, sent as `model` with `budget` of thinking.
    fn body(&self, request: &ChatRequest, model: &str, budget: Option<u32>) -> MessagesRequest {
        MessagesRequest::new(
            request,
            model,
            self.config.wire.max_tokens,
            budget,
            self.config.wire.web_search,
            self.sees(model),
        )
    }

    /// Whether `model` sees pictures: as the settings say, else every Claude model since
    /// Claude 3 (the older ones, `claude-2*` and `claude-instant*`, do not).
    fn sees(&self, model: &str) -> bool {
        self.config.vision.unwrap_or_else(|| {
            let model = model.to_ascii_lowercase();
            !(model.starts_with("claude-2") || model.starts_with("claude-instant"))
        })
    }
}

#[async_trait]
impl Provider for AnthropicProvider {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            kind: "anthropic".into(),
            model: self.config.model.clone(),
            supports_tools: true,
            context_window: self.config.context_window,
            vision: self.sees(&self.config.model),
            image_max_side: self
                .config
                .image_max_side
                .unwrap_or(crate::provider::DEFAULT_IMAGE_MAX_SIDE),
        }
    }

    /// Anthropic's own count (`POST /v1/messages/count_tokens`, the request as it would be
    /// sent); `None` when it does not answer within a few seconds (offline, refused).
    async fn count_tokens(&self, request: &ChatRequest) -> Option<crate::provider::TokenCount> {
        let model = self.model_of(request);
        let body = self.body(request, model, self.thinking_of(request));
        let mut body = serde_json::to_value(&body).ok()?;
        if let Some(fields) = body.as_object_mut() {
            for unused in ["stream", "max_tokens", "temperature"] {
                fields.remove(unused);
            }
        }
        let url = self.url("messages/count_tokens");
        let send = self.client.get().ok()?.post(&url).json(&body).send();
        let answer = tokio::time::timeout(COUNT_WAIT, send).await.ok()?.ok()?;
        if !answer.status().is_success() {
            tracing::debug!(status = %answer.status(), "Anthropic's token count was refused");
            return None;
        }
        let counted: serde_json::Value = tokio::time::timeout(COUNT_WAIT, answer.json())
            .await
            .ok()?
            .ok()?;
        Some(crate::provider::TokenCount {
            tokens: counted["input_tokens"].as_u64()?,
            by: "Anthropic's token count".into(),
        })
    }

    /// Streams the answer. The request goes out when the stream is first polled; every
    /// failure, HTTP errors included, arrives as the stream's last item.
    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, LlmError> {
        let model = self.model_of(&request);
        let budget = self
            .thinking_of(&request)
            .filter(|_| !self.no_thinking.refused());
        let body = |budget| self.body(&request, model, budget);
        let url = self.url("messages");
        let call = Call::new(
            self.client.get()?,
            url.clone(),
            model,
            &body(budget),
            self.waits(),
        )?;
        let policy = self.config.retry_policy();
        let sent = http::stream::<Messages>(call, policy, cancel.clone());
        if budget.is_none() {
            return Ok(sent);
        }
        // A model without extended thinking answers without it.
        let (client, waits, plain) = (self.client.clone(), self.waits(), body(None));
        let model = model.to_string();
        let notice = format!("{model} does not take extended thinking; it answers without it");
        Ok(http::or_without(
            sent,
            |e| http::refuses(e, &["thinking"]),
            self.no_thinking.clone(),
            notice,
            move || {
                let call = Call::new(client.get()?, url, &model, &plain, waits)?;
                Ok(http::stream::<Messages>(call, policy, cancel))
            },
        ))
    }
}

/// How long a token count may take before the estimate is used instead.
const COUNT_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The tokens of reasoning asked for at `level`: none for off.
pub fn thinking_budget(level: cairn_protocol::ThinkingLevel) -> Option<u32> {
    use cairn_protocol::ThinkingLevel;
    match level {
        ThinkingLevel::Off => None,
        ThinkingLevel::Low => Some(2_048),
        ThinkingLevel::Medium => Some(8_192),
        ThinkingLevel::High => Some(24_576),
    }
}

/// The Messages wire format, for the shared HTTP plumbing.
struct Messages;

impl WireFormat for Messages {
    type Decoder = EventDecoder;

    fn classify(answer: ErrorAnswer, target: Target<'_>) -> LlmError {
        errors::classify_status(answer, target)
    }

    fn decoder(target: Target<'_>) -> EventDecoder {
        EventDecoder::new(target.url)
    }

    fn whole_answer(body: &str, target: Target<'_>) -> Result<Vec<StreamEvent>, LlmError> {
        message_events(body, target.url)
    }
}

/// `x-api-key` (when a key is set) and `anthropic-version`.
fn api_headers(config: &AnthropicConfig) -> Result<HeaderMap, LlmError> {
    let mut headers = HeaderMap::new();
    if let Some(key) = config.key() {
        headers.insert("x-api-key", http::secret_header(key)?);
    }
    headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_root_gets_one_v1() {
        for base in ["http://h", "http://h/", "http://h/v1", "http://h/v1/"] {
            let provider = AnthropicProvider::new(AnthropicConfig {
                base_url: base.into(),
                ..AnthropicConfig::new("m")
            });
            assert_eq!(provider.unwrap().url("messages"), "http://h/v1/messages");
        }
        let bad = AnthropicProvider::new(AnthropicConfig {
            base_url: "api.anthropic.com".into(),
            ..AnthropicConfig::new("m")
        });
        assert!(matches!(bad, Err(LlmError::Fatal(_))));
    }

    #[test]
    fn debug_hides_the_key() {
        let config = AnthropicConfig {
            api_key: Some("sk-ant-secret".into()),
            ..AnthropicConfig::new("m")
        };
        let shown = format!("{config:?}");
        assert!(!shown.contains("sk-ant-secret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }
}
