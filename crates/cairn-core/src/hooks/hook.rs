//! The hook trait: where in a run a hook is called, what it sees there and what it may
//! decide.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_llm::ChatRequest;
use cairn_memory::Workspace;
use cairn_protocol::{AssistantMessage, ErrorInfo, Outcome, RunSummary, SessionEntry, ToolCall};

use crate::tools::ToolOutput;

/// Where in a run a hook is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookKind {
    /// Once per run, after the prompt was ingested.
    PreCall,
    /// Before each model call; may edit the request.
    PreReasoning,
    /// After each model answer.
    PostReasoning,
    /// Before each tool call; may allow, deny or ask the user.
    PreTool,
    /// After each tool call; may replace the result.
    PostTool,
    /// When the model has answered without asking for tools and the run would end: a
    /// `Block` keeps it going (once per run), its reason told to the model.
    Stop,
    /// Once per run, after it ended.
    PostCall,
    /// When the run fails.
    Error,
    /// Every entry added to the session.
    Entry,
    /// A save point: the transcript is consistent (every tool call answered).
    SavePoint,
}

/// What a hook is shown, by point. Mutable parts may be changed by the hook.
pub enum HookPoint<'a> {
    PreCall {
        prompt: &'a str,
        /// Text a hook adds to the model's context for this run.
        context: &'a mut Vec<String>,
    },
    PreReasoning {
        request: &'a mut ChatRequest,
    },
    PostReasoning {
        message: &'a AssistantMessage,
    },
    /// A hook may rewrite the call's arguments; the gate then judges the call as
    /// rewritten.
    PreTool {
        call: &'a mut ToolCall,
    },
    PostTool {
        call: &'a ToolCall,
        output: &'a mut ToolOutput,
    },
    Stop {
        /// The model's last text answer.
        answer: &'a str,
        /// Whether a stop hook already kept this run going (as `stop_hook_active` in the
        /// popular CLIs): a second block is not obeyed.
        active: bool,
    },
    PostCall {
        outcome: &'a Outcome,
        summary: &'a RunSummary,
    },
    Error {
        error: &'a ErrorInfo,
    },
    Entry {
        entry: &'a SessionEntry,
    },
    /// `wait`: everything must be on disk before it returns (the run, or an operation
    /// outside runs, ends here, or what comes next relies on it). Otherwise the sync may
    /// finish during the next step.
    SavePoint {
        wait: bool,
    },
}

impl HookPoint<'_> {
    pub fn kind(&self) -> HookKind {
        match self {
            HookPoint::PreCall { .. } => HookKind::PreCall,
            HookPoint::PreReasoning { .. } => HookKind::PreReasoning,
            HookPoint::PostReasoning { .. } => HookKind::PostReasoning,
            HookPoint::PreTool { .. } => HookKind::PreTool,
            HookPoint::PostTool { .. } => HookKind::PostTool,
            HookPoint::Stop { .. } => HookKind::Stop,
            HookPoint::PostCall { .. } => HookKind::PostCall,
            HookPoint::Error { .. } => HookKind::Error,
            HookPoint::Entry { .. } => HookKind::Entry,
            HookPoint::SavePoint { .. } => HookKind::SavePoint,
        }
    }
}

/// A hook's verdict. Only `PreTool` looks at Allow / Deny / Ask; `Block` at any point
/// but `Stop` ends the run with outcome `blocked` (at `Stop` it blocks the stop instead).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookDecision {
    /// No opinion: the next hook decides.
    Continue,
    /// Run the tool call without asking (later hooks are skipped).
    Allow,
    /// Do not run the tool call; the model is told why.
    Deny { reason: String },
    /// Ask the user before running the tool call.
    Ask,
    /// The run cannot go on.
    Block { reason: String },
}

/// A hook that failed. The failure is reported to the user and the run goes on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HookError(pub String);

/// What every hook call can see besides the point itself.
#[derive(Clone)]
pub struct HookCtx {
    pub session_id: String,
    pub run_id: String,
    pub step: u32,
    pub workspace: Arc<Workspace>,
}

/// Code run at points of a run.
#[async_trait]
pub trait Hook: Send + Sync {
    fn name(&self) -> &str;

    /// Lower runs first. Built-ins: tracing -1000, approvals 100, persistence 1000.
    fn priority(&self) -> i32 {
        0
    }

    /// Whether to call this hook at `kind`.
    fn subscribes(&self, kind: HookKind) -> bool;

    async fn on(&self, ctx: &HookCtx, point: &mut HookPoint<'_>)
        -> Result<HookDecision, HookError>;
}
