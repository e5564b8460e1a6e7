//! The workspace: the folder that holds the user's memory, knowledge, skills and sessions
//!. This crate owns its layout, the template a new one starts from, the
//! safe resolution of paths inside it, the memory index over it (Tantivy, with a SQLite
//! catalog), and the file watcher (one per watched folder) that the index and a front
//! end share. It never calls a model.

pub mod atomic;
pub mod attachments;
pub mod beneath;
pub mod catalog;
pub mod changes;
pub mod chunk;
pub mod daily_log;
pub mod error;
pub mod exact;
pub mod index;
pub mod paths;
pub mod source;
pub mod trash;
pub mod watch;
pub mod workspace;

#[cfg(all(test, unix))]
mod fuzz_tests;

pub use atomic::write_atomic;
pub use attachments::Attachments;
pub use error::MemoryError;
pub use exact::write_exact;
pub use index::{
    IndexError, IndexOptions, IndexStatus, MemoryIndex, OpenNotice, SearchHit, SearchMode,
    SearchQuery, SearchResults, SyncReport,
};
pub use paths::{real_relative, Access, PathError};
pub use source::{Corpus, Source, SourceKind};
pub use watch::{FolderWatch, WatchError};
pub use workspace::Workspace;
