//! Reading a `text/event-stream` answer: the bytes are split into server-sent events, each
//! handed to the wire format's [`SseDecoder`], and the [`StreamEvent`]s it returns are passed
//! on one by one. Also what both formats' decoders need: [`parse_arguments`] for tool calls
//! assembled from streamed pieces, and [`final_stop`].

use std::collections::VecDeque;

use cairn_protocol::StopReason;
use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::stream::BoxStream;
use futures::StreamExt;
use serde_json::Value;

use crate::error::LlmError;
use crate::provider::{EventStream, StreamEvent};

/// Turns the events of one streamed answer into [`StreamEvent`]s; one per wire format.
pub(crate) trait SseDecoder: Send + 'static {
    /// Decodes the data of one event (trimmed, never empty).
    fn on_data(&mut self, data: &str) -> Result<Vec<StreamEvent>, LlmError>;

    /// Whether the answer is over: nothing more is read (the server may keep the
    /// connection open).
    fn is_done(&self) -> bool;

    /// Whether the model already said why it stopped, so that an answer cut off now lost
    /// nothing but its end marker (and perhaps the usage).
    fn has_finished(&self) -> bool;

    /// Ends an answer that [has finished](SseDecoder::has_finished) but was cut off before
    /// its end marker: the remaining events, the one `Finish` last.
    fn finish(&mut self) -> Vec<StreamEvent>;
}

/// The largest single event a server may send (an event or line that grows past it ends the
/// answer instead of memory).
pub(crate) const MAX_EVENT_BYTES: usize = 16 << 20;
/// The largest whole answer (text and tool-call arguments included).
pub(crate) const MAX_ANSWER_BYTES: usize = 64 << 20;

/// The largest arguments of one tool call, assembled from streamed pieces.
pub(crate) const MAX_ARGUMENT_BYTES: usize = 4 << 20;

/// Adds a streamed piece to a tool call's arguments; an error naming the call when they
/// would pass [`MAX_ARGUMENT_BYTES`].
pub(crate) fn append_arguments(
    arguments: &mut String,
    piece: &str,
    tool: &str,
    url: &str,
) -> Result<(), LlmError> {
    if arguments.len() + piece.len() > MAX_ARGUMENT_BYTES {
        return Err(LlmError::Fatal(format!(
            "the arguments of a `{tool}` call streamed from {url} passed {} MiB; the answer \
             was stopped",
            MAX_ARGUMENT_BYTES >> 20
        )));
    }
    arguments.push_str(piece);
    Ok(())
}

/// Counts the bytes of the event being read and of the whole answer.
#[derive(Default)]
struct SizeGuard {
    event: usize,
    total: usize,
    after_newline: bool,
}

impl SizeGuard {
    /// Takes a chunk; an error when it makes an event or the answer too big.
    fn take(&mut self, chunk: &[u8], url: &str) -> Result<(), LlmError> {
        self.total += chunk.len();
        for &byte in chunk {
            match byte {
                // A blank line ends an event.
                b'\n' if self.after_newline => self.event = 0,
                b'\n' => self.after_newline = true,
                b'\r' => {}
                _ => {
                    self.after_newline = false;
                    self.event += 1;
                }
            }
        }
        if self.event > MAX_EVENT_BYTES {
            return Err(LlmError::Fatal(format!(
                "one event in the stream from {url} passed {} MiB; the answer was stopped",
                MAX_EVENT_BYTES >> 20
            )));
        }
        if self.total > MAX_ANSWER_BYTES {
            return Err(LlmError::Fatal(format!(
                "the answer streamed from {url} passed {} MiB; it was stopped",
                MAX_ANSWER_BYTES >> 20
            )));
        }
        Ok(())
    }
}

/// The events of a streamed answer from `url` whose body is `bytes`, decoded by `decoder`.
pub(crate) fn decode_sse<B, D>(
    bytes: BoxStream<'static, Result<B, LlmError>>,
    url: &str,
    decoder: D,
) -> EventStream
where
    B: AsRef<[u8]> + Send + 'static,
    D: SseDecoder,
{
    let mut guard = SizeGuard::default();
    let guarded_url = url.to_string();
    let bytes = bytes.map(move |chunk| {
        let chunk = chunk?;
        guard.take(chunk.as_ref(), &guarded_url)?;
        Ok::<B, LlmError>(chunk)
    });
    let events = bytes
        .eventsource()
        .map(|item| item.map_err(sse_error))
        .boxed();
    let state = SseState {
        events,
        url: url.to_string(),
        decoder,
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

struct SseState<D> {
    events: BoxStream<'static, Result<Event, LlmError>>,
    url: String,
    decoder: D,
    pending: VecDeque<StreamEvent>,
    done: bool,
}

impl<D: SseDecoder> SseState<D> {
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
            self.done |= self.decoder.is_done();
        }
    }

    async fn decode_next(&mut self) -> Result<Vec<StreamEvent>, LlmError> {
        match self.events.next().await {
            Some(Ok(event)) => match event.data.trim() {
                "" => Ok(Vec::new()),
                data => self.decoder.on_data(data),
            },
            // The model already said why it stopped: the answer is complete, only trailing
            // bookkeeping was lost.
            Some(Err(error)) if self.decoder.has_finished() => {
                tracing::debug!(%error, "stream broke after the stop reason; ending it");
                Ok(self.decoder.finish())
            }
            Some(Err(error)) => Err(error),
            None if self.decoder.has_finished() => Ok(self.decoder.finish()),
            None => Err(LlmError::Transient(format!(
                "the stream from {} ended before the model finished its answer",
                self.url
            ))),
        }
    }
}

/// Why the answer stopped, from the reason the model gave (if any) and whether it asked for
/// tools: calls with no reason, or with a plain end of turn, mean the model wants them run.
pub(crate) fn final_stop(stop: Option<StopReason>, emitted_calls: bool) -> StopReason {
    match stop {
        Some(StopReason::EndTurn) | None if emitted_calls => StopReason::ToolUse,
        Some(reason) => reason,
        None => StopReason::EndTurn,
    }
}

/// Tool-call arguments received as text: parsed; `{}` when empty; the raw text as a JSON
/// string when it is not JSON, so the harness can show the model what it got wrong.
pub(crate) fn parse_arguments(raw: String) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(serde_json::Map::new());
    }
    serde_json::from_str(&raw).unwrap_or(Value::String(raw))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    /// A toy format: `stop` gives the stop reason, `end` ends the answer, the rest is text.
    #[derive(Default)]
    struct Toy {
        stopped: bool,
        done: bool,
    }

    impl SseDecoder for Toy {
        fn on_data(&mut self, data: &str) -> Result<Vec<StreamEvent>, LlmError> {
            match data {
                "stop" => self.stopped = true,
                "end" => return Ok(self.finish()),
                text => return Ok(vec![StreamEvent::TextDelta(text.into())]),
            }
            Ok(Vec::new())
        }

        fn is_done(&self) -> bool {
            self.done
        }

        fn has_finished(&self) -> bool {
            self.stopped
        }

        fn finish(&mut self) -> Vec<StreamEvent> {
            self.done = true;
            vec![StreamEvent::Finish(StopReason::EndTurn)]
        }
    }

    type Item = Result<StreamEvent, LlmError>;

    async fn decode(chunks: Vec<Result<&str, LlmError>>) -> Vec<Item> {
        let chunks: Vec<_> = chunks
            .into_iter()
            .map(|c| c.map(|s| s.as_bytes().to_vec()))
            .collect();
        let bytes = futures::stream::iter(chunks).boxed();
        decode_sse(bytes, "http://h", Toy::default())
            .collect()
            .await
    }

    fn text(t: &str) -> Item {
        Ok(StreamEvent::TextDelta(t.into()))
    }

    fn finish() -> Item {
        Ok(StreamEvent::Finish(StopReason::EndTurn))
    }

    #[test]
    fn an_endless_event_or_answer_is_stopped() {
        let mut guard = SizeGuard::default();
        let line = vec![b'x'; 1 << 20];
        let mut result = Ok(());
        for _ in 0..17 {
            result = guard.take(&line, "http://x");
            if result.is_err() {
                break;
            }
        }
        assert!(
            matches!(&result, Err(LlmError::Fatal(m)) if m.contains("one event")),
            "{result:?}"
        );
        // Many normal events add up to the answer's cap, not the event's.
        let mut guard = SizeGuard::default();
        let event = [vec![b'x'; (1 << 20) - 2], b"\n\n".to_vec()].concat();
        let taken = (0..80)
            .take_while(|_| guard.take(&event, "u").is_ok())
            .count();
        assert_eq!(taken, 64);
    }

    #[tokio::test]
    async fn reading_stops_at_the_end_and_blank_data_is_skipped() {
        let got = decode(vec![Ok("data: a\n\ndata:  \n\ndata: end\n\ndata: b\n\n")]).await;
        assert_eq!(got, vec![text("a"), finish()]);
    }

    #[tokio::test]
    async fn a_cut_after_the_stop_reason_finishes_the_answer() {
        let reset = || Err(LlmError::Transient("reset".into()));
        let got = decode(vec![Ok("data: a\n\ndata: stop\n\n"), reset()]).await;
        assert_eq!(got, vec![text("a"), finish()]);
        let got = decode(vec![Ok("data: a\n\ndata: stop\n\n")]).await;
        assert_eq!(got, vec![text("a"), finish()]);
    }

    #[tokio::test]
    async fn a_cut_before_the_stop_reason_is_an_error() {
        let got = decode(vec![Ok("data: a\n\n")]).await;
        let early = "the stream from http://h ended before the model finished its answer";
        assert_eq!(got, vec![text("a"), Err(LlmError::Transient(early.into()))]);
        let reset = LlmError::Transient("reset".into());
        let got = decode(vec![Ok("data: a\n\n"), Err(reset.clone())]).await;
        assert_eq!(got, vec![text("a"), Err(reset)]);
    }

    #[test]
    fn tool_calls_without_a_reason_mean_tool_use() {
        assert_eq!(final_stop(None, false), StopReason::EndTurn);
        assert_eq!(final_stop(None, true), StopReason::ToolUse);
        assert_eq!(
            final_stop(Some(StopReason::EndTurn), true),
            StopReason::ToolUse
        );
        assert_eq!(
            final_stop(Some(StopReason::MaxTokens), true),
            StopReason::MaxTokens
        );
    }

    #[test]
    fn arguments_empty_or_invalid() {
        assert_eq!(parse_arguments("  ".into()), json!({}));
        assert_eq!(parse_arguments("{\"a\": 1}".into()), json!({"a": 1}));
        assert_eq!(parse_arguments("{\"a\": ".into()), json!("{\"a\": "));
    }
}
