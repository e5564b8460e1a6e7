//! One model call: stream the answer to subscribers while assembling the message.

use cairn_llm::{ChatRequest, LlmError, StreamEvent};
use cairn_protocol::{AgentEvent, AssistantMessage, ContentBlock, Phase, StopReason, Usage};
use futures::StreamExt;

use super::flow::Run;
use crate::session::SessionTree;

/// How the model call ended.
pub(super) enum StepEnd {
    Done(AssistantMessage),
    Aborted,
    Failed(LlmError),
}

/// The result of a model call. `partial` holds the text produced before an abort or a
/// failure, so nothing the user saw is lost.
pub(super) struct Answer {
    pub end: StepEnd,
    pub partial: Option<AssistantMessage>,
    pub usage: Usage,
}

/// Builds the assistant message from stream events.
struct Assembly {
    blocks: Vec<ContentBlock>,
    text: String,
    /// Reasoning still coming in.
    thinking: Option<String>,
    usage: Option<Usage>,
    model: String,
}

impl Assembly {
    /// `id` for a call of this answer, or `id-2`, `id-3` ... when the session or this answer
    /// already has a call with it: a server that numbers its calls afresh in every answer
    /// (`call_0`) would otherwise give one session many calls of one id, and their results,
    /// approvals and file changes would be told apart by nothing.
    fn unique_call_id(&self, session: &SessionTree, id: String) -> String {
        let taken = |id: &str| {
            session.has_call(id)
                || self
                    .blocks
                    .iter()
                    .any(|b| matches!(b, ContentBlock::ToolCall(call) if call.id == id))
        };
        if !taken(&id) {
            return id;
        }
        (2..)
            .map(|n| format!("{id}-{n}"))
            .find(|candidate| !taken(candidate))
            .unwrap_or(id)
    }

    fn flush_text(&mut self) {
        self.end_thinking(None);
        if !self.text.is_empty() {
            self.blocks.push(ContentBlock::Text {
                text: std::mem::take(&mut self.text),
            });
        }
    }

    /// Reasoning ends where the provider says, or where text or a call begins.
    fn end_thinking(&mut self, signature: Option<String>) {
        if let Some(text) = self.thinking.take() {
            self.blocks.push(ContentBlock::Thinking {
                text,
                signature,
                redacted: None,
            });
        }
    }

    fn think(&mut self, piece: &str) {
        if !self.text.is_empty() {
            self.flush_text();
        }
        self.thinking
            .get_or_insert_with(String::new)
            .push_str(piece);
    }

    fn finish(mut self, stop_reason: StopReason) -> AssistantMessage {
        self.flush_text();
        AssistantMessage {
            content: self.blocks,
            stop_reason,
            usage: self.usage,
            model: Some(self.model),
        }
    }

    /// What was said before the stream stopped early: text and reasoning (tool calls are
    /// dropped, they were never run and would need answers; reasoning cut short has no
    /// signature, so it is never sent back; so are the provider's own tool blocks, whose
    /// call may have lost its result).
    fn partial(mut self, stop_reason: StopReason) -> Option<AssistantMessage> {
        self.flush_text();
        self.blocks.retain(|b| match b {
            ContentBlock::Text { .. } => true,
            ContentBlock::Thinking { text, .. } => !text.is_empty(),
            ContentBlock::ToolCall(_)
            | ContentBlock::Image(_)
            | ContentBlock::ServerTool { .. } => false,
        });
        if self.blocks.is_empty() {
            return None;
        }
        Some(self.finish(stop_reason))
    }
}

pub(super) async fn stream_assistant_response(run: &Run, request: ChatRequest) -> Answer {
    let events = &run.inner.events;
    let cancel = run.cancel.clone();
    let mut assembly = Assembly {
        blocks: Vec::new(),
        text: String::new(),
        thinking: None,
        usage: None,
        model: request.model.clone(),
    };
    let provider = run.settings.provider.clone();
    // `[timeouts] chat`: the call in all; its own token, so running out cancels only it.
    let limit = run.settings.config.timeouts.chat;
    let call = cancel.child_token();
    let deadline = async {
        match limit {
            Some(limit) => tokio::time::sleep(limit).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    let late = || {
        call.cancel();
        LlmError::Transient(format!(
            "the model did not finish its answer within {} s (the [timeouts] chat limit)",
            limit.unwrap_or_default().as_secs()
        ))
    };
    let started = tokio::select! {
        biased;
        () = cancel.cancelled() => Err(LlmError::Aborted),
        () = &mut deadline => Err(late()),
        result = provider.stream(request, call.clone()) => result,
    };
    events.emit(AgentEvent::MessageStart {
        role: "assistant".into(),
    });
    let mut stream = match started {
        Ok(stream) => stream,
        Err(error) => return failed(assembly, error),
    };
    let mut stop_reason = None;
    let mut retrying = false;
    loop {
        let item = tokio::select! {
            biased;
            () = cancel.cancelled() => Some(Err(LlmError::Aborted)),
            () = &mut deadline => Some(Err(late())),
            item = stream.next() => item,
        };
        if retrying && !matches!(item, Some(Ok(StreamEvent::Retrying { .. }))) {
            retrying = false;
            set_phase(run, Phase::Turn);
        }
        match item {
            None => break,
            Some(Ok(StreamEvent::Retrying {
                attempt,
                delay,
                reason,
            })) => {
                if !retrying {
                    retrying = true;
                    set_phase(run, Phase::Retry);
                }
                events.emit(AgentEvent::Retry {
                    attempt,
                    delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    reason,
                });
            }
            Some(Ok(StreamEvent::Notice(message))) => {
                let fresh = run.inner.state().told_notices.insert(message.clone());
                if fresh {
                    events.emit(AgentEvent::Notice {
                        level: cairn_protocol::NoticeLevel::Info,
                        message,
                    });
                }
            }
            Some(Ok(StreamEvent::TextDelta(text))) => {
                assembly.text.push_str(&text);
                events.emit(AgentEvent::MessageDelta { text });
            }
            Some(Ok(StreamEvent::ThinkingDelta(text))) => {
                assembly.think(&text);
                events.emit(AgentEvent::ThinkingDelta { text });
            }
            Some(Ok(StreamEvent::ThinkingEnd { signature })) => {
                // A signed block with no text (the provider showed nothing) is still kept:
                // it must go back with the turn.
                if signature.is_some() {
                    assembly.thinking.get_or_insert_with(String::new);
                }
                assembly.end_thinking(signature);
            }
            Some(Ok(StreamEvent::RedactedThinking(data))) => {
                assembly.flush_text();
                assembly.blocks.push(ContentBlock::Thinking {
                    text: String::new(),
                    signature: None,
                    redacted: Some(data),
                });
            }
            Some(Ok(StreamEvent::ToolCall(mut call))) => {
                assembly.flush_text();
                call.id = assembly.unique_call_id(&run.inner.session(), call.id);
                assembly.blocks.push(ContentBlock::ToolCall(call));
            }
            Some(Ok(StreamEvent::ServerToolCall {
                id,
                name,
                input,
                block,
            })) => {
                // The provider ran it on its servers: shown like a call, kept to go back.
                assembly.flush_text();
                assembly
                    .blocks
                    .push(ContentBlock::ServerTool { raw: block });
                events.emit(AgentEvent::ToolStart {
                    call_id: id,
                    name,
                    arguments: input,
                    change: None,
                });
            }
            Some(Ok(StreamEvent::ServerToolResult {
                call_id,
                name,
                content,
                is_error,
                block,
            })) => {
                assembly.flush_text();
                assembly
                    .blocks
                    .push(ContentBlock::ServerTool { raw: block });
                events.emit(AgentEvent::ToolEnd {
                    call_id,
                    name,
                    content,
                    is_error,
                    pictures: Vec::new(),
                });
            }
            Some(Ok(StreamEvent::Usage(usage))) => assembly.usage = Some(usage),
            Some(Ok(StreamEvent::Finish(reason))) => {
                stop_reason = Some(reason);
                break;
            }
            Some(Err(error)) => return failed(assembly, error),
        }
    }
    let has_calls = assembly
        .blocks
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolCall(_)));
    let stop_reason = match stop_reason {
        Some(StopReason::EndTurn) if has_calls => StopReason::ToolUse,
        Some(reason) => reason,
        None if has_calls => StopReason::ToolUse,
        None => StopReason::EndTurn,
    };
    let usage = assembly.usage.unwrap_or_default();
    Answer {
        end: StepEnd::Done(assembly.finish(stop_reason)),
        partial: None,
        usage,
    }
}

/// The harness's phase while a call waits to be tried again, told to subscribers.
fn set_phase(run: &Run, phase: Phase) {
    run.inner.state().phase = phase;
    run.inner.events.emit(AgentEvent::PhaseChanged { phase });
}

fn failed(assembly: Assembly, error: LlmError) -> Answer {
    let usage = assembly.usage.unwrap_or_default();
    let (end, reason) = match error {
        LlmError::Aborted => (StepEnd::Aborted, StopReason::Aborted),
        error => (StepEnd::Failed(error), StopReason::Error),
    };
    Answer {
        end,
        partial: assembly.partial(reason),
        usage,
    }
}
