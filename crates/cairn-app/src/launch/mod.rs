//! What a front end (the CLI, the desktop app) puts together before a conversation:
//! the settings and secrets, the workspace, the model for each purpose, the memory index
//! and the agent. Problems that do not stop the start (a purpose model that cannot be
//! built, an index that cannot update) go to a [`Warn`] sink for the front end to show.

mod agent;
mod bundled;
mod config;
mod conversation;
mod embedder;
mod memory;
mod models;
mod reading;
mod search;

pub use agent::{build_agent, env_scrub, mcp_hub, sandbox_choice, AgentOptions, SettingsModels};
pub use bundled::{bundled_models, package_index, BundledModels, PACKAGE_INDEX_ENV};
pub(crate) use config::describe_failure;
pub use config::{session, store, ChatModel, Config, LaunchError, Warn};
pub use conversation::{Launch, LaunchRequest};
pub use embedder::{
    embedder, embedder_for_few_queries, embedder_provider, settle_embedder,
    BUNDLED as BUNDLED_EMBEDDER,
};
pub use memory::{index_options, Memory};
pub use models::{
    consolidates_with_chat, consolidation, consolidator_now, context_budget, memory_upkeep_paused,
    upkeep,
};
pub use reading::{document_options, read_options, OcrState, DEFAULT_OCR_LANGUAGES};
pub use search::{check_provider_search, web_search};
