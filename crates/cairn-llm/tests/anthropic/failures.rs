//! Servers that refuse, fail, drop or stall: each failure is retried or reported as the harness expects.

use super::*;
use pretty_assertions::assert_eq;

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
