//! Everything a front end opens a conversation with, in one builder: the workspace, the
//! chat model, the memory index, the agent's options from the settings, the session,
//! and the agent itself (through [`super::build_agent`], the one place agents are made;
//! subagents are made from the agent it builds).

use std::path::Path;
use std::sync::Arc;

use cairn_memory::Workspace;

use super::{AgentOptions, ChatModel, Config, LaunchError, Memory, Warn};
use cairn_core::session::{OpenedSession, SessionStore};
use cairn_core::upkeep::SchedulerHandle;
use cairn_core::Agent;

/// What a conversation is built from.
pub struct Launch {
    pub config: Config,
    pub workspace: Arc<Workspace>,
    pub chat: ChatModel,
    pub store: SessionStore,
    pub memory: Memory,
    pub options: AgentOptions,
}

/// How the front end asks for it.
pub struct LaunchRequest<'a> {
    /// The workspace folder given (else the settings', else `~/Cairn`).
    pub workspace: Option<&'a Path>,
    /// Every tool call allowed without asking.
    pub yes: bool,
    /// Steps per run given as a flag (beats the settings').
    pub max_steps: Option<u32>,
}

impl Launch {
    /// Opens the workspace, builds the chat model, opens the memory index and reads the
    /// agent's options; what does not stop the start goes to `warn`.
    pub async fn prepare(
        config: Config,
        request: LaunchRequest<'_>,
        warn: Warn<'_>,
    ) -> Result<Self, LaunchError> {
        let workspace = config.workspace(request.workspace)?;
        let chat = config.chat().await?;
        let store = super::store(&workspace);
        let memory = Memory::open(&workspace, &config, warn);
        let mut options =
            AgentOptions::from_config(&config, &chat, request.yes, request.max_steps, warn).await;
        if options.bash_sandbox.on {
            for why in options.bash_sandbox.sandbox(workspace.root()).refusals() {
                warn(why);
            }
        }
        options.mcp = super::mcp_hub(&config, &workspace, warn);
        Ok(Self {
            config,
            workspace,
            chat,
            store,
            memory,
            options,
        })
    }

    /// The named session, the latest one (`latest`), or a new one.
    pub async fn session(
        &self,
        id: Option<&str>,
        latest: bool,
        warn: Warn<'_>,
    ) -> Result<OpenedSession, LaunchError> {
        super::session(&self.store, id, latest, warn).await
    }

    /// Background consolidation while the conversation lasts; `None` when it is off.
    pub async fn consolidation(&mut self, warn: Warn<'_>) -> Option<SchedulerHandle> {
        super::consolidation(
            &self.config,
            &self.chat,
            &self.workspace,
            self.memory.index.as_ref(),
            &mut self.options.upkeep,
            warn,
        )
        .await
    }

    /// The agent for `session`, and the memory index it keeps following edits with.
    pub fn agent(self, session: OpenedSession) -> (Agent, Memory) {
        let agent = super::build_agent(
            self.workspace,
            self.chat.0,
            self.chat.1,
            session,
            self.options,
            self.memory.index.clone(),
        );
        (agent, self.memory)
    }
}
