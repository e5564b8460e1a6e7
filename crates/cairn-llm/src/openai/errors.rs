//! Turning HTTP statuses, error bodies and transport failures into [`LlmError`]s.
//!
//! OpenAI-compatible servers disagree on the error shape: `{"error": {"message", "type",
//! "code"}}` (OpenAI), `{"error": "text"}` (Ollama), `{"message", "type", "code": 400}`
//! (vLLM), `{"error": {"code": 429, "message"}}` (OpenRouter) or plain text. All are read.

use std::error::Error as _;
use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::error::LlmError;

/// Phrases by which servers say the prompt does not fit the context window.
const OVERFLOW_HINTS: &[&str] = &[
    "context_length_exceeded",
    "context length",
    "context window",
    "exceed_context_size",
    "too many tokens",
    "prompt is too long",
];

/// What a server said about an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerError {
    pub message: String,
    code: Option<String>,
    kind: Option<String>,
    /// An HTTP status given inside the body (`"code": 429`).
    status: Option<u16>,
}

impl ServerError {
    /// Reads an error response body, JSON or not.
    pub fn from_body(body: &str) -> Self {
        match serde_json::from_str::<Value>(body) {
            Ok(value) if value.is_object() => Self::from_value(&value),
            _ if body.trim().is_empty() => Self::plain("(empty response body)".into()),
            _ => Self::plain(truncate(body.trim(), 500)),
        }
    }

    /// Reads an error object, or a body holding one under `error`.
    pub fn from_value(value: &Value) -> Self {
        let error = value.get("error").unwrap_or(value);
        if let Some(text) = error.as_str() {
            return Self::plain(text.to_string());
        }
        let text = |key: &str| error.get(key).and_then(Value::as_str).map(str::to_string);
        let message = text("message")
            .or_else(|| text("detail"))
            .unwrap_or_else(|| truncate(&error.to_string(), 500));
        let status = error
            .get("code")
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok());
        Self {
            message,
            code: text("code"),
            kind: text("type"),
            status,
        }
    }

    fn plain(message: String) -> Self {
        Self {
            message,
            code: None,
            kind: None,
            status: None,
        }
    }

    fn mentions(&self, hints: &[&str]) -> bool {
        [Some(&self.message), self.code.as_ref(), self.kind.as_ref()]
            .into_iter()
            .flatten()
            .map(|s| s.to_lowercase())
            .any(|s| hints.iter().any(|hint| s.contains(hint)))
    }

    fn is_overflow(&self) -> bool {
        self.mentions(OVERFLOW_HINTS)
    }
}

/// Where a failed request went, for error messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'a> {
    pub url: &'a str,
    pub model: &'a str,
}

/// Classifies a non-success HTTP answer.
pub(crate) fn classify_status(
    status: u16,
    retry_after: Option<Duration>,
    error: &ServerError,
    target: Target<'_>,
) -> LlmError {
    let message = format!("{} (HTTP {status} from {})", error.message, target.url);
    match status {
        401 | 403 => LlmError::Auth(message),
        429 if error.mentions(&["insufficient_quota"]) => LlmError::Fatal(message),
        429 => LlmError::RateLimited {
            retry_after,
            message,
        },
        400 | 413 | 422 if error.is_overflow() => LlmError::ContextOverflow(message),
        404 => LlmError::Fatal(format!(
            "model `{}` or endpoint {} not found (HTTP 404): {}",
            target.model, target.url, error.message
        )),
        408 | 500..=599 => LlmError::Transient(message),
        402 => LlmError::Fatal(message),
        400..=499 => LlmError::BadRequest(message),
        _ => LlmError::Fatal(format!("unexpected answer: {message}")),
    }
}

/// Classifies an `{"error": ...}` object sent inside an otherwise successful stream.
pub(crate) fn classify_stream_error(value: &Value, target: Target<'_>) -> LlmError {
    let error = ServerError::from_value(value);
    if let Some(status) = error.status.filter(|s| (400..=599).contains(s)) {
        return classify_status(status, None, &error, target);
    }
    let message = format!(
        "{} (error sent mid-stream by {})",
        error.message, target.url
    );
    if error.is_overflow() {
        LlmError::ContextOverflow(message)
    } else if error.mentions(&["rate_limit", "rate limit"]) {
        LlmError::RateLimited {
            retry_after: None,
            message,
        }
    } else if error.mentions(&["invalid_api_key", "authentication", "permission"]) {
        LlmError::Auth(message)
    } else if error.mentions(&["invalid_request"]) {
        LlmError::BadRequest(message)
    } else {
        LlmError::Transient(message)
    }
}

/// The wait a rate-limited answer asks for: `retry-after-ms`, else `retry-after` in seconds.
/// (The HTTP-date form of `retry-after` is not understood and gives `None`.)
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| -> Option<f64> {
        let value = headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()?;
        (value.is_finite() && value >= 0.0).then_some(value)
    };
    number("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| number("retry-after").map(Duration::from_secs_f64))
}

/// Classifies a failure to reach the server or to read its answer: all transient (the
/// server may be starting, or the connection was reset), except a request we could not build.
pub(crate) fn transport_error(error: reqwest::Error, url: &str) -> LlmError {
    // The URL is named once, by us.
    let error = error.without_url();
    let detail = error_chain(&error);
    if error.is_builder() {
        LlmError::Fatal(format!("cannot build a request for {url}: {detail}"))
    } else if error.is_connect() {
        LlmError::Transient(format!("cannot connect to {url}: {detail}"))
    } else if error.is_timeout() {
        LlmError::Transient(format!("timed out talking to {url}: {detail}"))
    } else {
        LlmError::Transient(format!("the connection to {url} failed: {detail}"))
    }
}

/// An error and its sources, joined with `: `.
fn error_chain(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// At most `max` characters of `text`, with an ellipsis when cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    const TARGET: Target<'static> = Target {
        url: "http://h/v1/chat/completions",
        model: "m",
    };

    fn classify(status: u16, body: &str) -> LlmError {
        classify_status(status, None, &ServerError::from_body(body), TARGET)
    }

    #[test]
    fn statuses_map_to_kinds() {
        let body = r#"{"error": {"message": "nope", "type": "x"}}"#;
        let msg = "nope (HTTP {} from http://h/v1/chat/completions)";
        let at = |s: u16| msg.replace("{}", &s.to_string());
        assert_eq!(classify(401, body), LlmError::Auth(at(401)));
        assert_eq!(classify(403, body), LlmError::Auth(at(403)));
        assert_eq!(classify(400, body), LlmError::BadRequest(at(400)));
        assert_eq!(classify(503, body), LlmError::Transient(at(503)));
        assert_eq!(classify(408, body), LlmError::Transient(at(408)));
        assert_eq!(
            classify(404, r#"{"error": "model \"m\" not found"}"#),
            LlmError::Fatal(
                "model `m` or endpoint http://h/v1/chat/completions not found (HTTP 404): \
                 model \"m\" not found"
                    .into()
            )
        );
    }

    #[test]
    fn context_overflow_is_recognised_in_several_dialects() {
        let bodies = [
            r#"{"error": {"message": "too long", "code": "context_length_exceeded"}}"#,
            r#"{"error": {"message": "This model's maximum context length is 8192 tokens"}}"#,
            r#"{"message": "prompt is too long: 9000 tokens", "type": "BadRequestError", "code": 400}"#,
            r#"{"error": {"type": "exceed_context_size_error", "message": "request too big"}}"#,
            "Too many tokens in the request",
        ];
        for body in bodies {
            assert!(
                matches!(classify(400, body), LlmError::ContextOverflow(_)),
                "{body}"
            );
        }
        assert!(matches!(
            classify(413, bodies[1]),
            LlmError::ContextOverflow(_)
        ));
    }

    #[test]
    fn stream_errors_use_an_embedded_status_or_their_words() {
        let limited =
            classify_stream_error(&json!({"error": {"code": 429, "message": "slow"}}), TARGET);
        assert!(
            matches!(limited, LlmError::RateLimited { .. }),
            "{limited:?}"
        );
        let server = classify_stream_error(
            &json!({"error": {"message": "oops", "type": "server_error"}}),
            TARGET,
        );
        assert_eq!(
            server,
            LlmError::Transient(
                "oops (error sent mid-stream by http://h/v1/chat/completions)".into()
            )
        );
    }

    #[test]
    fn retry_after_reads_seconds_and_milliseconds() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
    }

    #[test]
    fn plain_and_empty_bodies_are_quoted() {
        assert_eq!(
            ServerError::from_body("  Bad gateway \n").message,
            "Bad gateway"
        );
        assert_eq!(ServerError::from_body("").message, "(empty response body)");
        assert_eq!(truncate("abcdef", 3), "abc…");
    }
}
