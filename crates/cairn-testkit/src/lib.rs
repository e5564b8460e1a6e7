//! Test support for Cairn.
//!
//! [`MockServer`] is a loopback HTTP/1.1 server that speaks the model providers' wire formats
//! (SSE streams, JSON answers, error statuses) and can misbehave on purpose: drop a stream
//! half way, stall it, or split events across chunks. Providers are tested against it, never
//! by mocking the HTTP client.

mod request;
mod response;
mod server;

pub use request::RecordedRequest;
pub use response::MockResponse;
pub use server::MockServer;
