//! Hooks: code that runs at fixed points of a run, ordered by priority.
//!
//! Some built-in behaviour uses the same mechanism as user hooks: tracing
//! ([`TracingHook`]), session persistence ([`PersistenceHook`]), approvals
//! ([`ApprovalHook`]) and tool-result eviction ([`EvictionHook`]). Compaction, the memory
//! flush and the workspace context are steps of the run, not hooks.

mod approval;
mod eviction;
mod hook;
mod persistence;
mod set;
mod settings;
mod shell;
mod tracing;

pub use self::approval::{ApprovalHook, ApprovalState};
pub use self::eviction::{evicted_view, EvictionHook};
pub use self::hook::{Hook, HookCtx, HookDecision, HookError, HookKind, HookPoint};
pub use self::persistence::PersistenceHook;
pub use self::set::HookSet;
pub use self::settings::{HookCommand, HookSettings};
pub use self::shell::ShellHooks;
pub use self::tracing::TracingHook;
