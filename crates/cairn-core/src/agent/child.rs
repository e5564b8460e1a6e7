//! A subagent's agent, made from its parent's: the same workspace, memory, approval
//! policy and pending approvals (a subagent's request is answered in the parent's
//! window), the parent's tools narrowed to the definition's list, its own session.

use std::sync::Arc;

use cairn_llm::Provider;

use super::{Agent, AgentParts, Inner, Upkeep};
use crate::session::OpenedSession;
use crate::tools::handlers::subagents::TOOL_NAMES;

/// What a subagent gets besides what it inherits.
pub(crate) struct ChildSpec {
    pub name: String,
    pub instructions: String,
    pub session: OpenedSession,
    /// Its own provider and model; `None`: the parent's.
    pub model: Option<(Arc<dyn Provider>, String)>,
    /// `provider/model` of the model it runs on.
    pub model_label: String,
    /// The tools it may use; `None`: all of the parent's.
    pub tools: Option<Vec<String>>,
    pub max_steps: Option<u32>,
    /// Where its file changes are kept: the run of the call that started it.
    pub changes: Option<cairn_memory::changes::ChangeScope>,
}

impl Agent {
    /// The agent of a subagent started by `parent`'s run.
    pub(crate) fn child(parent: &Arc<Inner>, spec: ChildSpec) -> Agent {
        let settings = parent.state().settings.clone();
        let depth = parent.depth + 1;
        let (provider, model) = spec
            .model
            .unwrap_or_else(|| (settings.provider.clone(), settings.config.model.clone()));
        let mut tools = settings.tools.clone();
        if let Some(allowed) = &spec.tools {
            tools.retain(allowed);
        }
        if depth >= settings.config.subagents.max_depth {
            for name in TOOL_NAMES {
                tools.remove(name);
            }
        }
        // Its way to report findings, learnings and escalations, whatever else it has.
        tools.register(Arc::new(crate::tools::handlers::report::Report));
        let mut config = settings.config.clone();
        config.model = model;
        config.model_label = Some(spec.model_label);
        // A definition may ask for fewer steps than its parent has, never more.
        config.max_steps = spec
            .max_steps
            .unwrap_or(config.max_steps)
            .clamp(1, config.max_steps.max(1));
        config.timeouts.chat = config.timeouts.subagents.or(config.timeouts.chat);
        let base = config
            .system_prompt
            .as_deref()
            .unwrap_or_else(|| super::builtin_prompt());
        config.system_prompt = Some(format!(
            "{}\n\n# Your role: the subagent `{}`\n\nAnother agent started you for one task \
             and receives your final answer as your report: make it complete and \
             self-contained. Before it, call `report` with your findings (each with its \
             evidence), learnings worth keeping, and escalations (what you need from the \
             user). If you cannot do the task, call `block` with the reason.\n\n{}",
            base.trim_end(),
            spec.name,
            spec.instructions
        ));
        let parts = AgentParts {
            workspace: parent.workspace.clone(),
            provider,
            session: spec.session,
            config,
            tools,
            // The user's hooks judge a subagent's calls as they judge the parent's.
            hooks: parent.added_hooks.clone(),
            memory: parent.memory.clone(),
            // The parent's flush covers the report; a subagent keeps no memory of its own.
            upkeep: Upkeep::default(),
            // The parent's MCP tools are in `tools` already.
            mcp: None,
            models: parent.models.clone(),
        };
        let agent = Self::assemble(parts, parent.approvals.clone(), parent.desk.clone(), depth);
        if let Some(scope) = spec.changes {
            let _ = agent.inner.changes.set(scope);
        }
        agent
    }
}
