//! The Anthropic provider against a loopback server speaking the Messages streaming format.
//! Each test asserts the exact events (or error) the harness would receive.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod failures;
mod pictures;
mod search;
mod stream;
mod wire;

#[path = "../support/events.rs"]
mod events;
#[path = "../support/mod.rs"]
mod support;

use events::{call_ev, text_ev, usage_ev};
use support::request;

use std::time::Duration;

use cairn_llm::anthropic::{AnthropicConfig, AnthropicProvider};
use cairn_llm::{ChatRequest, EventStream, LlmError, Provider, ProviderInfo, StreamEvent};
use cairn_protocol::{
    AssistantMessage, ContentBlock, Message, StopReason, ToolCall, ToolResultMessage, ToolSpec,
    Usage,
};
use cairn_testkit::{MockResponse, MockServer};
use futures::StreamExt;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

fn config(server: &MockServer) -> AnthropicConfig {
    AnthropicConfig {
        base_url: server.url(),
        api_key: Some("sk-ant-test".into()),
        retry_base_delay: Duration::from_millis(1),
        idle_timeout: Duration::from_secs(10),
        ..AnthropicConfig::new("claude-test")
    }
}

fn provider(server: &MockServer) -> AnthropicProvider {
    AnthropicProvider::new(config(server)).unwrap()
}

/// A provider that never retries.
fn impatient(server: &MockServer) -> AnthropicProvider {
    AnthropicProvider::new(AnthropicConfig {
        max_retries: 0,
        ..config(server)
    })
    .unwrap()
}

fn messages_url(server: &MockServer) -> String {
    format!("{}/v1/messages", server.url())
}

async fn open(provider: &AnthropicProvider, cancel: CancellationToken) -> EventStream {
    provider.stream(request(), cancel).await.unwrap()
}

/// Everything the stream yields: the events, then the error that ended it, if any.
async fn run(provider: &AnthropicProvider) -> (Vec<StreamEvent>, Option<LlmError>) {
    support::drain(open(provider, CancellationToken::new()).await).await
}

/// A streamed answer with `event:` and `data:` lines, as the API sends them.
fn stream(events: Vec<Value>) -> MockResponse {
    let raw = events
        .into_iter()
        .map(|event| {
            format!(
                "event: {}\ndata: {event}\n\n",
                event["type"].as_str().unwrap()
            )
        })
        .collect();
    MockResponse::sse_raw(raw)
}

/// Data-only lines (for the misbehaving responses, which only speak `data:`).
fn data(events: Vec<Value>) -> Vec<String> {
    events.into_iter().map(|e| e.to_string()).collect()
}

fn message_start(input_tokens: u64) -> Value {
    json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "content": [],
        "model": "claude-test", "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1}}})
}

fn text_start(index: u32) -> Value {
    json!({"type": "content_block_start", "index": index,
           "content_block": {"type": "text", "text": ""}})
}

fn text_delta(index: u32, text: &str) -> Value {
    json!({"type": "content_block_delta", "index": index,
           "delta": {"type": "text_delta", "text": text}})
}

fn tool_start(index: u32, id: &str, name: &str) -> Value {
    json!({"type": "content_block_start", "index": index,
           "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})
}

fn json_delta(index: u32, partial_json: &str) -> Value {
    json!({"type": "content_block_delta", "index": index,
           "delta": {"type": "input_json_delta", "partial_json": partial_json}})
}

fn block_stop(index: u32) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

fn message_delta(stop_reason: &str, output_tokens: u64) -> Value {
    json!({"type": "message_delta",
           "delta": {"stop_reason": stop_reason, "stop_sequence": null},
           "usage": {"output_tokens": output_tokens}})
}

fn message_stop() -> Value {
    json!({"type": "message_stop"})
}

fn ping() -> Value {
    json!({"type": "ping"})
}

fn error_event(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

fn error_body(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message},
           "request_id": "req_1"})
}

fn hello() -> Vec<Value> {
    vec![
        message_start(25),
        text_start(0),
        ping(),
        text_delta(0, "Hel"),
        text_delta(0, "lo"),
        block_stop(0),
        message_delta("end_turn", 12),
        message_stop(),
    ]
}

fn hello_events() -> Vec<StreamEvent> {
    vec![
        text_ev("Hel"),
        text_ev("lo"),
        usage_ev(25, 12),
        StreamEvent::Finish(StopReason::EndTurn),
    ]
}
