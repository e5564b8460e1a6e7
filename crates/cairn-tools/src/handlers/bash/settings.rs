//! `[tools.bash]` in config.toml: the command rules, the environment and the sandbox.

use serde::{Deserialize, Serialize};

/// `[tools.bash]` in config.toml.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct BashSettings {
    /// Variables passed on to commands even though they would be removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
    /// Command prefixes that run without asking, e.g. `["git status", "ls"]` (only while
    /// the sandbox holds the commands).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Command prefixes that are refused, e.g. `["git push", "rm -rf /"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// Whether commands run in the OS sandbox (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<bool>,
    /// Whether sandboxed commands may reach the network (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// Paths hidden from commands besides the credential stores, e.g. `["~/work/secrets"]`
    /// (relative ones from the workspace root).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hide: Vec<String>,
    /// Paths commands may read but not write (a credential store named here exactly is
    /// readable again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<String>,
    /// Paths outside the workspace commands may write, e.g. `["~/.cache/pip"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writable: Vec<String>,
}
