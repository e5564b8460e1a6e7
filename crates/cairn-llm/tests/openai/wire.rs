//! What goes on the wire, answers that are not streamed, models listed, cancelling.

use super::*;
use pretty_assertions::assert_eq;

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
                pictures: Vec::new(),
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
        vision: false,
        image_max_side: 1568,
    };
    assert_eq!(provider.info(), expected);
}
