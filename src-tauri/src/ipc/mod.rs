//! What crosses the boundary to the page: errors, session views, run events, memory
//! views, workspace files and settings. Mirrored by ui/src/api/types.ts.

pub mod contract;
pub mod dropped;
pub mod error;
pub mod file_ops;
pub mod files;
pub mod memory;
pub mod settings;
pub mod stream;
pub mod views;
