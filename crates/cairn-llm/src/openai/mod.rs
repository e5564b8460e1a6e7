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
mod sees;
mod sse;
mod tokens;
pub mod window;
mod wire;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, AUTHORIZATION};
use tokio_util::sync::CancellationToken;

use self::errors::{classify_status, ServerError};
pub(crate) use self::sse::{completion_events, ChunkDecoder};
use self::wire::CompletionRequest;
use crate::error::LlmError;
use crate::http::{self, Call, ErrorAnswer, Target, Waits, WireFormat};
use crate::provider::{ChatRequest, EventStream, Provider, ProviderInfo, StreamEvent};
use crate::remote::{RemoteConfig, Wire};

/// The chat-completions wire adds nothing to the shared settings; its server's address is
/// the API root (`https://api.openai.com/v1`, `http://localhost:11434/v1`), to which
/// `/chat/completions` is added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatCompletionsWire;

impl Wire for ChatCompletionsWire {
    const BASE_URL: &'static str = "https://api.openai.com/v1";
}

/// Where and how to reach an OpenAI-compatible server.
pub type OpenAiConfig = RemoteConfig<ChatCompletionsWire>;

/// A provider speaking the chat-completions API, streamed.
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    config: OpenAiConfig,
    client: http::Client,
    base_url: String,
    /// The server refused `reasoning_effort` once: it is not sent again.
    no_effort: http::Refusals,
}

impl OpenAiProvider {
    /// The waits of a call made now.
    fn waits(&self) -> Waits {
        self.config.waits()
    }

    /// Checks the configuration and prepares the HTTP client (no request is sent).
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        let base_url = http::check_base_url(&config.base_url)?;
        let client = config.client(auth_headers(&config)?)?;
        Ok(Self {
            config,
            client,
            base_url,
            no_effort: http::Refusals::default(),
        })
    }

    /// The ids of the models the server offers (`GET {base_url}/models`), in its order.
    pub async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        let url = self.url("models");
        let target = Target {
            url: &url,
            model: &self.config.model,
        };
        let request = self.client.get()?.get(&url);
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
        let request = self.client.get()?.post(&url).json(&body);
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
        let read = window::read_context_window(
            self.client.get().ok()?,
            &self.base_url,
            &self.config.model,
            None,
        );
        let read = tokio::time::timeout(window::READ_BUDGET, read)
            .await
            .ok()??;
        self.config.context_window = Some(read.1);
        Some(read)
    }

    /// What the server says of its model seeing pictures, when it is one of the known
    /// local servers on its default port (see [`sees`]); `info()` then reports it.
    pub async fn read_vision(&mut self) -> Option<(window::ServerKind, bool)> {
        if !window::is_default_local_server(&self.base_url) {
            return None;
        }
        let read = sees::read_vision(self.client.get().ok()?, &self.base_url, &self.config.model);
        let read = tokio::time::timeout(window::READ_BUDGET, read)
            .await
            .ok()??;
        self.config.vision = Some(read.1);
        Some(read)
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url)
    }

    /// Whether `model` sees pictures: as the settings (or the local server) say, else, on
    /// OpenAI's own API, its families that take pictures; anything else does not.
    fn sees(&self, model: &str) -> bool {
        self.config
            .vision
            .unwrap_or_else(|| sees::openai_model_sees(&self.base_url, model))
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
            vision: self.sees(&self.config.model),
            image_max_side: self
                .config
                .image_max_side
                .unwrap_or(crate::provider::DEFAULT_IMAGE_MAX_SIDE),
        }
    }

    /// OpenAI's own models are counted with their tiktoken encoding (off the async
    /// threads); other models on OpenAI-compatible servers are not.
    async fn count_tokens(&self, request: &ChatRequest) -> Option<crate::provider::TokenCount> {
        let model = if request.model.is_empty() {
            self.config.model.clone()
        } else {
            request.model.clone()
        };
        tokens::encoding(&model)?;
        let request = request.clone();
        tokio::task::spawn_blocking(move || tokens::count(&model, &request))
            .await
            .ok()
            .flatten()
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
        let mut body =
            CompletionRequest::new(&request, model, self.sees(model)).for_server(&self.base_url);
        if self.no_effort.refused() {
            body.reasoning_effort = None;
        }
        let url = self.url("chat/completions");
        let call = Call::new(self.client.get()?, url.clone(), model, &body, self.waits())?;
        let policy = self.config.retry_policy();
        let sent = http::stream::<ChatCompletions>(call, policy, cancel.clone());
        let Some(effort) = body.reasoning_effort.take() else {
            return Ok(sent);
        };
        // A server or model that does not take a reasoning effort answers without one.
        let (client, waits) = (self.client.clone(), self.waits());
        let model = model.to_string();
        let notice = format!(
            "{model} does not take a reasoning effort (thinking level `{effort}`); it answers \
             without one"
        );
        Ok(http::or_without(
            sent,
            |e| http::refuses(e, &["reasoning_effort", "reasoning"]),
            self.no_effort.clone(),
            notice,
            move || {
                let call = Call::new(client.get()?, url, &model, &body, waits)?;
                Ok(http::stream::<ChatCompletions>(call, policy, cancel))
            },
        ))
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
    if let Some(key) = config.key() {
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
