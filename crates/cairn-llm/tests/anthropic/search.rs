//! Anthropic's web search (`[web] search = "provider"`): the server tool offered only when
//! configured and beside other tools, a search and its results shown like a tool call, the
//! cited sources in the answer, errors in words, and past searches sent back verbatim.

use super::*;
use cairn_llm::anthropic::{MessagesWire, WebSearchTool};
use pretty_assertions::assert_eq;

const SEARCH_ID: &str = "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE";
const PARIS: &str = "https://en.wikipedia.org/wiki/Paris";

/// A provider that offers Anthropic's web search.
fn searching(server: &MockServer) -> AnthropicProvider {
    AnthropicProvider::new(AnthropicConfig {
        wire: MessagesWire {
            web_search: Some(WebSearchTool::default()),
            ..MessagesWire::default()
        },
        ..config(server)
    })
    .unwrap()
}

fn read_file_spec() -> ToolSpec {
    ToolSpec {
        name: "read_file".into(),
        description: "Read a file.".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

/// A request offering `read_file` (or nothing).
fn asking(messages: Vec<Message>, tools: bool) -> ChatRequest {
    let tools = if tools {
        vec![read_file_spec()]
    } else {
        vec![]
    };
    ChatRequest {
        messages: messages.into(),
        tools: tools.into(),
        ..Default::default()
    }
}

/// The body the server got for `request`.
async fn sent(provider: &AnthropicProvider, server: &MockServer, request: ChatRequest) -> Value {
    let stream = provider
        .stream(request, CancellationToken::new())
        .await
        .unwrap();
    let _: Vec<_> = stream.collect().await;
    server.requests().pop().unwrap().body_json().unwrap()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn web_search_is_offered_only_when_configured_and_beside_other_tools() {
    let server = MockServer::start(vec![stream(hello()); 3]).await;
    let hi = || vec![Message::user("hi")];
    let plain = sent(&provider(&server), &server, asking(hi(), true)).await;
    assert_eq!(tool_names(&plain), ["read_file"]);

    let body = sent(&searching(&server), &server, asking(hi(), true)).await;
    assert_eq!(
        body["tools"][1],
        json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5})
    );
    assert_eq!(tool_names(&body), ["read_file", "web_search"]);

    // A request without tools (a summary, notes) searches nothing.
    let body = sent(&searching(&server), &server, asking(hi(), false)).await;
    assert_eq!(body.get("tools"), None);
}

fn search_start(index: u32) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block":
           {"type": "server_tool_use", "id": SEARCH_ID, "name": "web_search", "input": {}}})
}

/// The search as a whole message holds it.
fn search_block() -> Value {
    json!({"type": "server_tool_use", "id": SEARCH_ID, "name": "web_search",
           "input": {"query": "capital of France"}})
}

fn results_block() -> Value {
    json!({"type": "web_search_tool_result", "tool_use_id": SEARCH_ID, "content": [
        {"type": "web_search_result", "url": PARIS, "title": "Paris - Wikipedia",
         "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y",
         "page_age": "2 days ago"},
        {"type": "web_search_result", "url": "https://www.britannica.com/place/Paris",
         "title": "Paris | History, Map & Facts", "encrypted_content": "Eo8BCioIAhgBIiQyYjQ0OWJ",
         "page_age": null}
    ]})
}

fn error_block(code: &str) -> Value {
    json!({"type": "web_search_tool_result", "tool_use_id": SEARCH_ID, "content":
           {"type": "web_search_tool_result_error", "error_code": code}})
}

fn block_start(index: u32, block: Value) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": block})
}

fn citation() -> Value {
    json!({"type": "web_search_result_location", "url": PARIS, "title": "Paris - Wikipedia",
           "cited_text": "Paris is the capital and largest city of France.",
           "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm"})
}

/// An answer that searches, then cites what it found.
fn searched_answer() -> Vec<Value> {
    vec![
        message_start(40),
        text_start(0),
        text_delta(0, "Let me check."),
        block_stop(0),
        search_start(1),
        json_delta(1, "{\"query\": \"capi"),
        json_delta(1, "tal of France\"}"),
        block_stop(1),
        block_start(2, results_block()),
        block_stop(2),
        block_start(3, json!({"type": "text", "text": "", "citations": []})),
        json!({"type": "content_block_delta", "index": 3,
               "delta": {"type": "citations_delta", "citation": citation()}}),
        text_delta(3, "Paris is the capital of France"),
        block_stop(3),
        text_start(4),
        text_delta(4, "."),
        block_stop(4),
        message_delta("end_turn", 30),
        message_stop(),
    ]
}

fn searched_events() -> Vec<StreamEvent> {
    vec![
        text_ev("Let me check."),
        StreamEvent::ServerToolCall {
            id: SEARCH_ID.into(),
            name: "web_search".into(),
            input: json!({"query": "capital of France"}),
            block: search_block(),
        },
        StreamEvent::ServerToolResult {
            call_id: SEARCH_ID.into(),
            name: "web_search".into(),
            content: format!(
                "1. Paris - Wikipedia\n   {PARIS}\n2. Paris | History, Map & Facts\n   \
                 https://www.britannica.com/place/Paris"
            ),
            is_error: false,
            block: results_block(),
        },
        text_ev("Paris is the capital of France"),
        text_ev(" [1]"),
        text_ev("."),
        text_ev(&format!("\n\nSources:\n1. [Paris - Wikipedia]({PARIS})")),
        usage_ev(40, 30),
        StreamEvent::Finish(StopReason::EndTurn),
    ]
}

#[tokio::test]
async fn a_search_shows_what_was_asked_what_came_back_and_the_sources_cited() {
    let server = MockServer::start(vec![stream(searched_answer())]).await;
    let (events, error) = run(&searching(&server)).await;
    assert_eq!(error, None);
    assert_eq!(events, searched_events());
}

#[tokio::test]
async fn a_whole_message_with_a_search_reads_like_the_stream() {
    let cited = json!({"type": "text", "text": "Paris is the capital of France",
                       "citations": [citation()]});
    let message = json!({
        "id": "msg_3", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [
            {"type": "text", "text": "Let me check."}, search_block(), results_block(),
            cited, {"type": "text", "text": "."}
        ],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 40, "output_tokens": 30,
                  "server_tool_use": {"web_search_requests": 1}}
    });
    let server = MockServer::start(vec![MockResponse::json(200, message)]).await;
    assert_eq!(run(&searching(&server)).await, (searched_events(), None));
}

#[tokio::test]
async fn a_refused_search_is_shown_in_words_and_the_answer_goes_on() {
    for (code, words) in [
        (
            "max_uses_exceeded",
            "Web search failed: this answer used all the searches it may make (max_uses) \
             (max_uses_exceeded).",
        ),
        (
            "too_many_requests",
            "Web search failed: Anthropic's search is rate limited; try again later \
             (too_many_requests).",
        ),
    ] {
        let answer = vec![
            message_start(40),
            block_start(0, search_block()),
            block_stop(0),
            block_start(1, error_block(code)),
            block_stop(1),
            text_start(2),
            text_delta(2, "I could not search."),
            block_stop(2),
            message_delta("end_turn", 9),
            message_stop(),
        ];
        let server = MockServer::start(vec![stream(answer)]).await;
        let (events, error) = run(&searching(&server)).await;
        assert_eq!(error, None, "{code}");
        assert_eq!(
            events[1],
            StreamEvent::ServerToolResult {
                call_id: SEARCH_ID.into(),
                name: "web_search".into(),
                content: words.into(),
                is_error: true,
                block: error_block(code),
            }
        );
        assert_eq!(
            events[2..],
            [
                text_ev("I could not search."),
                usage_ev(40, 9),
                StreamEvent::Finish(StopReason::EndTurn)
            ]
        );
    }
}

/// A conversation whose answer searched, then a question after it.
fn after_a_search() -> Vec<Message> {
    vec![
        Message::user("What is the capital of France?"),
        Message::Assistant(AssistantMessage {
            content: vec![
                ContentBlock::Text {
                    text: "Let me check.".into(),
                },
                ContentBlock::ServerTool {
                    raw: search_block(),
                },
                ContentBlock::ServerTool {
                    raw: results_block(),
                },
                ContentBlock::Text {
                    text: "Paris is the capital of France [1].".into(),
                },
            ],
            stop_reason: StopReason::EndTurn,
            usage: None,
            model: None,
        }),
        Message::user("And of Italy?"),
    ]
}

#[tokio::test]
async fn past_searches_go_back_verbatim_while_search_is_offered() {
    let server = MockServer::start(vec![stream(hello()); 3]).await;
    let body = sent(&searching(&server), &server, asking(after_a_search(), true)).await;
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Let me check."},
            search_block(),
            results_block(),
            {"type": "text", "text": "Paris is the capital of France [1]."}
        ]})
    );
    // Without the search tool the blocks stay in the session; the text goes.
    for (provider, tools) in [(provider(&server), true), (searching(&server), false)] {
        let body = sent(&provider, &server, asking(after_a_search(), tools)).await;
        assert_eq!(
            body["messages"][1]["content"],
            json!([
                {"type": "text", "text": "Let me check."},
                {"type": "text", "text": "Paris is the capital of France [1]."}
            ])
        );
    }
}
