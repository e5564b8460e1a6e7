//! The event stream every front end subscribes to.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::intent::Intent;
use crate::message::Message;
use crate::outcome::{Outcome, RunSummary};
use crate::work::WorkItem;

/// What the harness is doing. Structural operations need `Idle`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this one call.
    AllowOnce,
    /// Run this call and, for the rest of the session, every later call that the
    /// request's `always` scope covers (the tool, or a bash command prefix).
    AllowAlways,
    /// Do not run it; the model is told.
    Deny,
}

/// How loud a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    Info,
    Warning,
    Error,
}

/// Everything a run reports, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(rename = "RunEvent")]
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
    /// A piece of the model's reasoning before its answer (shown apart, folded).
    ThinkingDelta {
        text: String,
    },
    MessageEnd {
        entry_id: String,
        message: Message,
    },
    ToolStart {
        call_id: String,
        name: String,
        #[ts(type = "unknown")]
        arguments: Value,
        /// For calls that change a file: the file before and after (a diff to show).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        change: Option<FileChange>,
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
        /// Pictures the tool gave (`read_file` on a picture), shown on its card.
        #[serde(default)]
        pictures: Vec<crate::message::Picture>,
    },
    ApprovalRequested {
        request_id: String,
        call_id: String,
        name: String,
        #[ts(type = "unknown")]
        arguments: Value,
        /// For calls that change a file: the file before and after (a diff to show).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        change: Option<FileChange>,
        /// Why this call asks although the policy might allow it (a protected path).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// What "allow always" would allow from now on in this session, e.g. the tool
        /// `write_file`, or the bash commands starting with `git status`. `None`: the call
        /// can only be allowed once.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        always: Option<String>,
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
    /// The follow-ups waiting for the run to reach a stop, after each change. `returned`:
    /// follow-ups taken back undelivered (the run was stopped or ended without reaching
    /// one), for the front end to give back to the user.
    FollowUps {
        queued: Vec<String>,
        #[serde(default)]
        returned: Vec<String>,
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
        /// The intent step's reading of the message, when it ran.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        intent: Option<Intent>,
    },
    CompactionStart {
        reason: String,
        /// The summary is written while the run goes on, and swapped in when ready.
        #[serde(default)]
        background: bool,
    },
    CompactionEnd {
        tokens_before: u64,
        tokens_after: u64,
    },
    MemoryFlushed {
        path: String,
        bullets: u32,
    },
    /// The work items changed (a `todo_write` call): the whole list as it now stands.
    WorkItems {
        items: Vec<WorkItem>,
    },
    /// A model call failed in a way worth retrying; the next attempt starts after
    /// `delay_ms` (the phase is `retry` meanwhile).
    Retry {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    /// An event of a subagent started by the tool call `call_id` (its own events,
    /// nested: a subagent's subagent arrives as a `subagent` event inside this one).
    /// Approval requests inside are answered like the parent's own.
    Subagent {
        task_id: String,
        agent: String,
        call_id: String,
        /// `provider/model` the subagent runs on (its parent's model when neither the
        /// call nor its definition named one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model_used: Option<String>,
        event: Box<AgentEvent>,
    },
    AgentEnd {
        outcome: Outcome,
        summary: RunSummary,
        session_id: String,
        /// The model's last answer (on completion, the run's result).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<String>,
    },
}

impl AgentEvent {
    /// The event itself with the subagents it came through, outermost first (empty for
    /// the agent's own events).
    pub fn innermost(&self) -> (Vec<&str>, &AgentEvent) {
        let mut agents = Vec::new();
        let mut event = self;
        while let AgentEvent::Subagent {
            agent,
            event: inner,
            ..
        } = event
        {
            agents.push(agent.as_str());
            event = inner;
        }
        (agents, event)
    }
}

/// A file a tool call is about to change, as it is on disk and as it would be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub struct FileChange {
    /// The path relative to the workspace root, with forward slashes.
    pub path: String,
    /// The text on disk; `None` when the file does not exist yet.
    pub before: Option<String>,
    /// The text the call would leave.
    pub after: String,
}

/// One piece of gathered context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ContextPart {
    /// What it is: a file (`MEMORY.md`, `memory/2026-03-01.md`) or a list (`skills`).
    pub name: String,
    pub chars: u64,
    /// Cut to fit its budget.
    pub cut: bool,
}
