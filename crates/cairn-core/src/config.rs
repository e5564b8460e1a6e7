//! What a run is configured with: model, prompt, step budget, approval policy.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Whether a tool call may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    Allow,
    Ask,
    Deny,
}

/// Per-tool approval policy with a default for tools not listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct ApprovalPolicy {
    pub default: Policy,
    #[serde(default)]
    pub tools: BTreeMap<String, Policy>,
}

impl Default for ApprovalPolicy {
    /// File tools stay inside the workspace and run freely; the shell asks first.
    fn default() -> Self {
        Self {
            default: Policy::Allow,
            tools: BTreeMap::from([("bash".to_string(), Policy::Ask)]),
        }
    }
}

impl ApprovalPolicy {
    /// Everything runs without asking (`--yes`).
    pub fn allow_all() -> Self {
        Self {
            default: Policy::Allow,
            tools: BTreeMap::new(),
        }
    }

    pub fn for_tool(&self, name: &str) -> Policy {
        self.tools.get(name).copied().unwrap_or(self.default)
    }
}

/// Settings of an agent.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// Model name sent to the provider.
    pub model: String,
    /// Replaces the built-in system prompt when set. AGENTS.md is added either way.
    pub system_prompt: Option<String>,
    /// Model calls allowed per run.
    pub max_steps: u32,
    /// The same call this many times in a row stops the run as stalled.
    pub stall_repeats: u32,
    pub approval: ApprovalPolicy,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            model: String::new(),
            system_prompt: None,
            max_steps: 50,
            stall_repeats: 3,
            approval: ApprovalPolicy::default(),
            max_tokens: None,
            temperature: None,
        }
    }
}
