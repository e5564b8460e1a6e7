//! `cairn mcp list`: the configured MCP servers, started to show their tools.
//! `cairn mcp serve`: the workspace's memory as an MCP server on stdio.

use cairn_app::cairn_core::mcp::serve::MemoryServer;
use cairn_app::launch::{self, Memory};
use cairn_protocol::{McpServerStatus, McpState};
use rmcp::ServiceExt;

use crate::args::{Cli, McpCommand};
use crate::escape;
use crate::setup;
use crate::terminal::{self, Style};

pub async fn run(cli: &Cli, command: &McpCommand) -> anyhow::Result<u8> {
    match command {
        McpCommand::List { json } => list(cli, *json).await,
        McpCommand::Serve { allow_save } => serve(cli, *allow_save).await,
    }
}

async fn list(cli: &Cli, json: bool) -> anyhow::Result<u8> {
    let config = setup::config(cli)?;
    let workspace = setup::workspace(cli, &config)?;
    let mut warnings = Vec::new();
    let hub = launch::mcp_hub(&config, &workspace, &mut |w| warnings.push(w));
    let servers = match &hub {
        Some(hub) => {
            // Start every enabled server to learn its tools (what a run would do).
            hub.tools().await;
            let status = hub.status();
            hub.shutdown().await;
            status
        }
        None => Vec::new(),
    };
    if json {
        let value = serde_json::json!({ "servers": servers });
        terminal::print(&format!("{}\n", serde_json::to_string_pretty(&value)?))?;
        return Ok(0);
    }
    if servers.is_empty() {
        terminal::print(
            "No MCP servers are configured. Add one to config.toml, e.g.\n\n\
             [mcp.servers.everything]\n\
             command = \"npx\"\n\
             args = [\"-y\", \"@modelcontextprotocol/server-everything\"]\n",
        )?;
        return Ok(0);
    }
    terminal::print(&describe(&servers, Style::detect()))?;
    Ok(0)
}

/// The servers as text: a line each with state and endpoint, then its tools or its error.
fn describe(servers: &[McpServerStatus], style: Style) -> String {
    let mut out = String::new();
    for server in servers {
        let state = match (server.enabled, server.state) {
            (false, McpState::Stopped) => "disabled".to_string(),
            (_, state) => serde_json::to_value(state)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
        };
        let transport = match server.transport {
            cairn_protocol::McpTransport::Stdio => "stdio",
            cairn_protocol::McpTransport::Http => "http",
        };
        out.push_str(&format!(
            "{}  {state}  {transport}  {}\n",
            style.bold(&escape::prose_line(&server.name)),
            escape::prose_line(&server.endpoint)
        ));
        if let Some(error) = &server.error {
            out.push_str(&format!("    error: {}\n", escape::prose_line(error)));
        }
        if server.restarts > 0 {
            out.push_str(&format!("    restarted {} times\n", server.restarts));
        }
        for tool in &server.tools {
            let description = escape::prose_line(&tool.description);
            let short: String = description.chars().take(80).collect();
            out.push_str(&format!(
                "    {}  ({})  {}\n",
                escape::prose_line(&tool.name),
                tool.approval,
                style.dim(&short)
            ));
        }
    }
    out
}

/// Serves the memory tools on stdin/stdout until the client goes away. Nothing else may
/// write to stdout: warnings and logs go to stderr.
async fn serve(cli: &Cli, allow_save: bool) -> anyhow::Result<u8> {
    let config = setup::config(cli)?;
    let workspace = setup::workspace(cli, &config)?;
    let memory = Memory::open(&workspace, &config, &mut |w| {
        eprintln!("cairn: warning: {}", escape::prose_line(&w))
    });
    let server = MemoryServer::new(workspace, memory.index.clone(), allow_save);
    eprintln!(
        "cairn: serving {} over MCP on stdio{}",
        server.tool_names().join(", "),
        if allow_save {
            ""
        } else {
            " (read-only; --allow-save adds memory_save)"
        }
    );
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    drop(memory);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_protocol::{McpToolInfo, McpTransport};

    #[test]
    fn servers_show_their_state_tools_and_errors() {
        let servers = vec![
            McpServerStatus {
                name: "dead".into(),
                transport: McpTransport::Stdio,
                endpoint: "python3 dead.py".into(),
                enabled: true,
                state: McpState::Failed,
                error: Some("`python3 dead.py` exited\x1b[2J".into()),
                restarts: 0,
                tools: vec![],
            },
            McpServerStatus {
                name: "everything".into(),
                transport: McpTransport::Stdio,
                endpoint: "node index.js stdio".into(),
                enabled: true,
                state: McpState::Running,
                error: None,
                restarts: 2,
                tools: vec![McpToolInfo {
                    name: "everything__echo".into(),
                    server_name: "echo".into(),
                    description: "Echoes back the input".into(),
                    approval: "ask".into(),
                }],
            },
            McpServerStatus {
                name: "off".into(),
                transport: McpTransport::Http,
                endpoint: "https://example.com/mcp".into(),
                enabled: false,
                state: McpState::Stopped,
                error: None,
                restarts: 0,
                tools: vec![],
            },
        ];
        let text = describe(&servers, Style::plain());
        assert_eq!(
            text,
            "dead  failed  stdio  python3 dead.py\n    error: `python3 dead.py` exited\\x1b[2J\n\
             everything  running  stdio  node index.js stdio\n    restarted 2 times\n    \
             everything__echo  (ask)  Echoes back the input\n\
             off  disabled  http  https://example.com/mcp\n"
        );
    }
}
