//! The agent handle: what front ends hold to run prompts, steer, abort and configure.
//!
//! `prompt` runs one whole run in the caller's task; the other methods may be called from
//! any task at any time (clone the handle) and act at the run's next save point.

mod background;
mod child;
mod compact;
mod completion;
mod context;
mod deadline;
mod execute;
mod flow;
mod gathering;
mod inner;
mod intent;
mod outside;
mod pictures;
mod prune;
mod reach;
mod resume;
mod run;
mod stall;
mod stamp;
mod state;
mod stream;
mod upkeep;

use std::sync::{Arc, Mutex, PoisonError};
use ts_rs::TS;

use cairn_llm::Provider;
use cairn_memory::{MemoryIndex, Workspace};
use cairn_protocol::{AgentEvent, ApprovalDecision, EntryKind, Phase};
use tokio::sync::mpsc;

use crate::config::{AgentConfig, ApprovalPolicy};
use crate::error::HarnessError;
use crate::events::EventBus;
use crate::hooks::{
    ApprovalHook, ApprovalState, EvictionHook, Hook, HookSet, PersistenceHook, TracingHook,
};
use crate::session::{OpenedSession, SessionTree};
use crate::tools::ToolRegistry;

pub use self::flow::RunReport;
pub use self::inner::Upkeep;
use self::state::{Desk, Settings, State};
pub use self::upkeep::CompactionReport;
use crate::subagents::Tasks;
pub(crate) use child::ChildSpec;
pub(crate) use context::builtin_prompt;
pub(crate) use inner::{AgentLink, Inner};

/// Everything an agent is made of.
pub struct AgentParts {
    pub workspace: Arc<Workspace>,
    pub provider: Arc<dyn Provider>,
    pub session: OpenedSession,
    pub config: AgentConfig,
    pub tools: ToolRegistry,
    /// Hooks added to the built-in ones (tracing, approvals, persistence).
    pub hooks: Vec<Arc<dyn Hook>>,
    /// The workspace's memory index, for recall at the start of each run (the memory
    /// tools get it through `tools`).
    pub memory: Option<MemoryIndex>,
    /// Memory flush and compaction models (the default: no flush, the chat model
    /// compacts).
    pub upkeep: Upkeep,
    /// The user's MCP servers: their tools are added at the start of each run.
    pub mcp: Option<Arc<crate::mcp::McpHub>>,
    /// Builds the models subagent definitions name (without it, only definitions without
    /// `model` start); its subagents get it too.
    pub models: Option<Arc<dyn crate::subagents::ModelResolver>>,
}

/// A cheap, cloneable handle to one agent and its session.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

impl Agent {
    pub fn new(parts: AgentParts) -> Self {
        let approvals = ApprovalState::with_rules(
            parts.config.approval.clone(),
            parts.config.bash_rules.clone(),
        );
        Self::assemble(parts, approvals, Desk::default(), 0)
    }

    fn assemble(parts: AgentParts, approvals: Arc<ApprovalState>, desk: Desk, depth: u32) -> Self {
        let mut hooks: Vec<Arc<dyn Hook>> = vec![
            Arc::new(TracingHook),
            Arc::new(ApprovalHook::new(approvals.clone())),
            Arc::new(PersistenceHook::new(parts.session.writer)),
            Arc::new(EvictionHook::new(parts.config.evict_tool_output_chars)),
        ];
        let added_hooks = parts.hooks.clone();
        hooks.extend(parts.hooks);
        let mut config = parts.config;
        // The conversation's thinking level, as the session last recorded it.
        if let Some(level) = parts.session.tree.thinking_level() {
            config.thinking = Some(level);
        }
        let settings = Settings {
            provider: parts.provider,
            config,
            tools: parts.tools,
        };
        Self {
            inner: Arc::new(Inner {
                workspace: parts.workspace,
                memory: parts.memory,
                upkeep: parts.upkeep,
                events: EventBus::new(),
                hooks: HookSet::new(hooks),
                approvals,
                desk,
                depth,
                tasks: Tasks::default(),
                added_hooks,
                mcp: parts.mcp,
                models: parts.models,
                state: Mutex::new(State::new(settings)),
                idle: tokio::sync::Notify::new(),
                session: Mutex::new(parts.session.tree),
                changes: std::sync::OnceLock::new(),
                background: Mutex::new(None),
                calibration: Mutex::new(None),
            }),
        }
    }

    /// A new event subscriber (events from now on).
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<AgentEvent> {
        self.inner.events.subscribe()
    }

    pub fn events(&self) -> &EventBus {
        &self.inner.events
    }

    pub fn phase(&self) -> Phase {
        self.inner.state().phase
    }

    pub fn session_id(&self) -> String {
        self.inner.session().id().to_string()
    }

    /// A copy of the session as it is now.
    pub fn session_snapshot(&self) -> SessionTree {
        self.inner.session().clone()
    }

    /// Reads the session as it is now without copying it.
    pub fn with_session<T>(&self, read: impl FnOnce(&SessionTree) -> T) -> T {
        read(&self.inner.session())
    }

    /// Runs `text` as a user prompt until the run ends. Fails with `Busy` (changing
    /// nothing) unless the agent is idle.
    pub async fn prompt(&self, text: impl Into<String>) -> Result<RunReport, HarnessError> {
        run::run_prompt(&self.inner, text.into(), Vec::new()).await
    }

    /// [`Agent::prompt`] with pictures after the text (kept in the workspace first, see
    /// `cairn_memory::Attachments`).
    pub async fn prompt_with_pictures(
        &self,
        text: impl Into<String>,
        pictures: Vec<cairn_protocol::Picture>,
    ) -> Result<RunReport, HarnessError> {
        run::run_prompt(&self.inner, text.into(), pictures).await
    }

    /// Goes on with the session's interrupted run (a crash, a kill, a closed window) from
    /// its last checkpoint, instead of the user asking again. `NothingToResume` when the
    /// session has none.
    pub async fn resume(&self) -> Result<RunReport, HarnessError> {
        run::run_resume(&self.inner).await
    }

    /// The checkpoint of the session's interrupted run, if it has one.
    pub fn interrupted_run(&self) -> Option<cairn_protocol::RunCheckpoint> {
        self.inner.session().interrupted_run().cloned()
    }

    /// A message for the model, delivered at the next save point of the current run (the
    /// step's tool calls are still answered first).
    pub fn steer(&self, text: impl Into<String>) {
        self.inner.state().steer.push_back(text.into());
    }

    /// A message delivered when the current run would have ended, continuing it. A
    /// `follow_ups` event says what waits.
    pub fn follow_up(&self, text: impl Into<String>) {
        let mut state = self.inner.state();
        state.follow_up.push_back(text.into());
        self.inner.follow_ups_changed(&state, Vec::new());
    }

    /// How the steering and follow-up queues are delivered from the next save point on
    /// (`None`: as they are).
    pub fn set_queue_modes(
        &self,
        steering: Option<cairn_protocol::QueueMode>,
        follow_up: Option<cairn_protocol::QueueMode>,
    ) {
        let mut state = self.inner.state();
        let config = &mut state.settings.config;
        if let Some(mode) = steering {
            config.steering_mode = mode;
        }
        if let Some(mode) = follow_up {
            config.follow_up_mode = mode;
        }
    }

    /// How the steering and follow-up queues are delivered.
    pub fn queue_modes(&self) -> (cairn_protocol::QueueMode, cairn_protocol::QueueMode) {
        let state = self.inner.state();
        let config = &state.settings.config;
        (config.steering_mode, config.follow_up_mode)
    }

    /// The follow-ups waiting, oldest first.
    pub fn follow_ups(&self) -> Vec<String> {
        self.inner.state().follow_up.iter().cloned().collect()
    }

    /// Takes back the waiting follow-up at `index` (it is not delivered); `None` when
    /// there is none there (delivered meanwhile).
    pub fn take_follow_up(&self, index: usize) -> Option<String> {
        let mut state = self.inner.state();
        let taken = state.follow_up.remove(index)?;
        self.inner.follow_ups_changed(&state, Vec::new());
        Some(taken)
    }

    /// A message kept for the next prompt (sent just before it). Survives abort.
    pub fn next_turn(&self, text: impl Into<String>) {
        self.inner.state().next_turn.push(text.into());
    }

    /// Stops the current run (see [`Self::request_abort`]) and returns when the agent is
    /// idle: the run's final save point written, a new prompt accepted. At once when idle.
    pub async fn abort(&self) {
        loop {
            let idle = self.inner.idle.notified();
            tokio::pin!(idle);
            // Registered before looking, so a run that ends in between is not missed.
            idle.as_mut().enable();
            if self.request_abort() == Phase::Idle {
                return;
            }
            idle.await;
        }
    }

    /// Asks the current run to stop and returns at once: cancels the model request and
    /// running tools, answers pending approvals with "deny", drops queued steering and
    /// follow-up messages. The phase it was in is returned.
    pub fn request_abort(&self) -> Phase {
        let mut state = self.inner.state();
        if let Some(cancel) = &state.cancel {
            cancel.cancel();
        }
        state.steer.clear();
        let returned: Vec<String> = state.follow_up.drain(..).collect();
        if !returned.is_empty() {
            self.inner.follow_ups_changed(&state, returned);
        }
        state.phase
    }

    /// Answers an `approval_requested` event.
    pub fn resolve_approval(
        &self,
        request_id: &str,
        decision: ApprovalDecision,
        reason: Option<String>,
    ) -> Result<(), HarnessError> {
        let pending = self.inner.desk.remove(request_id);
        let pending = pending.ok_or_else(|| HarnessError::NoSuchApproval(request_id.into()))?;
        let _ = pending.send((decision, reason));
        Ok(())
    }

    /// Switches model (and optionally provider) from the next save point on.
    pub fn set_model(&self, model: impl Into<String>, provider: Option<Arc<dyn Provider>>) {
        let mut state = self.inner.state();
        state.pending.model = Some(model.into());
        if provider.is_some() {
            state.pending.provider = provider;
        }
    }

    /// The conversation's thinking level from the next save point on, recorded in the
    /// session there (and read back when it is opened again).
    pub fn set_thinking(&self, level: cairn_protocol::ThinkingLevel) {
        self.inner.state().pending.thinking = Some(level);
    }

    /// The conversation's thinking level (one waiting for the next save point
    /// included); `None`: the provider's own setting.
    pub fn thinking(&self) -> Option<cairn_protocol::ThinkingLevel> {
        let state = self.inner.state();
        state.pending.thinking.or(state.settings.config.thinking)
    }

    /// Replaces the tools offered to the model from the next save point on.
    pub fn set_tools(&self, tools: ToolRegistry) {
        self.inner.state().pending.tools = Some(tools);
    }

    /// Replaces the system prompt (`None`: the built-in one) from the next save point on.
    pub fn set_system_prompt(&self, prompt: Option<String>) {
        self.inner.state().pending.system_prompt = Some(prompt);
    }

    /// Offers the model only the tools named (`None`: all of them again) from the next
    /// save point on; the others stay known but are neither offered nor run. An unknown
    /// name is refused, naming it, and nothing changes.
    pub fn set_active_tools(&self, names: Option<Vec<String>>) -> Result<(), HarnessError> {
        let mut state = self.inner.state();
        if let Some(names) = &names {
            let tools = state
                .pending
                .tools
                .as_ref()
                .unwrap_or(&state.settings.tools);
            let known = tools.all_names();
            let unknown: Vec<String> = names
                .iter()
                .filter(|n| !known.contains(n))
                .map(|n| format!("`{n}`"))
                .collect();
            if !unknown.is_empty() {
                return Err(HarnessError::UnknownTools(format!(
                    "{} (known: {})",
                    unknown.join(", "),
                    known.join(", ")
                )));
            }
        }
        state.pending.active = Some(names);
        Ok(())
    }

    /// The model the next request will ask (a pending change included).
    pub fn model(&self) -> String {
        let state = self.inner.state();
        state
            .pending
            .model
            .clone()
            .unwrap_or_else(|| state.settings.config.model.clone())
    }

    /// The tools the next request will offer, by name (pending changes included).
    pub fn tool_names(&self) -> Vec<String> {
        let state = self.inner.state();
        let mut tools = state
            .pending
            .tools
            .clone()
            .unwrap_or_else(|| state.settings.tools.clone());
        if let Some(active) = &state.pending.active {
            tools.set_active_known(active.as_deref());
        }
        tools.names()
    }

    /// The system prompt setting the next run will start from (`None`: the built-in one),
    /// a pending change included.
    pub fn system_prompt(&self) -> Option<String> {
        let state = self.inner.state();
        match &state.pending.system_prompt {
            Some(prompt) => prompt.clone(),
            None => state.settings.config.system_prompt.clone(),
        }
    }

    /// Changes the approval policy (takes effect for the next tool call).
    pub fn set_approval_policy(&self, policy: ApprovalPolicy) {
        self.inner.approvals.set_policy(policy);
    }

    /// Moves the active leaf to `entry_id` (or before the first entry with `None`): the next
    /// prompt starts a branch there. Durable (a `leaf` entry). Needs the agent idle.
    pub async fn navigate(&self, entry_id: Option<&str>) -> Result<(), HarnessError> {
        let _idle = outside::IdleGuard::acquire(&self.inner, "navigate")?;
        if let Some(id) = entry_id {
            if self.inner.session().get(id).is_none() {
                return Err(HarnessError::EntryNotFound(id.to_string()));
            }
        }
        let kind = EntryKind::Leaf {
            target_id: entry_id.map(str::to_string),
        };
        outside::record_outside_run(&self.inner, kind).await
    }

    /// Flushes memory, then summarises the older part of the conversation (keeping the
    /// recent part as it is), focusing on `instructions` if given. Needs the agent idle.
    pub async fn compact(
        &self,
        instructions: Option<&str>,
    ) -> Result<CompactionReport, HarnessError> {
        let _idle = outside::IdleGuard::acquire(&self.inner, "compact")?;
        outside::compact_outside_run(&self.inner, instructions).await
    }

    /// Like [`Agent::navigate`], and when the branch left holds conversation, a summary of
    /// it (what was tried, learned and decided there) is recorded at the new place, so the
    /// conversation that goes on from there knows. Returns the summary. Needs the agent idle.
    pub async fn navigate_summarised(
        &self,
        entry_id: Option<&str>,
    ) -> Result<Option<String>, HarnessError> {
        let _idle = outside::IdleGuard::acquire(&self.inner, "navigate")?;
        if let Some(id) = entry_id {
            if self.inner.session().get(id).is_none() {
                return Err(HarnessError::EntryNotFound(id.to_string()));
            }
        }
        outside::navigate_summarised(&self.inner, entry_id).await
    }

    /// How full the context window is: the estimated tokens of the next request (the
    /// active branch as the model sees it, the tool definitions and the system prompt;
    /// recall and the workspace context are added per run) and the window compaction
    /// works to, with the room it keeps free for the answer.
    pub fn context_usage(&self) -> ContextUsage {
        let (fixed, window, reserve) = {
            let state = self.inner.state();
            let settings = &state.settings;
            let (window, reserve, _) = settings
                .config
                .context
                .resolve(settings.provider.info().context_window);
            let prompt = settings.config.system_prompt.as_deref().unwrap_or_default();
            (
                settings.tools.estimated_tokens()
                    + crate::upkeep::transcript::estimate_text(prompt),
                window,
                reserve,
            )
        };
        let messages = self.inner.session().context_tokens();
        let calibration = self
            .inner
            .calibration
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        ContextUsage {
            used: upkeep::calibrated(messages + fixed, calibration.as_ref()),
            window,
            reserve,
            compacting: self.inner.compacting_in_background(),
            counted_by: calibration.map_or_else(|| ESTIMATED.to_string(), |c| c.by),
        }
    }

    /// Sets the session title. Needs the agent idle.
    pub async fn set_title(&self, title: impl Into<String>) -> Result<(), HarnessError> {
        let _idle = outside::IdleGuard::acquire(&self.inner, "set_title")?;
        outside::record_outside_run(
            &self.inner,
            EntryKind::SessionInfo {
                title: title.into(),
            },
        )
        .await
    }
}

/// How the context is sized before anything counted it.
const ESTIMATED: &str = "an estimate (about four characters a token)";

/// See [`Agent::context_usage`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, TS)]
pub struct ContextUsage {
    /// Estimated tokens of the next request.
    pub used: u64,
    /// The context window.
    pub window: u64,
    /// Tokens kept free below the window; passing `window - reserve` compacts.
    pub reserve: u64,
    /// A summary of the older conversation is being written in the background.
    pub compacting: bool,
    /// What `used` rests on: the model's own tokenizer, the provider's count of the last
    /// request (either corrects the estimate since), or an estimate alone.
    pub counted_by: String,
}
