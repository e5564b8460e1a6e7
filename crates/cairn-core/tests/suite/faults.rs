//! Provider faults: the real OpenAI-compatible and Anthropic clients against a loopback
//! server that misbehaves in every way a remote model server does. Each case must end
//! retried-and-succeeded or with a clear error, never a panic or a hang, and the session
//! must stay valid: it reloads from disk and the next prompt works.

use std::sync::Arc;
use std::time::Duration;

use cairn_llm::anthropic::{AnthropicConfig, AnthropicProvider};
use cairn_llm::openai::{OpenAiConfig, OpenAiProvider};
use cairn_llm::Provider;
use cairn_protocol::Outcome;
use cairn_testkit::{MockResponse, MockServer};
use serde_json::{json, Value};

use super::support::{briefs, harness};

/// How a case must end.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// The client retries (or follows) and the answer arrives.
    Succeeds,
    /// The run fails with an error whose message holds every one of these (any case).
    Fails(&'static [&'static str]),
}

/// What is listening at the model's address for the first prompt.
enum Serve {
    /// Nothing: the connection is refused.
    Nothing,
    /// These answers, one per connection.
    Answers(Vec<MockResponse>),
    /// The first connection is redirected to another origin, which answers well.
    RedirectElsewhere,
}

struct Case {
    name: &'static str,
    serve: Serve,
    expect: Expect,
}

/// The two wire formats, each able to say "Hello" and to fail in its own words.
#[derive(Debug, Clone, Copy)]
enum Wire {
    OpenAi,
    Anthropic,
}

impl Wire {
    fn path(self) -> &'static str {
        match self {
            Wire::OpenAi => "/v1/chat/completions",
            Wire::Anthropic => "/v1/messages",
        }
    }

    /// The data lines of a good streamed answer saying "Hello".
    fn hello_events(self) -> Vec<Value> {
        match self {
            Wire::OpenAi => vec![
                openai_chunk(json!({"role": "assistant", "content": ""}), None),
                openai_chunk(json!({"content": "Hel"}), None),
                openai_chunk(json!({"content": "lo"}), None),
                openai_chunk(json!({}), Some("stop")),
            ],
            Wire::Anthropic => vec![
                json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                       "role": "assistant", "content": [], "model": "claude-test",
                       "usage": {"input_tokens": 5, "output_tokens": 1}}}),
                json!({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}}),
                json!({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": "Hel"}}),
                json!({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": "lo"}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                       "usage": {"output_tokens": 2}}),
                json!({"type": "message_stop"}),
            ],
        }
    }

    fn hello(self) -> MockResponse {
        let mut events: Vec<String> = self.hello_events().iter().map(Value::to_string).collect();
        if matches!(self, Wire::OpenAi) {
            events.push("[DONE]".into());
        }
        MockResponse::sse(events)
    }

    /// The first events of the answer (some text), as strings.
    fn opening(self) -> Vec<String> {
        self.hello_events()
            .iter()
            .take(3)
            .map(Value::to_string)
            .collect()
    }

    /// An error answer with this status, in the server's own JSON shape.
    fn error(self, status: u16, kind: &str, message: &str) -> MockResponse {
        let body = match self {
            Wire::OpenAi => json!({"error": {"message": message, "type": kind, "code": null}}),
            Wire::Anthropic => {
                json!({"type": "error", "error": {"type": kind, "message": message}})
            }
        };
        MockResponse::json(status, body)
    }

    fn provider(self, base: &str) -> Arc<dyn Provider> {
        let timing = |idle| (Duration::from_millis(1), idle, Duration::from_secs(20));
        let (retry_base_delay, idle_timeout, call_timeout) = timing(Duration::from_millis(700));
        match self {
            Wire::OpenAi => Arc::new(
                OpenAiProvider::new(OpenAiConfig {
                    base_url: format!("{base}/v1"),
                    api_key: Some("sk-test".into()),
                    retry_base_delay,
                    idle_timeout,
                    call_timeout,
                    ..OpenAiConfig::new("gpt-test")
                })
                .unwrap_or_else(|e| panic!("{e}")),
            ),
            Wire::Anthropic => Arc::new(
                AnthropicProvider::new(AnthropicConfig {
                    base_url: base.to_string(),
                    api_key: Some("sk-ant-test".into()),
                    retry_base_delay,
                    idle_timeout,
                    call_timeout,
                    ..AnthropicConfig::new("claude-test")
                })
                .unwrap_or_else(|e| panic!("{e}")),
            ),
        }
    }
}

fn openai_chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-test",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})
}

/// Every fault, in `wire`'s words.
fn cases(wire: Wire) -> Vec<Case> {
    let ok = || wire.hello();
    let answers = |faults: Vec<MockResponse>| {
        let mut all = faults;
        all.push(ok());
        Serve::Answers(all)
    };
    let rate_limited = || wire.error(429, "rate_limit_error", "Rate limit reached");
    // The opening as raw data lines, then one more raw line.
    let opening_then = |last: &str| {
        let mut lines: Vec<String> = wire
            .opening()
            .into_iter()
            .map(|event| format!("data: {event}\n\n"))
            .collect();
        lines.push(last.to_string());
        MockResponse::sse_raw(lines)
    };
    let huge = format!("data: {{\"pad\": \"{}\"}}\n\n", "x".repeat(17 << 20));
    vec![
        Case {
            name: "429 with Retry-After in seconds",
            serve: answers(vec![rate_limited().with_header("retry-after", "1")]),
            expect: Expect::Succeeds,
        },
        Case {
            name: "429 with Retry-After as an HTTP date",
            serve: answers(vec![
                rate_limited().with_header("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")
            ]),
            expect: Expect::Succeeds,
        },
        Case {
            name: "429 without Retry-After",
            serve: answers(vec![rate_limited(), rate_limited()]),
            expect: Expect::Succeeds,
        },
        Case {
            name: "429 asking for an hour",
            serve: answers(vec![rate_limited().with_header("retry-after", "3600")]),
            expect: Expect::Fails(&["rate limit"]),
        },
        Case {
            name: "500",
            serve: answers(vec![wire.error(500, "api_error", "Internal server error")]),
            expect: Expect::Succeeds,
        },
        Case {
            name: "502 with an HTML page",
            serve: answers(vec![MockResponse::status(502, "<html>Bad gateway</html>")
                .with_header("content-type", "text/html")]),
            expect: Expect::Succeeds,
        },
        Case {
            name: "503",
            serve: answers(vec![MockResponse::status(503, "unavailable")]),
            expect: Expect::Succeeds,
        },
        Case {
            name: "529 overloaded",
            serve: answers(vec![wire.error(529, "overloaded_error", "Overloaded")]),
            expect: Expect::Succeeds,
        },
        Case {
            name: "500 five times over",
            serve: Serve::Answers(
                (0..5)
                    .map(|_| wire.error(500, "api_error", "Internal server error"))
                    .collect(),
            ),
            expect: Expect::Fails(&["500"]),
        },
        Case {
            name: "connection refused",
            serve: Serve::Nothing,
            expect: Expect::Fails(&["127.0.0.1"]),
        },
        Case {
            name: "reset before the first event",
            serve: answers(vec![MockResponse::sse_then_drop(vec![])]),
            expect: Expect::Succeeds,
        },
        Case {
            name: "reset mid-stream",
            serve: Serve::Answers(vec![MockResponse::sse_then_drop(wire.opening()), ok()]),
            expect: Expect::Fails(&[]),
        },
        Case {
            name: "idle stream",
            serve: Serve::Answers(vec![MockResponse::sse_then_stall(wire.opening())]),
            expect: Expect::Fails(&["idle"]),
        },
        Case {
            name: "truncated JSON",
            serve: Serve::Answers(vec![opening_then(
                "data: {\"type\": \"content_block_delta\", \"choices\": [{\"ind",
            )]),
            expect: Expect::Fails(&[]),
        },
        Case {
            name: "a garbage line",
            serve: Serve::Answers(vec![opening_then("data: {\"choices\": [oops\n\n")]),
            expect: Expect::Fails(&[]),
        },
        Case {
            name: "wrong content type",
            serve: Serve::Answers(vec![MockResponse::status(200, "<html>Sign in</html>")
                .with_header("content-type", "text/html")]),
            expect: Expect::Fails(&["text/html"]),
        },
        Case {
            name: "a huge single event",
            serve: Serve::Answers(vec![MockResponse::sse_raw(vec![huge])]),
            expect: Expect::Fails(&["MiB"]),
        },
        Case {
            name: "401",
            serve: Serve::Answers(vec![wire.error(
                401,
                "authentication_error",
                "invalid x-api-key",
            )]),
            expect: Expect::Fails(&["401"]),
        },
        Case {
            name: "a redirect on the same server",
            serve: answers(vec![
                MockResponse::status(307, "").with_header("location", wire.path())
            ]),
            expect: Expect::Succeeds,
        },
        Case {
            name: "a redirect to another server",
            serve: Serve::RedirectElsewhere,
            expect: Expect::Fails(&["redirect"]),
        },
    ]
}

/// Runs one case: the faulty prompt, then a check of the session on disk and a second
/// prompt against a server that answers well. Returns what went wrong, if anything.
async fn run_case(wire: Wire, case: Case) -> Result<(), String> {
    let h = harness(vec![]).build().await;
    // Held until the end of the case, so their ports stay taken.
    let (base, _servers) = match case.serve {
        Serve::Nothing => {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
            let addr = listener.local_addr().map_err(|e| e.to_string())?;
            drop(listener);
            (format!("http://{addr}"), vec![])
        }
        Serve::Answers(answers) => {
            let server = MockServer::start(answers).await;
            (server.url(), vec![server])
        }
        Serve::RedirectElsewhere => {
            let elsewhere = MockServer::start(vec![wire.hello()]).await;
            let target = format!("{}{}", elsewhere.url(), wire.path());
            let server = MockServer::start(vec![
                MockResponse::status(307, "").with_header("location", target)
            ])
            .await;
            (server.url(), vec![server, elsewhere])
        }
    };
    h.agent.set_model("test-model", Some(wire.provider(&base)));
    let report = tokio::time::timeout(Duration::from_secs(60), h.agent.prompt("hi"))
        .await
        .map_err(|_| "the run hung".to_string())?
        .map_err(|e| format!("the harness failed: {e}"))?;
    match (case.expect, &report.outcome) {
        (Expect::Succeeds, Outcome::Completed) => {}
        (Expect::Fails(words), Outcome::Failed { error }) => {
            let message = error.message.to_lowercase();
            if let Some(missing) = words.iter().find(|w| !message.contains(&w.to_lowercase())) {
                return Err(format!(
                    "the error does not say {missing:?}: {}",
                    error.message
                ));
            }
            if error.message.trim().is_empty() {
                return Err("the error is empty".into());
            }
            println!("{wire:?}, {}: {}", case.name, error.message);
        }
        (expect, outcome) => return Err(format!("expected {expect:?}, got {outcome:?}")),
    }
    // The session reloads from disk and goes on with a working server.
    let reloaded = briefs(&h.reloaded_context().await);
    if reloaded.first().map(String::as_str) != Some("user: hi") {
        return Err(format!("the session lost the prompt: {reloaded:?}"));
    }
    let good = MockServer::start(vec![wire.hello()]).await;
    h.agent
        .set_model("test-model", Some(wire.provider(&good.url())));
    let again = tokio::time::timeout(Duration::from_secs(30), h.agent.prompt("again"))
        .await
        .map_err(|_| "the next run hung".to_string())?
        .map_err(|e| format!("the next run failed: {e}"))?;
    if again.outcome != Outcome::Completed {
        return Err(format!("the next run ended {:?}", again.outcome));
    }
    let reloaded = briefs(&h.reloaded_context().await);
    if reloaded.last().map(String::as_str) != Some("assistant: Hello") {
        return Err(format!(
            "the next answer is not in the session: {reloaded:?}"
        ));
    }
    Ok(())
}

async fn every_fault_is_handled(wire: Wire) {
    let cases = cases(wire);
    let total = cases.len();
    let mut failures = Vec::new();
    for case in cases {
        let name = case.name;
        if let Err(problem) = run_case(wire, case).await {
            failures.push(format!("{name}: {problem}"));
        }
    }
    assert!(total >= 12, "at least 12 cases per provider");
    assert!(
        failures.is_empty(),
        "{wire:?}: {} of {total} faults mishandled:\n{}",
        failures.len(),
        failures.join("\n")
    );
    println!("{wire:?}: {total} of {total} faults handled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_compatible_faults_are_retried_or_reported() {
    every_fault_is_handled(Wire::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_faults_are_retried_or_reported() {
    every_fault_is_handled(Wire::Anthropic).await;
}
