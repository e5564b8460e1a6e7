//! The workspace: the folder that holds the user's memory, knowledge, skills and sessions
//! (DESIGN.md §2). This crate owns its layout, the template a new one starts from and the
//! safe resolution of paths inside it. It never calls a model.

pub mod atomic;
pub mod error;
pub mod paths;
pub mod workspace;

pub use atomic::write_atomic;
pub use error::MemoryError;
pub use paths::{Access, PathError};
pub use workspace::Workspace;
