//! One search over HTTP: the request sent with a time limit, a busy service (HTTP 429 or
//! 503) asked again after the wait it names in `Retry-After` (seconds or an HTTP date) a
//! few times at most, the answer read up to a size, and every failure told in the
//! service's own words with the API key taken out.

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::backends::Backend;
use super::snippet;
use crate::handlers::web_fetch::chain;
use crate::{ToolCtx, ToolError};

/// How long and how often a search may try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Limits {
    /// One request, from connecting to the last byte of the answer.
    pub timeout: Duration,
    /// Requests in all, the first included, while the service is busy.
    pub tries: u32,
    /// The longest wait between two of them; a service asking for more is not asked again.
    pub max_wait: Duration,
    /// The most of an answer read.
    pub max_body: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(20),
            tries: 3,
            max_wait: Duration::from_secs(10),
            max_body: 2 << 20,
        }
    }
}

/// The most of an error answer read, and shown.
const MAX_ERROR_BODY: usize = 64 << 10;
const SHOWN_ERROR_CHARS: usize = 300;

/// The service a search goes to, as failures name it.
pub(super) struct Service<'a> {
    pub backend: Backend,
    pub key: Option<&'a str>,
    pub limits: &'a Limits,
}

impl Service<'_> {
    /// A failure told to the model, the key never in it.
    fn fail(&self, message: String) -> ToolError {
        ToolError::Failed(redact(&message, self.key))
    }

    /// Sends what `make` builds until the service answers other than busy, and returns its
    /// answer as JSON.
    pub async fn fetch_json(
        &self,
        make: impl Fn() -> reqwest::RequestBuilder,
        ctx: &ToolCtx,
    ) -> Result<Value, ToolError> {
        let label = self.backend.label();
        let mut attempt = 1;
        loop {
            let sent = make().timeout(self.limits.timeout).send();
            let response = cancellable(sent, &ctx.cancel)
                .await?
                .map_err(|e| self.fail(self.unsent(&e)))?;
            let status = response.status();
            if status.is_success() {
                return self.read_json(response, &ctx.cancel).await;
            }
            let asked = retry_after(response.headers(), chrono::Utc::now());
            let said = error_text(response, &ctx.cancel).await?;
            if !matches!(status.as_u16(), 429 | 503) {
                return Err(self.fail(refusal(self.backend, status, &said)));
            }
            if attempt >= self.limits.tries {
                return Err(self.fail(format!(
                    "{label} is busy: it answered HTTP {status} {attempt} times ({said}); try \
                     again later"
                )));
            }
            let wait = asked.unwrap_or(Duration::from_secs(u64::from(attempt)));
            if wait > self.limits.max_wait {
                return Err(self.fail(format!(
                    "{label} is busy (HTTP {status}: {said}) and asks to wait {} s, longer \
                     than the {} s web_search waits; try again later",
                    wait.as_secs_f64().ceil(),
                    self.limits.max_wait.as_secs()
                )));
            }
            ctx.update(format!(
                "{label} is busy (HTTP {}); asking again in {:.1} s",
                status.as_u16(),
                wait.as_secs_f64()
            ));
            cancellable(tokio::time::sleep(wait), &ctx.cancel).await?;
            attempt += 1;
        }
    }

    /// Why a request got no answer.
    fn unsent(&self, error: &reqwest::Error) -> String {
        let label = self.backend.label();
        if error.is_timeout() {
            return format!(
                "{label} did not answer within {} s",
                self.limits.timeout.as_secs_f64()
            );
        }
        if error.is_redirect() {
            return format!("{label}: {}", chain(error));
        }
        format!("{label} could not be reached: {}", chain(error))
    }

    /// Why an answer was not read to its end.
    fn unfinished(&self, error: &reqwest::Error) -> String {
        let label = self.backend.label();
        if error.is_timeout() {
            return format!(
                "{label} did not finish its answer within {} s",
                self.limits.timeout.as_secs_f64()
            );
        }
        format!("{label}'s answer broke off: {}", chain(error))
    }

    async fn read_json(
        &self,
        response: reqwest::Response,
        cancel: &CancellationToken,
    ) -> Result<Value, ToolError> {
        let label = self.backend.label();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("no stated type")
            .to_string();
        let (body, cut) = cancellable(read_capped(response, self.limits.max_body), cancel)
            .await?
            .map_err(|e| self.fail(self.unfinished(&e)))?;
        if cut {
            return Err(self.fail(format!(
                "{label}'s answer is larger than {} MiB; it was not read",
                self.limits.max_body >> 20
            )));
        }
        serde_json::from_slice(&body).map_err(|_| {
            self.fail(format!(
                "{label} answered with something that is not JSON ({content_type}): \"{}\"",
                snippet::clean(&String::from_utf8_lossy(&body), SHOWN_ERROR_CHARS)
            ))
        })
    }
}

/// What a refusal other than "busy" says, with what it likely means.
fn refusal(backend: Backend, status: reqwest::StatusCode, said: &str) -> String {
    let label = backend.label();
    let hint = match status.as_u16() {
        401 | 403 if backend.needs_key() => "; check the API key",
        403 => {
            "; SearXNG answers in JSON only when `json` is among `search.formats` in its \
                settings.yml"
        }
        _ => "",
    };
    format!("{label} refused the search: {said} (HTTP {status}{hint})")
}

/// An operation that an abort ends at once.
async fn cancellable<T>(
    work: impl std::future::Future<Output = T>,
    cancel: &CancellationToken,
) -> Result<T, ToolError> {
    tokio::select! {
        done = work => Ok(done),
        () = cancel.cancelled() => Err(ToolError::Aborted),
    }
}

/// At most `cap` bytes of the body, and whether there was more.
async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = cap.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// What an error answer says: its JSON's message where services put one, else its text.
async fn error_text(
    response: reqwest::Response,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let body = match cancellable(read_capped(response, MAX_ERROR_BODY), cancel).await? {
        Ok((body, _)) => body,
        Err(_) => return Ok("no readable answer".into()),
    };
    let text = String::from_utf8_lossy(&body);
    let said = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|json| message_in(&json))
        .unwrap_or_else(|| snippet::clean(&text, SHOWN_ERROR_CHARS));
    Ok(match said.is_empty() {
        true => "no message".into(),
        false => said,
    })
}

/// The message in an error answer: Brave's `error.detail`, Tavily's `detail.error`, Exa's
/// `error`, and the other usual places.
fn message_in(json: &Value) -> Option<String> {
    const PLACES: [&str; 7] = [
        "/error/detail",
        "/error/message",
        "/detail/error",
        "/detail",
        "/error",
        "/message",
        "/msg",
    ];
    PLACES
        .iter()
        .filter_map(|place| json.pointer(place)?.as_str())
        .map(|text| snippet::clean(text, SHOWN_ERROR_CHARS))
        .find(|text| !text.is_empty())
}

/// `text` with every occurrence of `key` replaced.
pub(super) fn redact(text: &str, key: Option<&str>) -> String {
    match key.map(str::trim).filter(|k| !k.is_empty()) {
        Some(key) => text.replace(key, "[redacted]"),
        None => text.to_string(),
    }
}

/// The wait a busy answer asks for in `Retry-After`: seconds, or an HTTP date (none when it
/// has passed). Nonsense is no answer.
pub(super) fn retry_after(
    headers: &HeaderMap,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Duration> {
    let value = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0)
            .then(|| Duration::from_secs_f64(seconds.min(86_400.0)));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    Some(
        (at.with_timezone(&chrono::Utc) - now)
            .to_std()
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(reqwest::header::RETRY_AFTER, value.parse().unwrap());
        headers
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = chrono::DateTime::parse_from_rfc2822("Wed, 21 Oct 2015 07:28:00 GMT")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let wait = |value: &str| retry_after(&headers(value), now);
        assert_eq!(wait("3"), Some(Duration::from_secs(3)));
        assert_eq!(wait("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(
            wait("Wed, 21 Oct 2015 07:28:07 GMT"),
            Some(Duration::from_secs(7))
        );
        assert_eq!(wait("Wed, 21 Oct 2015 07:27:00 GMT"), Some(Duration::ZERO));
        assert_eq!(wait("-1"), None);
        assert_eq!(wait("soon"), None);
        assert_eq!(wait("1e300"), Some(Duration::from_secs(86_400)));
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn services_messages_are_found_where_each_puts_them() {
        let brave = serde_json::json!({"type": "ErrorResponse", "error": {"code":
            "SUBSCRIPTION_TOKEN_INVALID", "detail": "The provided subscription token is invalid.",
            "status": 422}});
        let tavily =
            serde_json::json!({"detail": {"error": "Unauthorized: missing or invalid API key."}});
        let exa = serde_json::json!({"requestId": "r1", "error": "Invalid API key"});
        assert_eq!(
            message_in(&brave).unwrap(),
            "The provided subscription token is invalid."
        );
        assert_eq!(
            message_in(&tavily).unwrap(),
            "Unauthorized: missing or invalid API key."
        );
        assert_eq!(message_in(&exa).unwrap(), "Invalid API key");
        assert_eq!(message_in(&serde_json::json!({"ok": true})), None);
        assert_eq!(
            redact("bad key sk-123 (sk-123)", Some("sk-123")),
            "bad key [redacted] ([redacted])"
        );
    }
}
