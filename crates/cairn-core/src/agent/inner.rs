//! What an agent is made of once assembled (`Inner`, shared by its handle, its runs and
//! its subagents), and the link a tool call holds to the agent running it.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cairn_memory::{MemoryIndex, Workspace};
use cairn_protocol::AgentEvent;

use super::state::{Desk, State};
use crate::events::EventBus;
use crate::hooks::{ApprovalState, Hook, HookSet};
use crate::session::SessionTree;
use crate::subagents::Tasks;
use crate::upkeep::ModelChoice;

pub(crate) struct Inner {
    pub(crate) workspace: Arc<Workspace>,
    pub(crate) memory: Option<MemoryIndex>,
    pub(crate) upkeep: Upkeep,
    pub(crate) events: EventBus,
    pub(crate) hooks: HookSet,
    pub(crate) approvals: Arc<ApprovalState>,
    /// Approval requests waiting, shared with subagents.
    pub(crate) desk: Desk,
    /// How deep in subagents this agent is (0: started by a front end).
    pub(crate) depth: u32,
    /// The subagents it started.
    pub(crate) tasks: Tasks,
    /// The hooks added to the built-ins (the user's), which its subagents get too.
    pub(crate) added_hooks: Vec<Arc<dyn Hook>>,
    pub(crate) mcp: Option<Arc<crate::mcp::McpHub>>,
    pub(crate) models: Option<Arc<dyn crate::subagents::ModelResolver>>,
    pub(crate) state: Mutex<State>,
    /// Told each time the agent is back to idle.
    pub(crate) idle: tokio::sync::Notify,
    pub(crate) session: Mutex<SessionTree>,
    /// Where the file changes of a subagent's calls are kept: the run of the session the
    /// user sees, which started it (unset: this agent's own session and run).
    pub(crate) changes: std::sync::OnceLock<cairn_memory::changes::ChangeScope>,
    /// A summary written in the background (`[compaction] mode = "background"`), kept
    /// across runs until it is swapped in.
    pub(crate) background: Mutex<Option<super::background::Background>>,
    /// The last count of a request's tokens beside its estimate (see `Run::calibrate`).
    pub(crate) calibration: Mutex<Option<super::flow::Calibration>>,
}

/// The agent running a tool call, and the assistant message holding the call.
#[derive(Clone)]
pub(crate) struct AgentLink {
    pub inner: Arc<Inner>,
    /// The assistant message holding the call.
    pub entry_id: Option<String>,
}

impl Inner {
    /// Tells front ends what follow-ups wait now, and which were taken back.
    pub(crate) fn follow_ups_changed(&self, state: &State, returned: Vec<String>) {
        self.events.emit(AgentEvent::FollowUps {
            queued: state.follow_up.iter().cloned().collect(),
            returned,
        });
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn session(&self) -> MutexGuard<'_, SessionTree> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The models and signals of memory upkeep, fixed for an agent's life.
#[derive(Clone, Default)]
pub struct Upkeep {
    /// The flush model; `None` turns the flush off.
    pub flush: Option<ModelChoice>,
    /// The compaction model; `None`: the chat model.
    pub compaction: Option<ModelChoice>,
    /// The model of Gather's intent step; `None` turns the step off.
    pub intent: Option<ModelChoice>,
    /// Told after every flush that wrote something (the consolidation scheduler listens).
    pub flushed: Option<Arc<tokio::sync::Notify>>,
}
