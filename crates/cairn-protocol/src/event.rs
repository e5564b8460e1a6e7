//! The event stream every front end subscribes to.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::Message;
use crate::outcome::{Outcome, RunSummary};

/// What the harness is doing. Structural operations need `Idle`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    #[default]
    Idle,
    Turn,
    Compaction,
    BranchSummary,
    Retry,
}

/// The answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this one call.
    AllowOnce,
    /// Run this call and every later call of the same tool in this session.
    AllowAlways,
    /// Do not run it; the model is told.
    Deny,
}

/// How loud a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    Info,
    Warning,
    Error,
}

/// Everything a run reports, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    AgentStart {
        run_id: String,
        session_id: String,
    },
    PhaseChanged {
        phase: Phase,
    },
    TurnStart {
        step: u32,
    },
    /// A message begins: a streamed assistant answer, or a user message (prompt, steer,
    /// follow-up) entering the transcript.
    MessageStart {
        role: String,
    },
    MessageDelta {
        text: String,
    },
    MessageEnd {
        entry_id: String,
        message: Message,
    },
    ToolStart {
        call_id: String,
        name: String,
        arguments: Value,
    },
    ToolUpdate {
        call_id: String,
        text: String,
    },
    ToolEnd {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
    },
    ApprovalRequested {
        request_id: String,
        call_id: String,
        name: String,
        arguments: Value,
    },
    ApprovalResolved {
        request_id: String,
        call_id: String,
        decision: ApprovalDecision,
    },
    TurnEnd {
        step: u32,
        tool_calls: u32,
    },
    /// Something the user should know that is not part of the transcript: a failing
    /// hook, a retry, a model that cannot use tools.
    Notice {
        level: NoticeLevel,
        message: String,
    },
    /// What the gather phase put in front of the model: workspace files (with their size
    /// and whether they were cut to fit) and the citations of recalled memory.
    ContextGathered {
        parts: Vec<ContextPart>,
        recall: Vec<String>,
    },
    CompactionStart {
        reason: String,
    },
    CompactionEnd {
        tokens_before: u64,
        tokens_after: u64,
    },
    MemoryFlushed {
        path: String,
        bullets: u32,
    },
    AgentEnd {
        outcome: Outcome,
        summary: RunSummary,
        session_id: String,
    },
}

/// One piece of gathered context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextPart {
    /// What it is: a file (`MEMORY.md`, `memory/2026-03-01.md`) or a list (`skills`).
    pub name: String,
    pub chars: u64,
    /// Cut to fit its budget.
    pub cut: bool,
}
