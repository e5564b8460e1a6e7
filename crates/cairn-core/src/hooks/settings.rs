//! `[hooks]` in config.toml: the user's own commands at points of a run, as the hooks that
//! run them read them.

use serde::{Deserialize, Serialize};

/// One of the user's hook commands (`[[hooks.pre_tool]]` ...).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct HookCommand {
    /// A tool name, or a regular expression over tool names (`pre_tool`, `post_tool`);
    /// absent: every tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// Run with `sh -c` in a neutral folder (the workspace named in `CAIRN_WORKSPACE`), the
    /// event as JSON on stdin.
    pub command: String,
    /// Seconds before it is killed (default 30, at most 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
}

/// `[hooks]`: the user's own commands at points of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct HookSettings {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pre_tool: Vec<HookCommand>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub post_tool: Vec<HookCommand>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_prompt: Vec<HookCommand>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<HookCommand>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session_start: Vec<HookCommand>,
    /// Runs every hook inside the shell's sandbox (default false: they are your own
    /// commands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<bool>,
    /// Whether sandboxed hooks reach the network (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
}

impl HookSettings {
    pub fn is_empty(&self) -> bool {
        self.pre_tool.is_empty()
            && self.post_tool.is_empty()
            && self.user_prompt.is_empty()
            && self.stop.is_empty()
            && self.session_start.is_empty()
    }
}
