//! Helpers shared by the provider tests.

use cairn_llm::{ChatRequest, EventStream, LlmError, StreamEvent};
use cairn_protocol::Message;
use futures::StreamExt;
use pretty_assertions::assert_eq;

/// A one-message request.
pub fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user("hi")].into(),
        ..Default::default()
    }
}

/// Everything a stream yields: the events, then the error that ended it, if any. Asserts
/// that nothing follows an error.
pub async fn drain(mut stream: EventStream) -> (Vec<StreamEvent>, Option<LlmError>) {
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            // Announcements of a retry are not part of the answer.
            Ok(StreamEvent::Retrying { .. }) => {}
            Ok(event) => events.push(event),
            Err(error) => {
                assert_eq!(
                    stream.next().await,
                    None,
                    "the stream must end after an error"
                );
                return (events, Some(error));
            }
        }
    }
    (events, None)
}
