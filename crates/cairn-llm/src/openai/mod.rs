//! The OpenAI-compatible chat-completions provider: OpenAI, OpenRouter, Ollama, the
//! llama.cpp server, vLLM, LM Studio ... (DESIGN.md §6).
//!
//! - [`wire`]: the request and response bodies.
//! - [`sse`]: decoding streamed chunks (and whole completions) into [`StreamEvent`]s.
//! - [`errors`]: classifying HTTP statuses, error bodies and transport failures.
//! - [`stream`]: one attempt at a call; retries wrap it ([`crate::retry`]).
//!
//! [`StreamEvent`]: crate::StreamEvent

mod errors;
mod sse;
mod stream;
mod wire;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};
use tokio_util::sync::CancellationToken;

use self::stream::Call;
use self::wire::{CompletionRequest, ModelList};
use crate::error::LlmError;
use crate::provider::{ChatRequest, EventStream, Provider, ProviderInfo};
use crate::retry::{retry_stream, RetryPolicy};

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
    /// Checks the configuration and prepares the HTTP client (no request is sent).
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        let base_url = check_base_url(&config.base_url)?;
        let client = reqwest::Client::builder()
            .default_headers(default_headers(&config)?)
            .connect_timeout(config.connect_timeout)
            .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Fatal(format!("cannot create the HTTP client: {e}")))?;
        Ok(Self {
            config,
            client,
            base_url,
        })
    }

    /// The ids of the models the server offers (`GET {base_url}/models`), in its order.
    pub async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        let url = self.url("models");
        let target = errors::Target {
            url: &url,
            model: &self.config.model,
        };
        let idle = self.config.idle_timeout;
        let response = stream::send(self.client.get(&url), target, idle).await?;
        let body = stream::read_body(response, &url, idle).await?;
        let list: ModelList = serde_json::from_str(&body).map_err(|e| {
            LlmError::Fatal(format!(
                "{url} did not answer a model list ({e}): {}",
                errors::truncate(&body, 200)
            ))
        })?;
        Ok(list.data.into_iter().map(|m| m.id).collect())
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
        let body = serde_json::to_vec(&CompletionRequest::new(&request, model))
            .map_err(|e| LlmError::Fatal(format!("cannot encode the request: {e}")))?;
        let call = Arc::new(Call {
            client: self.client.clone(),
            url: self.url("chat/completions"),
            model: model.clone(),
            body,
            idle_timeout: self.config.idle_timeout,
        });
        let connect = move || stream::attempt(call.clone());
        Ok(retry_stream(self.config.retry_policy(), cancel, connect))
    }
}

/// The base URL without its trailing slash, once checked.
fn check_base_url(base_url: &str) -> Result<String, LlmError> {
    let invalid = |why: String| LlmError::Fatal(format!("invalid base URL {base_url:?}: {why}"));
    let parsed = reqwest::Url::parse(base_url).map_err(|e| invalid(e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be http or https".into()));
    }
    Ok(base_url.trim_end_matches('/').to_string())
}

fn default_headers(config: &OpenAiConfig) -> Result<HeaderMap, LlmError> {
    let mut headers = HeaderMap::new();
    if let Some(key) = config.api_key.as_deref().filter(|k| !k.is_empty()) {
        let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
            LlmError::Fatal("the API key holds characters not allowed in an HTTP header".into())
        })?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    for (name, value) in &config.extra_headers {
        let bad = || LlmError::Fatal(format!("invalid extra header {name:?}"));
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
        headers.insert(name, HeaderValue::from_str(value).map_err(|_| bad())?);
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
