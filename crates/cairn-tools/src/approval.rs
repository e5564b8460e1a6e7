//! Which tool calls run without asking: a policy per tool with a default, and for an MCP
//! server's tools what its own settings say.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Whether a tool call may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
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
    /// The MCP servers' own settings (`approval`, `tools` under `[mcp.servers.<name>]`),
    /// for their tools `<server>__<tool>` not named in `tools`.
    #[serde(skip)]
    pub mcp: BTreeMap<String, ServerPolicy>,
}

/// How the tools of one MCP server are approved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerPolicy {
    /// The server's `approval` (absent: ask).
    pub default: Option<Policy>,
    /// Per tool, by its name after `<server>__`.
    pub tools: BTreeMap<String, Policy>,
}

impl Default for ApprovalPolicy {
    /// File tools stay inside the workspace and run freely; the shell and the web (a
    /// page fetched, a query sent to a search service) ask first.
    fn default() -> Self {
        Self {
            default: Policy::Allow,
            tools: BTreeMap::from([
                ("bash".to_string(), Policy::Ask),
                ("web_fetch".to_string(), Policy::Ask),
                ("web_search".to_string(), Policy::Ask),
            ]),
            mcp: BTreeMap::new(),
        }
    }
}

impl ApprovalPolicy {
    /// Everything runs without asking (`--yes`).
    pub fn allow_all() -> Self {
        Self {
            default: Policy::Allow,
            tools: BTreeMap::new(),
            mcp: BTreeMap::new(),
        }
    }

    /// The policy of the tool `name`: as `tools` names it; for an MCP server's tool, as
    /// the server's settings say, asking when they say nothing (denying when the default
    /// denies); otherwise the default.
    pub fn for_tool(&self, name: &str) -> Policy {
        if let Some(policy) = self.tools.get(name) {
            return *policy;
        }
        let server = name
            .split_once("__")
            .and_then(|(server, tool)| Some((self.mcp.get(server)?, tool)));
        match server {
            Some((server, tool)) => server
                .tools
                .get(tool)
                .copied()
                .or(server.default)
                .unwrap_or(match self.default {
                    Policy::Deny => Policy::Deny,
                    _ => Policy::Ask,
                }),
            None => self.default,
        }
    }
}
