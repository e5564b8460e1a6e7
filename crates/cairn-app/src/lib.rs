//! Assembling Cairn for a front end: the settings (config.toml, secrets and the keyring,
//! choosing the provider and model for each purpose, building them) and the launch (the
//! workspace, the memory index with its embedding model, the consolidator and the agent
//! with every tool). The CLI and the desktop app share it, so a start is the same in both.

pub mod launch;
pub mod settings;

// The crates under the app, as the front ends reach them: a front end depends on
// cairn-app and cairn-protocol only (tests/layering.rs), so what it uses of the harness,
// the memory, the models and the sandbox comes through here.
pub use cairn_core;
pub use cairn_embed;
pub use cairn_extract;
pub use cairn_llm;
pub use cairn_memory;
pub use cairn_models;
pub use cairn_process;
