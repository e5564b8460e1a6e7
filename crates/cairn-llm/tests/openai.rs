//! The OpenAI-compatible provider against a loopback server speaking the chat-completions
//! wire format. Each test asserts the exact events (or error) the harness would receive.

// clippy.toml allows unwrap in `#[test]` fns only; the helpers here are test code too.
#![allow(clippy::unwrap_used)]

mod support;

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
use pretty_assertions::assert_eq;
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

#[tokio::test]
async fn plain_text_stream_with_usage() {
    let server = MockServer::start(vec![hello_stream()]).await;
    assert_eq!(run(&provider(&server)).await, (hello_events(), None));
}

#[tokio::test]
async fn events_split_across_network_chunks_are_reassembled() {
    let body = format!(
        "data: {}\n\n: keep-alive comment\n\ndata: {}\n\ndata: [DONE]\n\n",
        text("Grüße"),
        finish("stop")
    );
    let bytes = body.into_bytes();
    // Cut every 7 bytes: through `data:`, through the JSON, and inside the two bytes of 'ü'.
    let chunks: Vec<Vec<u8>> = bytes.chunks(7).map(<[u8]>::to_vec).collect();
    assert!(
        chunks.iter().any(|c| std::str::from_utf8(c).is_err()),
        "a cut inside 'ü'"
    );
    let response = MockResponse::sse_bytes(chunks).with_chunk_delay(Duration::from_millis(1));
    let server = MockServer::start(vec![response]).await;
    let expected = vec![text_ev("Grüße"), StreamEvent::Finish(StopReason::EndTurn)];
    assert_eq!(run(&provider(&server)).await, (expected, None));
}

#[tokio::test]
async fn tool_call_arguments_split_across_many_deltas() {
    let args = r#"{"path": "notes/a.md", "limit": 20}"#;
    let mut events = vec![
        role(),
        text("Let me look."),
        call_part(0, Some("call_1"), Some("read_file"), ""),
    ];
    events.extend(
        args.chars()
            .map(|c| call_part(0, None, None, &c.to_string())),
    );
    events.extend([finish("tool_calls"), usage(40, 9), done()]);
    let server = MockServer::start(vec![MockResponse::sse(events)]).await;
    let expected = vec![
        text_ev("Let me look."),
        call_ev(
            "call_1",
            "read_file",
            json!({"path": "notes/a.md", "limit": 20}),
        ),
        usage_ev(40, 9),
        StreamEvent::Finish(StopReason::ToolUse),
    ];
    assert_eq!(run(&provider(&server)).await, (expected, None));
}

#[tokio::test]
async fn two_tool_calls_interleaved_by_index() {
    let events = vec![
        call_part(1, Some("call_b"), Some("list_dir"), ""),
        call_part(0, Some("call_a"), Some("read_"), "{\"pa"),
        call_part(1, None, None, "{\"path\":"),
        call_part(0, None, Some("file"), "th\": \"a\"}"),
        call_part(1, None, None, " \".\"}"),
        call_part(2, Some("call_c"), Some("now"), ""),
        call_part(3, Some("call_d"), Some("grep"), "{\"q\": "),
        finish("tool_calls"),
        done(),
    ];
    let server = MockServer::start(vec![MockResponse::sse(events)]).await;
    let expected = vec![
        call_ev("call_a", "read_file", json!({"path": "a"})),
        call_ev("call_b", "list_dir", json!({"path": "."})),
        call_ev("call_c", "now", json!({})),
        call_ev("call_d", "grep", json!("{\"q\": ")),
        StreamEvent::Finish(StopReason::ToolUse),
    ];
    assert_eq!(run(&provider(&server)).await, (expected, None));
}

#[tokio::test]
async fn done_without_a_finish_reason_infers_the_stop() {
    let events = vec![call_part(0, Some("c"), Some("now"), "{}"), done()];
    let server = MockServer::start(vec![MockResponse::sse(events)]).await;
    let expected = vec![
        call_ev("c", "now", json!({})),
        StreamEvent::Finish(StopReason::ToolUse),
    ];
    assert_eq!(run(&provider(&server)).await, (expected, None));
}

#[tokio::test]
async fn finish_reasons_map_to_stop_reasons() {
    for (reason, stop) in [
        ("length", StopReason::MaxTokens),
        ("content_filter", StopReason::Refusal),
    ] {
        let server = MockServer::start(vec![MockResponse::sse(vec![finish(reason), done()])]).await;
        assert_eq!(
            run(&provider(&server)).await,
            (vec![StreamEvent::Finish(stop)], None)
        );
    }
}

#[tokio::test]
async fn rate_limited_then_success() {
    let limited = MockResponse::json(429, json!({"error": {"message": "Rate limit reached"}}))
        .with_header("retry-after", "0");
    let server = MockServer::start(vec![limited, hello_stream()]).await;
    assert_eq!(run(&provider(&server)).await, (hello_events(), None));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn rate_limit_carries_retry_after_when_retries_run_out() {
    let limited = || {
        MockResponse::json(429, json!({"error": {"message": "Rate limit reached"}}))
            .with_header("retry-after", "0")
    };
    let server = MockServer::start(vec![limited(), limited()]).await;
    let provider = OpenAiProvider::new(OpenAiConfig {
        max_retries: 1,
        ..config(&server)
    })
    .unwrap();
    let url = format!("{}/v1/chat/completions", server.url());
    let error = LlmError::RateLimited {
        retry_after: Some(Duration::ZERO),
        message: format!("Rate limit reached (HTTP 429 from {url})"),
    };
    assert_eq!(run(&provider).await, (vec![], Some(error)));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn server_error_then_success() {
    let failing = MockResponse::status(500, "upstream exploded");
    let server = MockServer::start(vec![failing, hello_stream()]).await;
    assert_eq!(run(&provider(&server)).await, (hello_events(), None));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_drop_after_text_is_interrupted_and_not_retried() {
    let dropped = MockResponse::sse_then_drop(vec![role(), text("Hal")]);
    let server = MockServer::start(vec![dropped, hello_stream()]).await;
    let (events, error) = run(&provider(&server)).await;
    assert_eq!(events, vec![text_ev("Hal")]);
    assert!(matches!(error, Some(LlmError::Interrupted(_))), "{error:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_drop_before_any_event_is_retried() {
    let dropped = MockResponse::sse_then_drop(vec![role()]);
    let server = MockServer::start(vec![dropped, hello_stream()]).await;
    assert_eq!(run(&provider(&server)).await, (hello_events(), None));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_stream_ending_without_done_or_finish_is_an_error() {
    let server = MockServer::start(vec![MockResponse::sse(vec![role()])]).await;
    let provider = OpenAiProvider::new(OpenAiConfig {
        max_retries: 0,
        ..config(&server)
    })
    .unwrap();
    let (events, error) = run(&provider).await;
    assert_eq!(events, vec![]);
    let Some(LlmError::Transient(message)) = error else {
        panic!("{error:?}")
    };
    assert!(
        message.contains("ended before the model finished"),
        "{message}"
    );
}

#[tokio::test]
async fn a_garbage_data_line_is_fatal_and_quoted() {
    let garbage = MockResponse::sse(vec![role(), "this is {not json".into(), done()]);
    let server = MockServer::start(vec![garbage, hello_stream()]).await;
    let (events, error) = run(&provider(&server)).await;
    assert_eq!(events, vec![]);
    let Some(LlmError::Fatal(message)) = error else {
        panic!("{error:?}")
    };
    assert!(message.ends_with(": this is {not json"), "{message}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_error_object_in_the_stream_is_classified() {
    let error_line = json!({"error": {"message": "model overloaded", "type": "server_error"}});
    let response = MockResponse::sse(vec![role(), error_line.to_string()]);
    let server = MockServer::start(vec![response]).await;
    let provider = OpenAiProvider::new(OpenAiConfig {
        max_retries: 0,
        ..config(&server)
    })
    .unwrap();
    let url = format!("{}/v1/chat/completions", server.url());
    let expected =
        LlmError::Transient(format!("model overloaded (error sent mid-stream by {url})"));
    assert_eq!(run(&provider).await, (vec![], Some(expected)));
}

#[tokio::test]
async fn an_idle_stream_times_out_as_transient() {
    let stalled = MockResponse::sse_then_stall(vec![role()]);
    let server = MockServer::start(vec![stalled]).await;
    let config = OpenAiConfig {
        max_retries: 0,
        idle_timeout: Duration::from_millis(300),
        ..config(&server)
    };
    let (events, error) = run(&OpenAiProvider::new(config).unwrap()).await;
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
    let body = json!({"error": {"message": "Incorrect API key provided: sk-test.",
                                "type": "invalid_request_error", "code": "invalid_api_key"}});
    let server = MockServer::start(vec![MockResponse::json(401, body), hello_stream()]).await;
    let url = format!("{}/v1/chat/completions", server.url());
    // The key the server quoted is not shown.
    let expected = LlmError::Auth(format!(
        "Incorrect API key provided: sk-[redacted]. (HTTP 401 from {url})"
    ));
    assert_eq!(run(&provider(&server)).await, (vec![], Some(expected)));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn context_overflow_is_recognised() {
    let body = json!({"error": {
        "message": "This model's maximum context length is 8192 tokens. However, your messages \
                    resulted in 9000 tokens.",
        "type": "invalid_request_error", "code": "context_length_exceeded"}});
    let server = MockServer::start(vec![MockResponse::json(400, body)]).await;
    let (events, error) = run(&provider(&server)).await;
    assert_eq!(events, vec![]);
    let Some(LlmError::ContextOverflow(message)) = error else {
        panic!("{error:?}")
    };
    assert!(
        message.starts_with("This model's maximum context length is 8192"),
        "{message}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_unknown_model_is_fatal_and_names_the_url() {
    let body = json!({"error": "model \"gpt-test\" not found, try pulling it first"});
    let server = MockServer::start(vec![MockResponse::json(404, body)]).await;
    let url = format!("{}/v1/chat/completions", server.url());
    let expected = LlmError::Fatal(format!(
        "model `gpt-test` or endpoint {url} not found (HTTP 404): model \"gpt-test\" not found, \
         try pulling it first"
    ));
    assert_eq!(run(&provider(&server)).await, (vec![], Some(expected)));
}

#[tokio::test]
async fn a_json_answer_is_decoded_like_a_stream() {
    let completion = json!({
        "id": "chatcmpl-2", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Checking.",
            "tool_calls": [{"id": "call_9", "type": "function",
                            "function": {"name": "read_file", "arguments": "{\"path\":\"x\"}"}}]}}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35,
                  "prompt_tokens_details": {"cached_tokens": 16}}
    });
    let server = MockServer::start(vec![MockResponse::json(200, completion)]).await;
    let usage = Usage {
        input_tokens: 30,
        output_tokens: 5,
        cache_read_tokens: 16,
    };
    let expected = vec![
        text_ev("Checking."),
        call_ev("call_9", "read_file", json!({"path": "x"})),
        StreamEvent::Usage(usage),
        StreamEvent::Finish(StopReason::ToolUse),
    ];
    assert_eq!(run(&provider(&server)).await, (expected, None));
}

#[tokio::test]
async fn the_request_body_follows_the_wire_format() {
    let server = MockServer::start(vec![hello_stream()]).await;
    let config = OpenAiConfig {
        extra_headers: vec![("X-Title".into(), "Cairn".into())],
        ..config(&server)
    };
    let provider = OpenAiProvider::new(config).unwrap();
    let call = ToolCall {
        id: "call_1".into(),
        name: "read_file".into(),
        arguments: json!({"path": "a.md"}),
    };
    let request = ChatRequest {
        model: "gpt-other".into(),
        system: Some("You are Cairn.".into()),
        messages: vec![
            Message::user("Read a.md"),
            Message::Assistant(AssistantMessage {
                content: vec![
                    ContentBlock::Text {
                        text: "Sure.".into(),
                    },
                    ContentBlock::ToolCall(call),
                ],
                stop_reason: StopReason::ToolUse,
                usage: None,
                model: None,
            }),
            Message::ToolResult(ToolResultMessage {
                call_id: "call_1".into(),
                tool_name: "read_file".into(),
                content: "# A".into(),
                is_error: false,
            }),
        ]
        .into(),
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
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent.header("x-title"), Some("Cairn"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        sent.body_json().unwrap(),
        json!({
            "model": "gpt-other",
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 256,
            "temperature": 0.5,
            "messages": [
                {"role": "system", "content": "You are Cairn."},
                {"role": "user", "content": "Read a.md"},
                {"role": "assistant", "content": "Sure.", "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "read_file", "arguments": "{\"path\":\"a.md\"}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "# A"}
            ],
            "tools": [{"type": "function", "function": {
                "name": "read_file", "description": "Read a file.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
        })
    );
}

#[tokio::test]
async fn without_tools_or_key_nothing_extra_is_sent() {
    let server = MockServer::start(vec![hello_stream()]).await;
    let provider = OpenAiProvider::new(OpenAiConfig {
        api_key: None,
        ..config(&server)
    })
    .unwrap();
    run(&provider).await;
    let sent = server.requests().remove(0);
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.body_json().unwrap(),
        json!({"model": "gpt-test", "stream": true, "stream_options": {"include_usage": true},
               "messages": [{"role": "user", "content": "hi"}]})
    );
}

#[tokio::test]
async fn list_models_returns_the_ids() {
    let models = json!({"object": "list", "data": [
        {"id": "gpt-test", "object": "model"}, {"id": "gpt-other", "object": "model"}]});
    let server = MockServer::start(vec![MockResponse::json(200, models)]).await;
    assert_eq!(
        provider(&server).list_models().await.unwrap(),
        vec!["gpt-test", "gpt-other"]
    );
    let sent = server.requests().remove(0);
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("GET", "/v1/models")
    );
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
}

#[tokio::test]
async fn cancelling_mid_stream_aborts_promptly() {
    let server = MockServer::start(vec![MockResponse::sse_then_stall(vec![text("partial")])]).await;
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
    let provider = OpenAiProvider::new(OpenAiConfig {
        context_window: Some(128_000),
        ..config(&server)
    })
    .unwrap();
    let expected = ProviderInfo {
        kind: "openai".into(),
        model: "gpt-test".into(),
        supports_tools: true,
        context_window: Some(128_000),
    };
    assert_eq!(provider.info(), expected);
}

#[tokio::test]
async fn an_event_that_never_ends_stops_the_answer_instead_of_filling_memory() {
    // A tool call whose arguments grow in one event with no end: 20 chunks of 1 MiB.
    let mut chunks = vec![format!("data: {}\n\n", role()).into_bytes()];
    chunks.push(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"".to_vec());
    chunks.extend((0..20).map(|_| vec![b'a'; 1 << 20]));
    let server = MockServer::start(vec![MockResponse::sse_bytes(chunks)]).await;
    let (_, error) = run(&provider(&server)).await;
    assert!(
        matches!(&error, Some(LlmError::Fatal(m)) if m.contains("one event in the stream") && m.contains("16 MiB")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_server_that_trickles_forever_is_cut_at_the_call_timeout() {
    // Each chunk comes well within the idle timeout, but the answer never ends.
    let chunks: Vec<String> = (0..400)
        .map(|i| format!("data: {}\n\n", text(&i.to_string())))
        .collect();
    let response = MockResponse::sse_raw(chunks).with_chunk_delay(Duration::from_millis(20));
    let server = MockServer::start(vec![response]).await;
    let provider = OpenAiProvider::new(OpenAiConfig {
        call_timeout: Duration::from_millis(800),
        max_retries: 0,
        ..config(&server)
    })
    .unwrap();
    let (events, error) = run(&provider).await;
    assert!(!events.is_empty(), "some text came first");
    assert!(events.len() < 400, "{}", events.len());
    assert!(
        matches!(&error, Some(LlmError::Interrupted(m)) if m.contains("call_timeout_s")),
        "{error:?}"
    );
}

#[tokio::test]
async fn reasoning_models_get_max_completion_tokens_and_other_servers_max_tokens() {
    for (model, field) in [
        ("gpt-5-mini", "max_completion_tokens"),
        ("o3", "max_completion_tokens"),
        ("openai/o4-mini", "max_completion_tokens"),
        ("llama3.2", "max_tokens"),
        ("gpt-4o", "max_tokens"),
    ] {
        let server = MockServer::start(vec![MockResponse::sse(vec![finish("stop")])]).await;
        let request = ChatRequest {
            model: model.into(),
            max_tokens: Some(99),
            ..support::request()
        };
        let stream = provider(&server)
            .stream(request, CancellationToken::new())
            .await
            .unwrap();
        let _: Vec<_> = stream.collect().await;
        let body = server.requests()[0].body_json().unwrap();
        let other = if field == "max_tokens" {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        assert_eq!(body[field], 99, "{model}: {body}");
        assert!(body.get(other).is_none(), "{model}: {body}");
    }
}

#[tokio::test]
async fn endless_tool_call_arguments_stop_the_answer() {
    // Arguments streamed in many small events: each one is fine, together they pass 4 MiB.
    let piece = "x".repeat(64 << 10);
    let mut events = vec![
        role(),
        call_part(0, Some("call_1"), Some("write_file"), "{\"content\":\""),
    ];
    events.extend((0..80).map(|_| call_part(0, None, None, &piece)));
    events.push(finish("tool_calls"));
    let server = MockServer::start(vec![MockResponse::sse(events)]).await;
    let (received, error) = run(&provider(&server)).await;
    assert!(
        !received
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolCall(_))),
        "{received:?}"
    );
    assert!(
        matches!(&error, Some(LlmError::Fatal(m)) if m.contains("`write_file` call") && m.contains("4 MiB")),
        "{error:?}"
    );
}

#[tokio::test]
async fn embeddings_come_back_in_input_order_from_the_endpoint() {
    // Servers may answer out of order: the index puts each vector in its place.
    let answer = json!({"object": "list", "model": "nomic-embed-text", "data": [
        {"object": "embedding", "index": 1, "embedding": [0.0, 1.0, 0.0]},
        {"object": "embedding", "index": 0, "embedding": [1.0, 0.0, 0.0]}
    ]});
    let server = MockServer::start(vec![MockResponse::json(200, answer)]).await;
    let texts = vec!["car".to_string(), "vehicle".to_string()];
    let vectors = provider(&server)
        .embed("nomic-embed-text", &texts)
        .await
        .unwrap();
    assert_eq!(vectors, vec![vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0]]);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/embeddings");
    assert_eq!(
        request.body_json().unwrap(),
        json!({"model": "nomic-embed-text", "input": ["car", "vehicle"]})
    );
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
}

#[tokio::test]
async fn a_bad_embeddings_answer_is_a_clear_error() {
    let cases = [
        (
            json!({"data": [{"index": 0, "embedding": [1.0]}]}),
            "no vector for input 1",
        ),
        (
            json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]}),
            "different lengths",
        ),
        (
            json!({"data": [{"index": 5, "embedding": [1.0]}]}),
            "input 5 of 2",
        ),
        (
            json!({"error": "model not found"}),
            "not an embeddings answer",
        ),
    ];
    for (answer, expected) in cases {
        let server = MockServer::start(vec![MockResponse::json(200, answer.clone())]).await;
        let texts = vec!["a".to_string(), "b".to_string()];
        let err = provider(&server).embed("m", &texts).await.unwrap_err();
        assert!(err.to_string().contains(expected), "{answer}: {err}");
    }
    // An unknown model is the server's error, with its status.
    let server = MockServer::start(vec![MockResponse::json(
        404,
        json!({"error": {"message": "model \"m\" not found", "type": "not_found"}}),
    )])
    .await;
    let err = provider(&server)
        .embed("m", &["a".to_string()])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not found"), "{err}");
}
