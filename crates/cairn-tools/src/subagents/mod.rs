//! What the subagent tools work with: definitions in `subagents/<name>.md`, the report a
//! subagent sends back, the table of the tasks an agent started, and what starting one
//! takes. Running a subagent is the agent's: the tools ask for it through
//! [`crate::Workers`].

pub mod definition;
pub mod report;
mod tasks;

use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub use definition::{Definitions, SubagentDef};
pub use report::{Escalation, Finding, Progress, Report, TaskStatus, WorkerNotes};
pub use tasks::{TaskLine, Tasks};

/// Limits of subagents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubagentLimits {
    /// How deep subagents may nest: 2 lets a subagent start subagents of its own, whose
    /// tools then lack the subagent tools.
    pub max_depth: u32,
    /// How long `agent_send` waits when neither the call nor the definition says.
    pub timeout: std::time::Duration,
    /// The longest wait a call or a definition may ask for.
    pub max_timeout: std::time::Duration,
}

impl Default for SubagentLimits {
    fn default() -> Self {
        Self {
            max_depth: 2,
            timeout: std::time::Duration::from_secs(30),
            max_timeout: std::time::Duration::from_secs(600),
        }
    }
}

/// How long a stopped subagent may take to end (and sync its session) before its
/// parent goes on.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// What starting a subagent needs besides its parent.
pub struct Start<'a> {
    pub call_id: &'a str,
    pub def: &'a SubagentDef,
    /// The model the call asked for (`provider/model`), over the definition's.
    pub model: Option<String>,
    pub task: String,
    pub timeout: Duration,
    /// Stops it (with `cancelled`) when cancelled.
    pub cancel: CancellationToken,
    /// Where the starting call's file changes are kept; the subagent's go there too.
    pub changes: Option<cairn_memory::changes::ChangeScope>,
}

/// A started subagent: its task id and its report once it ends.
pub struct Started {
    pub task_id: String,
    pub done: watch::Receiver<Option<Report>>,
}
