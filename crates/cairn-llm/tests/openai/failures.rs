//! Servers that refuse, fail, drop or stall: each failure is retried or reported as the harness expects.

use super::*;
use pretty_assertions::assert_eq;

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
