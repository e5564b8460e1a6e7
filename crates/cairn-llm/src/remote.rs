//! What every remote provider is configured with, whatever wire it speaks: where the server
//! is, the key, the model, extra headers, the window, retries and waits, shown without the
//! key. Each provider adds only what its wire needs ([`RemoteConfig::wire`]).
//!
//! Everything comes from here: a provider reads no environment variables or global
//! configuration.

use std::fmt;
use std::time::Duration;

use reqwest::header::HeaderMap;

use crate::error::LlmError;
use crate::http::{self, Waits};
use crate::retry::RetryPolicy;

/// What one provider's wire adds to the shared settings.
pub trait Wire: Clone + Default + fmt::Debug {
    /// The server a configuration reaches unless told otherwise.
    const BASE_URL: &'static str;
}

/// Where and how to reach a remote model server.
#[derive(Clone, PartialEq, Eq)]
pub struct RemoteConfig<W> {
    /// The server's address; each provider says which paths it adds (`/chat/completions`,
    /// `/v1/messages`).
    pub base_url: String,
    /// Sent as the wire sends keys (`Authorization: Bearer`, `x-api-key`) when present and
    /// not empty.
    pub api_key: Option<String>,
    /// The model used when a request does not name one.
    pub model: String,
    /// Extra headers for every request (e.g. OpenRouter's `HTTP-Referer`, `anthropic-beta`);
    /// they replace headers of the same name, the key's included.
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
    /// Whether the model sees pictures; `None`: as the provider knows it (else not).
    pub vision: Option<bool>,
    /// The longest side of a picture sent to the model; `None`: the provider's default.
    pub image_max_side: Option<u32>,
    /// What only this provider's wire has.
    pub wire: W,
}

impl<W: Wire> Default for RemoteConfig<W> {
    fn default() -> Self {
        let retry = RetryPolicy::default();
        Self {
            base_url: W::BASE_URL.into(),
            api_key: None,
            model: String::new(),
            extra_headers: Vec::new(),
            context_window: None,
            max_retries: retry.max_retries,
            retry_base_delay: retry.base_delay,
            idle_timeout: Duration::from_secs(60),
            call_timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(10),
            vision: None,
            image_max_side: None,
            wire: W::default(),
        }
    }
}

impl<W: Wire> RemoteConfig<W> {
    /// The defaults, for `model`.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            ..Self::default()
        }
    }
}

impl<W> RemoteConfig<W> {
    /// The retry policy these settings describe.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            max_retries: self.max_retries,
            base_delay: self.retry_base_delay,
            ..RetryPolicy::default()
        }
    }

    /// The waits of a call made now.
    pub(crate) fn waits(&self) -> Waits {
        Waits::new(self.idle_timeout, self.call_timeout)
    }

    /// The key, when one is set.
    pub(crate) fn key(&self) -> Option<&str> {
        self.api_key.as_deref().filter(|k| !k.is_empty())
    }

    /// The HTTP client of these settings, sending `headers` (the wire's own, the key's) and
    /// the extra headers with every request.
    pub(crate) fn client(&self, headers: HeaderMap) -> Result<http::Client, LlmError> {
        http::client(headers, &self.extra_headers, self.connect_timeout)
    }
}

/// Shows everything but the API key.
impl<W: fmt::Debug> fmt::Debug for RemoteConfig<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteConfig")
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
            .field("wire", &self.wire)
            .finish()
    }
}
