//! The events a provider's stream is expected to give, shared by the provider tests that
//! compare whole streams.

use cairn_llm::StreamEvent;
use cairn_protocol::{ToolCall, Usage};
use serde_json::Value;

pub fn text_ev(t: &str) -> StreamEvent {
    StreamEvent::TextDelta(t.into())
}

pub fn usage_ev(input: u64, output: u64) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: 0,
    })
}

pub fn call_ev(id: &str, name: &str, arguments: Value) -> StreamEvent {
    StreamEvent::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
    })
}
