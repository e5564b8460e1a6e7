//! The agent's mutable state: phase, queues, settings in force and settings waiting for the
//! next save point.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cairn_llm::Provider;
use cairn_protocol::{ApprovalDecision, Phase};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::config::AgentConfig;
use crate::tools::ToolRegistry;

/// The reply to an approval request: the decision and an optional reason for the model.
pub(crate) type ApprovalReply = oneshot::Sender<(ApprovalDecision, Option<String>)>;

/// Approval requests waiting for an answer, by request id: shared by an agent and the
/// subagents it starts, so a subagent's request is answered through the parent.
#[derive(Clone, Default)]
pub(crate) struct Desk(Arc<Mutex<HashMap<String, ApprovalReply>>>);

impl Desk {
    pub fn insert(&self, request_id: String, reply: ApprovalReply) {
        self.lock().insert(request_id, reply);
    }

    pub fn remove(&self, request_id: &str) -> Option<ApprovalReply> {
        self.lock().remove(request_id)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, ApprovalReply>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What a step runs with.
#[derive(Clone)]
pub(crate) struct Settings {
    pub provider: Arc<dyn Provider>,
    pub config: AgentConfig,
    pub tools: ToolRegistry,
}

/// Settings changes waiting for the next save point.
#[derive(Default)]
pub(crate) struct Pending {
    pub model: Option<String>,
    pub provider: Option<Arc<dyn Provider>>,
    pub tools: Option<ToolRegistry>,
    pub system_prompt: Option<Option<String>>,
    /// The active tool subset (`Some(None)`: every tool again).
    pub active: Option<Option<Vec<String>>>,
    /// The conversation's thinking level.
    pub thinking: Option<cairn_protocol::ThinkingLevel>,
}

impl Pending {
    pub fn is_empty(&self) -> bool {
        self.model.is_none()
            && self.provider.is_none()
            && self.tools.is_none()
            && self.system_prompt.is_none()
            && self.active.is_none()
            && self.thinking.is_none()
    }
}

/// What applying pending settings changed.
#[derive(Default)]
pub(crate) struct Applied {
    /// Anything was pending.
    pub any: bool,
    /// The new (provider kind, model) when the model changed.
    pub model: Option<(String, String)>,
    pub prompt_changed: bool,
    /// The new thinking level, when it changed.
    pub thinking: Option<cairn_protocol::ThinkingLevel>,
}

pub(crate) struct State {
    pub phase: Phase,
    /// The current run's cancellation token.
    pub cancel: Option<CancellationToken>,
    pub steer: VecDeque<String>,
    pub follow_up: VecDeque<String>,
    pub next_turn: Vec<String>,
    pub settings: Settings,
    pub pending: Pending,
    /// The user was told the model runs without tools.
    pub told_tool_less: bool,
    /// Providers' notices already told (each once per agent).
    pub told_notices: std::collections::HashSet<String>,
}

impl State {
    pub fn new(settings: Settings) -> Self {
        Self {
            phase: Phase::Idle,
            cancel: None,
            steer: VecDeque::new(),
            follow_up: VecDeque::new(),
            next_turn: Vec::new(),
            settings,
            pending: Pending::default(),
            told_tool_less: false,
            told_notices: Default::default(),
        }
    }

    /// Applies pending changes.
    pub fn apply_pending(&mut self) -> Applied {
        if self.pending.is_empty() {
            return Applied::default();
        }
        let pending = std::mem::take(&mut self.pending);
        let mut model_changed = false;
        if let Some(provider) = pending.provider {
            self.settings.provider = provider;
            model_changed = true;
        }
        if let Some(model) = pending.model {
            model_changed |= model != self.settings.config.model;
            self.settings.config.model = model;
        }
        if let Some(tools) = pending.tools {
            self.settings.tools = tools;
        }
        if let Some(active) = pending.active {
            self.settings.tools.set_active_known(active.as_deref());
        }
        let prompt_changed = pending.system_prompt.is_some();
        if let Some(prompt) = pending.system_prompt {
            self.settings.config.system_prompt = prompt;
        }
        let thinking = pending
            .thinking
            .filter(|level| self.settings.config.thinking != Some(*level));
        if thinking.is_some() {
            self.settings.config.thinking = thinking;
        }
        Applied {
            any: true,
            model: model_changed.then(|| {
                (
                    self.settings.provider.info().kind,
                    self.settings.config.model.clone(),
                )
            }),
            prompt_changed,
            thinking,
        }
    }
}
