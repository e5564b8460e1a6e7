//! Errors of the workspace layer.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} exists and is not a folder")]
    NotADirectory(PathBuf),
    #[error(transparent)]
    Path(#[from] crate::paths::PathError),
    #[error("`{0}` is not a regular file (a folder, pipe, socket or device)")]
    NotAFile(String),
    #[error("`{path}` is too large: {bytes} bytes, more than the {max} read at most")]
    TooLarge { path: String, bytes: u64, max: u64 },
    #[error("`{0}` is not inside .cairn/, where Cairn keeps its own state")]
    NotPrivate(String),
    #[error(
        "`{0}` changed while it was being written (a link now stands where it led, or a file \
         where a folder was): nothing was written"
    )]
    Changed(String),
}

impl MemoryError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        MemoryError::Io {
            path: path.into(),
            source,
        }
    }

    /// The kind of an I/O error, `None` for a refusal.
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            MemoryError::Io { source, .. } => Some(source.kind()),
            _ => None,
        }
    }

    /// Whether the file was simply not there.
    pub fn is_not_found(&self) -> bool {
        self.io_kind() == Some(std::io::ErrorKind::NotFound)
    }
}
