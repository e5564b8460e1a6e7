//! The `Tool` trait, what a call gets besides its arguments, and what it answers.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_memory::Workspace;
use cairn_protocol::{FileChange, ToolSpec};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::error::ToolError;
use crate::subagents::{Started, Tasks};

/// What the subagent and work-item tools need of the agent running their call. The agent
/// implements it, so the tools never reach into the agent itself.
#[async_trait]
pub trait Workers: Send + Sync {
    /// The limits of the subagents this agent starts.
    fn limits(&self) -> crate::subagents::SubagentLimits;
    /// How deep this agent is among subagents (0: started by a front end).
    fn depth(&self) -> u32;
    /// Starts a subagent in the background.
    async fn start(&self, start: crate::subagents::Start<'_>) -> Result<Started, ToolError>;
    /// The subagents it started.
    fn tasks(&self) -> &Tasks;
    /// Its session's work items as they stand.
    fn work_items(&self) -> Vec<cairn_protocol::WorkItem>;
}

/// What a tool gets besides its arguments.
#[derive(Clone)]
pub struct ToolCtx {
    pub workspace: Arc<Workspace>,
    pub call_id: String,
    /// Cancelled when the run is aborted: long tools must stop promptly.
    pub cancel: CancellationToken,
    /// Progress text shown live (`tool_update` events).
    pub updates: mpsc::UnboundedSender<(String, String)>,
    /// The agent running the call, as the subagent and work-item tools see it.
    pub agent: Option<Arc<dyn Workers>>,
    /// The run the call belongs to: files it changes are kept for review and revert
    /// (`None` outside a run, e.g. a call through Cairn's MCP server).
    pub changes: Option<cairn_memory::changes::ChangeScope>,
    /// Where the harness judged this call's write to land (relative to the workspace,
    /// every link followed) as the call started: the file tools write there or nowhere
    /// (`None` outside the harness, where they find the place themselves).
    pub judged: Option<std::path::PathBuf>,
}

impl ToolCtx {
    /// A call outside any run (Cairn's MCP server, benchmarks): no agent, no changes kept,
    /// progress dropped.
    pub fn outside_run(workspace: Arc<Workspace>, cancel: CancellationToken) -> Self {
        let (updates, _) = mpsc::unbounded_channel();
        Self {
            workspace,
            call_id: uuid::Uuid::now_v7().to_string(),
            cancel,
            updates,
            agent: None,
            changes: None,
            judged: None,
        }
    }

    /// Reports progress for this call.
    pub fn update(&self, text: impl Into<String>) {
        let _ = self.updates.send((self.call_id.clone(), text.into()));
    }
}

/// A tool's successful answer, as text for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
    /// A session entry the harness records after the step's results (the work items).
    pub entry: Option<cairn_protocol::EntryKind>,
    /// Pictures given with the text (`read_file` on a picture).
    pub pictures: Vec<cairn_protocol::Picture>,
    /// The call completes the run, with this as its final answer (`work_complete`).
    pub completes: Option<String>,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: false,
            entry: None,
            pictures: Vec::new(),
            completes: None,
        }
    }

    pub fn error(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: true,
            entry: None,
            pictures: Vec::new(),
            completes: None,
        }
    }
}

/// A tool the model can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Name, description and JSON-schema parameters.
    fn spec(&self) -> ToolSpec;

    /// Whether the tool only reads, so that it may run at the same time as other calls.
    /// Tools that change things run one at a time, in call order.
    fn parallel_safe(&self) -> bool {
        false
    }

    /// Whether a call may change workspace files by the time it returns (what the context
    /// is built from): every tool that changes things, and tools that only read
    /// themselves but wait on work that may write (a subagent's).
    fn may_write(&self) -> bool {
        !self.parallel_safe()
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError>;

    /// The workspace path this call would write, as the arguments give it, so the gate can
    /// ask first for protected files. Tools that write no file given by the model: `None`.
    fn writes(&self, _args: &Value) -> Option<String> {
        None
    }

    /// Why every call of this tool must be approved one by one whatever the policy says
    /// (the shell when its sandbox cannot start); such a call is never allowed "always".
    fn must_ask(&self) -> Option<String> {
        None
    }

    /// The file this call would change, before and after, to show as a diff before it
    /// runs; `None` when the tool changes no file or the change cannot be worked out (the
    /// call then fails or shows its arguments alone).
    async fn preview(&self, _args: &Value, _workspace: &Workspace) -> Option<FileChange> {
        None
    }
}

/// Parses a call's arguments into the tool's argument struct, with a message the model can
/// act on when they do not fit.
pub fn parse_args<T: serde::de::DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        Value::String(raw) => {
            return Err(ToolError::InvalidArguments(format!(
                "arguments must be a JSON object, got text that is not valid JSON: {raw}"
            )))
        }
        other => other,
    };
    serde_json::from_value(args).map_err(|e| ToolError::InvalidArguments(e.to_string()))
}
