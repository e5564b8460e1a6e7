//! The Cairn harness: one run is Ingest -> Gather -> Respond -> Recover.
//!
//! [`Agent`] is the handle front ends hold. It owns a session, a provider, the tools and the
//! hooks; every front end observes it through the same [`AgentEvent`] stream.
//!
//! Map of the crate:
//! - `agent/`: the run pipeline (`run.rs`), the model step (`stream.rs`), tool execution with
//!   approvals (`execute.rs`), queues and phase (`state.rs`), the workspace context (`context.rs`).
//! - `session/`: session files: the tree in memory, the writer thread, loading with repair.
//! - `hooks/`: the hook trait and the built-in hooks (tracing, persistence, approvals).
//! - `tools/`: the registry, the dispatcher and one handler file per tool.
//! - `subagents/`: definitions in `subagents/`, starting a subagent with its own session
//!   and nested events, the task table and the report it sends back.
//! - `upkeep/`: memory that keeps itself: model calls outside a conversation, and
//!   consolidation of the daily logs into MEMORY.md with its background scheduler.
//!
//! [`AgentEvent`]: cairn_protocol::AgentEvent

pub mod agent;
pub mod config;
pub mod error;
pub mod events;
pub mod frontmatter;
pub mod hooks;
pub mod launch;
pub mod mcp;
pub mod session;
pub mod settings;
pub mod skills;
pub mod subagents;
pub mod tools;
pub mod upkeep;

pub use agent::{Agent, AgentParts, RunReport};
pub use config::{
    AgentConfig, ApprovalPolicy, Completion, ContextBudget, Policy, PurposeTimeouts, StallLimits,
    SubagentLimits,
};
pub use error::HarnessError;
pub use events::EventBus;
