//! Turning Anthropic's error answers and streamed `error` events into [`LlmError`]s.
//!
//! Errors come as `{"type": "error", "error": {"type": "overloaded_error", "message": ...}}`,
//! with an HTTP status or inside a stream that had already started (HTTP 200). The status
//! decides when there is one; inside a stream the error's `type` does.

use super::wire::{ErrorBody, WireError};
use crate::error::LlmError;
use crate::http::{classify_by_status, quote_body, status_message, ErrorAnswer, Target};

/// Phrases by which the API says the prompt does not fit the context window
/// ("prompt is too long: 210000 tokens > 200000 maximum", "input length and `max_tokens`
/// exceed context limit ...").
const OVERFLOW_HINTS: &[&str] = &[
    "prompt is too long",
    "context limit",
    "context window",
    "context length",
    "too many tokens",
];

impl WireError {
    /// Reads an error answer's body, JSON or not.
    pub fn from_body(body: &str) -> Self {
        match serde_json::from_str::<ErrorBody>(body) {
            Ok(parsed) if !parsed.error.message.is_empty() => parsed.error,
            Ok(parsed) => WireError {
                message: quote_body(body),
                ..parsed.error
            },
            Err(_) => WireError {
                kind: String::new(),
                message: quote_body(body),
            },
        }
    }

    fn is_overflow(&self) -> bool {
        let message = self.message.to_lowercase();
        OVERFLOW_HINTS.iter().any(|hint| message.contains(hint))
    }
}

/// Classifies a non-success HTTP answer.
pub(crate) fn classify_status(answer: ErrorAnswer, target: Target<'_>) -> LlmError {
    let ErrorAnswer {
        status,
        retry_after,
        body,
    } = answer;
    let error = WireError::from_body(&body);
    let message = || status_message(status, &error.message, target);
    match status {
        400 if error.is_overflow() => LlmError::ContextOverflow(message()),
        // `request_too_large`: more bytes than the API takes; only a smaller request helps.
        413 => LlmError::ContextOverflow(message()),
        _ => classify_by_status(status, retry_after, &error.message, target),
    }
}

/// Classifies an error sent instead of (or in the middle of) an answer, by its `type`.
pub(crate) fn classify_error(error: &WireError, url: &str) -> LlmError {
    let message = format!("{} ({} sent by {url})", error.message, error.kind);
    match error.kind.as_str() {
        "rate_limit_error" => LlmError::RateLimited {
            retry_after: None,
            message,
        },
        "authentication_error" | "permission_error" => LlmError::Auth(message),
        "invalid_request_error" | "request_too_large" if error.is_overflow() => {
            LlmError::ContextOverflow(message)
        }
        "invalid_request_error" => LlmError::BadRequest(message),
        "not_found_error" | "billing_error" => LlmError::Fatal(message),
        // `overloaded_error`, `api_error`, `timeout_error`, and types added later.
        _ => LlmError::Transient(message),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use pretty_assertions::assert_eq;

    use super::*;

    const TARGET: Target<'static> = Target {
        url: "http://h/v1/messages",
        model: "claude-test",
    };

    fn body(kind: &str, message: &str) -> String {
        serde_json::json!({"type": "error", "error": {"type": kind, "message": message}})
            .to_string()
    }

    fn classify(status: u16, body: String) -> LlmError {
        let answer = ErrorAnswer {
            status,
            retry_after: None,
            body,
        };
        classify_status(answer, TARGET)
    }

    #[test]
    fn statuses_map_to_kinds() {
        let at = |s: u16| format!("nope (HTTP {s} from http://h/v1/messages)");
        let nope = |kind: &str| body(kind, "nope");
        assert_eq!(
            classify(401, nope("authentication_error")),
            LlmError::Auth(at(401))
        );
        assert_eq!(
            classify(403, nope("permission_error")),
            LlmError::Auth(at(403))
        );
        assert_eq!(
            classify(529, nope("overloaded_error")),
            LlmError::Transient(at(529))
        );
        assert_eq!(
            classify(500, nope("api_error")),
            LlmError::Transient(at(500))
        );
        assert_eq!(
            classify(400, nope("invalid_request_error")),
            LlmError::BadRequest(at(400))
        );
        assert_eq!(
            classify(413, nope("request_too_large")),
            LlmError::ContextOverflow(at(413))
        );
        assert_eq!(
            classify(404, nope("not_found_error")),
            LlmError::Fatal(
                "model `claude-test` or endpoint http://h/v1/messages not found (HTTP 404): nope"
                    .into()
            )
        );
        let limited = ErrorAnswer {
            status: 429,
            retry_after: Some(Duration::from_secs(3)),
            body: nope("rate_limit_error"),
        };
        assert_eq!(
            classify_status(limited, TARGET),
            LlmError::RateLimited {
                retry_after: Some(Duration::from_secs(3)),
                message: at(429)
            }
        );
    }

    #[test]
    fn overflow_is_recognised_in_its_phrasings() {
        for message in [
            "prompt is too long: 210000 tokens > 200000 maximum",
            "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000",
        ] {
            let error = classify(400, body("invalid_request_error", message));
            assert!(matches!(error, LlmError::ContextOverflow(_)), "{error:?}");
        }
    }

    #[test]
    fn stream_errors_are_classified_by_type() {
        let error = |kind: &str| WireError {
            kind: kind.into(),
            message: "m".into(),
        };
        let url = "http://h/v1/messages";
        assert_eq!(
            classify_error(&error("overloaded_error"), url),
            LlmError::Transient("m (overloaded_error sent by http://h/v1/messages)".into())
        );
        let kinds = [
            ("api_error", "Transient"),
            ("rate_limit_error", "RateLimited"),
            ("authentication_error", "Auth"),
            ("permission_error", "Auth"),
            ("invalid_request_error", "BadRequest"),
            ("not_found_error", "Fatal"),
        ];
        for (kind, expected) in kinds {
            let got = format!("{:?}", classify_error(&error(kind), url));
            assert!(got.starts_with(expected), "{kind}: {got}");
        }
        let long = WireError {
            kind: "invalid_request_error".into(),
            message: "prompt is too long: 9 tokens > 8 maximum".into(),
        };
        assert!(matches!(
            classify_error(&long, url),
            LlmError::ContextOverflow(_)
        ));
    }

    #[test]
    fn odd_bodies_are_quoted() {
        assert_eq!(WireError::from_body("Bad gateway").message, "Bad gateway");
        assert_eq!(WireError::from_body("").message, "(empty response body)");
        let empty = WireError::from_body(r#"{"error": {"type": "api_error"}}"#);
        assert_eq!(empty.kind, "api_error");
        assert_eq!(empty.message, r#"{"error": {"type": "api_error"}}"#);
    }
}
