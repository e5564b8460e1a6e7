//! Assembling Cairn for a front end: the settings (config.toml, secrets and the keyring,
//! choosing the provider and model for each purpose, building them) and the launch (the
//! workspace, the memory index with its embedding model, the consolidator and the agent
//! with every tool). The CLI and the desktop app share it, so a start is the same in both.

pub mod launch;
pub mod settings;
