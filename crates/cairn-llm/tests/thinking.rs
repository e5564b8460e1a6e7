//! Reasoning from every provider against loopback servers speaking their wire formats:
//! OpenAI-style `reasoning_content` and inline `<think>`, Anthropic thinking blocks with
//! their signatures. What comes back is reasoning, apart from the answer; what goes out
//! again is only what the provider asks for.

#![allow(clippy::unwrap_used)]

mod support;

use std::time::Duration;

use cairn_llm::anthropic::{AnthropicConfig, AnthropicProvider, MessagesWire};
use cairn_llm::openai::{OpenAiConfig, OpenAiProvider};
use cairn_llm::{ChatRequest, Provider, StreamEvent};
use cairn_protocol::{
    AssistantMessage, ContentBlock, Message, StopReason, ThinkingLevel, ToolCall,
};
use cairn_protocol::{ToolResultMessage, ToolSpec};
use cairn_testkit::{MockResponse, MockServer};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

async fn events(provider: &dyn Provider, request: ChatRequest) -> Vec<StreamEvent> {
    let stream = provider
        .stream(request, CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = support::drain(stream).await;
    assert!(error.is_none(), "{error:?}");
    events
}

fn openai(server: &MockServer) -> OpenAiProvider {
    OpenAiProvider::new(OpenAiConfig {
        base_url: format!("{}/v1", server.url()),
        retry_base_delay: Duration::from_millis(1),
        ..OpenAiConfig::new("r1")
    })
    .unwrap()
}

fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}).to_string()
}

fn thinking(t: &str) -> StreamEvent {
    StreamEvent::ThinkingDelta(t.into())
}

fn text(t: &str) -> StreamEvent {
    StreamEvent::TextDelta(t.into())
}

fn end(signature: Option<&str>) -> StreamEvent {
    StreamEvent::ThinkingEnd {
        signature: signature.map(str::to_string),
    }
}

/// A past turn that reasoned, in every form a session can hold it.
fn history() -> Vec<Message> {
    vec![
        Message::user("What is in a.md?"),
        Message::Assistant(AssistantMessage {
            content: vec![
                ContentBlock::Thinking {
                    text: "I should read it.".into(),
                    signature: Some("sig-1".into()),
                    redacted: None,
                },
                ContentBlock::Thinking {
                    text: String::new(),
                    signature: None,
                    redacted: Some("opaque".into()),
                },
                ContentBlock::thinking("Unsigned, from another provider."),
                ContentBlock::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "a.md"}),
                }),
            ],
            stop_reason: StopReason::ToolUse,
            usage: None,
            model: None,
        }),
        Message::ToolResult(ToolResultMessage {
            call_id: "c1".into(),
            tool_name: "read_file".into(),
            content: "# A".into(),
            is_error: false,
            pictures: Vec::new(),
        }),
    ]
}

fn request_with_history() -> ChatRequest {
    ChatRequest {
        messages: history().into(),
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        }]
        .into(),
        temperature: Some(0.3),
        ..ChatRequest::default()
    }
}

#[tokio::test]
async fn openai_reasoning_content_and_inline_think_tags_arrive_as_reasoning() {
    let server = MockServer::start(vec![
        // DeepSeek / vLLM / llama.cpp with a reasoning parser.
        MockResponse::sse(vec![
            chunk(
                json!({"role": "assistant", "reasoning_content": "Two and "}),
                None,
            ),
            chunk(json!({"reasoning_content": "two."}), None),
            chunk(json!({"content": "4"}), None),
            chunk(json!({}), Some("stop")),
            "[DONE]".into(),
        ]),
        // Ollama and OpenRouter call the field `reasoning`.
        MockResponse::sse(vec![
            chunk(json!({"reasoning": "Hm."}), None),
            chunk(json!({"content": "Yes"}), Some("stop")),
            "[DONE]".into(),
        ]),
        // A server without a parser: the model's own tags, split across chunks.
        MockResponse::sse(vec![
            chunk(json!({"content": "<thi"}), None),
            chunk(json!({"content": "nk>Paris.</th"}), None),
            chunk(json!({"content": "ink>\n\nParis"}), None),
            chunk(json!({}), Some("stop")),
            "[DONE]".into(),
        ]),
        // A whole JSON answer.
        MockResponse::json(
            200,
            json!({"choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "reasoning_content": "Quick.", "content": "Done"}}]}),
        ),
    ])
    .await;
    let provider = openai(&server);
    let stop = StreamEvent::Finish(StopReason::EndTurn);
    let one = || support::request();
    assert_eq!(
        events(&provider, one()).await,
        vec![
            thinking("Two and "),
            thinking("two."),
            text("4"),
            stop.clone()
        ]
    );
    assert_eq!(
        events(&provider, one()).await,
        vec![thinking("Hm."), text("Yes"), stop.clone()]
    );
    assert_eq!(
        events(&provider, one()).await,
        vec![thinking("Paris."), end(None), text("Paris"), stop.clone()]
    );
    assert_eq!(
        events(&provider, one()).await,
        vec![thinking("Quick."), text("Done"), stop]
    );
}

#[tokio::test]
async fn openai_servers_are_never_sent_reasoning_back() {
    let server = MockServer::start(vec![MockResponse::sse(vec![
        chunk(json!({"content": "ok"}), Some("stop")),
        "[DONE]".into(),
    ])])
    .await;
    events(&openai(&server), request_with_history()).await;
    let body = server.requests()[0].body_json().unwrap();
    let assistant = &body["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["content"], Value::Null, "{assistant}");
    let sent = body.to_string();
    for reasoning in [
        "I should read it",
        "opaque",
        "Unsigned",
        "sig-1",
        "reasoning",
    ] {
        assert!(!sent.contains(reasoning), "{reasoning} was sent: {sent}");
    }
}

fn anthropic(server: &MockServer, thinking_budget: Option<u32>) -> AnthropicProvider {
    AnthropicProvider::new(AnthropicConfig {
        base_url: server.url(),
        retry_base_delay: Duration::from_millis(1),
        wire: MessagesWire {
            max_tokens: 2000,
            thinking_budget,
            web_search: None,
        },
        ..AnthropicConfig::new("claude-test")
    })
    .unwrap()
}

fn sse(events: Vec<Value>) -> MockResponse {
    MockResponse::sse_raw(
        events
            .into_iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect(),
    )
}

fn delta(index: u32, delta: Value) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": delta})
}

fn start(index: u32, block: Value) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": block})
}

fn stop(index: u32) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

fn thinking_answer() -> MockResponse {
    sse(vec![
        json!({"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 5}}}),
        start(0, json!({"type": "thinking", "thinking": ""})),
        delta(0, json!({"type": "thinking_delta", "thinking": "Let me "})),
        delta(0, json!({"type": "thinking_delta", "thinking": "think."})),
        delta(0, json!({"type": "signature_delta", "signature": "EqQB"})),
        stop(0),
        start(1, json!({"type": "redacted_thinking", "data": "enc"})),
        stop(1),
        start(2, json!({"type": "text", "text": ""})),
        delta(2, json!({"type": "text_delta", "text": "Hi"})),
        stop(2),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
               "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ])
}

#[tokio::test]
async fn anthropic_thinking_blocks_arrive_with_their_signature() {
    let server = MockServer::start(vec![thinking_answer()]).await;
    let got = events(&anthropic(&server, Some(2048)), support::request()).await;
    assert_eq!(
        got[..5],
        [
            thinking("Let me "),
            thinking("think."),
            end(Some("EqQB")),
            StreamEvent::RedactedThinking("enc".into()),
            text("Hi"),
        ]
    );
    assert_eq!(got.last(), Some(&StreamEvent::Finish(StopReason::EndTurn)));
}

#[tokio::test]
async fn anthropic_gets_signed_reasoning_back_only_with_thinking_on() {
    let server = MockServer::start(vec![thinking_answer(), thinking_answer()]).await;
    events(&anthropic(&server, Some(100)), request_with_history()).await;
    events(&anthropic(&server, None), request_with_history()).await;
    let requests = server.requests();

    let on = requests[0].body_json().unwrap();
    // The budget is raised to the API's least, and comes on top of the answer's tokens;
    // a temperature is not allowed with thinking.
    assert_eq!(
        on["thinking"],
        json!({"type": "enabled", "budget_tokens": 1024})
    );
    assert_eq!(on["max_tokens"], 2000 + 1024);
    assert_eq!(on.get("temperature"), None);
    assert_eq!(
        on["messages"][1]["content"],
        json!([
            {"type": "thinking", "thinking": "I should read it.", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a.md"}}
        ]),
        "unsigned reasoning is never sent"
    );

    let off = requests[1].body_json().unwrap();
    assert_eq!(off.get("thinking"), None);
    assert_eq!(off["max_tokens"], 2000);
    assert_eq!(off["temperature"], 0.3);
    assert_eq!(
        off["messages"][1]["content"],
        json!([{"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a.md"}}])
    );
}

/// A request at thinking level `level` (`None`: the provider's own setting).
fn at_level(level: Option<ThinkingLevel>) -> ChatRequest {
    ChatRequest {
        thinking: level,
        temperature: Some(0.4),
        ..support::request()
    }
}

fn openai_hello() -> MockResponse {
    MockResponse::sse(vec![
        chunk(json!({"content": "Hi"}), None),
        chunk(json!({}), Some("stop")),
        "[DONE]".into(),
    ])
}

/// The body of the server's `i`-th request.
fn body(server: &MockServer, i: usize) -> Value {
    server.requests()[i].body_json().unwrap()
}

#[tokio::test]
async fn openai_servers_get_a_reasoning_effort_for_each_level_and_none_for_off() {
    let levels = [
        (None, None),
        (Some(ThinkingLevel::Off), None),
        (Some(ThinkingLevel::Low), Some("low")),
        (Some(ThinkingLevel::Medium), Some("medium")),
        (Some(ThinkingLevel::High), Some("high")),
    ];
    let server = MockServer::start(levels.iter().map(|_| openai_hello()).collect()).await;
    let provider = openai(&server);
    for (i, (level, effort)) in levels.into_iter().enumerate() {
        assert_eq!(
            events(&provider, at_level(level)).await,
            [text("Hi"), StreamEvent::Finish(StopReason::EndTurn)]
        );
        let sent = body(&server, i);
        assert_eq!(
            sent.get("reasoning_effort").and_then(Value::as_str),
            effort,
            "{level:?}"
        );
    }
}

#[tokio::test]
async fn a_server_that_refuses_the_effort_answers_without_it_with_a_notice_and_is_not_asked_again()
{
    let refusal = json!({"error": {"message": "Unrecognized request argument supplied: reasoning_effort",
                                   "type": "invalid_request_error", "param": "reasoning_effort"}});
    let server = MockServer::start(vec![
        MockResponse::json(400, refusal),
        openai_hello(),
        openai_hello(),
    ])
    .await;
    let provider = openai(&server);
    let got = events(&provider, at_level(Some(ThinkingLevel::High))).await;
    assert!(
        matches!(&got[0], StreamEvent::Notice(n) if n.contains("does not take a reasoning effort")),
        "{got:?}"
    );
    assert_eq!(
        got[1..],
        [text("Hi"), StreamEvent::Finish(StopReason::EndTurn)]
    );
    assert_eq!(body(&server, 0)["reasoning_effort"], "high");
    assert!(body(&server, 1).get("reasoning_effort").is_none());
    // The next call goes without it at once, and says nothing more.
    let again = events(&provider, at_level(Some(ThinkingLevel::High))).await;
    assert_eq!(
        again,
        [text("Hi"), StreamEvent::Finish(StopReason::EndTurn)]
    );
    assert_eq!(server.requests().len(), 3);
    assert!(body(&server, 2).get("reasoning_effort").is_none());
}

fn anthropic_hello() -> MockResponse {
    sse(vec![
        json!({"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 5}}}),
        start(0, json!({"type": "text", "text": ""})),
        delta(0, json!({"type": "text_delta", "text": "Hi"})),
        stop(0),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
               "usage": {"output_tokens": 1}}),
        json!({"type": "message_stop"}),
    ])
}

#[tokio::test]
async fn anthropic_gets_a_thinking_budget_for_each_level_and_off_turns_a_configured_one_off() {
    let levels: [(Option<ThinkingLevel>, Option<u64>); 5] = [
        (None, Some(4096)),
        (Some(ThinkingLevel::Off), None),
        (Some(ThinkingLevel::Low), Some(2048)),
        (Some(ThinkingLevel::Medium), Some(8192)),
        (Some(ThinkingLevel::High), Some(24576)),
    ];
    let server = MockServer::start(levels.iter().map(|_| anthropic_hello()).collect()).await;
    // The provider's settings ask for 4,096 tokens of thinking.
    let provider = anthropic(&server, Some(4096));
    for (i, (level, budget)) in levels.into_iter().enumerate() {
        events(&provider, at_level(level)).await;
        let sent = body(&server, i);
        let got = sent["thinking"]["budget_tokens"].as_u64();
        assert_eq!(got, budget, "{level:?}: {sent}");
        match budget {
            Some(b) => {
                assert_eq!(sent["max_tokens"], 2000 + b, "{level:?}");
                assert!(sent.get("temperature").is_none(), "{level:?}");
            }
            None => {
                assert!(sent.get("thinking").is_none(), "{level:?}");
                assert_eq!(sent["temperature"], 0.4, "{level:?}");
            }
        }
    }
}

#[tokio::test]
async fn a_claude_without_extended_thinking_answers_without_it_with_a_notice() {
    let refusal = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "thinking: extended thinking is not supported for this model"}});
    let server = MockServer::start(vec![MockResponse::json(400, refusal), anthropic_hello()]).await;
    let provider = anthropic(&server, None);
    let got = events(&provider, at_level(Some(ThinkingLevel::Medium))).await;
    assert!(
        matches!(&got[0], StreamEvent::Notice(n) if n.contains("does not take extended thinking")),
        "{got:?}"
    );
    assert!(got.contains(&text("Hi")));
    assert!(body(&server, 0).get("thinking").is_some());
    assert!(body(&server, 1).get("thinking").is_none());
}
