//! What a run is configured with: model, prompt, step budget, approval policy.

pub use cairn_tools::approval::{ApprovalPolicy, Policy, ServerPolicy};
pub use cairn_tools::subagents::SubagentLimits;

/// Settings of an agent.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// Model name sent to the provider.
    pub model: String,
    /// `provider/model` as the settings name the model (what a subagent running on it
    /// reports as `model_used`); `None`: the model's name alone.
    pub model_label: Option<String>,
    /// Replaces the built-in system prompt when set. AGENTS.md is added either way.
    pub system_prompt: Option<String>,
    /// Model calls allowed per run.
    pub max_steps: u32,
    /// Longest time a run may take in all; it then ends as failed with a timeout.
    pub deadline: Option<std::time::Duration>,
    /// When a run stops as stalled.
    pub stall: StallLimits,
    /// Whether a run may complete with open work items.
    pub completion: Completion,
    /// Limits of the subagents this agent starts.
    pub subagents: SubagentLimits,
    /// The longest one model call may take, per purpose.
    pub timeouts: PurposeTimeouts,
    /// The user's own skills, beside the workspace's (`<config dir>/skills`).
    pub user_skills: Option<std::path::PathBuf>,
    pub approval: ApprovalPolicy,
    /// Writes that ask first whatever `approval` says.
    pub protect: crate::tools::ProtectRules,
    /// Bash command prefixes allowed without asking or refused (`[tools.bash]`).
    pub bash_rules: crate::tools::handlers::bash::CommandRules,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    /// How much the model reasons first (the conversation's level); `None`: as the
    /// provider's settings say.
    pub thinking: Option<cairn_protocol::ThinkingLevel>,
    /// When to compact and what to keep.
    pub context: ContextBudget,
    /// How steering messages are delivered at a save point (`[run] steering_mode`).
    pub steering_mode: cairn_protocol::QueueMode,
    /// How follow-ups are delivered where the run would end (`[run] follow_up_mode`).
    pub follow_up_mode: cairn_protocol::QueueMode,
    /// Tool results longer than this many characters are saved to a file and replaced by
    /// their head and tail (file and memory tools excepted).
    pub evict_tool_output_chars: usize,
}

/// The context budget: the window, the room kept free in it, the recent part a
/// compaction keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextBudget {
    /// The model's context window in tokens; `None`: ask the provider, else 128,000.
    pub window: Option<u64>,
    /// Tokens kept free below the window for the answer; a request that would pass
    /// `window - reserve` compacts first. Capped at a quarter of small windows.
    pub reserve_tokens: u64,
    /// Tokens of recent conversation a compaction keeps as they are. Capped at a quarter
    /// of small windows.
    pub keep_recent_tokens: u64,
    /// The compact context for a model that cannot use tools; for one that can, the
    /// workspace context cut to a share of a small window.
    pub compact: bool,
    /// Compaction as the window fills (`[compaction] enabled`): old tool output pruned,
    /// then the older conversation summarised. Off, the conversation is sent whole, and a
    /// request the model's window cannot take ends the run saying so; compacting by hand
    /// still works.
    pub compaction: bool,
    /// The summary is asked for in the background once the conversation passes
    /// `start_percent` of the room before the window, and swapped in when ready
    /// (`[compaction] mode = "background"`, the default); false: only at the limit, with
    /// the run waiting (`"inline"`).
    pub background: bool,
    /// Where a background summary starts, in percent of `window - reserve` (default 75).
    pub start_percent: u8,
}

impl Default for ContextBudget {
    fn default() -> Self {
        Self {
            window: None,
            reserve_tokens: 16_000,
            keep_recent_tokens: 20_000,
            compact: true,
            compaction: true,
            background: true,
            start_percent: 75,
        }
    }
}

/// The window assumed when neither the settings nor the provider say.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

impl ContextBudget {
    /// The window, the reserve and the kept tail for a provider that says `provider_window`.
    pub fn resolve(&self, provider_window: Option<u64>) -> (u64, u64, u64) {
        let window = self
            .window
            .or(provider_window)
            .unwrap_or(DEFAULT_CONTEXT_WINDOW)
            .max(512);
        let quarter = window / 4;
        (
            window,
            self.reserve_tokens.min(quarter),
            self.keep_recent_tokens.min(quarter),
        )
    }
}

impl AgentConfig {
    /// `provider/model` for the model this agent runs on, or its name alone when the
    /// label given is for another model (the session switched models).
    pub fn model_label(&self) -> String {
        self.model_label
            .clone()
            .filter(|label| {
                label
                    .strip_suffix(&self.model)
                    .is_some_and(|p| p.ends_with('/'))
            })
            .unwrap_or_else(|| self.model.clone())
    }
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            model: String::new(),
            model_label: None,
            system_prompt: None,
            max_steps: 50,
            deadline: None,
            stall: StallLimits::default(),
            completion: Completion::default(),
            subagents: SubagentLimits::default(),
            timeouts: PurposeTimeouts::default(),
            user_skills: None,
            approval: ApprovalPolicy::default(),
            protect: crate::tools::ProtectRules::default(),
            bash_rules: crate::tools::handlers::bash::CommandRules::default(),
            max_tokens: None,
            temperature: None,
            thinking: None,
            context: ContextBudget::default(),
            steering_mode: cairn_protocol::QueueMode::All,
            follow_up_mode: cairn_protocol::QueueMode::All,
            evict_tool_output_chars: 50_000,
        }
    }
}

/// When a run counts as going round in circles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StallLimits {
    /// The same call, or the same cycle of up to four calls, this many times in a row
    /// (at least 2).
    pub repeats: u32,
    /// The same failure of the same tool this many times in a row (0: never).
    pub same_results: u32,
}

impl Default for StallLimits {
    fn default() -> Self {
        Self {
            repeats: 3,
            same_results: 6,
        }
    }
}

impl StallLimits {
    /// The limits with `repeats` at least 2 (one call is never a stall).
    pub fn sane(self) -> Self {
        Self {
            repeats: self.repeats.max(2),
            ..self
        }
    }
}

/// Whether a run may end while work items are open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Completion {
    /// The run completes when the model stops asking for tools.
    #[default]
    Lenient,
    /// A model that stops with open items is asked to go on this many times, then the run
    /// ends blocked with the open items as the reason.
    Strict { nudges: u32 },
}

/// The longest one model call may take in all, per purpose (`[timeouts]`); `None`: the
/// provider's own limit (`call_timeout_s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PurposeTimeouts {
    pub chat: Option<std::time::Duration>,
    pub memory_flush: Option<std::time::Duration>,
    pub compaction: Option<std::time::Duration>,
    pub consolidation: Option<std::time::Duration>,
    /// A subagent's model calls (else the chat limit).
    pub subagents: Option<std::time::Duration>,
    /// Gather's intent step (it delays every run: default 30 s).
    pub intent: Option<std::time::Duration>,
}

impl Default for PurposeTimeouts {
    fn default() -> Self {
        Self {
            chat: None,
            memory_flush: None,
            compaction: None,
            consolidation: None,
            subagents: None,
            intent: Some(std::time::Duration::from_secs(30)),
        }
    }
}
