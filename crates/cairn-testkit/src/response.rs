//! Canned HTTP responses for [`MockServer`](crate::MockServer), including ones that
//! misbehave on purpose (dropped or stalled streams).

use std::time::Duration;

/// How a response body is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body {
    /// The whole body at once, with a `content-length` header.
    Full(Vec<u8>),
    /// `transfer-encoding: chunked`, one HTTP chunk per item, flushed one by one.
    Chunked {
        chunks: Vec<Vec<u8>>,
        end: StreamEnd,
    },
}

/// What happens after the last chunk of a chunked body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamEnd {
    /// Send the terminating zero-length chunk and close.
    Finish,
    /// Close the socket without finishing the body.
    Drop,
    /// Keep the connection open without writing anything more, until the client leaves.
    Stall,
}

/// One canned answer. Build it with [`MockResponse::sse`], [`MockResponse::json`],
/// [`MockResponse::status`] and friends, then adjust it with the `with_*` methods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockResponse {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Body,
    pub(crate) chunk_delay: Option<Duration>,
}

const EVENT_STREAM: &str = "text/event-stream";

impl MockResponse {
    /// A 200 `text/event-stream` answer sending one `data: <event>\n\n` chunk per item,
    /// flushed separately, then finishing the body. Add `"[DONE]"` yourself if wanted.
    pub fn sse(events: Vec<String>) -> Self {
        Self::stream(sse_chunks(events), StreamEnd::Finish)
    }

    /// A 200 `text/event-stream` answer sending each item as raw bytes in its own chunk
    /// (for malformed lines, comments, events split across chunks ...).
    pub fn sse_raw(chunks: Vec<String>) -> Self {
        Self::stream(
            chunks.into_iter().map(String::into_bytes).collect(),
            StreamEnd::Finish,
        )
    }

    /// Like [`MockResponse::sse_raw`] with byte chunks, which may split a UTF-8 character.
    pub fn sse_bytes(chunks: Vec<Vec<u8>>) -> Self {
        Self::stream(chunks, StreamEnd::Finish)
    }

    /// Like [`MockResponse::sse`], but closes the socket after the events without
    /// finishing the chunked body, as a crashed server or a reset connection would.
    pub fn sse_then_drop(events: Vec<String>) -> Self {
        Self::stream(sse_chunks(events), StreamEnd::Drop)
    }

    /// Like [`MockResponse::sse`], but then keeps the connection open without sending
    /// anything more (for idle-timeout tests). The server lets go when the client does.
    pub fn sse_then_stall(events: Vec<String>) -> Self {
        Self::stream(sse_chunks(events), StreamEnd::Stall)
    }

    /// An `application/json` answer with this status.
    pub fn json(status: u16, value: serde_json::Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: Body::Full(value.to_string().into_bytes()),
            chunk_delay: None,
        }
    }

    /// A `200` answer with these bytes and content type (a file download).
    pub fn bytes(content_type: &str, body: Vec<u8>) -> Self {
        Self {
            headers: vec![("content-type".into(), content_type.into())],
            body: Body::Full(body),
            ..Self::status(200, "")
        }
    }

    /// A `text/plain` answer with this status and body (add headers with
    /// [`MockResponse::with_header`], e.g. `retry-after`).
    pub fn status(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "text/plain; charset=utf-8".into())],
            body: Body::Full(body.into().into_bytes()),
            chunk_delay: None,
        }
    }

    /// Adds a header, replacing any header of the same name (case-insensitive).
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let name = name.into();
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
        self.headers.push((name, value.into()));
        self
    }

    /// Waits this long before each chunk of a streamed body.
    pub fn with_chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = Some(delay);
        self
    }

    fn stream(chunks: Vec<Vec<u8>>, end: StreamEnd) -> Self {
        Self {
            status: 200,
            headers: vec![
                ("content-type".into(), EVENT_STREAM.into()),
                ("cache-control".into(), "no-cache".into()),
            ],
            body: Body::Chunked { chunks, end },
            chunk_delay: None,
        }
    }

    /// The answer given when the queue of canned responses is exhausted.
    pub(crate) fn exhausted(request_no: usize, method: &str, path: &str) -> Self {
        Self::status(
            500,
            format!(
                "cairn-testkit MockServer: no canned response left for request #{request_no} \
                 ({method} {path})"
            ),
        )
    }

    /// The status line and headers, ending with the blank line.
    pub(crate) fn head(&self) -> Vec<u8> {
        let mut head = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        match &self.body {
            Body::Full(bytes) => head.push_str(&format!("content-length: {}\r\n", bytes.len())),
            Body::Chunked { .. } => head.push_str("transfer-encoding: chunked\r\n"),
        }
        head.push_str("connection: close\r\n\r\n");
        head.into_bytes()
    }
}

fn sse_chunks(events: Vec<String>) -> Vec<Vec<u8>> {
    events
        .into_iter()
        .map(|e| format!("data: {e}\n\n").into_bytes())
        .collect()
}

/// One HTTP/1.1 chunk: hex length, CRLF, data, CRLF.
pub(crate) fn encode_chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Mock",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_has_status_headers_and_framing() {
        let head = MockResponse::status(429, "slow down")
            .with_header("Retry-After", "3")
            .head();
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "HTTP/1.1 429 Too Many Requests\r\ncontent-type: text/plain; charset=utf-8\r\n\
             Retry-After: 3\r\ncontent-length: 9\r\nconnection: close\r\n\r\n"
        );
    }

    #[test]
    fn sse_wraps_each_event_in_a_data_line() {
        let response = MockResponse::sse(vec!["{}".into(), "[DONE]".into()]);
        let expected = Body::Chunked {
            chunks: vec![b"data: {}\n\n".to_vec(), b"data: [DONE]\n\n".to_vec()],
            end: StreamEnd::Finish,
        };
        assert_eq!(response.body, expected);
    }

    #[test]
    fn chunks_are_hex_length_prefixed() {
        assert_eq!(
            encode_chunk(&[b'x'; 26]),
            [&b"1a\r\n"[..], &[b'x'; 26], b"\r\n"].concat()
        );
    }
}
