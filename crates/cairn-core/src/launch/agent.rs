//! The agent a front end runs, from the settings and the models.

use std::sync::Arc;

use cairn_llm::Provider;
use cairn_memory::{MemoryIndex, Workspace};

use super::{context_budget, upkeep, ChatModel, Config, Warn};
use crate::agent::Upkeep;
use crate::session::OpenedSession;
use crate::tools::handlers::bash::{Bash, CommandRules, EnvScrub};
use crate::tools::{ProtectRules, ToolRegistry};
use crate::{Agent, AgentConfig, AgentParts, ApprovalPolicy, ContextBudget};

pub struct AgentOptions {
    /// Every tool call allowed without asking (overrides the settings' policy).
    pub yes: bool,
    pub max_steps: u32,
    /// The approval policy from the settings.
    pub approval: Option<ApprovalPolicy>,
    /// Writes that ask first (`[approvals]`).
    pub protect: ProtectRules,
    /// What bash commands do not get from the environment.
    pub bash_env: EnvScrub,
    /// Bash command prefixes allowed without asking or refused.
    pub bash_rules: CommandRules,
    pub context: ContextBudget,
    pub evict_tool_output_chars: usize,
    pub upkeep: Upkeep,
}

impl AgentOptions {
    /// The options of `config`'s settings, with the flush and compaction models.
    pub async fn from_config(
        config: &Config,
        chat: &ChatModel,
        yes: bool,
        max_steps: u32,
        warn: Warn<'_>,
    ) -> Self {
        let (context, evict_tool_output_chars) = context_budget(config, chat);
        let protect = ProtectRules::from_settings(&config.settings.approvals).unwrap_or_else(|e| {
            warn(format!("{e}; the default protected paths apply"));
            ProtectRules::default()
        });
        let settings = &config.settings;
        let bash_env = EnvScrub {
            also_remove: settings
                .providers
                .values()
                .filter_map(|p| p.api_key_env.clone())
                .collect(),
            pass: settings.tools.bash.pass_env.clone(),
        };
        let bash_rules = CommandRules::new(&settings.tools.bash.allow, &settings.tools.bash.deny);
        Self {
            yes,
            max_steps,
            approval: config.settings.approval.clone(),
            protect,
            bash_env,
            bash_rules,
            context,
            evict_tool_output_chars,
            upkeep: upkeep(config, chat, warn).await,
        }
    }
}

pub fn build_agent(
    workspace: Arc<Workspace>,
    provider: Arc<dyn Provider>,
    model: String,
    session: OpenedSession,
    options: AgentOptions,
    memory: Option<MemoryIndex>,
) -> Agent {
    // `--yes`: the user allowed every call, protected paths included.
    let (approval, protect) = match (options.yes, options.approval) {
        (true, _) => (ApprovalPolicy::allow_all(), ProtectRules::off()),
        (false, policy) => (policy.unwrap_or_default(), options.protect),
    };
    let config = AgentConfig {
        model,
        max_steps: options.max_steps,
        approval,
        protect,
        bash_rules: options.bash_rules,
        context: options.context,
        evict_tool_output_chars: options.evict_tool_output_chars,
        ..AgentConfig::default()
    };
    let mut tools = ToolRegistry::with_memory(memory.clone());
    tools.register(Arc::new(Bash::new(options.bash_env)));
    Agent::new(AgentParts {
        workspace,
        provider,
        session,
        config,
        tools,
        hooks: Vec::new(),
        memory,
        upkeep: options.upkeep,
    })
}
