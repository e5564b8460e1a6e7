//! Answers streamed in the wire format become the events the harness receives.

use super::*;
use pretty_assertions::assert_eq;

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
