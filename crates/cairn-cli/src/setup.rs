//! Turning flags and environment into a workspace, a provider and an agent, through
//! `cairn_core::launch`; warnings go to stderr.

use std::sync::Arc;

use cairn_core::launch::{self, ChatModel};
use cairn_core::session::{OpenedSession, SessionStore};
use cairn_core::upkeep::SchedulerHandle;
use cairn_core::Agent;
use cairn_memory::Workspace;

use crate::args::Cli;

pub use cairn_core::launch::{AgentOptions, Config, Memory};

/// Prints a warning that does not stop the command.
pub fn warn(message: String) {
    eprintln!("cairn: warning: {message}");
}

/// Reads config.toml and the environment, then the flags.
pub fn config(cli: &Cli) -> anyhow::Result<Config> {
    let mut config = Config::load(None)?;
    let overrides = &mut config.overrides;
    overrides.provider = cli.provider.clone().or(overrides.provider.take());
    overrides.model = cli.model.clone().or(overrides.model.take());
    overrides.base_url = cli.base_url.clone().or(overrides.base_url.take());
    Ok(config)
}

/// The workspace: `--workspace`, else `CAIRN_WORKSPACE`, else the settings, else `~/Cairn`.
pub fn workspace(cli: &Cli, config: &Config) -> anyhow::Result<Arc<Workspace>> {
    Ok(config.workspace(cli.workspace.as_deref())?)
}

pub fn store(workspace: &Workspace) -> SessionStore {
    launch::store(workspace)
}

/// The chat provider and its model name.
pub async fn provider(config: &Config) -> anyhow::Result<ChatModel> {
    Ok(config.chat().await?)
}

/// The options of the settings, with the flush and compaction models; `max_steps` from a
/// flag beats the settings'.
pub async fn options(
    config: &Config,
    chat: &ChatModel,
    yes: bool,
    max_steps: Option<u32>,
) -> AgentOptions {
    AgentOptions::from_config(config, chat, yes, max_steps, &mut warn).await
}

/// Background consolidation for `chat`; `None` when it is off.
pub async fn consolidation(
    config: &Config,
    chat: &ChatModel,
    workspace: &Arc<Workspace>,
    index: Option<&cairn_memory::MemoryIndex>,
    upkeep: &mut cairn_core::agent::Upkeep,
) -> Option<SchedulerHandle> {
    launch::consolidation(config, chat, workspace, index, upkeep, &mut warn).await
}

/// Opens the named session, the latest one (`latest`), or a new one, and reports repairs.
pub async fn session(
    store: &SessionStore,
    id: Option<&str>,
    latest: bool,
) -> anyhow::Result<OpenedSession> {
    Ok(launch::session(store, id, latest, &mut warn).await?)
}

/// The workspace's memory index, following edits while it lives.
pub fn memory(workspace: &Workspace) -> Memory {
    Memory::open(workspace, &mut warn)
}

pub fn agent(
    workspace: Arc<Workspace>,
    chat: ChatModel,
    session: OpenedSession,
    options: AgentOptions,
    memory: Option<cairn_memory::MemoryIndex>,
) -> Agent {
    launch::build_agent(workspace, chat.0, chat.1, session, options, memory)
}
