//! The Anthropic provider against a loopback server speaking the Messages streaming format.
//! Each test asserts the exact events (or error) the harness would receive.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

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
use pretty_assertions::assert_eq;
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

fn text_ev(t: &str) -> StreamEvent {
    StreamEvent::TextDelta(t.into())
}

fn usage_ev(input: u64, output: u64) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: 0,
    })
}

fn call_ev(id: &str, name: &str, arguments: Value) -> StreamEvent {
    StreamEvent::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
    })
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

#[tokio::test]
async fn text_stream_with_usage() {
    let server = MockServer::start(vec![stream(hello())]).await;
    assert_eq!(run(&provider(&server)).await, (hello_events(), None));
}

#[tokio::test]
async fn tool_use_input_split_across_many_deltas() {
    let input = r#"{"path": "notes/a.md", "limit": 20}"#;
    let mut events = vec![
        message_start(40),
        text_start(0),
        text_delta(0, "Let me look."),
        block_stop(0),
        tool_start(1, "toolu_1", "read_file"),
        json_delta(1, ""),
    ];
    events.extend(input.chars().map(|c| json_delta(1, &c.to_string())));
    events.extend([block_stop(1), message_delta("tool_use", 9), message_stop()]);
    let server = MockServer::start(vec![stream(events)]).await;
    let expected = vec![
        text_ev("Let me look."),
        call_ev(
            "toolu_1",
            "read_file",
            json!({"path": "notes/a.md", "limit": 20}),
        ),
        usage_ev(40, 9),
        StreamEvent::Finish(StopReason::ToolUse),
    ];
    assert_eq!(run(&provider(&server)).await, (expected, None));
}

#[tokio::test]
async fn several_tool_use_blocks_and_text_in_one_message() {
    let events = vec![
        message_start(50),
        text_start(0),
        text_delta(0, "Two things."),
        block_stop(0),
        tool_start(1, "toolu_a", "read_file"),
        json_delta(1, "{\"path\":"),
        json_delta(1, " \"a\"}"),
        block_stop(1),
        tool_start(2, "toolu_b", "now"),
        block_stop(2),
        tool_start(3, "toolu_c", "grep"),
        json_delta(3, "{\"q\": "),
        block_stop(3),
        message_delta("tool_use", 30),
        message_stop(),
    ];
    let server = MockServer::start(vec![stream(events)]).await;
    let expected = vec![
        text_ev("Two things."),
        call_ev("toolu_a", "read_file", json!({"path": "a"})),
        call_ev("toolu_b", "now", json!({})),
        call_ev("toolu_c", "grep", json!("{\"q\": ")),
        usage_ev(50, 30),
        StreamEvent::Finish(StopReason::ToolUse),
    ];
    assert_eq!(run(&provider(&server)).await, (expected, None));
}

#[tokio::test]
async fn pings_and_unknown_events_are_ignored() {
    let unknown_block = json!({"type": "content_block_start", "index": 0,
                               "content_block": {"type": "future_block", "x": ""}});
    let unknown_delta = json!({"type": "content_block_delta", "index": 0,
                               "delta": {"type": "future_delta", "x": "hmm"}});
    let events = vec![
        ping(),
        message_start(7),
        ping(),
        unknown_block,
        unknown_delta,
        block_stop(0),
        json!({"type": "some_future_event", "payload": [1, 2]}),
        text_start(1),
        text_delta(1, "ok"),
        ping(),
        block_stop(1),
        message_delta("max_tokens", 3),
        ping(),
        message_stop(),
    ];
    let server = MockServer::start(vec![stream(events)]).await;
    let expected = vec![
        text_ev("ok"),
        usage_ev(7, 3),
        StreamEvent::Finish(StopReason::MaxTokens),
    ];
    assert_eq!(run(&provider(&server)).await, (expected, None));
}

#[tokio::test]
async fn rate_limited_then_success() {
    let limited = MockResponse::json(429, error_body("rate_limit_error", "Number of requests"))
        .with_header("retry-after", "0");
    let server = MockServer::start(vec![limited, stream(hello())]).await;
    assert_eq!(run(&provider(&server)).await, (hello_events(), None));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn rate_limit_carries_retry_after_when_not_retried() {
    let limited = MockResponse::json(429, error_body("rate_limit_error", "Slow down"))
        .with_header("retry-after", "7");
    let server = MockServer::start(vec![limited]).await;
    let error = LlmError::RateLimited {
        retry_after: Some(Duration::from_secs(7)),
        message: format!("Slow down (HTTP 429 from {})", messages_url(&server)),
    };
    assert_eq!(run(&impatient(&server)).await, (vec![], Some(error)));
}

#[tokio::test]
async fn overloaded_then_success() {
    let overloaded = MockResponse::json(529, error_body("overloaded_error", "Overloaded"));
    let server = MockServer::start(vec![overloaded, stream(hello())]).await;
    assert_eq!(run(&provider(&server)).await, (hello_events(), None));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_error_event_before_any_output_is_retried() {
    let failing = stream(vec![
        message_start(3),
        error_event("overloaded_error", "Overloaded"),
    ]);
    let server = MockServer::start(vec![failing, stream(hello())]).await;
    assert_eq!(run(&provider(&server)).await, (hello_events(), None));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_error_event_after_text_is_interrupted_and_not_retried() {
    let events = vec![
        message_start(3),
        text_start(0),
        text_delta(0, "Hal"),
        error_event("overloaded_error", "Overloaded"),
    ];
    let server = MockServer::start(vec![stream(events), stream(hello())]).await;
    let expected = LlmError::Interrupted(format!(
        "Overloaded (overloaded_error sent by {})",
        messages_url(&server)
    ));
    assert_eq!(
        run(&provider(&server)).await,
        (vec![text_ev("Hal")], Some(expected))
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_error_event_is_classified_by_type() {
    let events = vec![error_event(
        "invalid_request_error",
        "prompt is too long: 9 > 8",
    )];
    let server = MockServer::start(vec![stream(events)]).await;
    let expected = LlmError::ContextOverflow(format!(
        "prompt is too long: 9 > 8 (invalid_request_error sent by {})",
        messages_url(&server)
    ));
    assert_eq!(run(&provider(&server)).await, (vec![], Some(expected)));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_drop_after_text_is_interrupted_and_not_retried() {
    let events = data(vec![message_start(3), text_start(0), text_delta(0, "Hal")]);
    let server =
        MockServer::start(vec![MockResponse::sse_then_drop(events), stream(hello())]).await;
    let (events, error) = run(&provider(&server)).await;
    assert_eq!(events, vec![text_ev("Hal")]);
    assert!(matches!(error, Some(LlmError::Interrupted(_))), "{error:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_ending_before_the_stop_is_an_error() {
    let events = data(vec![message_start(3), text_start(0)]);
    let server = MockServer::start(vec![MockResponse::sse(events)]).await;
    let expected = LlmError::Transient(format!(
        "the stream from {} ended before the model finished its answer",
        messages_url(&server)
    ));
    assert_eq!(run(&impatient(&server)).await, (vec![], Some(expected)));
}

#[tokio::test]
async fn a_garbage_data_line_is_fatal_and_quoted() {
    let garbage = MockResponse::sse(vec![
        message_start(3).to_string(),
        "this is {not json".into(),
    ]);
    let server = MockServer::start(vec![garbage, stream(hello())]).await;
    let (events, error) = run(&provider(&server)).await;
    assert_eq!(events, vec![]);
    let Some(LlmError::Fatal(message)) = error else {
        panic!("{error:?}")
    };
    assert!(message.ends_with(": this is {not json"), "{message}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_idle_stream_times_out_as_transient() {
    let stalled = MockResponse::sse_then_stall(data(vec![message_start(3)]));
    let server = MockServer::start(vec![stalled]).await;
    let config = AnthropicConfig {
        max_retries: 0,
        idle_timeout: Duration::from_millis(300),
        ..config(&server)
    };
    let (events, error) = run(&AnthropicProvider::new(config).unwrap()).await;
    assert_eq!(events, vec![]);
    let Some(LlmError::Transient(message)) = error else {
        panic!("{error:?}")
    };
    assert!(
        message.contains("sent nothing for 300ms (idle timeout)"),
        "{message}"
    );
}

#[tokio::test]
async fn unauthorized_is_auth_and_not_retried() {
    let body = error_body("authentication_error", "invalid x-api-key");
    let server = MockServer::start(vec![MockResponse::json(401, body), stream(hello())]).await;
    let expected = LlmError::Auth(format!(
        "invalid x-api-key (HTTP 401 from {})",
        messages_url(&server)
    ));
    assert_eq!(run(&provider(&server)).await, (vec![], Some(expected)));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_prompt_too_long_is_context_overflow() {
    let body = error_body(
        "invalid_request_error",
        "prompt is too long: 210000 tokens > 200000 maximum",
    );
    let server = MockServer::start(vec![MockResponse::json(400, body), stream(hello())]).await;
    let expected = LlmError::ContextOverflow(format!(
        "prompt is too long: 210000 tokens > 200000 maximum (HTTP 400 from {})",
        messages_url(&server)
    ));
    assert_eq!(run(&provider(&server)).await, (vec![], Some(expected)));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_unknown_model_is_fatal_and_names_the_url() {
    let body = error_body("not_found_error", "model: claude-test");
    let server = MockServer::start(vec![MockResponse::json(404, body)]).await;
    let expected = LlmError::Fatal(format!(
        "model `claude-test` or endpoint {} not found (HTTP 404): model: claude-test",
        messages_url(&server)
    ));
    assert_eq!(run(&provider(&server)).await, (vec![], Some(expected)));
}

#[tokio::test]
async fn a_json_answer_is_decoded_like_a_stream() {
    let message = json!({
        "id": "msg_2", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_9", "name": "read_file", "input": {"path": "x"}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 14, "output_tokens": 5, "cache_read_input_tokens": 16}
    });
    let server = MockServer::start(vec![MockResponse::json(200, message)]).await;
    let usage = Usage {
        input_tokens: 30,
        output_tokens: 5,
        cache_read_tokens: 16,
    };
    let expected = vec![
        text_ev("Checking."),
        call_ev("toolu_9", "read_file", json!({"path": "x"})),
        StreamEvent::Usage(usage),
        StreamEvent::Finish(StopReason::ToolUse),
    ];
    assert_eq!(run(&provider(&server)).await, (expected, None));
}

fn assistant(content: Vec<ContentBlock>) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        stop_reason: StopReason::ToolUse,
        usage: None,
        model: None,
    })
}

fn tool_call(id: &str, name: &str, arguments: Value) -> ContentBlock {
    ContentBlock::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
    })
}

fn tool_result(id: &str, content: &str, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage {
        call_id: id.into(),
        tool_name: "read_file".into(),
        content: content.into(),
        is_error,
    })
}

/// A conversation with two tool calls answered together, then a user follow-up.
fn conversation() -> Vec<Message> {
    vec![
        Message::user("Read a.md and b.md"),
        assistant(vec![
            ContentBlock::Text {
                text: "Sure.".into(),
            },
            tool_call("toolu_1", "read_file", json!({"path": "a.md"})),
            tool_call("toolu_2", "read_file", json!("{\"path\": ")),
        ]),
        tool_result("toolu_1", "# A", false),
        tool_result("toolu_2", "invalid arguments", true),
        Message::user("Then summarise."),
    ]
}

#[tokio::test]
async fn the_request_follows_the_wire_format() {
    let server = MockServer::start(vec![stream(hello())]).await;
    let config = AnthropicConfig {
        extra_headers: vec![("anthropic-beta".into(), "tools-2024".into())],
        ..config(&server)
    };
    let provider = AnthropicProvider::new(config).unwrap();
    let request = ChatRequest {
        model: "claude-other".into(),
        system: Some("You are Cairn.".into()),
        messages: conversation().into(),
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Read a file.".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }]
        .into(),
        max_tokens: Some(256),
        temperature: Some(0.5),
    };
    let stream = provider
        .stream(request, CancellationToken::new())
        .await
        .unwrap();
    let _: Vec<_> = stream.collect().await;

    let received = server.requests();
    assert_eq!(received.len(), 1);
    let sent = &received[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("anthropic-beta"), Some("tools-2024"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.body_json().unwrap(),
        json!({
            "model": "claude-other",
            "max_tokens": 256,
            "temperature": 0.5,
            "stream": true,
            "system": "You are Cairn.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Read a.md and b.md"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Sure."},
                    {"type": "tool_use", "id": "toolu_1", "name": "read_file",
                     "input": {"path": "a.md"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "# A",
                     "is_error": false},
                    {"type": "tool_result", "tool_use_id": "toolu_2",
                     "content": "invalid arguments", "is_error": true},
                    {"type": "text", "text": "Then summarise."}]}
            ],
            "tools": [{"name": "read_file", "description": "Read a file.",
                       "input_schema": {"type": "object",
                                        "properties": {"path": {"type": "string"}}}}]
        })
    );
}

/// The body the server received for `messages`, its `messages` only.
async fn sent_messages(messages: Vec<Message>) -> Value {
    let server = MockServer::start(vec![stream(hello())]).await;
    let request = ChatRequest {
        messages: messages.into(),
        ..Default::default()
    };
    let stream = provider(&server)
        .stream(request, CancellationToken::new())
        .await
        .unwrap();
    let _: Vec<_> = stream.collect().await;
    server.requests()[0].body_json().unwrap()["messages"].take()
}

#[tokio::test]
async fn an_awkward_conversation_is_made_acceptable() {
    let messages = vec![
        Message::user("  "),
        Message::user("go"),
        assistant(vec![tool_call("toolu_1", "now", json!([1]))]),
        Message::user("and be quick"),
        tool_result("toolu_1", "", false),
        assistant(vec![ContentBlock::Text { text: "".into() }]),
        assistant(vec![ContentBlock::Text {
            text: "done".into(),
        }]),
    ];
    let expected = json!([
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "now", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": false},
            {"type": "text", "text": "and be quick"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
    ]);
    assert_eq!(sent_messages(messages).await, expected);
}

#[tokio::test]
async fn without_tools_or_key_the_defaults_are_sent() {
    let server = MockServer::start(vec![stream(hello())]).await;
    let provider = AnthropicProvider::new(AnthropicConfig {
        api_key: None,
        ..config(&server)
    })
    .unwrap();
    run(&provider).await;
    let sent = server.requests().remove(0);
    assert_eq!(sent.header("x-api-key"), None);
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        sent.body_json().unwrap(),
        json!({"model": "claude-test", "max_tokens": 4096, "stream": true,
               "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]})
    );
}

#[tokio::test]
async fn list_models_returns_the_ids() {
    let models = json!({"data": [
        {"type": "model", "id": "claude-test", "display_name": "Claude Test"},
        {"type": "model", "id": "claude-other", "display_name": "Claude Other"}],
        "has_more": false, "first_id": "claude-test", "last_id": "claude-other"});
    let server = MockServer::start(vec![MockResponse::json(200, models)]).await;
    assert_eq!(
        provider(&server).list_models().await.unwrap(),
        vec!["claude-test", "claude-other"]
    );
    let sent = server.requests().remove(0);
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("GET", "/v1/models?limit=1000")
    );
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
}

#[tokio::test]
async fn list_models_reports_auth_failures() {
    let body = error_body("authentication_error", "invalid x-api-key");
    let server = MockServer::start(vec![MockResponse::json(401, body)]).await;
    let error = provider(&server).list_models().await.unwrap_err();
    assert!(matches!(error, LlmError::Auth(_)), "{error:?}");
}

#[tokio::test]
async fn cancelling_mid_stream_aborts_promptly() {
    let events = data(vec![
        message_start(3),
        text_start(0),
        text_delta(0, "partial"),
    ]);
    let server = MockServer::start(vec![MockResponse::sse_then_stall(events)]).await;
    let provider = provider(&server);
    let cancel = CancellationToken::new();
    let mut stream = open(&provider, cancel.clone()).await;
    assert_eq!(stream.next().await, Some(Ok(text_ev("partial"))));
    cancel.cancel();
    let next = tokio::time::timeout(Duration::from_secs(2), stream.next()).await;
    assert_eq!(next, Ok(Some(Err(LlmError::Aborted))));
    assert_eq!(stream.next().await, None);
}

#[tokio::test]
async fn info_describes_the_provider() {
    let server = MockServer::start(vec![]).await;
    let provider = AnthropicProvider::new(AnthropicConfig {
        context_window: Some(200_000),
        ..config(&server)
    })
    .unwrap();
    let expected = ProviderInfo {
        kind: "anthropic".into(),
        model: "claude-test".into(),
        supports_tools: true,
        context_window: Some(200_000),
    };
    assert_eq!(provider.info(), expected);
}

#[tokio::test]
async fn an_error_answer_that_echoes_the_key_is_shown_redacted() {
    let body = error_body(
        "authentication_error",
        "invalid x-api-key: sk-ant-test (sent as x-api-key: sk-ant-test)",
    );
    let server = MockServer::start(vec![MockResponse::json(401, body)]).await;
    let (_, error) = run(&provider(&server)).await;
    let shown = format!("{:?}", error.unwrap());
    assert!(!shown.contains("sk-ant-test"), "{shown}");
    assert!(shown.contains("x-api-key: [redacted])"), "{shown}");
}
