//! Error information that crosses a boundary as data: `{code, message}`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What kind of failure happened. Front ends branch on this, never on the message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request did not fit the model's context window.
    ContextOverflow,
    /// The provider asked us to slow down.
    RateLimited,
    /// The key is missing, wrong or lacks permission.
    Auth,
    /// The provider refused the request as malformed.
    BadRequest,
    /// A failure that may go away on retry (5xx, reset connection, idle stream).
    Transient,
    /// A failure that will not go away on retry (malformed stream, unknown model ...).
    Fatal,
    /// The run was cancelled.
    Aborted,
    /// The run passed its deadline.
    Timeout,
    /// A structural operation was refused because a run is in progress.
    Busy,
    /// Reading or writing local files failed.
    Io,
    /// The caller asked for something that does not exist or makes no sense.
    Invalid,
}

/// A serializable error: the kind plus a human readable message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub struct ErrorInfo {
    pub code: ErrorKind,
    pub message: String,
}

impl ErrorInfo {
    pub fn new(code: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ErrorInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
