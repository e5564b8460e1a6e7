//! Failures every HTTP provider meets the same way: the connection failed or stalled, the
//! server asked us to wait (`Retry-After`), or its answer must be quoted in a message.

use std::error::Error as _;
use std::time::Duration;

use reqwest::header::HeaderMap;

use super::Target;
use crate::error::LlmError;

/// The longest wait a server can ask for; longer asks (or nonsense like `1e300`) are read
/// as this, and the retry rules then decide whether waiting is worth it.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// The wait a rate-limited answer asks for: `retry-after-ms`, else `retry-after` in seconds
/// or as an HTTP date. Any value a server sends gives a wait of at most a day, never a panic.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| -> Option<&str> { Some(headers.get(name)?.to_str().ok()?.trim()) };
    let seconds = |value: f64| -> Option<Duration> {
        (value.is_finite() && value >= 0.0)
            .then(|| Duration::from_secs_f64(value.min(MAX_RETRY_AFTER.as_secs_f64())))
    };
    text("retry-after-ms")
        .and_then(|ms| seconds(ms.parse::<f64>().ok()? / 1000.0))
        .or_else(|| {
            let value = text("retry-after")?;
            match value.parse::<f64>() {
                Ok(secs) => seconds(secs),
                Err(_) => until_date(value),
            }
        })
}

/// The wait until an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`); zero when it has passed.
fn until_date(value: &str) -> Option<Duration> {
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = at.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or_default().min(MAX_RETRY_AFTER))
}

/// What a failed answer says, and where from: `<message> (HTTP <status> from <url>)`.
pub(crate) fn status_message(status: u16, server_message: &str, target: Target<'_>) -> String {
    format!("{server_message} (HTTP {status} from {})", target.url)
}

/// Classifies a non-success answer by its status alone: the rules every wire format shares,
/// for the statuses its own rules (context overflow, quotas ...) left over.
pub(crate) fn classify_by_status(
    status: u16,
    retry_after: Option<Duration>,
    server_message: &str,
    target: Target<'_>,
) -> LlmError {
    let message = status_message(status, server_message, target);
    match status {
        401 | 403 => LlmError::Auth(message),
        429 => LlmError::RateLimited {
            retry_after,
            message,
        },
        404 => LlmError::Fatal(format!(
            "model `{}` or endpoint {} not found (HTTP 404): {server_message}",
            target.model, target.url
        )),
        // 529 is Anthropic's "overloaded": busy, not broken.
        408 | 500..=599 => LlmError::Transient(message),
        402 => LlmError::Fatal(message),
        400..=499 => LlmError::BadRequest(message),
        _ => LlmError::Fatal(format!("unexpected answer: {message}")),
    }
}

/// Classifies a failure to reach the server or to read its answer: all transient (the
/// server may be starting, or the connection was reset), except a request we could not build.
pub(crate) fn transport_error(error: reqwest::Error, url: &str) -> LlmError {
    // The URL is named once, by us.
    let error = error.without_url();
    let detail = error_chain(&error);
    if error.is_builder() {
        LlmError::Fatal(format!("cannot build a request for {url}: {detail}"))
    } else if error.is_redirect() {
        LlmError::Fatal(format!("{url}: {detail}"))
    } else if error.is_connect() {
        LlmError::Transient(format!("cannot connect to {url}: {detail}"))
    } else if error.is_timeout() {
        LlmError::Transient(format!("timed out talking to {url}: {detail}"))
    } else {
        LlmError::Transient(format!("the connection to {url} failed: {detail}"))
    }
}

/// The error for an answer that sent nothing for `idle_timeout`.
pub(crate) fn idle_error(url: &str, idle_timeout: Duration) -> LlmError {
    LlmError::Transient(format!(
        "{url} sent nothing for {idle_timeout:?} (idle timeout)"
    ))
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

/// A body that is not the error JSON a format expects, fit to quote in a message.
pub(crate) fn quote_body(body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        "(empty response body)".into()
    } else {
        truncate(body, 500)
    }
}

/// `body` with whatever looks like a credential replaced by `[redacted]`: keys
/// (`sk-…`, `sk-ant-…`), `Bearer`/`Basic` tokens and the values of fields named like keys,
/// tokens, secrets or passwords. A proxy or a misconfigured server may echo the request's
/// headers into an error answer, and error answers are shown and logged.
pub(crate) fn redact(body: &str) -> String {
    static PATTERNS: std::sync::OnceLock<Vec<(regex::Regex, &'static str)>> =
        std::sync::OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        [
            (r"\b(sk-(?:ant-|proj-)?)[A-Za-z0-9_\-]{4,}", "${1}[redacted]"),
            (r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=\-]{6,}", "${1}${2}[redacted]"),
            (
                r#"(?i)("?\b(?:api[_-]?key|x-api-key|authorization|access[_-]?token|refresh[_-]?token|secret|password|token)"?\s*[:=]\s*"?)[^"\s,;}&)]{4,}"#,
                "${1}[redacted]",
            ),
        ]
        .into_iter()
        .filter_map(|(p, with)| regex::Regex::new(p).ok().map(|re| (re, with)))
        .collect()
    });
    let mut out = body.to_string();
    for (re, with) in patterns {
        out = re.replace_all(&out, *with).into_owned();
    }
    out
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

    #[test]
    fn credentials_in_an_error_body_are_redacted() {
        let body = r#"{"error": "bad key sk-proj-abcDEF123456 for Authorization: Bearer eyJhbGciOi.payload.sig", "api_key": "k-123456789", "x-api-key": sk-ant-api03-XYZ987654321}"#;
        let shown = super::redact(body);
        for secret in ["abcDEF123456", "eyJhbGciOi", "k-123456789", "XYZ987654321"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.contains("sk-proj-[redacted]"), "{shown}");
        assert_eq!(
            super::redact("model not found: gpt-9"),
            "model not found: gpt-9"
        );
    }

    use super::*;

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
    fn any_retry_after_gives_a_bounded_wait_and_never_panics() {
        let wait = |name: &str, value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
            retry_after(&headers)
        };
        for huge in ["99999999999999999999999", "1e300", "1.7976931348623157e308"] {
            assert_eq!(wait("retry-after", huge), Some(MAX_RETRY_AFTER), "{huge}");
            assert_eq!(
                wait("retry-after-ms", huge),
                Some(MAX_RETRY_AFTER),
                "{huge}"
            );
        }
        for nonsense in ["-1", "NaN", "inf", "-inf", "soon", ""] {
            assert_eq!(wait("retry-after", nonsense), None, "{nonsense}");
        }
        assert_eq!(
            wait("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        let later = (chrono::Utc::now() + chrono::Duration::seconds(120)).to_rfc2822();
        let waited = wait("retry-after", &later).unwrap();
        assert!(
            waited > Duration::from_secs(100) && waited <= Duration::from_secs(120),
            "{waited:?}"
        );
        assert_eq!(
            wait("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT"),
            Some(MAX_RETRY_AFTER)
        );
    }

    #[test]
    fn bodies_are_quoted_trimmed_and_truncated() {
        assert_eq!(quote_body("  Bad gateway \n"), "Bad gateway");
        assert_eq!(quote_body(""), "(empty response body)");
        assert_eq!(truncate("abcdef", 3), "abc…");
        assert_eq!(truncate("abc", 3), "abc");
    }
}
