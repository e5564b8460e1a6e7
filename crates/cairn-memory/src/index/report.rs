//! What the index tells its users: what a sync did, how the index stands, and what
//! happened while opening it.

use std::time::Duration;

use super::SCHEMA_VERSION;

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncReport {
    /// Files in the index.
    pub files: u64,
    /// Chunks in the index.
    pub chunks: u64,
    /// Files (re)indexed by this sync.
    pub changed: u64,
    /// Files that left the index.
    pub removed: u64,
    /// Files this sync could not index, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Every file the index leaves out, with the reason, by path: skipped files stay
    /// out until they change.
    pub not_indexed: Vec<(String, String)>,
    pub took: Duration,
}

/// What the user sees of the index (the app shows it as it is).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct IndexStatus {
    pub files: u64,
    pub chunks: u64,
    /// Changes are waiting to be indexed.
    pub catching_up: bool,
    /// Another process writes the index; this one only reads it.
    pub read_only: bool,
    /// The last indexing error, if the last job failed.
    pub last_error: Option<String>,
    /// The embedding model, when search by meaning is on.
    pub embedding_model: Option<String>,
    /// Distinct chunks with a vector, of those in the index (`to_embed`).
    pub embedded: u64,
    pub to_embed: u64,
    /// Why embedding stopped, if it did.
    pub embed_error: Option<String>,
    /// Folders searched in place that cannot be now, each with why (`~/Notes: it does
    /// not exist`).
    pub folders_unavailable: Vec<String>,
}

impl IndexStatus {
    /// Whether every chunk has its vector (trivially, without an embedding model).
    pub fn embedding_current(&self) -> bool {
        self.embedding_model.is_none() || self.embedded >= self.to_embed
    }
}

/// Something that happened while opening (shown to the user as a warning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenNotice {
    /// The index was made with another schema version and is rebuilt.
    SchemaChanged { from: Option<String> },
    /// The index could not be opened and is rebuilt from the files.
    Corrupt(String),
}

impl std::fmt::Display for OpenNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenNotice::SchemaChanged { from } => write!(
                f,
                "the index was made by another version (schema {}, now {SCHEMA_VERSION}) and \
                 is rebuilt from the files",
                from.as_deref().unwrap_or("unknown")
            ),
            OpenNotice::Corrupt(error) => write!(
                f,
                "the index could not be read ({error}) and is rebuilt from the files"
            ),
        }
    }
}
