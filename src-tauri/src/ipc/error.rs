//! Errors as the page sees them: `{code, message}`. The page branches on `code`.

use cairn_app::cairn_core::upkeep::ConsolidateError;
use cairn_app::cairn_core::HarnessError;
use cairn_app::cairn_memory::IndexError;
use cairn_app::cairn_memory::PathError;
use cairn_app::launch::LaunchError;
use cairn_app::settings::SettingsError;
use serde::Serialize;
use ts_rs::TS;

/// What went wrong, as a stable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The agent is running: wait or stop it.
    Busy,
    /// The file changed on disk since it was read (`write_file`).
    Conflict,
    NotFound,
    /// Outside the workspace, in `.cairn/`, a link that leads out ...
    InvalidPath,
    /// Bad input (an empty title, malformed settings ...).
    Invalid,
    /// A model provider could not be built or reached.
    Provider,
    Io,
    Internal,
}

/// An error from a command: the page branches on `code`, never on `message`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error, TS)]
#[error("{message}")]
pub struct AppError {
    pub code: ErrorCode,
    pub message: String,
}

pub type AppResult<T> = Result<T, AppError>;

impl AppError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Invalid, message)
    }

    pub fn io(what: impl std::fmt::Display, e: std::io::Error) -> Self {
        let code = match e.kind() {
            std::io::ErrorKind::NotFound => ErrorCode::NotFound,
            _ => ErrorCode::Io,
        };
        Self::new(code, format!("{what}: {e}"))
    }
}

impl From<HarnessError> for AppError {
    fn from(e: HarnessError) -> Self {
        Self::new(harness_code(&e), e.to_string())
    }
}

fn harness_code(e: &HarnessError) -> ErrorCode {
    match e {
        HarnessError::Busy(_) => ErrorCode::Busy,
        HarnessError::SessionNotFound(_)
        | HarnessError::EntryNotFound(_)
        | HarnessError::NoSuchApproval(_) => ErrorCode::NotFound,
        HarnessError::AmbiguousSession { .. }
        | HarnessError::UnknownTools(_)
        | HarnessError::NothingToResume => ErrorCode::Invalid,
        HarnessError::Io { .. } => ErrorCode::Io,
        _ => ErrorCode::Internal,
    }
}

impl From<LaunchError> for AppError {
    fn from(e: LaunchError) -> Self {
        let code = match &e {
            LaunchError::Provider { .. } => ErrorCode::Provider,
            LaunchError::Settings(SettingsError::Io { .. }) => ErrorCode::Io,
            LaunchError::Settings(_) => ErrorCode::Invalid,
            LaunchError::Session(inner) => harness_code(inner),
            LaunchError::Workspace { .. } | LaunchError::NoHome | LaunchError::NoConfigDir => {
                ErrorCode::Io
            }
        };
        Self::new(code, e.to_string())
    }
}

impl From<SettingsError> for AppError {
    fn from(e: SettingsError) -> Self {
        LaunchError::Settings(e).into()
    }
}

impl From<PathError> for AppError {
    fn from(e: PathError) -> Self {
        Self::new(ErrorCode::InvalidPath, e.to_string())
    }
}

impl From<cairn_app::cairn_memory::MemoryError> for AppError {
    fn from(e: cairn_app::cairn_memory::MemoryError) -> Self {
        match e {
            cairn_app::cairn_memory::MemoryError::Path(e) => e.into(),
            e => Self::new(ErrorCode::Io, e.to_string()),
        }
    }
}

impl From<IndexError> for AppError {
    fn from(e: IndexError) -> Self {
        Self::new(ErrorCode::Internal, format!("memory index: {e}"))
    }
}

impl From<ConsolidateError> for AppError {
    fn from(e: ConsolidateError) -> Self {
        let code = match &e {
            ConsolidateError::Model(_) | ConsolidateError::NoModel(_) => ErrorCode::Provider,
            ConsolidateError::Io { .. } => ErrorCode::Io,
            _ => ErrorCode::Internal,
        };
        Self::new(code, e.to_string())
    }
}
