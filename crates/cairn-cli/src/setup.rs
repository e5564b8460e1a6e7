//! Turning flags and environment into a workspace, a provider and an agent.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use cairn_core::agent::Upkeep;
use cairn_core::session::{OpenedSession, SessionStore};
use cairn_core::settings::{
    self, EnvOverrides, ProviderKind, Purpose, ResolvedProvider, SecretStore, Settings,
};
use cairn_core::tools::ToolRegistry;
use cairn_core::upkeep::{
    ConsolidationOptions, ConsolidationScheduler, Consolidator, ModelChoice, SchedulerHandle,
    SystemClock,
};
use cairn_core::{Agent, AgentConfig, AgentParts, ApprovalPolicy, ContextBudget};
use cairn_llm::Provider;
use cairn_memory::Workspace;

use crate::args::Cli;

/// The workspace: `--workspace`, else `CAIRN_WORKSPACE`, else the settings, else `~/Cairn`.
pub fn workspace(cli: &Cli, settings: &Settings) -> anyhow::Result<Arc<Workspace>> {
    let dir = match cli.workspace.as_ref().or(settings.workspace.as_ref()) {
        Some(dir) => dir.clone(),
        None => home_dir()
            .context("cannot tell the home folder; pass --workspace")?
            .join("Cairn"),
    };
    let workspace = Workspace::open_or_create(&dir)
        .with_context(|| format!("cannot open the workspace {}", dir.display()))?;
    Ok(Arc::new(workspace))
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

pub fn store(workspace: &Workspace) -> SessionStore {
    SessionStore::new(workspace.sessions_dir())
}

/// Settings, secrets and overrides: everything that decides which model answers.
pub struct Config {
    pub settings: Settings,
    pub settings_path: PathBuf,
    pub secrets: SecretStore,
    pub overrides: EnvOverrides,
}

impl Config {
    /// Reads config.toml from the config folder and the environment, then the flags.
    pub fn load(cli: &Cli) -> anyhow::Result<Self> {
        let dir = settings::config_dir().context("cannot tell the config folder (set HOME)")?;
        let settings_path = dir.join("config.toml");
        let settings = Settings::load(&settings_path)?;
        let mut overrides = EnvOverrides::from_env();
        overrides.provider = cli.provider.clone().or(overrides.provider);
        overrides.model = cli.model.clone().or(overrides.model);
        overrides.base_url = cli.base_url.clone().or(overrides.base_url);
        Ok(Self {
            settings,
            settings_path,
            secrets: SecretStore::detect(&dir),
            overrides,
        })
    }

    pub fn resolve(&self, purpose: Purpose) -> anyhow::Result<ResolvedProvider> {
        Ok(self
            .settings
            .resolve(purpose, &self.overrides, &self.secrets)?)
    }
}

/// The chat provider and its model name.
pub async fn provider(config: &Config) -> anyhow::Result<(Arc<dyn Provider>, String)> {
    let chat = model(config, Purpose::Chat).await?;
    Ok((chat.provider, chat.model))
}

/// The provider and model for `purpose` (`[models]` in the settings, else the chat model).
pub async fn model(config: &Config, purpose: Purpose) -> anyhow::Result<ModelChoice> {
    let resolved = config.resolve(purpose)?;
    let provider = resolved
        .build()
        .await
        .with_context(|| describe_failure(&resolved))?;
    Ok(ModelChoice::new(provider, resolved.model))
}

/// The model for `purpose`, sharing the chat provider when the purpose is the chat model
/// (a local model is loaded once), and whether it is a local model. A purpose without
/// its own `[models]` entry is the chat model: nothing is resolved again (no second key
/// lookup). `None` (with a warning) when it cannot be built.
async fn model_beside_chat(
    config: &Config,
    purpose: Purpose,
    chat: &(Arc<dyn Provider>, String),
) -> Option<(ModelChoice, bool)> {
    let share = || {
        let local = chat.0.info().kind == ProviderKind::Local.name();
        Some((ModelChoice::new(chat.0.clone(), chat.1.clone()), local))
    };
    let models = &config.settings.models;
    let own = match purpose {
        Purpose::Chat => None,
        Purpose::MemoryFlush => models.memory_flush.as_ref(),
        Purpose::Consolidation => models.consolidation.as_ref(),
        Purpose::Compaction => models.compaction.as_ref(),
    };
    if own.is_none() {
        return share();
    }
    let resolved = match config.resolve(purpose) {
        Ok(resolved) => resolved,
        Err(e) => {
            eprintln!("cairn: warning: no {purpose:?} model: {e}");
            return None;
        }
    };
    let local = resolved.kind() == ProviderKind::Local;
    let chat_name = config
        .resolve(Purpose::Chat)
        .ok()
        .map(|r| (r.name, r.model));
    if chat_name == Some((resolved.name.clone(), resolved.model.clone())) {
        return share();
    }
    match resolved.build().await {
        Ok(provider) => Some((ModelChoice::new(provider, resolved.model), local)),
        Err(e) => {
            eprintln!("cairn: warning: {}: {e}", describe_failure(&resolved));
            None
        }
    }
}

/// The model that writes memory for `purpose` (flush, consolidation): `None` when
/// `memory.flush = false`, and for a local model unless `memory.flush = true`, since a
/// small local model would fill the memory with noise.
async fn memory_writer(
    config: &Config,
    purpose: Purpose,
    chat: &(Arc<dyn Provider>, String),
) -> Option<ModelChoice> {
    let explicit = config.settings.memory.flush;
    if explicit == Some(false) {
        return None;
    }
    model_beside_chat(config, purpose, chat)
        .await
        .filter(|(_, local)| !local || explicit == Some(true))
        .map(|(choice, _)| choice)
}

/// The flush and compaction models (see [`memory_writer`] for when the flush is off).
pub async fn upkeep(config: &Config, chat: &(Arc<dyn Provider>, String)) -> Upkeep {
    let flush = memory_writer(config, Purpose::MemoryFlush, chat).await;
    let compaction = match config.settings.models.compaction {
        Some(_) => model_beside_chat(config, Purpose::Compaction, chat)
            .await
            .map(|(choice, _)| choice),
        None => None,
    };
    Upkeep {
        flush,
        compaction,
        flushed: None,
    }
}

/// Background consolidation for a long-lived front end (`chat`): on the settings'
/// interval and after flushes, with the consolidation model under the flush's rule.
/// Sets `upkeep.flushed` so flushes reach it. `None` when it is off.
pub async fn consolidation(
    config: &Config,
    chat: &(Arc<dyn Provider>, String),
    workspace: &Arc<Workspace>,
    index: Option<&cairn_memory::MemoryIndex>,
    upkeep: &mut Upkeep,
) -> Option<SchedulerHandle> {
    let options = ConsolidationOptions::from_settings(&config.settings.memory);
    options.interval?;
    let model = memory_writer(config, Purpose::Consolidation, chat).await?;
    let mut consolidator =
        Consolidator::new(workspace.clone(), model, options, Arc::new(SystemClock));
    if let Some(index) = index {
        consolidator = consolidator.with_index(index.clone());
    }
    let flushed = Arc::new(tokio::sync::Notify::new());
    upkeep.flushed = Some(flushed.clone());
    Some(ConsolidationScheduler::spawn(
        Arc::new(consolidator),
        flushed,
    ))
}

/// The context budget from the settings' `[context]`. The window is the chat provider's
/// (its settings' `context_window`, which the built provider reports, else what the
/// model says), else the global `context_window`.
pub fn context_budget(
    config: &Config,
    chat: &(Arc<dyn Provider>, String),
) -> (ContextBudget, usize) {
    let defaults = ContextBudget::default();
    let context = &config.settings.context;
    let provider_window = chat.0.info().context_window;
    let budget = ContextBudget {
        window: provider_window.or(config.settings.context_window),
        reserve_tokens: context.reserve_tokens.unwrap_or(defaults.reserve_tokens),
        keep_recent_tokens: context
            .keep_recent_tokens
            .unwrap_or(defaults.keep_recent_tokens),
    };
    let evict = context
        .evict_tool_output_chars
        .unwrap_or(AgentConfig::default().evict_tool_output_chars);
    (budget, evict)
}

fn describe_failure(resolved: &ResolvedProvider) -> String {
    match resolved.kind() {
        ProviderKind::Local => {
            format!(
            "the local model `{}` could not be loaded (run `make run` or scripts/fetch-model.sh \
             to install the bundled model, or point CAIRN_MODEL_PATH at a GGUF file)",
            resolved.model_path().map(|p| p.display().to_string()).unwrap_or_default()
        )
        }
        _ => format!("cannot use the provider `{}`", resolved.name),
    }
}

/// Opens the named session, the latest one (`latest`), or a new one, and reports repairs.
pub async fn session(
    store: &SessionStore,
    id: Option<&str>,
    latest: bool,
) -> anyhow::Result<OpenedSession> {
    let id = match (id, latest) {
        (Some(id), _) => Some(id.to_string()),
        (None, true) => store.latest()?,
        (None, false) => None,
    };
    let opened = match id {
        Some(id) => store.open(&id).await?,
        None => store.create()?,
    };
    for repair in &opened.repairs {
        eprintln!("cairn: session {}: {repair}", opened.tree.id());
    }
    Ok(opened)
}

pub struct AgentOptions {
    pub yes: bool,
    pub max_steps: u32,
    /// The approval policy from the settings (`--yes` overrides it).
    pub approval: Option<ApprovalPolicy>,
    pub context: ContextBudget,
    pub evict_tool_output_chars: usize,
    pub upkeep: Upkeep,
}

impl AgentOptions {
    /// The options of `config`'s settings, with the flush and compaction models.
    pub async fn from_config(
        config: &Config,
        chat: &(Arc<dyn Provider>, String),
        yes: bool,
        max_steps: u32,
    ) -> Self {
        let (context, evict_tool_output_chars) = context_budget(config, chat);
        Self {
            yes,
            max_steps,
            approval: config.settings.approval.clone(),
            context,
            evict_tool_output_chars,
            upkeep: upkeep(config, chat).await,
        }
    }
}

/// The workspace's memory index, brought up to date in the background and following
/// edits while this lives.
pub struct Memory {
    pub index: Option<cairn_memory::MemoryIndex>,
    _watch: Option<cairn_memory::index::Watch>,
}

/// Opens the memory index; without one the agent still runs (memory_search is left out
/// and recall is skipped), with a warning.
pub fn memory(workspace: &Workspace) -> Memory {
    let index = match cairn_memory::MemoryIndex::open(workspace, Default::default()) {
        Ok(index) => index,
        Err(e) => {
            eprintln!("cairn: warning: the memory index is unavailable: {e}");
            return Memory {
                index: None,
                _watch: None,
            };
        }
    };
    for notice in index.notices() {
        eprintln!("cairn: warning: memory index: {notice}");
    }
    let watch = if index.is_read_only() {
        // Another Cairn process writes the index and follows the edits.
        None
    } else {
        if let Err(e) = index.sync_in_background() {
            eprintln!("cairn: warning: the memory index cannot update: {e}");
        }
        index
            .watch()
            .map_err(|e| eprintln!("cairn: warning: edits are not followed: {e}"))
            .ok()
    };
    Memory {
        index: Some(index),
        _watch: watch,
    }
}

pub fn agent(
    workspace: Arc<Workspace>,
    provider: Arc<dyn Provider>,
    model: String,
    session: OpenedSession,
    options: AgentOptions,
    memory: Option<cairn_memory::MemoryIndex>,
) -> Agent {
    let approval = match (options.yes, options.approval) {
        (true, _) => ApprovalPolicy::allow_all(),
        (false, policy) => policy.unwrap_or_default(),
    };
    let config = AgentConfig {
        model,
        max_steps: options.max_steps,
        approval,
        context: options.context,
        evict_tool_output_chars: options.evict_tool_output_chars,
        ..AgentConfig::default()
    };
    Agent::new(AgentParts {
        workspace,
        provider,
        session,
        config,
        tools: ToolRegistry::with_memory(memory.clone()),
        hooks: Vec::new(),
        memory,
        upkeep: options.upkeep,
    })
}
