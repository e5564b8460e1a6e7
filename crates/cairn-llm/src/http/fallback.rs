//! A request parameter a server may not take (a reasoning effort, a thinking budget): the
//! call is sent with it, and when the server refuses the parameter before any answer, the
//! user is told (a notice, not an error) and the call goes again without it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures::{stream, StreamExt};

use crate::error::LlmError;
use crate::provider::{EventStream, StreamEvent};

/// Whether a server took an optional parameter: unknown until it refuses one.
#[derive(Debug, Default, Clone)]
pub(crate) struct Refusals(Arc<AtomicBool>);

impl Refusals {
    /// The server refused the parameter once: it is not sent again.
    pub fn refused(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn remember(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Streams `first`; when its first item is an error `names_it` recognises as the server
/// refusing the parameter, remembers that in `refusals`, yields `notice`, then streams
/// what `without` starts.
pub(crate) fn or_without(
    first: EventStream,
    names_it: fn(&LlmError) -> bool,
    refusals: Refusals,
    notice: String,
    without: impl FnOnce() -> Result<EventStream, LlmError> + Send + 'static,
) -> EventStream {
    let chosen = async move {
        let mut first = first;
        let head = first.next().await;
        let out: EventStream = match head {
            Some(Err(error)) if names_it(&error) => {
                refusals.remember();
                tracing::info!("{notice} ({error})");
                let rest = without().unwrap_or_else(|e| Box::pin(stream::iter([Err(e)])));
                Box::pin(stream::iter([Ok(StreamEvent::Notice(notice))]).chain(rest))
            }
            Some(item) => Box::pin(stream::iter([item]).chain(first)),
            None => Box::pin(stream::empty()),
        };
        out
    };
    Box::pin(stream::once(chosen).flatten())
}

/// Whether `error` is a refused request whose message names one of `words`.
pub(crate) fn refuses(error: &LlmError, words: &[&str]) -> bool {
    match error {
        LlmError::BadRequest(message) | LlmError::Fatal(message) => {
            let message = message.to_ascii_lowercase();
            words.iter().any(|w| message.contains(w))
        }
        _ => false,
    }
}
