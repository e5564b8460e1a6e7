//! A loopback HTTP/1.1 server that plays back canned responses, one per connection.
//!
//! It is written on a bare `TcpListener` rather than an HTTP framework so that tests can make
//! it misbehave on purpose: drop a stream half way, stall, split events across chunks.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

use crate::request::{read_request, RecordedRequest};
use crate::response::{encode_chunk, Body, MockResponse, StreamEnd};

/// A server on `127.0.0.1:<random port>`. Each connection serves one request with the next
/// canned [`MockResponse`] (then `connection: close`); once they run out it answers 500.
/// Dropping the server stops it and every connection it holds.
pub struct MockServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    accept_loop: JoinHandle<()>,
}

/// Makes the response to a request from the request itself.
type Responder = Arc<dyn Fn(&RecordedRequest) -> MockResponse + Send + Sync>;

#[derive(Clone)]
struct Shared {
    responses: Arc<Mutex<VecDeque<MockResponse>>>,
    responder: Option<Responder>,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
}

impl MockServer {
    /// Binds a loopback port and starts answering with `responses`, in order.
    ///
    /// # Panics
    /// When no loopback port can be bound (a broken test machine).
    pub async fn start(responses: Vec<MockResponse>) -> MockServer {
        Self::serve(responses, None).await
    }

    /// Like [`MockServer::start`], but every response is made by `respond` from the
    /// request (for clients whose requests arrive in no fixed order).
    pub async fn respond_with(
        respond: impl Fn(&RecordedRequest) -> MockResponse + Send + Sync + 'static,
    ) -> MockServer {
        Self::serve(Vec::new(), Some(Arc::new(respond))).await
    }

    #[allow(clippy::expect_used)] // test support: failing loudly is the right answer
    async fn serve(responses: Vec<MockResponse>, responder: Option<Responder>) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port for MockServer");
        let addr = listener
            .local_addr()
            .expect("read the MockServer's local address");
        let shared = Shared {
            responses: Arc::new(Mutex::new(responses.into())),
            responder,
            requests: Arc::new(Mutex::new(Vec::new())),
        };
        let requests = shared.requests.clone();
        let accept_loop = tokio::spawn(accept_loop(listener, shared));
        MockServer {
            addr,
            requests,
            accept_loop,
        }
    }

    /// The base URL, e.g. `http://127.0.0.1:41234` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The socket address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        // Dropping the accept loop drops its JoinSet, which aborts every connection task.
        self.accept_loop.abort();
    }
}

async fn accept_loop(listener: TcpListener, shared: Shared) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((socket, _)) = accepted {
                    connections.spawn(serve(socket, shared.clone()));
                }
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn serve(mut socket: TcpStream, shared: Shared) {
    // Errors here mean the client went away: nothing useful to report to the test.
    let _ = serve_one(&mut socket, &shared).await;
}

async fn serve_one(socket: &mut TcpStream, shared: &Shared) -> io::Result<()> {
    socket.set_nodelay(true)?;
    let request = read_request(socket).await?;
    let response = shared.next_response(request);
    socket.write_all(&response.head()).await?;
    match response.body {
        Body::Full(bytes) => {
            socket.write_all(&bytes).await?;
            socket.flush().await?;
            socket.shutdown().await
        }
        Body::Chunked { chunks, end } => {
            write_chunks(socket, &chunks, response.chunk_delay).await?;
            finish(socket, end).await
        }
    }
}

impl Shared {
    /// Records the request and takes the response for it.
    fn next_response(&self, request: RecordedRequest) -> MockResponse {
        let mut requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(respond) = &self.responder {
            let response = respond(&request);
            requests.push(request);
            return response;
        }
        let queued = self
            .responses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        let response = queued.unwrap_or_else(|| {
            MockResponse::exhausted(requests.len() + 1, &request.method, &request.path)
        });
        requests.push(request);
        response
    }
}

async fn write_chunks(
    socket: &mut TcpStream,
    chunks: &[Vec<u8>],
    delay: Option<std::time::Duration>,
) -> io::Result<()> {
    for chunk in chunks.iter().filter(|c| !c.is_empty()) {
        if let Some(delay) = delay {
            tokio::time::sleep(delay).await;
        }
        socket.write_all(&encode_chunk(chunk)).await?;
        socket.flush().await?;
    }
    Ok(())
}

async fn finish(socket: &mut TcpStream, end: StreamEnd) -> io::Result<()> {
    match end {
        StreamEnd::Finish => {
            socket.write_all(b"0\r\n\r\n").await?;
            socket.flush().await?;
            socket.shutdown().await
        }
        // Returning drops (closes) the socket with the body unfinished.
        StreamEnd::Drop => Ok(()),
        StreamEnd::Stall => {
            // Wait, silent, until the client closes its side (or the server is dropped).
            let mut sink = [0u8; 1024];
            while socket.read(&mut sink).await? > 0 {}
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    async fn raw_exchange(server: &MockServer, request: &str) -> String {
        let mut socket = TcpStream::connect(server.addr()).await.unwrap();
        socket.write_all(request.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        socket.read_to_end(&mut out).await.unwrap();
        String::from_utf8(out).unwrap()
    }

    #[tokio::test]
    async fn serves_responses_in_order_then_500() {
        let server = MockServer::start(vec![
            MockResponse::json(200, serde_json::json!({"ok": true})),
            MockResponse::sse(vec!["a".into(), "[DONE]".into()]),
        ])
        .await;
        let post = "POST /x HTTP/1.1\r\ncontent-length: 2\r\n\r\nhi";
        let first = raw_exchange(&server, post).await;
        assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{first}");
        assert!(first.ends_with("\r\n\r\n{\"ok\":true}"), "{first}");

        let second = raw_exchange(&server, "GET /y HTTP/1.1\r\n\r\n").await;
        assert!(
            second.contains("transfer-encoding: chunked\r\n"),
            "{second}"
        );
        assert!(
            second.ends_with("\r\n\r\n9\r\ndata: a\n\n\r\ne\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"),
            "{second:?}"
        );

        let third = raw_exchange(&server, "GET /z HTTP/1.1\r\n\r\n").await;
        assert!(third.starts_with("HTTP/1.1 500"), "{third}");
        assert!(
            third.contains("no canned response left for request #3 (GET /z)"),
            "{third}"
        );

        let seen: Vec<_> = server
            .requests()
            .into_iter()
            .map(|r| (r.path, r.body))
            .collect();
        assert_eq!(
            seen,
            vec![
                ("/x".into(), "hi".into()),
                ("/y".into(), "".into()),
                ("/z".into(), "".into())
            ]
        );
    }

    #[tokio::test]
    async fn a_dropped_stream_ends_without_the_last_chunk() {
        let server = MockServer::start(vec![MockResponse::sse_then_drop(vec!["a".into()])]).await;
        let response = raw_exchange(&server, "GET / HTTP/1.1\r\n\r\n").await;
        assert!(response.ends_with("9\r\ndata: a\n\n\r\n"), "{response:?}");
    }

    #[tokio::test]
    async fn a_stalled_stream_stays_open() {
        let server = MockServer::start(vec![MockResponse::sse_then_stall(vec!["a".into()])]).await;
        let mut socket = TcpStream::connect(server.addr()).await.unwrap();
        socket.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        let mut out = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(1), socket.read_to_end(&mut out));
        assert!(read.await.is_err(), "the stalled stream should not end");
        assert!(String::from_utf8_lossy(&out).ends_with("9\r\ndata: a\n\n\r\n"));
    }
}
