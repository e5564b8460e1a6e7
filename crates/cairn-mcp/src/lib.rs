//! MCP both ways. As a client: the user's servers (`[mcp.servers.<name>]`), started when a
//! run first needs their tools (or at start with `eager`), their tools offered to the model
//! as `<server>__<tool>` and asked about before they run unless the settings say otherwise.
//! As a server: `cairn mcp serve` gives other agents the workspace's memory ([`serve`]).

pub mod serve;
mod server;
pub mod settings;
mod tool;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use cairn_protocol::{McpServerStatus, McpState, McpToolInfo};

pub use server::HubOptions;
use server::Server;
pub use settings::{McpServerSettings, McpSettings};

use cairn_tools::approval::{Policy, ServerPolicy};
use cairn_tools::Tool;

/// The configured servers of one Cairn process.
#[derive(Default)]
pub struct McpHub {
    servers: Vec<Arc<Server>>,
    /// Servers whose settings are wrong, with what is wrong.
    broken: BTreeMap<String, String>,
    /// The last failure reported per server, so each is told once.
    reported: Mutex<BTreeMap<String, String>>,
}

/// What a run gets: the tools of the servers that run, and what went wrong with the
/// others (each failure once).
pub struct McpTools {
    pub tools: Vec<Arc<dyn Tool>>,
    pub problems: Vec<String>,
}

impl McpHub {
    pub fn new(settings: &McpSettings, options: HubOptions) -> Self {
        let options = Arc::new(options);
        let mut broken = BTreeMap::new();
        for problem in settings.problems() {
            let name = problem
                .trim_start_matches("[mcp.servers.")
                .split(']')
                .next()
                .unwrap_or_default()
                .to_string();
            broken.insert(name, problem);
        }
        let servers = settings
            .servers
            .iter()
            .filter(|(name, _)| !broken.contains_key(*name))
            .map(|(name, s)| Server::new(name.clone(), s.clone(), options.clone()))
            .collect();
        Self {
            servers,
            broken,
            reported: Mutex::default(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.broken.is_empty()
    }

    /// Starts the enabled servers marked `eager`, in the background.
    pub fn start_eager(&self) {
        for server in &self.servers {
            if server.settings.enabled() && server.settings.eager == Some(true) {
                let server = server.clone();
                tokio::spawn(async move { server.connection().await });
            }
        }
    }

    /// The tools of every enabled server, starting those not running (all at once).
    pub async fn tools(&self) -> McpTools {
        let enabled: Vec<_> = self
            .servers
            .iter()
            .filter(|s| s.settings.enabled())
            .collect();
        let connections = futures::future::join_all(enabled.iter().map(|s| s.connection())).await;
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut problems = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (server, connection) in enabled.into_iter().zip(connections) {
            let failure = match connection {
                Ok(conn) => {
                    for def in conn.tools.iter() {
                        match tool::McpTool::new(server.clone(), def) {
                            Ok(t) if seen.insert(t.spec.name.clone()) => tools.push(Arc::new(t)),
                            Ok(t) => problems.push(format!(
                                "the MCP server `{}` has two tools named `{}`; the second was left out",
                                server.name, t.spec.name
                            )),
                            Err(why) => problems.push(why),
                        }
                    }
                    None
                }
                Err(why) => Some(format!(
                    "the MCP server `{}` is not available: {why}",
                    server.name
                )),
            };
            problems.extend(self.first_report(&server.name, failure));
        }
        for (name, problem) in &self.broken {
            problems.extend(self.first_report(name, Some(problem.clone())));
        }
        McpTools { tools, problems }
    }

    /// `failure` when it was not the last thing reported for `server`.
    fn first_report(&self, server: &str, failure: Option<String>) -> Option<String> {
        let mut reported = self.reported.lock().unwrap_or_else(|e| e.into_inner());
        match failure {
            None => {
                reported.remove(server);
                None
            }
            Some(why) if reported.get(server) == Some(&why) => None,
            Some(why) => {
                reported.insert(server.to_string(), why.clone());
                Some(why)
            }
        }
    }

    /// Every configured server as it stands, in name order.
    pub fn status(&self) -> Vec<McpServerStatus> {
        let mut list: Vec<McpServerStatus> = self
            .servers
            .iter()
            .map(|server| {
                let (state, error, restarts, defs) = server.snapshot();
                let tools = defs
                    .iter()
                    .map(|def| {
                        let name = tool::exposed_name(&server.name, &def.name);
                        let short = name[server.name.len() + 2..].to_string();
                        McpToolInfo {
                            server_name: def.name.to_string(),
                            description: def.description.as_deref().unwrap_or_default().into(),
                            approval: policy_word(server.settings.policy(&short)).into(),
                            name,
                        }
                    })
                    .collect();
                McpServerStatus {
                    name: server.name.clone(),
                    transport: server.transport(),
                    endpoint: server.settings.endpoint(),
                    enabled: server.settings.enabled(),
                    state,
                    error,
                    restarts,
                    tools,
                }
            })
            .collect();
        for (name, problem) in &self.broken {
            list.push(McpServerStatus {
                name: name.clone(),
                transport: cairn_protocol::McpTransport::Stdio,
                endpoint: String::new(),
                enabled: false,
                state: McpState::Failed,
                error: Some(problem.clone()),
                restarts: 0,
                tools: Vec::new(),
            });
        }
        list.sort_by(|a, b| a.name.cmp(&b.name));
        list
    }

    /// How each server's tools are approved, for the approval policy.
    pub fn policies(&self) -> BTreeMap<String, ServerPolicy> {
        self.servers
            .iter()
            .map(|s| {
                let policy = ServerPolicy {
                    default: s.settings.approval,
                    tools: s.settings.tools.clone(),
                };
                (s.name.clone(), policy)
            })
            .collect()
    }

    /// Stops every server (their processes end).
    pub async fn shutdown(&self) {
        futures::future::join_all(self.servers.iter().map(|s| s.stop())).await;
    }
}

fn policy_word(policy: Policy) -> &'static str {
    match policy {
        Policy::Allow => "allow",
        Policy::Ask => "ask",
        Policy::Deny => "deny",
    }
}

#[cfg(test)]
mod tests;
