//! Turning HTTP statuses, error bodies and transport failures into [`LlmError`]s.
//!
//! OpenAI-compatible servers disagree on the error shape: `{"error": {"message", "type",
//! "code"}}` (OpenAI), `{"error": "text"}` (Ollama), `{"message", "type", "code": 400}`
//! (vLLM), `{"error": {"code": 429, "message"}}` (OpenRouter) or plain text. All are read.

use std::time::Duration;

use serde_json::Value;

use crate::error::LlmError;
use crate::http::{classify_by_status, quote_body, status_message, truncate, Target};

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
            _ => Self::plain(quote_body(body)),
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

/// Classifies a non-success HTTP answer.
pub(crate) fn classify_status(
    status: u16,
    retry_after: Option<Duration>,
    error: &ServerError,
    target: Target<'_>,
) -> LlmError {
    let message = || status_message(status, &error.message, target);
    match status {
        429 if error.mentions(&["insufficient_quota"]) => LlmError::Fatal(message()),
        400 | 413 | 422 if error.is_overflow() => LlmError::ContextOverflow(message()),
        _ => classify_by_status(status, retry_after, &error.message, target),
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
    fn plain_and_empty_bodies_are_quoted() {
        assert_eq!(
            ServerError::from_body("  Bad gateway \n").message,
            "Bad gateway"
        );
        assert_eq!(ServerError::from_body("").message, "(empty response body)");
    }
}
