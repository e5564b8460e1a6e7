//! The HTTP plumbing the remote providers share: checking the base URL, building the client,
//! sending with an idle timeout, reading bodies, and streamed calls with retries (each attempt
//! decoding an SSE answer, or a whole JSON answer from a server that does not stream).
//!
//! What differs between wire formats — how an error answer reads, how stream events decode —
//! comes from their [`WireFormat`].
//!
//! - [`sse`]: the server-sent-events driver and the [`SseDecoder`] each format implements.
//! - [`errors`]: transport failures, `Retry-After`, quoting bodies, and the status rules every
//!   format shares.

mod errors;
mod fallback;
mod sse;

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

pub(crate) use self::errors::{
    classify_by_status, quote_body, redact, retry_after, status_message, truncate,
};
use self::errors::{idle_error, transport_error};
pub(crate) use self::fallback::{or_without, refuses, Refusals};
pub(crate) use self::sse::{append_arguments, decode_sse, final_stop, parse_arguments, SseDecoder};
use crate::error::LlmError;
use crate::provider::{EventStream, StreamEvent};
use crate::retry::{retry_stream, RetryPolicy};

/// Where a request went, for error messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'a> {
    pub url: &'a str,
    pub model: &'a str,
}

/// A non-success HTTP answer, for the wire format to classify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ErrorAnswer {
    pub status: u16,
    /// The wait the server asked for (`retry-after-ms` or `retry-after`).
    pub retry_after: Option<Duration>,
    pub body: String,
}

/// What one wire format does differently in a call.
pub(crate) trait WireFormat: Send + Sync + 'static {
    /// Decodes the format's streamed answers.
    type Decoder: SseDecoder;

    /// Classifies a non-success answer from `target`.
    fn classify(answer: ErrorAnswer, target: Target<'_>) -> LlmError;

    /// A decoder for a streamed answer from `target`.
    fn decoder(target: Target<'_>) -> Self::Decoder;

    /// The events of a whole JSON answer: the fallback for servers that answer
    /// `application/json` although a stream was asked for.
    fn whole_answer(body: &str, target: Target<'_>) -> Result<Vec<StreamEvent>, LlmError>;
}

/// Everything one attempt at a call needs; shared by the attempts of a call.
#[derive(Debug)]
pub(crate) struct Call {
    client: reqwest::Client,
    url: String,
    model: String,
    /// The serialized JSON request body.
    body: Vec<u8>,
    /// How long the answer may take to start, to send more, and in all.
    waits: Waits,
}

/// How long a call may wait: for the answer's head or any further bytes of it (`idle`), and
/// for the whole answer (`total`, from when the call was made).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waits {
    idle: Duration,
    total: Duration,
    deadline: tokio::time::Instant,
}

impl Waits {
    pub fn new(idle: Duration, total: Duration) -> Self {
        Self {
            idle,
            total,
            deadline: tokio::time::Instant::now() + total,
        }
    }

    /// Waits for `future` as long as the next thing may take; the error says which limit
    /// was reached.
    async fn on<F: std::future::Future>(
        &self,
        url: &str,
        future: F,
    ) -> Result<F::Output, LlmError> {
        let left = self
            .deadline
            .saturating_duration_since(tokio::time::Instant::now());
        match tokio::time::timeout(self.idle.min(left), future).await {
            Ok(output) => Ok(output),
            Err(_) if left <= self.idle => Err(LlmError::Transient(format!(
                "{url} took longer than {} s in all to answer (the provider's call_timeout_s)",
                self.total.as_secs_f64()
            ))),
            Err(_) => Err(idle_error(url, self.idle)),
        }
    }
}

impl Call {
    /// A call posting `body`, encoded as JSON, to `url` for `model`.
    pub fn new(
        client: &reqwest::Client,
        url: String,
        model: &str,
        body: &impl Serialize,
        waits: Waits,
    ) -> Result<Self, LlmError> {
        let body = serde_json::to_vec(body)
            .map_err(|e| LlmError::Fatal(format!("cannot encode the request: {e}")))?;
        Ok(Self {
            client: client.clone(),
            url,
            model: model.to_string(),
            body,
            waits,
        })
    }

    fn target(&self) -> Target<'_> {
        Target {
            url: &self.url,
            model: &self.model,
        }
    }
}

/// Makes a streamed call: one [`attempt`] after another, until one gets through or `policy`
/// gives up ([`retry_stream`]). Nothing is sent before the stream is first polled.
pub(crate) fn stream<W: WireFormat>(
    call: Call,
    policy: RetryPolicy,
    cancel: CancellationToken,
) -> EventStream {
    let call = Arc::new(call);
    retry_stream(policy, cancel, move || attempt::<W>(call.clone()))
}

/// One attempt: posts the body and returns the events of the answer, or the classified error.
/// Dropping its stream closes the connection.
async fn attempt<W: WireFormat>(call: Arc<Call>) -> Result<EventStream, LlmError> {
    let request = call
        .client
        .post(&call.url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "text/event-stream")
        .body(call.body.clone());
    let response = send::<W>(request, call.target(), call.waits).await?;
    if let Some(kind) = web_page(&response) {
        let body = read_body(response, &call.url, call.waits, MAX_ERROR_BODY_BYTES).await?;
        return Err(LlmError::Fatal(format!(
            "{} answered with a web page ({kind}) instead of a model answer; is the address \
             right, or is a proxy or sign-in page in the way? It began: {}",
            call.url,
            truncate(&redact(&body), 200)
        )));
    }
    if is_json(&response) {
        let body = read_body(response, &call.url, call.waits, MAX_BODY_BYTES).await?;
        let events = W::whole_answer(&body, call.target())?;
        return Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed());
    }
    let bytes = idle_bytes(response.bytes_stream(), &call.url, call.waits);
    Ok(decode_sse(bytes, &call.url, W::decoder(call.target())))
}

/// Sends a request; a non-success status becomes the error `W` classifies it as.
async fn send<W: WireFormat>(
    request: reqwest::RequestBuilder,
    target: Target<'_>,
    waits: Waits,
) -> Result<reqwest::Response, LlmError> {
    tracing::debug!(url = target.url, "sending model request");
    let response = waits
        .on(target.url, request.send())
        .await?
        .map_err(|e| transport_error(e, target.url))?;
    if response.status().is_success() {
        return Ok(response);
    }
    let status = response.status().as_u16();
    let retry_after = retry_after(response.headers());
    let body = read_body(response, target.url, waits, MAX_ERROR_BODY_BYTES)
        .await
        .map(|body| redact(&body))
        .unwrap_or_else(|e| format!("(could not read the error body: {e})"));
    Err(W::classify(
        ErrorAnswer {
            status,
            retry_after,
            body,
        },
        target,
    ))
}

/// A whole JSON answer (not streamed) to `request`, as text, at most 16 MiB.
pub(crate) async fn json_answer<W: WireFormat>(
    request: reqwest::RequestBuilder,
    target: Target<'_>,
    waits: Waits,
) -> Result<String, LlmError> {
    let response = send::<W>(request, target, waits).await?;
    read_body(response, target.url, waits, MAX_BODY_BYTES).await
}

/// The ids of the models a server offers, in its order: `request` is a `GET` answered by
/// `{"data": [{"id": ...}, ...]}` (OpenAI and Anthropic alike).
pub(crate) async fn model_ids<W: WireFormat>(
    request: reqwest::RequestBuilder,
    target: Target<'_>,
    waits: Waits,
) -> Result<Vec<String>, LlmError> {
    let body = json_answer::<W>(request, target, waits).await?;
    let list: ModelList = serde_json::from_str(&body).map_err(|e| {
        LlmError::Fatal(format!(
            "{} did not answer a model list ({e}): {}",
            target.url,
            truncate(&body, 200)
        ))
    })?;
    Ok(list.data.into_iter().map(|m| m.id).collect())
}

/// The answer to a model-list request.
#[derive(Debug, Clone, Default, Deserialize)]
struct ModelList {
    #[serde(default)]
    data: Vec<ModelEntry>,
}

#[derive(Debug, Clone, Deserialize)]
struct ModelEntry {
    id: String,
}

/// The largest whole (not streamed) answer or model list read.
const MAX_BODY_BYTES: usize = 16 << 20;
/// The part of an error answer's body that is read (it is only quoted).
const MAX_ERROR_BODY_BYTES: usize = 64 << 10;

/// Reads a whole body as text, failing if it stalls (see [`Waits`]); a body past `max`
/// bytes is an error, except for error bodies, which are cut at `max`.
async fn read_body(
    response: reqwest::Response,
    url: &str,
    waits: Waits,
    max: usize,
) -> Result<String, LlmError> {
    let mut bytes = Vec::new();
    let mut chunks = idle_bytes(response.bytes_stream(), url, waits);
    while let Some(chunk) = chunks.next().await {
        bytes.extend_from_slice(&chunk?);
        if bytes.len() > max {
            if max == MAX_ERROR_BODY_BYTES {
                bytes.truncate(max);
                break;
            }
            return Err(LlmError::Fatal(format!(
                "the answer from {url} passed {} MiB; it was not read further",
                max >> 20
            )));
        }
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The content type of a successful answer that is an HTML page (a sign-in page, a captive
/// portal, a web server at the wrong address) rather than a model's answer. Other types
/// are read as a stream: some servers send none or `text/plain`.
fn web_page(response: &reqwest::Response) -> Option<String> {
    let content_type = response.headers().get(CONTENT_TYPE)?.to_str().ok()?;
    let essence = content_type.split(';').next()?.trim().to_ascii_lowercase();
    matches!(essence.as_str(), "text/html" | "application/xhtml+xml").then_some(essence)
}

fn is_json(response: &reqwest::Response) -> bool {
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    content_type.is_some_and(|ct| ct.trim_start().starts_with("application/json"))
}

/// A body's bytes, ending with an error when none arrive for the idle timeout or the call's
/// total time is up.
fn idle_bytes<S, B>(stream: S, url: &str, waits: Waits) -> BoxStream<'static, Result<B, LlmError>>
where
    S: Stream<Item = reqwest::Result<B>> + Send + 'static,
    B: Send + 'static,
{
    let url = url.to_string();
    let state = (stream.boxed(), false);
    futures::stream::unfold(state, move |(mut stream, failed)| {
        let url = url.clone();
        async move {
            if failed {
                return None;
            }
            let item = match waits.on(&url, stream.next()).await {
                Err(error) => Err(error),
                Ok(None) => return None,
                Ok(Some(Ok(bytes))) => Ok(bytes),
                Ok(Some(Err(e))) => Err(transport_error(e, &url)),
            };
            let failed = item.is_err();
            Some((item, (stream, failed)))
        }
    })
    .boxed()
}

/// The base URL without its trailing slash, once checked.
pub(crate) fn check_base_url(base_url: &str) -> Result<String, LlmError> {
    let invalid = |why: String| LlmError::Fatal(format!("invalid base URL {base_url:?}: {why}"));
    let parsed = reqwest::Url::parse(base_url).map_err(|e| invalid(e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be http or https".into()));
    }
    Ok(base_url.trim_end_matches('/').to_string())
}

/// The HTTP client of a provider: `headers` on every request, then `extra` ones from the
/// configuration, which replace headers of the same name. The headers are checked now; the
/// client is made when the provider first sends.
pub(crate) fn client(
    mut headers: HeaderMap,
    extra: &[(String, String)],
    connect_timeout: Duration,
) -> Result<Client, LlmError> {
    for (name, value) in extra {
        let bad = || LlmError::Fatal(format!("invalid extra header {name:?}"));
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
        headers.insert(name, HeaderValue::from_str(value).map_err(|_| bad())?);
    }
    let make = move || {
        reqwest::Client::builder()
            .default_headers(headers)
            .connect_timeout(connect_timeout)
            .redirect(same_origin_redirects())
            .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot create the HTTP client: {e}"))
    };
    Ok(Client(Arc::new(LazyLock::new(Box::new(make)))))
}

type MakeClient = Box<dyn FnOnce() -> Result<reqwest::Client, String> + Send>;

/// A provider's HTTP client, made when it is first asked for: making one loads the
/// system's certificate authorities (tens of milliseconds and a few MB), which a start
/// that has nothing to send (the window's, a provider named in the settings but not used)
/// need not pay.
#[derive(Clone)]
pub(crate) struct Client(Arc<LazyLock<Result<reqwest::Client, String>, MakeClient>>);

impl Client {
    pub(crate) fn get(&self) -> Result<&reqwest::Client, LlmError> {
        LazyLock::force(&self.0)
            .as_ref()
            .map_err(|e| LlmError::Fatal(e.clone()))
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Client")
    }
}

/// Redirects are followed only within the origin (scheme, host, port) first asked. The key
/// travels in headers an HTTP client does not know to drop on the way to another host
/// (Anthropic's `x-api-key`, extra headers from the settings): following a redirect there
/// would hand it over.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    const MAX_REDIRECTS: usize = 10;
    reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !same_origin {
            let message = format!(
                "the server redirected to {}, another address; set the base URL to it if you trust it",
                attempt.url()
            );
            attempt.error(message)
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}

/// A header value carrying the API key, marked sensitive so it is never logged.
pub(crate) fn secret_header(value: &str) -> Result<HeaderValue, LlmError> {
    let mut value = HeaderValue::from_str(value).map_err(|_| {
        LlmError::Fatal("the API key holds characters not allowed in an HTTP header".into())
    })?;
    value.set_sensitive(true);
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_checked_and_trimmed() {
        assert!(matches!(
            check_base_url("localhost:8080"),
            Err(LlmError::Fatal(_))
        ));
        assert!(matches!(
            check_base_url("ftp://h/v1"),
            Err(LlmError::Fatal(_))
        ));
        assert_eq!(check_base_url("http://h/v1/").unwrap(), "http://h/v1");
    }

    #[test]
    fn bad_headers_are_refused() {
        assert!(secret_header("sk\nx").is_err());
        let extra = [("bad name".to_string(), "v".to_string())];
        assert!(client(HeaderMap::new(), &extra, Duration::from_secs(1)).is_err());
    }
}
