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

use cairn_llm::{ChatRequest, LlmError, LocalConfig, LocalProvider, Provider, StreamEvent};
use cairn_models::default_model_path;
use cairn_protocol::{
    AssistantMessage, ContentBlock, Message, StopReason, ToolCall, ToolResultMessage, ToolSpec,
    Usage,
};
use futures::StreamExt;
use serde_json::json;
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

/// The prompt is counted by the model's own vocabulary: the count it reports as the
/// answer's input tokens, and more for a longer message.
#[tokio::test]
async fn its_tokens_are_counted_with_its_own_vocabulary() {
    let question = ask("What is the capital of France?", Some(1));
    let counted = shared().count_tokens(&question).await.unwrap();
    assert_eq!(counted.by, "the model's own vocabulary");
    let events = run(shared(), question).await.unwrap();
    let (usage, _) = ending(&events);
    assert_eq!(counted.tokens, usage.input_tokens);
    let longer = ask(&"What is the capital of France? ".repeat(10), Some(1));
    assert!(shared().count_tokens(&longer).await.unwrap().tokens > counted.tokens + 50);
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
    let next = tokio::time::timeout(Duration::from_secs(2), stream.next())
        .await
        .expect("the stream answers at once after a cancel");
    assert_eq!(next, Some(Err(LlmError::Aborted)));
    assert_eq!(stream.next().await, None, "nothing after the abort");
    // The engine lets go at its next token, so the test process may exit under no thread
    // still inside llama.cpp.
    assert!(
        cairn_llm::local::settle(Duration::from_secs(5)),
        "the engine let go of the cancelled answer"
    );
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

/// A Hermes-style template (Hermes 2 Pro's manner: results in `tool` turns) that SmolLM2's
/// own ChatML template lacks.
const HERMES_TOOL_ROLE: &str = include_str!("templates/hermes_tool_role.jinja");

/// The default model with a tool-capable chat template instead of its own.
fn with_tools() -> LocalProvider {
    load(LocalConfig {
        chat_template: Some(HERMES_TOOL_ROLE.into()),
        ..config()
    })
}

fn get_weather() -> ToolSpec {
    ToolSpec {
        name: "get_weather".into(),
        description: "Get the current weather in a city".into(),
        parameters: json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city"}},
            "required": ["city"]
        }),
    }
}

fn calls(events: &[StreamEvent]) -> Vec<ToolCall> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .collect()
}

fn weather_call(id: &str, city: &str) -> Message {
    Message::Assistant(AssistantMessage {
        content: vec![ContentBlock::ToolCall(ToolCall {
            id: id.into(),
            name: "get_weather".into(),
            arguments: json!({ "city": city }),
        })],
        stop_reason: StopReason::ToolUse,
        usage: None,
        model: None,
    })
}

fn weather(id: &str, report: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        call_id: id.into(),
        tool_name: "get_weather".into(),
        content: report.into(),
        is_error: false,
        pictures: Vec::new(),
    })
}

fn said(text: &str) -> Message {
    Message::Assistant(AssistantMessage {
        content: vec![ContentBlock::Text { text: text.into() }],
        stop_reason: StopReason::EndTurn,
        usage: None,
        model: None,
    })
}

/// Two questions answered with a call each, then `question`: greedy decoding makes the
/// 135M model follow the examples with a call of its own.
fn two_examples_then(question: &str) -> Vec<Message> {
    vec![
        Message::user("What is the weather in London?"),
        weather_call("c1", "London"),
        weather("c1", "Rain, 12 C"),
        said("It is raining in London, 12 C."),
        Message::user("What is the weather in Berlin?"),
        weather_call("c2", "Berlin"),
        weather("c2", "Sun, 20 C"),
        said("It is sunny in Berlin, 20 C."),
        Message::user(question),
    ]
}

#[tokio::test]
async fn the_bundled_template_offers_no_tools() {
    assert!(!shared().info().supports_tools);
    // Tools in a request are left out of the prompt, and the answer is plain text.
    let request = ChatRequest {
        tools: vec![get_weather()].into(),
        ..ask("What is the capital of France?", None)
    };
    let events = run(shared(), request).await.unwrap();
    assert!(calls(&events).is_empty(), "{events:?}");
    assert!(text(&events).contains("Paris"), "{events:?}");
    assert_eq!(ending(&events).1, StopReason::EndTurn);
}

#[tokio::test]
async fn a_tool_template_calls_a_tool_after_two_examples() {
    let provider = with_tools();
    let info = provider.info();
    assert!(info.supports_tools, "{info:?}");
    let request = ChatRequest {
        messages: two_examples_then("What is the weather in Paris?").into(),
        tools: vec![get_weather()].into(),
        max_tokens: Some(60),
        ..ChatRequest::default()
    };
    let events = run(&provider, request).await.unwrap();
    let made = calls(&events);
    assert_eq!(made.len(), 1, "{events:?}");
    assert_eq!(
        (made[0].name.as_str(), &made[0].arguments),
        ("get_weather", &json!({"city": "Paris"}))
    );
    assert!(made[0].id.starts_with("call_"), "{:?}", made[0]);
    assert_eq!(text(&events), "", "the call is not shown as text");
    assert_eq!(ending(&events).1, StopReason::ToolUse);
}

#[tokio::test]
async fn a_call_cut_by_the_token_limit_is_an_error_quoting_it() {
    let provider = with_tools();
    let request = ChatRequest {
        messages: two_examples_then("What is the weather in Paris?").into(),
        tools: vec![get_weather()].into(),
        max_tokens: Some(12),
        ..ChatRequest::default()
    };
    let err = run(&provider, request).await.unwrap_err();
    let LlmError::Fatal(message) = &err else {
        panic!("{err:?}")
    };
    assert!(
        message.contains("tool call Cairn cannot read") && message.contains("token limit"),
        "{message}"
    );
    assert!(message.contains("`{\"name\": \"get_"), "{message}");
}

#[tokio::test]
async fn a_tool_template_streams_text_answers_as_before() {
    let provider = with_tools();
    let request = ChatRequest {
        tools: vec![get_weather()].into(),
        ..ask("What is the weather in Paris?", Some(24))
    };
    let events = run(&provider, request).await.unwrap();
    let deltas = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
        .count();
    assert!(deltas >= 3, "a streamed answer: {events:?}");
    assert!(calls(&events).is_empty(), "{events:?}");
    assert!(text(&events).contains("Paris"), "{events:?}");
    assert_eq!(ending(&events).1, StopReason::MaxTokens);
}

#[test]
fn a_template_override_that_does_not_compile_is_a_clear_error() {
    let err = LocalProvider::load(LocalConfig {
        chat_template: Some("{% for m in messages %}{{ m.content }}".into()),
        ..config()
    })
    .unwrap_err();
    assert!(
        matches!(&err, LlmError::Fatal(m) if m.contains("the chat template override does not compile")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_template_override_without_tools_offers_none() {
    let chatml = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n\
                  {% endfor %}<|im_start|>assistant\n";
    let provider = load(LocalConfig {
        chat_template: Some(chatml.into()),
        ..config()
    });
    assert!(!provider.info().supports_tools);
    let events = run(&provider, ask("What is the capital of France?", Some(32)))
        .await
        .unwrap();
    assert!(text(&events).contains("Paris"), "{events:?}");
}

#[tokio::test]
async fn loading_a_model_reports_its_progress_to_the_end() {
    let mut progress = cairn_llm::local::load_progress();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let watcher = {
        let seen = seen.clone();
        tokio::spawn(async move {
            while progress.changed().await.is_ok() {
                let now = *progress.borrow_and_update();
                seen.lock().unwrap().push(now);
            }
        })
    };
    let provider = tokio::task::spawn_blocking(|| load(config()))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    watcher.abort();
    drop(provider);
    let seen = seen.lock().unwrap().clone();
    // Some figure on the way, and nothing loading once it is loaded.
    assert!(seen.iter().any(|p| p.is_some()), "{seen:?}");
    assert_eq!(seen.last(), Some(&None), "{seen:?}");
    assert!(
        seen.iter().flatten().all(|p| (0.0..=1.0).contains(p)),
        "{seen:?}"
    );
}
