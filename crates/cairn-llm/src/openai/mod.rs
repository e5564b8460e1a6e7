//! The OpenAI-compatible chat-completions provider: OpenAI, OpenRouter, Ollama, the
//! llama.cpp server, vLLM, LM Studio ....
//!
//! - [`wire`]: the request and response bodies.
//! - [`sse`]: decoding streamed chunks (and whole completions) into [`StreamEvent`]s.
//! - [`errors`]: classifying HTTP statuses and error bodies.
//!
//! The HTTP plumbing (one attempt at a call, timeouts, transport errors) is shared with the
//! other providers ([`crate::http`]); retries wrap each attempt ([`crate::retry`]).
//!
//! [`StreamEvent`]: crate::StreamEvent

mod errors;
mod sse;
pub mod window;
mod wire;

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, AUTHORIZATION};
use tokio_util::sync::CancellationToken;

use self::errors::{classify_status, ServerError};
pub(crate) use self::sse::{completion_events, ChunkDecoder};
use self::wire::CompletionRequest;
use crate::error::LlmError;
use crate::http::{self, Call, ErrorAnswer, Target, Waits, WireFormat};
use crate::provider::{ChatRequest, EventStream, Provider, ProviderInfo, StreamEvent};
use crate::retry::RetryPolicy;

/// Where and how to reach an OpenAI-compatible server. Everything comes from here: the
/// provider reads no environment variables or global configuration.
#[derive(Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// The API root, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer <key>` when present and not empty.
    pub api_key: Option<String>,
    /// The model used when a [`ChatRequest`] does not name one.
    pub model: String,
    /// Extra headers for every request (e.g. OpenRouter's `HTTP-Referer`); they replace
    /// headers of the same name, `Authorization` included.
    pub extra_headers: Vec<(String, String)>,
    /// The model's context window in tokens, when known (reported by `info()`).
    pub context_window: Option<u64>,
    /// Retries of a failed call before any output was passed on.
    pub max_retries: u32,
    /// The delay before the first retry, doubled for each further one (with jitter).
    pub retry_base_delay: Duration,
    /// Longest wait for the answer to start, or for more bytes of it.
    pub idle_timeout: Duration,
    /// Longest time one model call may take in all, retries included.
    pub call_timeout: Duration,
    /// Longest wait to open a connection.
    pub connect_timeout: Duration,
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        Self {
            base_url: "https://api.openai.com/v1".into(),
            api_key: None,
            model: String::new(),
            extra_headers: Vec::new(),
            context_window: None,
            max_retries: RetryPolicy::default().max_retries,
            retry_base_delay: RetryPolicy::default().base_delay,
            idle_timeout: Duration::from_secs(60),
            call_timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

impl OpenAiConfig {
    /// The defaults, for `model`.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            ..Self::default()
        }
    }

    /// The retry policy these settings describe.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            max_retries: self.max_retries,
            base_delay: self.retry_base_delay,
            ..RetryPolicy::default()
        }
    }
}

/// Shows everything but the API key.
impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("extra_headers", &self.extra_headers)
            .field("context_window", &self.context_window)
            .field("max_retries", &self.max_retries)
            .field("retry_base_delay", &self.retry_base_delay)
            .field("idle_timeout", &self.idle_timeout)
            .field("call_timeout", &self.call_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

/// A provider speaking the chat-completions API, streamed.
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    config: OpenAiConfig,
    client: reqwest::Client,
    base_url: String,
}

impl OpenAiProvider {
    /// The waits of a call made now.
    fn waits(&self) -> Waits {
        Waits::new(self.config.idle_timeout, self.config.call_timeout)
    }

    /// Checks the configuration and prepares the HTTP client (no request is sent).
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        let base_url = http::check_base_url(&config.base_url)?;
        let client = http::client(
            auth_headers(&config)?,
            &config.extra_headers,
            config.connect_timeout,
        )?;
        Ok(Self {
            config,
            client,
            base_url,
        })
    }

    /// The ids of the models the server offers (`GET {base_url}/models`), in its order.
    pub async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        let url = self.url("models");
        let target = Target {
            url: &url,
            model: &self.config.model,
        };
        let request = self.client.get(&url);
        http::model_ids::<ChatCompletions>(request, target, self.waits()).await
    }

    /// Vectors for `texts` from the server's `/embeddings` endpoint with `model` (Ollama,
    /// llama.cpp's server, vLLM and OpenAI speak it), in the order of `texts`.
    pub async fn embed(&self, model: &str, texts: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let url = self.url("embeddings");
        let target = Target { url: &url, model };
        let body = serde_json::json!({"model": model, "input": texts});
        let request = self.client.post(&url).json(&body);
        let answer = http::json_answer::<ChatCompletions>(request, target, self.waits()).await?;
        wire::embeddings(&answer, texts.len())
            .map_err(|problem| LlmError::Fatal(format!("{url}: {problem}")))
    }

    /// What the server says of the model's context window, when it is one of the known
    /// local servers on its default port (see [`window`]); the window is then reported by
    /// `info()`. Other servers are not asked: their window comes from the settings.
    pub async fn read_context_window(&mut self) -> Option<(window::ServerKind, u64)> {
        if !window::is_default_local_server(&self.base_url) {
            return None;
        }
        let read =
            window::read_context_window(&self.client, &self.base_url, &self.config.model, None);
        let read = tokio::time::timeout(window::READ_BUDGET, read)
            .await
            .ok()??;
        self.config.context_window = Some(read.1);
        Some(read)
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url)
    }
}

#[async_trait]
impl Provider for OpenAiProvider {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            kind: "openai".into(),
            model: self.config.model.clone(),
            supports_tools: true,
            context_window: self.config.context_window,
        }
    }

    /// Streams the answer. The request goes out when the stream is first polled; every
    /// failure, HTTP errors included, arrives as the stream's last item.
    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, LlmError> {
        let model = if request.model.is_empty() {
            &self.config.model
        } else {
            &request.model
        };
        let body = CompletionRequest::new(&request, model).for_server(&self.base_url);
        let url = self.url("chat/completions");
        let call = Call::new(&self.client, url, model, &body, self.waits())?;
        let policy = self.config.retry_policy();
        Ok(http::stream::<ChatCompletions>(call, policy, cancel))
    }
}

/// The chat-completions wire format, for the shared HTTP plumbing.
struct ChatCompletions;

impl WireFormat for ChatCompletions {
    type Decoder = ChunkDecoder;

    fn classify(answer: ErrorAnswer, target: Target<'_>) -> LlmError {
        let error = ServerError::from_body(&answer.body);
        classify_status(answer.status, answer.retry_after, &error, target)
    }

    fn decoder(target: Target<'_>) -> ChunkDecoder {
        ChunkDecoder::new(target.url, target.model)
    }

    fn whole_answer(body: &str, target: Target<'_>) -> Result<Vec<StreamEvent>, LlmError> {
        completion_events(body, target.url, target.model)
    }
}

/// `Authorization: Bearer <key>` when a key is set.
fn auth_headers(config: &OpenAiConfig) -> Result<HeaderMap, LlmError> {
    let mut headers = HeaderMap::new();
    if let Some(key) = config.api_key.as_deref().filter(|k| !k.is_empty()) {
        headers.insert(
            AUTHORIZATION,
            http::secret_header(&format!("Bearer {key}"))?,
        );
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_a_bad_base_url_and_trims_the_slash() {
        let bad = OpenAiProvider::new(OpenAiConfig {
            base_url: "localhost:8080".into(),
            ..OpenAiConfig::new("m")
        });
        assert!(matches!(bad, Err(LlmError::Fatal(_))));
        let ok = OpenAiProvider::new(OpenAiConfig {
            base_url: "http://h/v1/".into(),
            ..OpenAiConfig::new("m")
        });
        assert_eq!(ok.unwrap().url("models"), "http://h/v1/models");
    }

    #[test]
    fn debug_hides_the_key() {
        let config = OpenAiConfig {
            api_key: Some("sk-secret".into()),
            ..OpenAiConfig::new("m")
        };
        assert!(!format!("{config:?}").contains("sk-secret"));
    }
}
