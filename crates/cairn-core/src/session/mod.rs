//! Sessions on disk: `sessions/<id>.jsonl`, a header line then one entry per
//! line, forming a tree through `parent_id`. Nothing is rewritten in place: editing an
//! earlier message starts a branch, moving between branches appends a `leaf` entry.

mod branches;
mod context;
pub mod export;
pub mod import;
mod load;
mod store;
mod summaries;
mod tree;
mod writer;

pub use load::{LoadedSession, Repair};
pub use store::{OpenedSession, SessionStore, SessionSummary};
pub use tree::SessionTree;
pub use writer::SessionWriter;

/// A new entry id: 8 hex digits, unique within its session.
pub(crate) fn new_entry_id(taken: impl Fn(&str) -> bool) -> String {
    loop {
        let id = format!("{:08x}", rand::random::<u32>());
        if !taken(&id) {
            return id;
        }
    }
}

/// Now, as written in session files.
pub(crate) fn timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
