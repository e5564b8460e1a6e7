//! Errors of the harness layer.

use std::path::PathBuf;

use cairn_protocol::{ErrorInfo, ErrorKind};

#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// A structural operation arrived while a run was in progress.
    #[error("busy: a run is in progress ({0}); wait for it to end or abort it")]
    Busy(String),
    #[error("session file {path}: {message}")]
    SessionFormat { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no session matches `{0}`")]
    SessionNotFound(String),
    /// Another Cairn process (the app, a `cairn` command) is writing the session.
    #[error(
        "session {0} is open in another Cairn process (the app or a `cairn` command); \
         finish there first, or start a new session"
    )]
    SessionInUse(String),
    #[error("`{prefix}` matches several sessions: {candidates}")]
    AmbiguousSession { prefix: String, candidates: String },
    #[error("no entry `{0}` in this session")]
    EntryNotFound(String),
    #[error("no pending approval `{0}`")]
    NoSuchApproval(String),
    #[error("no tool named {0}")]
    UnknownTools(String),
    #[error(transparent)]
    Workspace(#[from] cairn_memory::MemoryError),
    #[error("nothing was compacted: {0}")]
    Compaction(String),
    #[error("this session has no interrupted run to go on with")]
    NothingToResume,
}

impl HarnessError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        HarnessError::Io {
            path: path.into(),
            source,
        }
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            HarnessError::Busy(_) | HarnessError::SessionInUse(_) => ErrorKind::Busy,
            HarnessError::Io { .. } | HarnessError::Workspace(_) => ErrorKind::Io,
            HarnessError::SessionFormat { .. }
            | HarnessError::SessionNotFound(_)
            | HarnessError::AmbiguousSession { .. }
            | HarnessError::EntryNotFound(_)
            | HarnessError::NoSuchApproval(_)
            | HarnessError::UnknownTools(_)
            | HarnessError::Compaction(_)
            | HarnessError::NothingToResume => ErrorKind::Invalid,
        }
    }

    pub fn to_info(&self) -> ErrorInfo {
        ErrorInfo::new(self.kind(), self.to_string())
    }
}
