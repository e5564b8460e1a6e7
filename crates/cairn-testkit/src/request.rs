//! Reading one HTTP/1.1 request off a socket and keeping what the test wants to check.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

/// A request the [`MockServer`](crate::MockServer) received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `GET`, `POST` ...
    pub method: String,
    /// The request target as sent, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers in the order received, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body as text (lossy UTF-8).
    pub body: String,
}

impl RecordedRequest {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON.
    pub fn body_json(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::from_str(&self.body)
    }
}

/// Refuse heads larger than this: a test client never needs more.
const MAX_HEAD: usize = 64 * 1024;

/// Reads a request head and its `content-length` body.
pub(crate) async fn read_request<R: AsyncRead + Unpin>(
    reader: &mut R,
) -> io::Result<RecordedRequest> {
    let mut buf = Vec::new();
    let head_end = read_head(reader, &mut buf).await?;
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut request = parse_head(&head)?;
    let mut body = buf.split_off(head_end + 4);
    let length = content_length(&request)?;
    if body.len() < length {
        let mut rest = vec![0; length - body.len()];
        reader.read_exact(&mut rest).await?;
        body.extend_from_slice(&rest);
    }
    body.truncate(length);
    request.body = String::from_utf8_lossy(&body).into_owned();
    Ok(request)
}

/// Reads until the blank line ending the head; returns where it starts.
async fn read_head<R: AsyncRead + Unpin>(reader: &mut R, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(pos);
        }
        if buf.len() > MAX_HEAD {
            return Err(invalid("request head larger than 64 KiB"));
        }
        let n = reader.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed mid-head",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn parse_head(head: &str) -> io::Result<RecordedRequest> {
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(path), Some(_version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid(&format!("malformed request line {request_line:?}")));
    };
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| invalid(&format!("malformed header {line:?}")))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    Ok(RecordedRequest {
        method: method.into(),
        path: path.into(),
        headers,
        body: String::new(),
    })
}

fn content_length(request: &RecordedRequest) -> io::Result<usize> {
    if request.header("transfer-encoding").is_some() {
        return Err(invalid(
            "chunked request bodies are not supported by the mock server",
        ));
    }
    match request.header("content-length") {
        None => Ok(0),
        Some(v) => v
            .parse()
            .map_err(|_| invalid(&format!("bad content-length {v:?}"))),
    }
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn parses_head_and_body() {
        let raw =
            b"POST /v1/chat HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\nX-Api: k\r\n\r\n{\"a\":1}";
        let request = read_request(&mut &raw[..]).await.unwrap();
        assert_eq!(
            request,
            RecordedRequest {
                method: "POST".into(),
                path: "/v1/chat".into(),
                headers: vec![
                    ("host".into(), "x".into()),
                    ("content-length".into(), "7".into()),
                    ("x-api".into(), "k".into()),
                ],
                body: "{\"a\":1}".into(),
            }
        );
        assert_eq!(request.header("X-API"), Some("k"));
        assert_eq!(request.body_json().unwrap(), serde_json::json!({"a": 1}));
    }

    #[tokio::test]
    async fn a_truncated_body_is_an_error() {
        let raw = b"POST / HTTP/1.1\r\ncontent-length: 10\r\n\r\nabc";
        assert!(read_request(&mut &raw[..]).await.is_err());
    }

    #[tokio::test]
    async fn a_malformed_request_line_is_an_error() {
        let raw = b"HELLO\r\n\r\n";
        assert!(read_request(&mut &raw[..]).await.is_err());
    }
}
