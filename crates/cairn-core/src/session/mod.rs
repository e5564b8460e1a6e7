//! Sessions on disk: `sessions/<id>.jsonl`, a header line then one entry per
//! line, forming a tree through `parent_id`. Nothing is rewritten in place: editing an
//! earlier message starts a branch, moving between branches appends a `leaf` entry.

mod branches;
mod context;
pub mod export;
mod ids;
pub mod import;
mod load;
mod pictures;
mod store;
mod summaries;
mod tree;
mod writer;

pub(crate) use ids::{new_entry_id, timestamp};
pub use load::{LoadedSession, Repair};
pub use store::{OpenedSession, SessionStore, SessionSummary};
pub use tree::SessionTree;
pub use writer::SessionWriter;
