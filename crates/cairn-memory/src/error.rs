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
}

impl MemoryError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        MemoryError::Io {
            path: path.into(),
            source,
        }
    }
}
