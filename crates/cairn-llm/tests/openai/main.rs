//! The OpenAI-compatible provider against a loopback server speaking the chat-completions
//! wire format. Each test asserts the exact events (or error) the harness would receive.

// clippy.toml allows unwrap in `#[test]` fns only; the helpers here are test code too.
#![allow(clippy::unwrap_used)]

mod failures;
mod limits;
mod pictures;
mod stream;
mod wire;

#[path = "../support/events.rs"]
mod events;
#[path = "../support/mod.rs"]
mod support;

use events::{call_ev, text_ev, usage_ev};
use support::request;

use std::time::Duration;

use cairn_llm::openai::{OpenAiConfig, OpenAiProvider};
use cairn_llm::{ChatRequest, EventStream, LlmError, Provider, ProviderInfo, StreamEvent};
use cairn_protocol::{
    AssistantMessage, ContentBlock, Message, StopReason, ToolCall, ToolResultMessage, ToolSpec,
    Usage,
};
use cairn_testkit::{MockResponse, MockServer};
use futures::StreamExt;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

fn config(server: &MockServer) -> OpenAiConfig {
    OpenAiConfig {
        base_url: format!("{}/v1", server.url()),
        api_key: Some("sk-test".into()),
        retry_base_delay: Duration::from_millis(1),
        idle_timeout: Duration::from_secs(10),
        ..OpenAiConfig::new("gpt-test")
    }
}

fn provider(server: &MockServer) -> OpenAiProvider {
    OpenAiProvider::new(config(server)).unwrap()
}

async fn open(provider: &OpenAiProvider, cancel: CancellationToken) -> EventStream {
    provider.stream(request(), cancel).await.unwrap()
}

/// Everything the stream yields: the events, then the error that ended it, if any.
async fn run(provider: &OpenAiProvider) -> (Vec<StreamEvent>, Option<LlmError>) {
    support::drain(open(provider, CancellationToken::new()).await).await
}

fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-test",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})
    .to_string()
}

fn text(t: &str) -> String {
    chunk(json!({"content": t}), None)
}

fn role() -> String {
    chunk(json!({"role": "assistant", "content": ""}), None)
}

fn finish(reason: &str) -> String {
    chunk(json!({}), Some(reason))
}

fn usage(prompt: u64, completion: u64) -> String {
    json!({"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
           "total_tokens": prompt + completion}})
    .to_string()
}

/// A tool-call fragment: fields that are `None` are left out, as servers do.
fn call_part(index: u32, id: Option<&str>, name: Option<&str>, args: &str) -> String {
    let mut function = json!({"arguments": args});
    if let Some(name) = name {
        function["name"] = json!(name);
    }
    let mut part = json!({"index": index, "function": function});
    if let Some(id) = id {
        part["id"] = json!(id);
        part["type"] = json!("function");
    }
    chunk(json!({"tool_calls": [part]}), None)
}

fn done() -> String {
    "[DONE]".into()
}

fn hello_stream() -> MockResponse {
    MockResponse::sse(vec![
        role(),
        text("Hel"),
        text("lo"),
        finish("stop"),
        usage(12, 2),
        done(),
    ])
}

fn hello_events() -> Vec<StreamEvent> {
    vec![
        text_ev("Hel"),
        text_ev("lo"),
        usage_ev(12, 2),
        StreamEvent::Finish(StopReason::EndTurn),
    ]
}
