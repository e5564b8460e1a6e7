//! Decoding a chat-completions answer into [`StreamEvent`]s.
//!
//! [`ChunkDecoder`] takes the `data:` payloads of a streamed answer one by one. Text is passed
//! on at once; tool calls arrive as fragments (id, name and arguments split over many chunks,
//! several calls interleaved by `index`) and are assembled, then emitted whole, in index order,
//! when the choice finishes. Exactly one `Finish` ends the answer. [`completion_events`] gives
//! the same events for a server that answered with one JSON completion instead of a stream.

use std::collections::BTreeMap;

use cairn_protocol::{StopReason, ToolCall, Usage};
use serde_json::Value;

use super::errors::classify_stream_error;
use super::wire::{Chunk, ChunkChoice, Completion, ToolCallDelta, WireUsage};
use crate::error::LlmError;
use crate::http::{append_arguments, final_stop, parse_arguments, truncate, SseDecoder, Target};
use crate::provider::StreamEvent;
use crate::think::ThinkSplitter;

/// The state of one streamed answer.
#[derive(Debug)]
pub(crate) struct ChunkDecoder {
    target_url: String,
    model: String,
    calls: BTreeMap<u32, PartialCall>,
    /// Reasoning written inline as `<think>…</think>`.
    think: ThinkSplitter,
    emitted_calls: bool,
    stop: Option<StopReason>,
    done: bool,
}

/// A tool call still being received.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

impl ChunkDecoder {
    /// A decoder for an answer from `url` (named in error messages).
    pub fn new(url: &str, model: &str) -> Self {
        Self {
            target_url: url.to_string(),
            model: model.to_string(),
            calls: BTreeMap::new(),
            think: ThinkSplitter::default(),
            emitted_calls: false,
            stop: None,
            done: false,
        }
    }

    fn on_chunk(&mut self, chunk: Chunk) -> Result<Vec<StreamEvent>, LlmError> {
        let mut events = Vec::new();
        // Only the first choice is used: Cairn never asks for `n > 1`.
        if let Some(choice) = chunk.choices.unwrap_or_default().into_iter().next() {
            self.on_choice(choice, &mut events)?;
        }
        if let Some(usage) = chunk.usage {
            events.push(StreamEvent::Usage(usage_of(usage)));
        }
        Ok(events)
    }

    fn on_choice(
        &mut self,
        choice: ChunkChoice,
        events: &mut Vec<StreamEvent>,
    ) -> Result<(), LlmError> {
        let delta = choice.delta.unwrap_or_default();
        if let Some(reasoning) = delta.reasoning_content.filter(|r| !r.is_empty()) {
            events.push(StreamEvent::ThinkingDelta(reasoning));
        }
        if let Some(refusal) = delta.refusal.filter(|r| !r.is_empty()) {
            events.push(StreamEvent::TextDelta(refusal));
        }
        if let Some(content) = delta.content.filter(|c| !c.is_empty()) {
            events.extend(self.think.push(content));
        }
        for (position, fragment) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
            self.add_fragment(position, fragment)?;
        }
        if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
            self.stop = Some(stop_reason(&reason));
            events.extend(self.think.finish());
            events.extend(self.take_calls());
        }
        Ok(())
    }

    fn add_fragment(&mut self, position: usize, fragment: ToolCallDelta) -> Result<(), LlmError> {
        let fallback = u32::try_from(position).unwrap_or(u32::MAX);
        let call = self
            .calls
            .entry(fragment.index.unwrap_or(fallback))
            .or_default();
        let function = fragment.function.unwrap_or_default();
        merge_label(&mut call.id, fragment.id);
        merge_label(&mut call.name, function.name);
        append_arguments(
            &mut call.arguments,
            &function.arguments.unwrap_or_default(),
            &call.name,
            &self.target_url,
        )
    }

    /// Completed tool calls, in index order.
    fn take_calls(&mut self) -> Vec<StreamEvent> {
        let calls = std::mem::take(&mut self.calls);
        self.emitted_calls |= !calls.is_empty();
        calls
            .into_iter()
            .map(|(index, call)| StreamEvent::ToolCall(call.finish(index)))
            .collect()
    }
}

impl SseDecoder for ChunkDecoder {
    /// Decodes one `data:` payload.
    fn on_data(&mut self, data: &str) -> Result<Vec<StreamEvent>, LlmError> {
        if data == "[DONE]" {
            return Ok(self.finish());
        }
        let value: Value = serde_json::from_str(data).map_err(|e| not_a_chunk(data, &e))?;
        if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
            let target = Target {
                url: &self.target_url,
                model: &self.model,
            };
            return Err(classify_stream_error(error, target));
        }
        let chunk: Chunk = serde_json::from_value(value).map_err(|e| not_a_chunk(data, &e))?;
        self.on_chunk(chunk)
    }

    /// Whether `[DONE]` was seen: nothing more needs reading.
    fn is_done(&self) -> bool {
        self.done
    }

    /// Whether a `finish_reason` came, so the answer is complete even if the stream then
    /// breaks before `[DONE]`.
    fn has_finished(&self) -> bool {
        self.stop.is_some()
    }

    /// Flushes pending tool calls and emits the one `Finish`.
    fn finish(&mut self) -> Vec<StreamEvent> {
        self.done = true;
        let mut events = self.think.finish();
        events.extend(self.take_calls());
        events.push(StreamEvent::Finish(final_stop(
            self.stop,
            self.emitted_calls,
        )));
        events
    }
}

impl PartialCall {
    fn finish(self, index: u32) -> ToolCall {
        let id = if self.id.is_empty() {
            format!("call_{index}_{:08x}", rand::random::<u32>())
        } else {
            self.id
        };
        ToolCall {
            id,
            name: self.name,
            arguments: parse_arguments(self.arguments),
        }
    }
}

/// Ids and names usually come whole in the first fragment, but some servers repeat them
/// in every fragment and others split them: append unless it is a repeat.
fn merge_label(label: &mut String, piece: Option<String>) {
    match piece {
        Some(piece) if label.is_empty() => *label = piece,
        Some(piece) if piece != *label => label.push_str(&piece),
        _ => {}
    }
}

/// Maps a `finish_reason`. Unknown reasons (`eos`, `end_turn` ...) count as the end of
/// the turn.
fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::Refusal,
        _ => StopReason::EndTurn,
    }
}

/// Cairn's usage from the wire's: `input_tokens` is the whole prompt, cached part included.
fn usage_of(usage: WireUsage) -> Usage {
    Usage {
        input_tokens: usage.prompt_tokens.unwrap_or(0),
        output_tokens: usage.completion_tokens.unwrap_or(0),
        cache_read_tokens: usage
            .prompt_tokens_details
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0),
    }
}

fn not_a_chunk(data: &str, error: &serde_json::Error) -> LlmError {
    LlmError::Fatal(format!(
        "the server sent a stream event that is not a chat-completion chunk ({error}): {}",
        truncate(data, 200)
    ))
}

/// The events for a whole (non-streamed) completion: the fallback for servers that answer
/// `application/json` although a stream was asked for.
pub(crate) fn completion_events(
    body: &str,
    url: &str,
    model: &str,
) -> Result<Vec<StreamEvent>, LlmError> {
    let value: Value = serde_json::from_str(body).map_err(|e| not_a_completion(body, &e))?;
    if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
        return Err(classify_stream_error(error, Target { url, model }));
    }
    let completion: Completion =
        serde_json::from_value(value).map_err(|e| not_a_completion(body, &e))?;
    let mut decoder = ChunkDecoder::new(url, model);
    let mut events = Vec::new();
    if let Some(choice) = completion.choices.unwrap_or_default().into_iter().next() {
        let message = choice.message.unwrap_or_default();
        let delta = super::wire::Delta {
            content: message.content,
            reasoning_content: message.reasoning_content,
            refusal: message.refusal,
            tool_calls: message.tool_calls,
        };
        let choice = ChunkChoice {
            delta: Some(delta),
            finish_reason: choice.finish_reason,
        };
        decoder.on_choice(choice, &mut events)?;
    }
    events.extend(completion.usage.map(|u| StreamEvent::Usage(usage_of(u))));
    events.extend(decoder.finish());
    Ok(events)
}

fn not_a_completion(body: &str, error: &serde_json::Error) -> LlmError {
    LlmError::Fatal(format!(
        "the server answered JSON that is not a chat completion ({error}): {}",
        truncate(body, 200)
    ))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn decode(lines: &[Value]) -> Vec<StreamEvent> {
        let mut decoder = ChunkDecoder::new("http://h", "m");
        let mut events = Vec::new();
        for line in lines {
            events.extend(decoder.on_data(&line.to_string()).unwrap());
        }
        events.extend(decoder.on_data("[DONE]").unwrap());
        events
    }

    fn call_delta(index: u32, id: Option<&str>, name: Option<&str>, args: &str) -> Value {
        json!({"choices": [{"delta": {"tool_calls": [
            {"index": index, "id": id, "function": {"name": name, "arguments": args}}
        ]}}]})
    }

    #[test]
    fn repeated_names_are_not_doubled_and_missing_reason_is_inferred() {
        let events = decode(&[
            call_delta(0, Some("c1"), Some("read"), "{\"a\""),
            call_delta(0, Some("c1"), Some("read"), ": 1}"),
        ]);
        let call = ToolCall {
            id: "c1".into(),
            name: "read".into(),
            arguments: json!({"a": 1}),
        };
        assert_eq!(
            events,
            vec![
                StreamEvent::ToolCall(call),
                StreamEvent::Finish(StopReason::ToolUse)
            ]
        );
    }

    #[test]
    fn stop_with_tool_calls_means_tool_use() {
        let finish = json!({"choices": [{"delta": {}, "finish_reason": "stop"}]});
        let events = decode(&[call_delta(0, Some("c"), Some("f"), ""), finish]);
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finish(StopReason::ToolUse))
        );
    }

    #[test]
    fn a_finish_reason_completes_the_answer_without_done() {
        let mut decoder = ChunkDecoder::new("http://h", "m");
        decoder
            .on_data(r#"{"choices": [{"delta": {"content": "hi"}}]}"#)
            .unwrap();
        assert!(!decoder.has_finished());
        decoder
            .on_data(r#"{"choices": [{"delta": {}, "finish_reason": "length"}]}"#)
            .unwrap();
        assert!(decoder.has_finished() && !decoder.is_done());
        assert_eq!(
            decoder.finish(),
            vec![StreamEvent::Finish(StopReason::MaxTokens)]
        );
    }

    #[test]
    fn long_garbage_is_quoted_truncated() {
        let garbage = format!("{{oops {}", "x".repeat(500));
        let Err(LlmError::Fatal(message)) = ChunkDecoder::new("u", "m").on_data(&garbage) else {
            panic!("expected a fatal error");
        };
        assert!(message.contains("{oops xxx"), "{message}");
        assert!(message.len() < 400, "{message}");
    }
}
