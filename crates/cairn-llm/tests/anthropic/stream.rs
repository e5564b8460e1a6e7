//! Answers streamed in the Messages wire format become the events the harness receives.

use super::*;
use pretty_assertions::assert_eq;

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
