//! Memory that keeps itself: the model calls that are not part of a
//! conversation (flush, compaction summaries, consolidation) and the background work
//! around them.
//!
//! - `clock.rs`: time behind a trait, so timers can be driven in tests.
//! - `lock.rs`: one job of a kind per workspace, across processes (a lock file in `.cairn/`).
//! - `consolidate/`: merging the daily logs into MEMORY.md, and its scheduler.

pub mod clock;
pub mod consolidate;
pub mod lock;

pub mod compact;
pub mod flush;
pub mod transcript;

use std::sync::Arc;

use cairn_llm::{ChatRequest, LlmError, Provider, StreamEvent};
use cairn_protocol::{Message, Usage};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

pub use clock::{Clock, ManualClock, SystemClock};
pub use consolidate::{
    ConsolidateError, ConsolidationOptions, ConsolidationReport, ConsolidationScheduler,
    ConsolidationStatus, Consolidator, ModelLoader, ModelSource, RunMode, RunResult,
    SchedulerHandle, SchedulerStatus,
};

/// The temperature of purpose models that write (summaries, notes, titles).
const WRITING_TEMPERATURE: f32 = 0.2;

/// A model for one purpose: the provider and the model name to ask it for.
#[derive(Clone)]
pub struct ModelChoice {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    /// The longest one call may take in all (`[timeouts]`); `None`: the provider's own.
    pub timeout: Option<std::time::Duration>,
}

impl std::fmt::Debug for ModelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelChoice")
            .field("provider", &self.provider.info().kind)
            .field("model", &self.model)
            .finish()
    }
}

/// A whole answer of a model asked without tools.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    pub text: String,
    pub usage: Usage,
}

impl ModelChoice {
    pub fn new(provider: Arc<dyn Provider>, model: impl Into<String>) -> Self {
        Self {
            provider,
            model: model.into(),
            timeout: None,
        }
    }

    /// The same model with a limit on each call (`None` keeps the one it has).
    pub fn with_timeout(mut self, timeout: Option<std::time::Duration>) -> Self {
        self.timeout = timeout.or(self.timeout);
        self
    }

    /// Asks the model `user` under `system` and collects the whole answer, within the
    /// choice's timeout.
    pub async fn complete(
        &self,
        system: &str,
        user: String,
        max_tokens: u32,
        cancel: CancellationToken,
    ) -> Result<Completion, LlmError> {
        self.complete_at(system, user, max_tokens, WRITING_TEMPERATURE, cancel)
            .await
    }

    /// [`Self::complete`] at `temperature` (0: the most likely answer, for readings that
    /// should not vary).
    pub async fn complete_at(
        &self,
        system: &str,
        user: String,
        max_tokens: u32,
        temperature: f32,
        cancel: CancellationToken,
    ) -> Result<Completion, LlmError> {
        let call = (system, user, max_tokens, temperature);
        let Some(limit) = self.timeout else {
            return self.complete_unlimited(call, cancel).await;
        };
        let stop = cancel.child_token();
        let answer = self.complete_unlimited(call, stop.clone());
        match tokio::time::timeout(limit, answer).await {
            Ok(answer) => answer,
            Err(_) => {
                stop.cancel();
                Err(LlmError::Transient(format!(
                    "no whole answer within {} s (the [timeouts] limit)",
                    limit.as_secs()
                )))
            }
        }
    }

    async fn complete_unlimited(
        &self,
        (system, user, max_tokens, temperature): (&str, String, u32, f32),
        cancel: CancellationToken,
    ) -> Result<Completion, LlmError> {
        let request = ChatRequest {
            model: self.model.clone(),
            system: Some(system.to_string()),
            messages: Arc::new(vec![Message::user(user)]),
            tools: Arc::default(),
            max_tokens: Some(max_tokens),
            temperature: Some(temperature),
            thinking: None,
        };
        let mut stream = self.provider.stream(request, cancel).await?;
        let mut completion = Completion::default();
        while let Some(event) = stream.next().await {
            match event? {
                StreamEvent::TextDelta(text) => completion.text.push_str(&text),
                StreamEvent::Usage(usage) => completion.usage.add(&usage),
                // Reasoning is not part of the summary or the notes asked for.
                StreamEvent::ToolCall(_)
                | StreamEvent::ServerToolCall { .. }
                | StreamEvent::ServerToolResult { .. }
                | StreamEvent::ThinkingDelta(_)
                | StreamEvent::ThinkingEnd { .. }
                | StreamEvent::RedactedThinking(_)
                | StreamEvent::Finish(_)
                | StreamEvent::Notice(_)
                | StreamEvent::Retrying { .. } => {}
            }
        }
        Ok(completion)
    }
}
