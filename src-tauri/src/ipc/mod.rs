//! What crosses the boundary to the page: errors, session views, run events, memory
//! views, workspace files, pictures and settings. Their TypeScript is made from them (`contract.rs`).

pub mod contract;
pub mod documents;
pub mod dropped;
pub mod error;
pub mod file_ops;
pub mod files;
pub mod memory;
pub mod pictures;
mod pretty;
pub mod settings;
pub mod stream;
pub mod views;
