//! A GGUF model run in-process through llama.cpp: how Cairn works offline out of the box
//!. The default model is SmolLM2-135M-Instruct, fetched by
//! `scripts/fetch-model.sh` to `cairn_models::default_model_path`.
//!
//! - [`file`]: a cheap GGUF check ([`LocalProvider::probe`]).
//! - The llama.cpp backend, initialised once per process, is `cairn_models::llama_backend`.
//! - `engine`: the dedicated thread that owns the model and its context, fed by a queue,
//!   so generations run one at a time per model.
//! - `template` and `prompt`: the chat template (the model's own or one from the
//!   configuration) applied to the conversation, and the prompt sized to the context window.
//! - `calls`: the tool-call formats chat templates teach, and reading calls out of an
//!   answer as it streams. A model is offered tools only when its template teaches one.
//! - `generate`: decoding, sampling and streaming one answer; `utf8`: whole characters
//!   from token bytes.

mod calls;
mod engine;
pub mod file;
mod generate;
mod prompt;
mod template;
mod utf8;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[cfg(test)]
pub(crate) use self::calls::{CallFormat, CallStream};
use self::engine::{default_threads, Engine, EngineConfig, Job};
use crate::error::LlmError;
use crate::provider::{ChatRequest, EventStream, Provider, ProviderInfo, StreamEvent};

pub use self::engine::{load_progress, settle};

/// How to run a local model. Everything comes from here: the provider reads no
/// environment variables or global configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalConfig {
    /// The GGUF model file.
    pub model_path: PathBuf,
    /// The context window in tokens; by default the model's training context, capped at
    /// 8,192 tokens.
    pub context_window: Option<u32>,
    /// Threads for decoding; by default one fewer than the cores the process may use (at
    /// least 1, at most 8).
    pub threads: Option<i32>,
    /// The answer length limit when a request sets none.
    pub max_tokens: u32,
    /// A chat template (Jinja, as in Hugging Face's `tokenizer_config.json`) used instead of
    /// the one in the model file. Tools are offered when it renders the `tools` variable and
    /// teaches a call format Cairn reads (Hermes `<tool_call>`, Llama 3 JSON, Mistral
    /// `[TOOL_CALLS]`).
    pub chat_template: Option<String>,
}

impl LocalConfig {
    /// The defaults, for the model at `model_path`.
    pub fn new(model_path: impl Into<PathBuf>) -> Self {
        Self {
            model_path: model_path.into(),
            context_window: None,
            threads: None,
            max_tokens: 512,
            chat_template: None,
        }
    }
}

/// A provider answering with a GGUF model loaded in this process. Cheap to clone: clones
/// share the model and its queue.
#[derive(Debug, Clone)]
pub struct LocalProvider {
    engine: Arc<Engine>,
    info: ProviderInfo,
    threads: i32,
    max_tokens: u32,
}

impl LocalProvider {
    /// Checks that `path` is a readable GGUF file (reads four bytes; does not load it).
    /// The error says what to do about it.
    pub fn probe(path: &Path) -> Result<(), LlmError> {
        file::probe(path)
    }

    /// Loads the model and prepares its context. Blocking (a fraction of a second for a
    /// small model, longer for a large one): call it from `spawn_blocking` in async code.
    pub fn load(config: LocalConfig) -> Result<Self, LlmError> {
        Self::probe(&config.model_path)?;
        let threads = config
            .threads
            .filter(|&t| t > 0)
            .unwrap_or_else(default_threads);
        let engine = Engine::start(EngineConfig {
            model_path: config.model_path.clone(),
            context_window: config.context_window,
            threads,
            chat_template: config.chat_template,
        })?;
        let calls = engine.loaded().calls;
        let info = ProviderInfo {
            kind: "local".into(),
            model: file::model_name(&config.model_path),
            // Tool calls need a call format in the template; without one we offer none.
            supports_tools: calls.is_some(),
            context_window: Some(u64::from(engine.loaded().n_ctx)),
            // Pictures reach a local model as their text (a multimodal projector is not
            // loaded).
            vision: false,
            image_max_side: crate::provider::DEFAULT_IMAGE_MAX_SIDE,
        };
        tracing::info!(
            model = %info.model,
            n_ctx = engine.loaded().n_ctx,
            threads,
            tool_calls = calls.map_or("none", |c| c.name()),
            "local model ready"
        );
        Ok(Self {
            engine: Arc::new(engine),
            info,
            threads,
            max_tokens: config.max_tokens.max(1),
        })
    }

    /// The context window in use, in tokens.
    pub fn context_window(&self) -> u32 {
        self.engine.loaded().n_ctx
    }

    /// The number of threads decoding uses.
    pub fn threads(&self) -> i32 {
        self.threads
    }
}

/// Checks a chat template given in the configuration without loading a model: it must
/// compile and render a short conversation. Returns whether it offers the model tools.
pub fn check_chat_template(source: &str) -> Result<bool, LlmError> {
    template::check(source)
}

#[async_trait]
impl Provider for LocalProvider {
    fn info(&self) -> ProviderInfo {
        self.info.clone()
    }

    /// Queues the request on the model's thread and streams its answer. Cancelling
    /// `cancel` ends the stream at once with `Aborted` and stops decoding at the next token;
    /// dropping the stream stops it too.
    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, LlmError> {
        if !request.tools.is_empty() && !self.info.supports_tools {
            tracing::debug!(
                tools = request.tools.len(),
                "the local model is offered no tools"
            );
        }
        let (events, rx) = mpsc::unbounded_channel();
        let max_tokens = request.max_tokens.unwrap_or(self.max_tokens).max(1);
        self.engine.submit(Job {
            request,
            max_tokens,
            cancel: cancel.clone(),
            events,
            count_only: false,
        })?;
        Ok(event_stream(rx, cancel))
    }

    /// The prompt's tokens as the model's own vocabulary cuts it (queued behind a
    /// generation under way).
    async fn count_tokens(&self, request: &ChatRequest) -> Option<crate::provider::TokenCount> {
        let (events, mut rx) = mpsc::unbounded_channel();
        self.engine
            .submit(Job {
                request: request.clone(),
                max_tokens: 1,
                cancel: CancellationToken::new(),
                events,
                count_only: true,
            })
            .ok()?;
        match rx.recv().await? {
            Ok(StreamEvent::Usage(usage)) => Some(crate::provider::TokenCount {
                tokens: usage.input_tokens,
                by: "the model's own vocabulary".into(),
            }),
            _ => None,
        }
    }
}

type EventRx = mpsc::UnboundedReceiver<Result<StreamEvent, LlmError>>;

/// The engine's events as a stream that ends after `Finish` or an error, and ends with
/// `Aborted` as soon as `cancel` fires. The engine lets go of the job at its next token; a
/// process about to exit waits for that with [`settle`].
fn event_stream(rx: EventRx, cancel: CancellationToken) -> EventStream {
    futures::stream::unfold(Some((rx, cancel)), |state| async move {
        let (mut rx, cancel) = state?;
        let item = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(LlmError::Aborted),
            event = rx.recv() => event.unwrap_or_else(|| {
                Err(LlmError::Fatal("the local model stopped without finishing its answer".into()))
            }),
        };
        let done = matches!(item, Err(_) | Ok(StreamEvent::Finish(_)));
        Some((item, (!done).then_some((rx, cancel))))
    })
    .boxed()
}
