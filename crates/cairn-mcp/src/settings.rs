//! `[mcp.servers.<name>]` in config.toml: the MCP servers whose tools the model may call.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use cairn_tools::approval::Policy;

/// `[mcp]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct McpSettings {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, McpServerSettings>,
}

/// One server: a command speaking MCP on stdio, or a streamable HTTP `url`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct McpServerSettings {
    /// The program to start (found on PATH), for a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables added to the server's environment (Cairn's own keys are never passed on).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Its working directory (default: the workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// The endpoint of a streamable HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers sent with every HTTP request (e.g. `Authorization`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Default true; a disabled server is never started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Started when Cairn starts rather than when a run first needs its tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eager: Option<bool>,
    /// Whether its tools run without asking: `allow`, `ask` (default) or `deny`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Policy>,
    /// The same per tool, by the tool's name on the server.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, Policy>,
    /// Seconds a start (process, handshake, tool list) may take (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout_s: Option<u64>,
    /// Seconds one tool call may take (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_timeout_s: Option<u64>,
    /// Runs a stdio server inside the shell's sandbox (default false: it is your own
    /// program): the system read-only, the workspace writable but for its protected entries,
    /// credentials and Cairn's config folder hidden, a private `/tmp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<bool>,
    /// Whether a sandboxed server reaches the network (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
}

/// Longest server name: the exposed tool names (`<server>__<tool>`) must stay short.
const MAX_NAME: usize = 32;

impl McpServerSettings {
    pub fn enabled(&self) -> bool {
        self.enabled != Some(false)
    }

    /// How the server is reached, for lists and messages: the command line or the URL.
    pub fn endpoint(&self) -> String {
        match (&self.command, &self.url) {
            (Some(command), _) => std::iter::once(command.as_str())
                .chain(self.args.iter().map(String::as_str))
                .map(shown_word)
                .collect::<Vec<_>>()
                .join(" "),
            (None, Some(url)) => url.clone(),
            (None, None) => String::new(),
        }
    }

    /// The policy of the server's tool `tool` (its name on the server).
    pub fn policy(&self, tool: &str) -> Policy {
        self.tools
            .get(tool)
            .copied()
            .or(self.approval)
            .unwrap_or(Policy::Ask)
    }
}

/// A word of a command line as a shell would need it.
fn shown_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,".contains(c));
    match plain {
        true => word.to_string(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

impl McpSettings {
    /// What is wrong with the servers as written, one message each (an empty list: nothing).
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for (name, server) in &self.servers {
            if let Err(e) = check_name(name) {
                problems.push(format!("[mcp.servers.{name}]: {e}"));
            }
            let what = match (&server.command, &server.url) {
                (Some(_), Some(_)) => Some("has both `command` and `url`; give one"),
                (None, None) => Some("needs `command` (a stdio server) or `url` (HTTP)"),
                (Some(c), None) if c.trim().is_empty() => Some("has an empty `command`"),
                (None, Some(url))
                    if !(url.starts_with("http://") || url.starts_with("https://")) =>
                {
                    Some("`url` must start with http:// or https://")
                }
                _ => None,
            };
            if let Some(what) = what {
                problems.push(format!("[mcp.servers.{name}] {what}"));
            }
            if server.url.is_some() && (server.sandbox.is_some() || server.network.is_some()) {
                problems.push(format!(
                    "[mcp.servers.{name}]: `sandbox` and `network` are for stdio servers Cairn \
                     starts, not `url`"
                ));
            }
            if server.url.is_some() && (!server.args.is_empty() || !server.env.is_empty()) {
                problems.push(format!(
                    "[mcp.servers.{name}]: `args` and `env` are for stdio servers, not `url`"
                ));
            }
        }
        problems
    }
}

/// Server names become tool name prefixes: letters, digits, `-` and `_`, without `__`.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(format!("a server name has 1 to {MAX_NAME} characters"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err("a server name has only letters, digits, `-` and `_`".into());
    }
    if name.contains("__") || name.starts_with('_') || name.ends_with('_') {
        return Err("a server name may not hold `__` or start or end with `_`".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> McpSettings {
        #[derive(Deserialize)]
        struct File {
            mcp: McpSettings,
        }
        toml::from_str::<File>(text).unwrap().mcp
    }

    #[test]
    fn the_documented_shape_reads_back() {
        let mcp = parse(
            r#"
[mcp.servers.everything]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-everything"]
env = { DEBUG = "1" }
eager = true
approval = "allow"
tools = { longRunningOperation = "ask" }

[mcp.servers.remote]
url = "https://example.com/mcp"
headers = { Authorization = "Bearer x" }
enabled = false
"#,
        );
        assert!(mcp.problems().is_empty(), "{:?}", mcp.problems());
        let everything = &mcp.servers["everything"];
        assert_eq!(
            everything.endpoint(),
            "npx -y @modelcontextprotocol/server-everything"
        );
        assert_eq!(everything.policy("echo"), Policy::Allow);
        assert_eq!(everything.policy("longRunningOperation"), Policy::Ask);
        assert!(!mcp.servers["remote"].enabled());
        assert_eq!(mcp.servers["remote"].policy("x"), Policy::Ask);
    }

    #[test]
    fn bad_servers_are_named_with_what_is_wrong() {
        let mcp = parse(
            r#"
[mcp.servers.both]
command = "x"
url = "http://h"
[mcp.servers.none]
[mcp.servers."a__b"]
command = "x"
[mcp.servers.ftp]
url = "ftp://h"
"#,
        );
        let problems = mcp.problems().join("\n");
        assert!(
            problems.contains("[mcp.servers.both] has both"),
            "{problems}"
        );
        assert!(problems.contains("[mcp.servers.none] needs"), "{problems}");
        assert!(problems.contains("a__b"), "{problems}");
        assert!(problems.contains("http:// or https://"), "{problems}");
    }

    #[test]
    fn odd_words_are_quoted_in_the_command_line() {
        let server = McpServerSettings {
            command: Some("node".into()),
            args: vec!["my server.js".into(), "it's".into()],
            ..Default::default()
        };
        assert_eq!(server.endpoint(), r"node 'my server.js' 'it'\''s'");
    }
}
