//! A provider that plays back answers given as data. Deterministic, no network: the
//! harness tests, the benchmarks and `cairn --provider scripted` use it.
//!
//! A script is a list of turns, one per model call; each turn is a list of steps:
//!
//! ```json
//! [{"steps": [{"text": "Let me check."},
//!             {"tool_call": {"name": "read_file", "arguments": {"path": "a.md"}}}]},
//!  {"steps": [{"text": "Done."}]}]
//! ```

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use cairn_protocol::{ErrorKind, StopReason, ToolCall, Usage};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::LlmError;
use crate::provider::{ChatRequest, EventStream, Provider, ProviderInfo, StreamEvent};

/// One scripted step of a model answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptStep {
    /// Stream this text (as one delta).
    Text(String),
    /// Stream this reasoning (as one delta); it ends where text or a call begins.
    Thinking(String),
    /// Emit a tool call. Without an id, one is made up (`call_<turn>_<n>`).
    ToolCall {
        #[serde(default)]
        id: Option<String>,
        name: String,
        #[serde(default)]
        arguments: Value,
    },
    /// Tell the user something that is not an error (as a provider does when the model
    /// does not take the thinking level asked for).
    Notice(String),
    /// Report token usage.
    Usage {
        input_tokens: u64,
        output_tokens: u64,
    },
    /// Wait before the next step (honours cancellation).
    DelayMs(u64),
    /// Fail the call with an error of this kind.
    Error { kind: ErrorKind, message: String },
    /// Never finish: wait until the call is cancelled.
    Hang,
    /// Finish with this stop reason (by default: tool_use when the turn has tool calls,
    /// end_turn otherwise).
    Finish(StopReason),
}

/// The answer to one model call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScriptedTurn {
    pub steps: Vec<ScriptStep>,
}

impl ScriptedTurn {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            steps: vec![ScriptStep::Text(text.into())],
        }
    }

    pub fn tool_call(name: &str, arguments: Value) -> Self {
        Self {
            steps: vec![ScriptStep::ToolCall {
                id: None,
                name: name.into(),
                arguments,
            }],
        }
    }

    pub fn steps(steps: Vec<ScriptStep>) -> Self {
        Self { steps }
    }
}

type Responder = dyn Fn(&ChatRequest) -> ScriptedTurn + Send + Sync;

/// Plays back [`ScriptedTurn`]s in order and records every request it receives.
pub struct ScriptedProvider {
    turns: Mutex<VecDeque<ScriptedTurn>>,
    responder: Option<Arc<Responder>>,
    requests: Mutex<Vec<ChatRequest>>,
    calls: Mutex<u64>,
    supports_tools: bool,
    vision: bool,
    record_requests: bool,
    /// Counts a request's tokens as this many times its characters / 4, when set.
    count_factor: Option<u64>,
}

impl ScriptedProvider {
    pub fn new(turns: Vec<ScriptedTurn>) -> Self {
        Self {
            turns: Mutex::new(turns.into()),
            responder: None,
            requests: Mutex::new(Vec::new()),
            calls: Mutex::new(0),
            supports_tools: true,
            vision: false,
            record_requests: true,
            count_factor: None,
        }
    }

    /// A provider that answers every call with `responder(request)`, forever. Requests are
    /// not recorded (benchmarks run it for many steps).
    pub fn with_responder(
        responder: impl Fn(&ChatRequest) -> ScriptedTurn + Send + Sync + 'static,
    ) -> Self {
        Self {
            responder: Some(Arc::new(responder)),
            record_requests: false,
            ..Self::new(vec![])
        }
    }

    /// Reads a script from JSON text: a list of turns.
    pub fn from_json(text: &str) -> Result<Self, LlmError> {
        let turns: Vec<ScriptedTurn> = serde_json::from_str(text)
            .map_err(|e| LlmError::Fatal(format!("invalid provider script: {e}")))?;
        Ok(Self::new(turns))
    }

    /// Keeps every request (a responder provider does not by default), for tests that
    /// look at what was asked.
    pub fn recording(mut self) -> Self {
        self.record_requests = true;
        self
    }

    /// Pretend the model has a tokenizer that counts `factor` times what a characters/4
    /// estimate would (`count_tokens` answers "the scripted tokenizer").
    pub fn counting(mut self, factor: u64) -> Self {
        self.count_factor = Some(factor);
        self
    }

    /// Pretend the model sees pictures.
    pub fn seeing(mut self) -> Self {
        self.vision = true;
        self
    }

    /// Pretend the model has no tool support.
    pub fn without_tools(mut self) -> Self {
        self.supports_tools = false;
        self
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many turns are still queued.
    pub fn remaining(&self) -> usize {
        self.turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    fn next_turn(&self, request: &ChatRequest) -> Option<(u64, ScriptedTurn)> {
        let n = {
            let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
            *calls += 1;
            *calls
        };
        let queued = self
            .turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        let turn = queued.or_else(|| self.responder.as_ref().map(|r| r(request)))?;
        Some((n, turn))
    }
}

#[async_trait]
impl Provider for ScriptedProvider {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            kind: "scripted".into(),
            model: "scripted".into(),
            supports_tools: self.supports_tools,
            context_window: None,
            vision: self.vision,
            image_max_side: crate::provider::DEFAULT_IMAGE_MAX_SIDE,
        }
    }

    async fn count_tokens(&self, request: &ChatRequest) -> Option<crate::provider::TokenCount> {
        let factor = self.count_factor?;
        let chars: usize = request.system.as_deref().map_or(0, str::len)
            + request
                .messages
                .iter()
                .map(|m| m.text().len())
                .sum::<usize>();
        Some(crate::provider::TokenCount {
            tokens: factor * (chars as u64 / 4),
            by: "the scripted tokenizer".into(),
        })
    }

    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, LlmError> {
        let next = self.next_turn(&request);
        if self.record_requests {
            self.requests
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(request);
        }
        let Some((call_no, turn)) = next else {
            return Err(LlmError::Fatal(
                "the provider script has no more turns".into(),
            ));
        };
        Ok(play(call_no, turn, cancel))
    }
}

struct Playback {
    call_no: u64,
    steps: VecDeque<ScriptStep>,
    calls_made: u32,
    finished: bool,
    cancel: CancellationToken,
}

fn play(call_no: u64, turn: ScriptedTurn, cancel: CancellationToken) -> EventStream {
    let state = Playback {
        call_no,
        steps: turn.steps.into(),
        calls_made: 0,
        finished: false,
        cancel,
    };
    futures::stream::unfold(state, |mut st| async move {
        let item = next_event(&mut st).await?;
        Some((item, st))
    })
    .boxed()
}

async fn next_event(st: &mut Playback) -> Option<Result<StreamEvent, LlmError>> {
    if st.finished {
        return None;
    }
    loop {
        if st.cancel.is_cancelled() {
            st.finished = true;
            return Some(Err(LlmError::Aborted));
        }
        let Some(step) = st.steps.pop_front() else {
            st.finished = true;
            let reason = if st.calls_made > 0 {
                StopReason::ToolUse
            } else {
                StopReason::EndTurn
            };
            return Some(Ok(StreamEvent::Finish(reason)));
        };
        match step {
            ScriptStep::Text(text) => return Some(Ok(StreamEvent::TextDelta(text))),
            ScriptStep::Thinking(text) => return Some(Ok(StreamEvent::ThinkingDelta(text))),
            ScriptStep::Notice(text) => return Some(Ok(StreamEvent::Notice(text))),
            ScriptStep::ToolCall {
                id,
                name,
                arguments,
            } => {
                st.calls_made += 1;
                let id = id.unwrap_or_else(|| format!("call_{}_{}", st.call_no, st.calls_made));
                return Some(Ok(StreamEvent::ToolCall(ToolCall {
                    id,
                    name,
                    arguments,
                })));
            }
            ScriptStep::Usage {
                input_tokens,
                output_tokens,
            } => {
                let usage = Usage {
                    input_tokens,
                    output_tokens,
                    cache_read_tokens: 0,
                };
                return Some(Ok(StreamEvent::Usage(usage)));
            }
            ScriptStep::DelayMs(ms) => {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => {}
                    () = st.cancel.cancelled() => {}
                }
            }
            ScriptStep::Hang => st.cancel.cancelled().await,
            ScriptStep::Error { kind, message } => {
                st.finished = true;
                return Some(Err(error_of_kind(kind, message)));
            }
            ScriptStep::Finish(reason) => {
                st.finished = true;
                return Some(Ok(StreamEvent::Finish(reason)));
            }
        }
    }
}

fn error_of_kind(kind: ErrorKind, message: String) -> LlmError {
    match kind {
        ErrorKind::ContextOverflow => LlmError::ContextOverflow(message),
        ErrorKind::RateLimited => LlmError::RateLimited {
            retry_after: None,
            message,
        },
        ErrorKind::Auth => LlmError::Auth(message),
        ErrorKind::BadRequest => LlmError::BadRequest(message),
        ErrorKind::Transient => LlmError::Transient(message),
        ErrorKind::Aborted => LlmError::Aborted,
        ErrorKind::Fatal
        | ErrorKind::Busy
        | ErrorKind::Io
        | ErrorKind::Invalid
        | ErrorKind::Timeout => LlmError::Fatal(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::TryStreamExt;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[tokio::test]
    async fn plays_turns_in_order_and_records_requests() {
        let script = r#"[
            {"steps": [{"text": "hi "}, {"tool_call": {"name": "list_dir", "arguments": {"path": "."}}},
                       {"usage": {"input_tokens": 10, "output_tokens": 2}}]},
            {"steps": [{"text": "done"}]}
        ]"#;
        let provider = ScriptedProvider::from_json(script).unwrap();
        let req = ChatRequest {
            model: "m".into(),
            ..Default::default()
        };
        let events: Vec<_> = provider
            .stream(req.clone(), CancellationToken::new())
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        assert_eq!(
            events,
            vec![
                StreamEvent::TextDelta("hi ".into()),
                StreamEvent::ToolCall(ToolCall {
                    id: "call_1_1".into(),
                    name: "list_dir".into(),
                    arguments: json!({"path": "."}),
                }),
                StreamEvent::Usage(Usage {
                    input_tokens: 10,
                    output_tokens: 2,
                    cache_read_tokens: 0
                }),
                StreamEvent::Finish(StopReason::ToolUse),
            ]
        );
        assert_eq!(provider.remaining(), 1);
        assert_eq!(provider.requests(), vec![req]);
    }

    #[tokio::test]
    async fn hang_ends_with_aborted_when_cancelled() {
        let provider = ScriptedProvider::new(vec![ScriptedTurn::steps(vec![
            ScriptStep::Text("partial".into()),
            ScriptStep::Hang,
        ])]);
        let cancel = CancellationToken::new();
        let mut stream = provider
            .stream(ChatRequest::default(), cancel.clone())
            .await
            .unwrap();
        assert_eq!(
            stream.next().await,
            Some(Ok(StreamEvent::TextDelta("partial".into())))
        );
        cancel.cancel();
        assert_eq!(stream.next().await, Some(Err(LlmError::Aborted)));
        assert_eq!(stream.next().await, None);
    }

    #[tokio::test]
    async fn an_exhausted_script_is_an_error() {
        let provider = ScriptedProvider::new(vec![]);
        let err = provider
            .stream(ChatRequest::default(), CancellationToken::new())
            .await
            .err();
        assert!(matches!(err, Some(LlmError::Fatal(_))));
    }
}
