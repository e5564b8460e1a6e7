//! MCP servers as the CLI (`cairn mcp list --json`) and the app's settings show them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a server stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum McpState {
    /// Not started (yet, or disabled).
    Stopped,
    Starting,
    Running,
    /// It exited and is being started again.
    Restarting,
    /// It could not be started, or kept exiting: `error` says why.
    Failed,
}

/// How Cairn reaches a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum McpTransport {
    Stdio,
    Http,
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub struct McpServerStatus {
    pub name: String,
    pub transport: McpTransport,
    /// The command line or the URL.
    pub endpoint: String,
    pub enabled: bool,
    pub state: McpState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Times it was started again after exiting.
    #[serde(default)]
    pub restarts: u32,
    /// Its tools as the model sees them (known once it has run).
    #[serde(default)]
    pub tools: Vec<McpToolInfo>,
}

/// A server's tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub struct McpToolInfo {
    /// The name the model calls: `<server>__<tool>`.
    pub name: String,
    /// Its name on the server.
    pub server_name: String,
    pub description: String,
    /// `allow`, `ask` or `deny` (a policy's name).
    #[ts(type = "Policy")]
    pub approval: String,
}
