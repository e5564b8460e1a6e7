//! Tools the model can call: a registry of named tools with JSON-schema parameters, the
//! dispatcher that runs a step's calls, one handler file per tool with its own settings
//! and rules, and what the tools read from the workspace (skills, subagent definitions and
//! their front matter).
//!
//! The tools never see the agent running them: what the subagent and work-item tools need
//! of it is [`Workers`], which the agent implements.

pub mod approval;
pub mod dispatch;
mod error;
pub mod frontmatter;
pub mod handlers;
pub mod output;
pub mod prompts;
pub mod protect;
pub mod registry;
pub mod results;
pub mod skills;
pub mod subagents;
mod tool;

pub use error::ToolError;
pub use protect::{ProtectRules, ProtectSettings};
pub use registry::ToolRegistry;
pub use tool::{parse_args, Tool, ToolCtx, ToolOutput, Workers};
