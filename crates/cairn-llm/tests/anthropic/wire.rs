//! What goes on the wire, answers that are not streamed, models listed, cancelling, keys kept out of errors.

use super::*;
use pretty_assertions::assert_eq;

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

pub(crate) fn assistant(content: Vec<ContentBlock>) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        stop_reason: StopReason::ToolUse,
        usage: None,
        model: None,
    })
}

pub(crate) fn tool_call(id: &str, name: &str, arguments: Value) -> ContentBlock {
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
        pictures: Vec::new(),
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
        thinking: None,
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
        vision: true,
        image_max_side: 1568,
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

/// Tokens are counted by Anthropic's count endpoint, sent the request as it would go
/// (without what only an answer needs); when it refuses, there is no count.
#[tokio::test]
async fn tokens_are_counted_by_the_count_endpoint() {
    let server = MockServer::start(vec![
        MockResponse::json(200, json!({"input_tokens": 1234})),
        MockResponse::json(
            500,
            json!({"type": "error", "error": {"type": "api_error", "message": "down"}}),
        ),
    ])
    .await;
    let provider = provider(&server);
    let counted = provider.count_tokens(&request()).await.unwrap();
    assert_eq!(counted.tokens, 1234);
    assert_eq!(counted.by, "Anthropic's token count");
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/messages/count_tokens");
    let body = sent.body_json().unwrap();
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["messages"][0]["role"], "user");
    assert!(body.get("stream").is_none() && body.get("max_tokens").is_none());
    assert_eq!(provider.count_tokens(&request()).await, None);
}
