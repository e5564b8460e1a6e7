mod approvals;
mod consolidation;
mod gate;
mod gather;
mod hooks;
mod limits;
mod mcp;
mod outcomes;
#[cfg(unix)]
mod planted;
mod queues;
mod sessions;
mod subagents;
mod support;
mod tools;
mod upkeep;
mod user_hooks;
mod work;
