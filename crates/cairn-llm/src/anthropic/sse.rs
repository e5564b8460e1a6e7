//! Decoding a Messages answer into [`StreamEvent`]s.
//!
//! [`EventDecoder`] takes the `data:` payloads of a streamed answer one by one. Text is passed
//! on at once; a `tool_use` block's input arrives as pieces of JSON text (`input_json_delta`)
//! and the call is emitted whole when its block stops. A tool the server runs itself (web
//! search) streams the same way and becomes a `ServerToolCall`; its result block comes
//! whole and becomes a `ServerToolResult`, both carrying the block as it came. Text that
//! cites search results gets the sources' numbers after it, and the answer a "Sources:"
//! list ([`Citations`]). `message_stop` brings the usage and exactly one `Finish`.
//! [`message_events`] gives the same events for a server that answered with one JSON
//! message instead of a stream.

use std::collections::BTreeMap;

use cairn_protocol::{StopReason, ToolCall, Usage};
use serde::Deserialize;
use serde_json::Value;

use super::errors::classify_error;
use super::search::{shown_result, Citations};
use super::wire::{
    StreamPayload, WireAnswer, WireBlock, WireDelta, WireError, WireUsage, WEB_SEARCH,
};
use crate::error::LlmError;
use crate::http::{append_arguments, final_stop, parse_arguments, truncate, SseDecoder};
use crate::provider::StreamEvent;

/// The state of one streamed answer.
#[derive(Debug)]
pub(crate) struct EventDecoder {
    url: String,
    /// `tool_use` blocks still being received, by block index.
    tools: BTreeMap<u32, PartialToolUse>,
    /// `thinking` blocks still being received, by block index, with their signature.
    thinking: BTreeMap<u32, Option<String>>,
    /// The sources the text cites.
    citations: Citations,
    usage: Option<WireUsage>,
    emitted_calls: bool,
    stop: Option<StopReason>,
    done: bool,
}

/// A `tool_use` block still being received.
#[derive(Debug)]
struct PartialToolUse {
    id: String,
    name: String,
    /// The input the block started with (`{}` when streamed, the whole input otherwise).
    input: Value,
    /// The `partial_json` pieces so far.
    json: String,
    /// For a tool the server runs (`server_tool_use`): the block as it started.
    server: Option<Value>,
}

impl EventDecoder {
    /// A decoder for an answer from `url` (named in error messages).
    pub fn new(url: &str) -> Self {
        Self {
            url: url.to_string(),
            tools: BTreeMap::new(),
            thinking: BTreeMap::new(),
            citations: Citations::default(),
            usage: None,
            emitted_calls: false,
            stop: None,
            done: false,
        }
    }

    fn add_usage(&mut self, usage: Option<WireUsage>) {
        if let Some(usage) = usage {
            self.usage
                .get_or_insert_with(WireUsage::default)
                .update(usage);
        }
    }

    /// Takes in a block as it starts (`raw`, as the server sent it).
    fn start_block(
        &mut self,
        index: u32,
        raw: Value,
        events: &mut Vec<StreamEvent>,
    ) -> Result<(), LlmError> {
        let block = WireBlock::deserialize(&raw).map_err(|e| {
            LlmError::Fatal(format!(
                "the server sent a content block that is not one of the Messages API ({e}): {}",
                truncate(&raw.to_string(), 200)
            ))
        })?;
        match block {
            WireBlock::Text { text, citations } => {
                for citation in citations.iter().flatten() {
                    self.citations.cite(index, citation);
                }
                events.extend(self.citations.text(index, text).map(StreamEvent::TextDelta));
            }
            WireBlock::ToolUse { id, name, input } => {
                self.tools
                    .insert(index, PartialToolUse::new(id, name, input, None));
            }
            WireBlock::ServerToolUse { id, name, input } => {
                let tool = PartialToolUse::new(id, name, input, Some(raw));
                self.tools.insert(index, tool);
            }
            WireBlock::WebSearchToolResult {
                tool_use_id,
                content,
            } => {
                let (content, is_error) = shown_result(&content);
                events.push(StreamEvent::ServerToolResult {
                    call_id: tool_use_id,
                    name: WEB_SEARCH.into(),
                    content,
                    is_error,
                    block: raw,
                });
            }
            WireBlock::Thinking {
                thinking,
                signature,
            } => {
                if !thinking.is_empty() {
                    events.push(StreamEvent::ThinkingDelta(thinking));
                }
                self.thinking.insert(index, signature);
            }
            WireBlock::RedactedThinking { data } => {
                events.push(StreamEvent::RedactedThinking(data));
            }
            WireBlock::Other => {}
        }
        Ok(())
    }

    fn add_delta(
        &mut self,
        index: u32,
        delta: WireDelta,
        events: &mut Vec<StreamEvent>,
    ) -> Result<(), LlmError> {
        match delta {
            WireDelta::TextDelta { text } => {
                events.extend(self.citations.text(index, text).map(StreamEvent::TextDelta));
            }
            WireDelta::CitationsDelta { citation } => self.citations.cite(index, &citation),
            WireDelta::InputJsonDelta { partial_json } => match self.tools.get_mut(&index) {
                Some(tool) => {
                    append_arguments(&mut tool.json, &partial_json, &tool.name, &self.url)?
                }
                None => tracing::debug!(index, "input_json_delta for a block that is no tool_use"),
            },
            WireDelta::ThinkingDelta { thinking } if !thinking.is_empty() => {
                events.push(StreamEvent::ThinkingDelta(thinking));
            }
            WireDelta::SignatureDelta { signature } => match self.thinking.get_mut(&index) {
                Some(kept) => kept.get_or_insert_with(String::new).push_str(&signature),
                None => tracing::debug!(index, "signature_delta for a block that is no thinking"),
            },
            WireDelta::ThinkingDelta { .. } | WireDelta::Other => {}
        }
        Ok(())
    }

    /// The tool call of the block at `index` if it was a `tool_use` or `server_tool_use`
    /// block, the end of its reasoning if it was a `thinking` block, or the marks of the
    /// sources it cites if it was cited text.
    fn stop_block(&mut self, index: u32) -> Option<StreamEvent> {
        if let Some(signature) = self.thinking.remove(&index) {
            return Some(StreamEvent::ThinkingEnd { signature });
        }
        if let Some(marks) = self.citations.close(index) {
            return Some(StreamEvent::TextDelta(marks));
        }
        let tool = self.tools.remove(&index)?;
        Some(self.tool_event(tool))
    }

    fn tool_event(&mut self, tool: PartialToolUse) -> StreamEvent {
        self.emitted_calls |= tool.server.is_none();
        tool.finish()
    }
}

impl SseDecoder for EventDecoder {
    /// Decodes one `data:` payload.
    fn on_data(&mut self, data: &str) -> Result<Vec<StreamEvent>, LlmError> {
        let payload: StreamPayload = serde_json::from_str(data).map_err(|e| {
            LlmError::Fatal(format!(
                "the server sent a stream event that is not a Messages event ({e}): {}",
                truncate(data, 200)
            ))
        })?;
        let mut events = Vec::new();
        match payload {
            StreamPayload::MessageStart { message } => self.add_usage(message.usage),
            StreamPayload::ContentBlockStart {
                index,
                content_block,
            } => self.start_block(index, content_block, &mut events)?,
            StreamPayload::ContentBlockDelta { index, delta } => {
                self.add_delta(index, delta, &mut events)?;
            }
            StreamPayload::ContentBlockStop { index } => events.extend(self.stop_block(index)),
            StreamPayload::MessageDelta { delta, usage } => {
                self.add_usage(usage);
                self.stop = delta.stop_reason.as_deref().map(stop_reason).or(self.stop);
            }
            StreamPayload::MessageStop => events.extend(self.finish()),
            StreamPayload::Error { error } => return Err(classify_error(&error, &self.url)),
            StreamPayload::Ping | StreamPayload::Other => {}
        }
        Ok(events)
    }

    /// Whether `message_stop` was seen: nothing more needs reading.
    fn is_done(&self) -> bool {
        self.done
    }

    /// Whether `message_delta` gave the stop reason: then only `message_stop` can be lost.
    fn has_finished(&self) -> bool {
        self.stop.is_some()
    }

    /// Flushes unfinished blocks, adds the sources cited, then emits the usage and the one
    /// `Finish`.
    fn finish(&mut self) -> Vec<StreamEvent> {
        self.done = true;
        let thinking = std::mem::take(&mut self.thinking);
        let mut events: Vec<_> = thinking
            .into_values()
            .map(|signature| StreamEvent::ThinkingEnd { signature })
            .collect();
        let marks = self.citations.close_all();
        events.extend(marks.into_iter().map(StreamEvent::TextDelta));
        let tools = std::mem::take(&mut self.tools);
        for tool in tools.into_values() {
            let event = self.tool_event(tool);
            events.push(event);
        }
        events.extend(self.citations.sources().map(StreamEvent::TextDelta));
        events.extend(self.usage.map(|usage| StreamEvent::Usage(usage_of(usage))));
        events.push(StreamEvent::Finish(final_stop(
            self.stop,
            self.emitted_calls,
        )));
        events
    }
}

impl PartialToolUse {
    fn new(id: String, name: String, input: Value, server: Option<Value>) -> Self {
        Self {
            id,
            name,
            input,
            json: String::new(),
            server,
        }
    }

    /// The call, its input parsed from the pieces (or the start's input when none came):
    /// a `ToolCall`, or for a tool the server runs a `ServerToolCall` whose block holds
    /// the whole input, as a whole message would.
    fn finish(self) -> StreamEvent {
        let arguments = if self.json.trim().is_empty() && self.input.is_object() {
            self.input
        } else {
            parse_arguments(self.json)
        };
        match self.server {
            Some(mut block) => {
                if let Some(fields) = block.as_object_mut() {
                    fields.insert("input".into(), arguments.clone());
                }
                StreamEvent::ServerToolCall {
                    id: self.id,
                    name: self.name,
                    input: arguments,
                    block,
                }
            }
            None => StreamEvent::ToolCall(ToolCall {
                id: self.id,
                name: self.name,
                arguments,
            }),
        }
    }
}

/// Maps a `stop_reason`. Unknown ones (`pause_turn` ...) count as the end of the turn.
fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "tool_use" => StopReason::ToolUse,
        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
        "refusal" => StopReason::Refusal,
        _ => StopReason::EndTurn,
    }
}

/// Cairn's usage from the wire's: `input_tokens` is the whole prompt, cached part included.
fn usage_of(usage: WireUsage) -> Usage {
    let cache_read = usage.cache_read_input_tokens.unwrap_or(0);
    let uncached = usage.input_tokens.unwrap_or(0);
    let cache_written = usage.cache_creation_input_tokens.unwrap_or(0);
    Usage {
        input_tokens: uncached + cache_read + cache_written,
        output_tokens: usage.output_tokens.unwrap_or(0),
        cache_read_tokens: cache_read,
    }
}

/// The events for a whole (non-streamed) message: the fallback for servers that answer
/// `application/json` although a stream was asked for.
pub(crate) fn message_events(body: &str, url: &str) -> Result<Vec<StreamEvent>, LlmError> {
    let not_a_message = |e: serde_json::Error| {
        LlmError::Fatal(format!(
            "the server answered JSON that is not a message ({e}): {}",
            truncate(body, 200)
        ))
    };
    let value: Value = serde_json::from_str(body).map_err(not_a_message)?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        let error = value.get("error").cloned().unwrap_or_default();
        let error: WireError = serde_json::from_value(error).map_err(not_a_message)?;
        return Err(classify_error(&error, url));
    }
    let answer: WireAnswer = serde_json::from_value(value).map_err(not_a_message)?;
    let mut decoder = EventDecoder::new(url);
    let mut events = Vec::new();
    decoder.add_usage(answer.usage);
    for (index, block) in (0u32..).zip(answer.content) {
        decoder.start_block(index, block, &mut events)?;
        events.extend(decoder.stop_block(index));
    }
    decoder.stop = answer.stop_reason.as_deref().map(stop_reason);
    events.extend(decoder.finish());
    Ok(events)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn decode(decoder: &mut EventDecoder, lines: &[Value]) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        for line in lines {
            events.extend(decoder.on_data(&line.to_string()).unwrap());
        }
        events
    }

    #[test]
    fn cached_tokens_count_as_input() {
        let usage = WireUsage {
            input_tokens: Some(5),
            output_tokens: Some(2),
            cache_read_input_tokens: Some(100),
            cache_creation_input_tokens: Some(10),
        };
        let expected = Usage {
            input_tokens: 115,
            output_tokens: 2,
            cache_read_tokens: 100,
        };
        assert_eq!(usage_of(usage), expected);
    }

    #[test]
    fn the_stop_reason_completes_the_answer_without_message_stop() {
        let mut decoder = EventDecoder::new("http://h");
        let text = json!({"type": "content_block_delta", "index": 0,
                          "delta": {"type": "text_delta", "text": "hi"}});
        assert_eq!(
            decode(&mut decoder, &[text]),
            vec![StreamEvent::TextDelta("hi".into())]
        );
        assert!(!decoder.has_finished());
        let stop = json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}});
        decode(&mut decoder, &[stop]);
        assert!(decoder.has_finished() && !decoder.is_done());
        assert_eq!(
            decoder.finish(),
            vec![StreamEvent::Finish(StopReason::MaxTokens)]
        );
    }

    #[test]
    fn stop_reasons_map() {
        assert_eq!(stop_reason("end_turn"), StopReason::EndTurn);
        assert_eq!(stop_reason("stop_sequence"), StopReason::EndTurn);
        assert_eq!(stop_reason("tool_use"), StopReason::ToolUse);
        assert_eq!(stop_reason("max_tokens"), StopReason::MaxTokens);
        assert_eq!(stop_reason("refusal"), StopReason::Refusal);
    }
}
