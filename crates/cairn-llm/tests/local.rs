#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The local provider on the real default model (SmolLM2-135M-Instruct Q4_1).
//!
//! The model comes from `CAIRN_MODEL_PATH` or the default path that `scripts/fetch-model.sh`
//! fills (`make test` runs it first). A missing model fails these tests: they never skip.
//!
//! Each provider decodes on one thread: test runners run tests side by side, and llama.cpp's
//! threads spin-wait on each other, which turns an oversubscribed CPU into seconds per token.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use cairn_llm::local::default_model_path;
use cairn_llm::{ChatRequest, LlmError, LocalConfig, LocalProvider, Provider, StreamEvent};
use cairn_protocol::{AssistantMessage, ContentBlock, Message, StopReason, Usage};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

fn model_path() -> PathBuf {
    let path = std::env::var_os("CAIRN_MODEL_PATH")
        .map(PathBuf::from)
        .or_else(default_model_path)
        .expect("neither CAIRN_MODEL_PATH nor HOME is set");
    assert!(
        path.is_file(),
        "the local model {} is missing: run scripts/fetch-model.sh (or set CAIRN_MODEL_PATH)",
        path.display()
    );
    path
}

/// The test settings: the default model, one thread.
fn config() -> LocalConfig {
    LocalConfig {
        threads: Some(1),
        ..LocalConfig::new(model_path())
    }
}

/// One model loaded for the tests that do not care what others did to its cache.
fn shared() -> &'static LocalProvider {
    static PROVIDER: OnceLock<LocalProvider> = OnceLock::new();
    PROVIDER.get_or_init(|| load(config()))
}

fn load(config: LocalConfig) -> LocalProvider {
    LocalProvider::load(config).expect("the local model loads")
}

fn ask(question: &str, max_tokens: Option<u32>) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(question)].into(),
        max_tokens,
        ..ChatRequest::default()
    }
}

/// Runs a request to its end: every event, or the error it ended with.
async fn run(provider: &LocalProvider, request: ChatRequest) -> Result<Vec<StreamEvent>, LlmError> {
    let mut stream = provider.stream(request, CancellationToken::new()).await?;
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        events.push(item?);
    }
    Ok(events)
}

fn text(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// The usage and stop reason that close an answer.
fn ending(events: &[StreamEvent]) -> (Usage, StopReason) {
    match events {
        [.., StreamEvent::Usage(usage), StreamEvent::Finish(stop)] => (*usage, *stop),
        _ => panic!("the answer does not end with Usage + Finish: {events:?}"),
    }
}

#[tokio::test]
async fn answers_the_capital_of_france_greedily() {
    let events = run(shared(), ask("What is the capital of France?", None))
        .await
        .unwrap();
    let deltas = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
        .count();
    assert!(deltas >= 3, "expected a streamed answer, got {events:?}");
    assert!(
        text(&events).contains("Paris"),
        "answer: {:?}",
        text(&events)
    );
    let (usage, stop) = ending(&events);
    assert_eq!(stop, StopReason::EndTurn);
    assert!(
        usage.input_tokens > 5 && usage.output_tokens > 0,
        "{usage:?}"
    );
}

#[tokio::test]
async fn reports_what_it_runs() {
    let info = shared().info();
    assert_eq!(info.kind, "local");
    assert_eq!(info.model, "SmolLM2-135M-Instruct.Q4_1");
    assert!(!info.supports_tools);
    assert_eq!(info.context_window, Some(8192));
    assert_eq!(shared().context_window(), 8192);
}

#[tokio::test]
async fn stops_at_max_tokens() {
    let request = ask("Write a long story about a lighthouse keeper.", Some(5));
    let events = run(shared(), request).await.unwrap();
    let (usage, stop) = ending(&events);
    assert_eq!(stop, StopReason::MaxTokens);
    assert_eq!(usage.output_tokens, 5);
}

#[tokio::test]
async fn samples_with_a_temperature() {
    let request = ChatRequest {
        temperature: Some(0.8),
        ..ask("Name a colour.", Some(8))
    };
    let events = run(shared(), request).await.unwrap();
    let (usage, _) = ending(&events);
    assert!(
        usage.output_tokens >= 1 && usage.output_tokens <= 8,
        "{usage:?}"
    );
}

#[tokio::test]
async fn cancelling_ends_the_stream_promptly() {
    let cancel = CancellationToken::new();
    let request = ask("Write a long story about a dragon and a knight.", Some(400));
    let mut stream = shared().stream(request, cancel.clone()).await.unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert!(matches!(first, StreamEvent::TextDelta(_)), "{first:?}");
    cancel.cancel();
    let next = tokio::time::timeout(Duration::from_millis(500), stream.next())
        .await
        .expect("the stream answers at once after a cancel");
    assert_eq!(next, Some(Err(LlmError::Aborted)));
    assert_eq!(stream.next().await, None, "nothing after the abort");
}

#[tokio::test]
async fn reuses_the_cached_prefix_of_a_conversation() {
    let provider = load(config());
    let mut request = ask("What is the capital of France?", Some(16));
    request.system = Some("You are a helpful assistant.".into());
    let first = run(&provider, request.clone()).await.unwrap();
    let (first_usage, _) = ending(&first);
    assert_eq!(first_usage.cache_read_tokens, 0);

    Arc::make_mut(&mut request.messages).push(Message::Assistant(AssistantMessage {
        content: vec![ContentBlock::Text { text: text(&first) }],
        stop_reason: StopReason::EndTurn,
        usage: None,
        model: None,
    }));
    Arc::make_mut(&mut request.messages).push(Message::user("And of Italy?"));
    let second = run(&provider, request).await.unwrap();
    let (usage, _) = ending(&second);
    assert!(
        usage.cache_read_tokens >= first_usage.input_tokens,
        "the first prompt is reused: {usage:?} after {first_usage:?}"
    );
    assert!(usage.input_tokens > first_usage.input_tokens);
}

/// A model with a small window (256 tokens), where a long conversation does not fit.
fn small() -> LocalProvider {
    load(LocalConfig {
        context_window: Some(256),
        ..config()
    })
}

#[tokio::test]
async fn drops_the_oldest_messages_when_the_prompt_is_too_long() {
    let provider = small();
    assert_eq!(provider.context_window(), 256);
    let filler = "The weather report for today mentions rain, wind and clouds. ".repeat(4);
    let mut messages: Vec<Message> = (0..12)
        .map(|i| Message::user(format!("{i}. {filler}")))
        .collect();
    messages.push(Message::user("What is the capital of France?"));
    let request = ChatRequest {
        system: Some("You are a helpful assistant.".into()),
        messages: messages.into(),
        max_tokens: Some(32),
        ..ChatRequest::default()
    };
    let events = run(&provider, request).await.unwrap();
    let (usage, _) = ending(&events);
    assert!(
        usage.input_tokens <= 256 - 32 && usage.input_tokens > 100,
        "the prompt fits beside the answer: {usage:?}"
    );
    assert!(
        text(&events).contains("Paris"),
        "answer: {:?}",
        text(&events)
    );
}

#[tokio::test]
async fn a_prompt_that_cannot_fit_is_a_context_overflow() {
    let provider = small();
    let request = ChatRequest {
        system: Some("Always answer politely and with care. ".repeat(40)),
        ..ask("Hello?", Some(64))
    };
    let err = run(&provider, request).await.unwrap_err();
    assert!(matches!(err, LlmError::ContextOverflow(_)), "{err:?}");
    // The provider still works afterwards.
    let events = run(&provider, ask("What is the capital of France?", Some(32)))
        .await
        .unwrap();
    assert!(text(&events).contains("Paris"));
}

#[test]
fn a_file_that_is_not_gguf_is_a_clear_fatal_error() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.gguf");
    std::fs::write(&notes, "# my notes\nnot a model\n").unwrap();
    let err = LocalProvider::load(LocalConfig::new(&notes)).unwrap_err();
    let LlmError::Fatal(message) = &err else {
        panic!("{err:?}")
    };
    assert!(message.contains("not a GGUF model file"), "{message}");
    assert!(message.contains("scripts/fetch-model.sh") && message.contains("CAIRN_MODEL_PATH"));

    let missing = LocalProvider::load(LocalConfig::new(dir.path().join("none.gguf"))).unwrap_err();
    assert!(
        matches!(&missing, LlmError::Fatal(m) if m.contains("no local model at")),
        "{missing:?}"
    );

    // The magic alone is not a model: llama.cpp refuses it, and the error says so.
    let fake = dir.path().join("fake.gguf");
    std::fs::write(&fake, b"GGUF\x03\x00\x00\x00garbage").unwrap();
    let broken = LocalProvider::load(LocalConfig::new(&fake)).unwrap_err();
    assert!(
        matches!(&broken, LlmError::Fatal(m) if m.contains("could not load")),
        "{broken:?}"
    );
}
