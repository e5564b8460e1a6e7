//! Provider errors, classified by what the caller should do about them.

use std::time::Duration;

use cairn_protocol::{ErrorInfo, ErrorKind};

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum LlmError {
    #[error("the request does not fit the model's context window: {0}")]
    ContextOverflow(String),
    #[error("rate limited by the provider: {message}")]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    #[error("the provider refused the credentials: {0}")]
    Auth(String),
    #[error("the provider rejected the request: {0}")]
    BadRequest(String),
    #[error("temporary provider failure: {0}")]
    Transient(String),
    /// The stream broke after output was already emitted: retrying would repeat it.
    #[error("the stream broke after output had started: {0}")]
    Interrupted(String),
    #[error("{0}")]
    Fatal(String),
    #[error("cancelled")]
    Aborted,
}

impl LlmError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            LlmError::ContextOverflow(_) => ErrorKind::ContextOverflow,
            LlmError::RateLimited { .. } => ErrorKind::RateLimited,
            LlmError::Auth(_) => ErrorKind::Auth,
            LlmError::BadRequest(_) => ErrorKind::BadRequest,
            LlmError::Transient(_) | LlmError::Interrupted(_) => ErrorKind::Transient,
            LlmError::Fatal(_) => ErrorKind::Fatal,
            LlmError::Aborted => ErrorKind::Aborted,
        }
    }

    /// Whether sending the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::RateLimited { .. } | LlmError::Transient(_) => true,
            LlmError::ContextOverflow(_)
            | LlmError::Auth(_)
            | LlmError::BadRequest(_)
            | LlmError::Interrupted(_)
            | LlmError::Fatal(_)
            | LlmError::Aborted => false,
        }
    }

    pub fn to_info(&self) -> ErrorInfo {
        ErrorInfo::new(self.kind(), self.to_string())
    }
}
