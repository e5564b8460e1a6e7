//! The figure: the local provider answering through its public streaming API, timed the
//! way a caller sees it.

use std::time::Instant;

use anyhow::{bail, Context as _};
use cairn_llm::{ChatRequest, LocalProvider, Provider, StreamEvent};
use cairn_protocol::{Message, StopReason, Usage};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::raw::Timing;

/// One timed answer and what the provider reported about it.
#[derive(Debug, Clone)]
pub struct Answer {
    pub timing: Timing,
    pub usage: Usage,
    pub stop: StopReason,
}

impl Answer {
    /// Prompt tokens the model actually decoded (the cached prefix is not decoded again).
    pub fn decoded_prompt(&self) -> u64 {
        self.usage.input_tokens - self.usage.cache_read_tokens
    }

    /// Decode steps after the first token: one per generated token but the last, plus one
    /// more when the model ended the answer itself (its last token was decoded to find the
    /// end).
    pub fn steps(&self) -> u64 {
        match self.stop {
            StopReason::EndTurn => self.usage.output_tokens,
            _ => self.usage.output_tokens.saturating_sub(1),
        }
    }
}

/// Streams one answer: the prompt phase ends at the first text delta, the generation phase
/// at `Finish`.
pub async fn answer(
    provider: &LocalProvider,
    system: &str,
    user: &str,
    max_tokens: u32,
) -> anyhow::Result<Answer> {
    let request = ChatRequest {
        system: Some(system.into()),
        messages: vec![Message::user(user)].into(),
        max_tokens: Some(max_tokens),
        temperature: Some(0.0),
        ..ChatRequest::default()
    };
    let start = Instant::now();
    let mut stream = provider.stream(request, CancellationToken::new()).await?;
    let mut first = None;
    let mut usage = None;
    while let Some(event) = stream.next().await {
        match event? {
            StreamEvent::TextDelta(_) | StreamEvent::ThinkingDelta(_) => {
                first.get_or_insert_with(Instant::now);
            }
            StreamEvent::Usage(u) => usage = Some(u),
            StreamEvent::Finish(stop) => {
                let end = Instant::now();
                let first = first.context("the answer had no text")?;
                return Ok(Answer {
                    timing: Timing {
                        prompt: first - start,
                        generation: end - first,
                    },
                    usage: usage.context("the answer reported no usage")?,
                    stop,
                });
            }
            StreamEvent::ToolCall(_)
            | StreamEvent::ServerToolCall { .. }
            | StreamEvent::ServerToolResult { .. }
            | StreamEvent::ThinkingEnd { .. }
            | StreamEvent::RedactedThinking(_)
            | StreamEvent::Notice(_)
            | StreamEvent::Retrying { .. } => {}
        }
    }
    bail!("the answer ended without Finish")
}
