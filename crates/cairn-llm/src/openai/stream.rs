//! One attempt at a chat-completions call: send the request, check the answer, and decode
//! its body (an SSE stream, or one JSON completion) into events. Also the HTTP plumbing the
//! provider's other calls share: sending with an idle timeout and reading bodies.
//!
//! Retries and cancellation are not handled here but around each attempt
//! ([`crate::retry::retry_stream`]); dropping an attempt's stream closes its connection.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use eventsource_stream::{EventStreamError, Eventsource};
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE};

use super::errors::{classify_status, retry_after, transport_error, ServerError, Target};
use super::sse::{completion_events, ChunkDecoder};
use crate::error::LlmError;
use crate::provider::{EventStream, StreamEvent};

/// Everything one attempt needs; shared by the attempts of a call.
#[derive(Debug)]
pub(crate) struct Call {
    pub client: reqwest::Client,
    pub url: String,
    pub model: String,
    /// The serialized JSON request body.
    pub body: Vec<u8>,
    /// Longest wait for the answer's head or for any further bytes of it.
    pub idle_timeout: Duration,
}

impl Call {
    fn target(&self) -> Target<'_> {
        Target {
            url: &self.url,
            model: &self.model,
        }
    }
}

/// Sends the request and returns the events of the answer, or the classified error.
pub(crate) async fn attempt(call: Arc<Call>) -> Result<EventStream, LlmError> {
    let request = call
        .client
        .post(&call.url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "text/event-stream")
        .body(call.body.clone());
    let response = send(request, call.target(), call.idle_timeout).await?;
    if is_json(&response) {
        let body = read_body(response, &call.url, call.idle_timeout).await?;
        let events = completion_events(&body, &call.url, &call.model)?;
        return Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed());
    }
    Ok(decode_sse(response, &call))
}

/// Sends a request; a non-success status becomes the classified error.
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    target: Target<'_>,
    idle_timeout: Duration,
) -> Result<reqwest::Response, LlmError> {
    tracing::debug!(url = target.url, "sending model request");
    let response = tokio::time::timeout(idle_timeout, request.send())
        .await
        .map_err(|_| idle_error(target.url, idle_timeout))?
        .map_err(|e| transport_error(e, target.url))?;
    if response.status().is_success() {
        return Ok(response);
    }
    let status = response.status().as_u16();
    let wait = retry_after(response.headers());
    let body = read_body(response, target.url, idle_timeout)
        .await
        .unwrap_or_else(|e| format!("(could not read the error body: {e})"));
    Err(classify_status(
        status,
        wait,
        &ServerError::from_body(&body),
        target,
    ))
}

/// Reads a whole body as text, failing if it stalls for `idle_timeout`.
pub(crate) async fn read_body(
    response: reqwest::Response,
    url: &str,
    idle_timeout: Duration,
) -> Result<String, LlmError> {
    let mut bytes = Vec::new();
    let mut chunks = idle_bytes(response.bytes_stream(), url, idle_timeout);
    while let Some(chunk) = chunks.next().await {
        bytes.extend_from_slice(&chunk?);
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn is_json(response: &reqwest::Response) -> bool {
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    content_type.is_some_and(|ct| ct.trim_start().starts_with("application/json"))
}

fn idle_error(url: &str, idle_timeout: Duration) -> LlmError {
    LlmError::Transient(format!(
        "{url} sent nothing for {idle_timeout:?} (idle timeout)"
    ))
}

/// A body's bytes, ending with an error when none arrive for `idle_timeout`.
fn idle_bytes<S, B>(
    stream: S,
    url: &str,
    idle_timeout: Duration,
) -> BoxStream<'static, Result<B, LlmError>>
where
    S: Stream<Item = reqwest::Result<B>> + Send + 'static,
    B: Send + 'static,
{
    let url = url.to_string();
    let state = (stream.boxed(), false);
    futures::stream::unfold(state, move |(mut stream, failed)| {
        let url = url.clone();
        async move {
            if failed {
                return None;
            }
            let item = match tokio::time::timeout(idle_timeout, stream.next()).await {
                Err(_) => Err(idle_error(&url, idle_timeout)),
                Ok(None) => return None,
                Ok(Some(Ok(bytes))) => Ok(bytes),
                Ok(Some(Err(e))) => Err(transport_error(e, &url)),
            };
            let failed = item.is_err();
            Some((item, (stream, failed)))
        }
    })
    .boxed()
}

/// The events of a `text/event-stream` answer.
fn decode_sse(response: reqwest::Response, call: &Call) -> EventStream {
    let bytes = idle_bytes(response.bytes_stream(), &call.url, call.idle_timeout);
    let events = bytes
        .eventsource()
        .map(|item| item.map_err(sse_error))
        .boxed();
    let state = SseState {
        events,
        decoder: ChunkDecoder::new(&call.url, &call.model),
        pending: VecDeque::new(),
        done: false,
    };
    futures::stream::unfold(state, |mut st| async move {
        let item = st.next_item().await?;
        Some((item, st))
    })
    .boxed()
}

fn sse_error(error: EventStreamError<LlmError>) -> LlmError {
    match error {
        EventStreamError::Transport(error) => error,
        EventStreamError::Utf8(e) => LlmError::Fatal(format!("the stream is not valid UTF-8: {e}")),
        EventStreamError::Parser(e) => {
            LlmError::Fatal(format!("the stream is not valid server-sent events: {e}"))
        }
    }
}

struct SseState {
    events: BoxStream<'static, Result<eventsource_stream::Event, LlmError>>,
    decoder: ChunkDecoder,
    pending: VecDeque<StreamEvent>,
    done: bool,
}

impl SseState {
    async fn next_item(&mut self) -> Option<Result<StreamEvent, LlmError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            if self.done {
                return None;
            }
            match self.decode_next().await {
                Ok(events) => self.pending.extend(events),
                Err(error) => {
                    self.done = true;
                    return Some(Err(error));
                }
            }
            // After `[DONE]`, stop reading: the server may keep the connection open.
            self.done |= self.decoder.is_done();
        }
    }

    async fn decode_next(&mut self) -> Result<Vec<StreamEvent>, LlmError> {
        match self.events.next().await {
            Some(Ok(event)) => self.decoder.on_data(&event.data),
            // The model already said why it stopped: the answer is complete, only the
            // trailing usage or `[DONE]` was lost.
            Some(Err(error)) if self.decoder.has_finished() => {
                tracing::debug!(%error, "stream broke after the finish reason; ending it");
                self.decoder.on_end()
            }
            Some(Err(error)) => Err(error),
            None => self.decoder.on_end(),
        }
    }
}
