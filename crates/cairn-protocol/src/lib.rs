//! Plain data that crosses Cairn's boundaries (disk, IPC, HTTP).
//!
//! Nothing here has behaviour beyond small constructors and accessors: the types are
//! serde structs and enums tagged by `type` (or `role`) in `snake_case`, so the session
//! files, the CLI's `--json` output and the desktop app's event channel all share one
//! vocabulary.

pub mod error;
pub mod event;
pub mod intent;
pub mod mcp;
pub mod message;
pub mod modes;
pub mod outcome;
pub mod session;
pub mod tool;
pub mod work;

pub use error::{ErrorInfo, ErrorKind};
pub use event::{AgentEvent, ApprovalDecision, ContextPart, FileChange, NoticeLevel, Phase};
pub use intent::Intent;
pub use mcp::{McpServerStatus, McpState, McpToolInfo, McpTransport};
pub use message::{
    AssistantMessage, ContentBlock, Message, Picture, SentPicture, StopReason, ToolResultMessage,
    Usage,
};
pub use modes::{QueueMode, ThinkingLevel};
pub use outcome::{Outcome, RunSummary};
pub use session::{
    EntryKind, ParentLink, RunCheckpoint, SessionEntry, SessionHeader, SESSION_FORMAT_VERSION,
};
pub use tool::{ToolCall, ToolSpec};
pub use work::{WorkItem, WorkPriority, WorkStatus};
