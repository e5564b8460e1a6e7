//! Answers that never end, token limits by model, and the embeddings endpoint.

use super::*;
use pretty_assertions::assert_eq;

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
