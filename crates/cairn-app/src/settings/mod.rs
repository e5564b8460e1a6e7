//! User settings (`~/.config/cairn/config.toml`), secrets (OS keyring with a key-file
//! fallback), and turning both plus the environment into a provider for each purpose.
//!
//! ```toml
//! default_provider = "ollama"
//!
//! [providers.ollama]
//! kind = "openai"
//! base_url = "http://localhost:11434/v1"
//! model = "llama3.2"
//!
//! [providers.claude]
//! kind = "anthropic"
//! model = "claude-sonnet-4-5"
//!
//! [providers.qwen]
//! kind = "local"
//! model_path = "/models/Qwen2.5-1.5B-Instruct-Q4_K_M.gguf"
//! chat_template_file = "/models/qwen2.5.jinja"   # optional, replaces the model's template
//!
//! [models]              # per purpose: "provider", "provider/model" or "model"
//! memory_flush = "local"
//!
//! [approval]
//! default = "allow"
//! tools = { bash = "ask" }
//!
//! [web]
//! search = "brave"      # web_search's service; its key: `cairn key set brave`
//! ```

mod build;
mod error;
mod file;
mod merge;
mod resolve;
mod run;
mod secret_file;
mod secrets;
mod web;

pub use build::openai_provider;
pub use error::SettingsError;
pub use file::{
    ContextSettings, GatherSettings, HookCommand, HookSettings, MemorySettings, ProviderKind,
    ProviderSettings, PurposeModels, Recency, Settings, SubagentSettings, Toggle,
};
pub use resolve::{EnvOverrides, Purpose, ResolvedProvider};
pub use run::{CompactionMode, CompactionSettings, CompletionMode, RunSettings};
pub use secrets::{Secret, SecretBackend, SecretStore};
pub use web::{SearchBackend, WebSettings};

/// The folder holding config.toml (and the secrets file when no keyring is available):
/// `$XDG_CONFIG_HOME/cairn` or `~/.config/cairn` on Linux.
pub fn config_dir() -> Option<std::path::PathBuf> {
    dirs::config_dir().map(|d| d.join("cairn"))
}
