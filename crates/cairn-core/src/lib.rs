//! The Cairn harness: one run is Ingest -> Gather -> Respond -> Recover.
//!
//! [`Agent`] is the handle front ends hold. It owns a session, a provider, the tools and the
//! hooks; every front end observes a run through the same [`AgentEvent`] stream, and reads
//! the agent's state (phase, session tree, context usage) when it needs it.
//!
//! Map of the crate:
//! - `agent/`: the run pipeline (`run.rs`), a run's state which every step takes
//!   (`flow.rs`), the model step (`stream.rs`), tool execution with approvals
//!   (`execute.rs`), queues and phase (`state.rs`), the workspace context (`context.rs`).
//! - `session/`: session files: the tree in memory, the writer thread, loading with repair.
//! - `hooks/`: the hook trait, the built-in hooks (tracing, persistence, approvals,
//!   eviction) and the user's `[hooks]` commands.
//! - `subagents/`: starting a subagent with its own session and nested events (its
//!   definitions, report and task table are the tools' own, in `cairn-tools`).
//! - `upkeep/`: memory that keeps itself: model calls outside a conversation, and
//!   consolidation of the daily logs into MEMORY.md with its background scheduler.
//!
//! [`AgentEvent`]: cairn_protocol::AgentEvent

pub mod agent;
pub mod config;
pub mod error;
pub mod events;
pub mod hooks;
pub mod session;
pub mod subagents;
pub mod upkeep;

/// MCP both ways is its own crate, over the tools.
pub use cairn_mcp as mcp;
/// The tools, with the skills and subagent definitions they read, are their own crate; the
/// harness names them where it always did.
pub use cairn_tools as tools;
pub use cairn_tools::{frontmatter, prompts, skills};

pub use agent::{Agent, AgentParts, RunReport};
pub use config::{
    AgentConfig, ApprovalPolicy, Completion, ContextBudget, Policy, PurposeTimeouts, StallLimits,
    SubagentLimits,
};
pub use error::HarnessError;
pub use events::EventBus;
