//! Errors of settings and secrets.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("unknown provider `{name}`; known: {known}")]
    UnknownProvider { name: String, known: String },
    #[error("the {provider} provider needs {what}")]
    Missing { provider: String, what: String },
    #[error("the key store failed: {0}")]
    Secrets(String),
}
