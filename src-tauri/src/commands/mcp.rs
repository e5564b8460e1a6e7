//! The settings' MCP section: the servers with their state and tools; adding, enabling,
//! disabling and removing one writes config.toml at once and restarts the servers.

use cairn_app::cairn_core::mcp::McpServerSettings;
use cairn_app::launch::Config;
use cairn_app::settings::Settings;
use cairn_protocol::McpServerStatus;
use serde::Deserialize;

use super::DesktopState;
use crate::ipc::error::{AppError, AppResult};
use crate::ipc::settings;

/// The servers as they stand; with `start`, the enabled ones are started first so their
/// tools are known (as a run would).
#[tauri::command(rename_all = "snake_case")]
pub async fn mcp_servers(
    desktop: DesktopState<'_>,
    start: bool,
) -> AppResult<Vec<McpServerStatus>> {
    let Some(hub) = desktop.mcp_hub() else {
        return Ok(Vec::new());
    };
    if start {
        hub.tools().await;
    }
    Ok(hub.status())
}

/// A server as the dialog's form gives it: a command line (split as a shell would) or a
/// URL.
#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
#[ts(rename = "NewMcpServer")]
pub struct NewServer {
    pub name: String,
    #[serde(default)]
    pub command: String,
    #[serde(default)]
    pub url: String,
}

impl NewServer {
    fn settings(&self) -> AppResult<McpServerSettings> {
        let (command, url) = (self.command.trim(), self.url.trim());
        let mut server = McpServerSettings::default();
        match (command.is_empty(), url.is_empty()) {
            (false, true) => {
                let words = shlex::split(command)
                    .ok_or_else(|| AppError::invalid("the command line has an unclosed quote"))?;
                let (program, args) = words
                    .split_first()
                    .ok_or_else(|| AppError::invalid("the command line is empty"))?;
                server.command = Some(program.clone());
                server.args = args.to_vec();
            }
            (true, false) => server.url = Some(url.to_string()),
            _ => {
                return Err(AppError::invalid(
                    "give a command (a server on stdio) or a URL (an HTTP server), not both",
                ))
            }
        }
        Ok(server)
    }
}

#[tauri::command(rename_all = "snake_case")]
pub async fn add_mcp_server(
    desktop: DesktopState<'_>,
    server: NewServer,
) -> AppResult<Vec<McpServerStatus>> {
    let name = server.name.trim().to_string();
    cairn_app::cairn_core::mcp::settings::check_name(&name).map_err(AppError::invalid)?;
    let added = server.settings()?;
    change(&desktop, move |settings| {
        if settings.mcp.servers.contains_key(&name) {
            return Err(AppError::invalid(format!(
                "there is already a server named `{name}`"
            )));
        }
        settings.mcp.servers.insert(name, added);
        Ok(())
    })
    .await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn set_mcp_server_enabled(
    desktop: DesktopState<'_>,
    name: String,
    enabled: bool,
) -> AppResult<Vec<McpServerStatus>> {
    change(&desktop, move |settings| {
        let server = settings
            .mcp
            .servers
            .get_mut(&name)
            .ok_or_else(|| AppError::invalid(format!("no server named `{name}`")))?;
        server.enabled = (!enabled).then_some(false);
        Ok(())
    })
    .await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn remove_mcp_server(
    desktop: DesktopState<'_>,
    name: String,
) -> AppResult<Vec<McpServerStatus>> {
    change(&desktop, move |settings| {
        settings
            .mcp
            .servers
            .remove(&name)
            .map(|_| ())
            .ok_or_else(|| AppError::invalid(format!("no server named `{name}`")))
    })
    .await
}

/// Applies `edit` to the settings, checks the servers, writes config.toml and reloads
/// (the servers are started again); returns the servers as they now stand.
async fn change(
    desktop: &DesktopState<'_>,
    edit: impl FnOnce(&mut Settings) -> AppResult<()>,
) -> AppResult<Vec<McpServerStatus>> {
    let config = desktop.config();
    let mut next = config.settings.clone();
    edit(&mut next)?;
    if let Some(problem) = next.mcp.problems().into_iter().next() {
        return Err(AppError::invalid(problem));
    }
    settings::save(&config, &next)?;
    desktop
        .reload(Config::load(desktop.paths.config_dir.as_deref())?)
        .await?;
    Ok(desktop
        .mcp_hub()
        .map(|hub| hub.status())
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(command: &str, url: &str) -> AppResult<McpServerSettings> {
        NewServer {
            name: "x".into(),
            command: command.into(),
            url: url.into(),
        }
        .settings()
    }

    #[test]
    fn a_command_line_is_split_as_a_shell_would() {
        let server = new(r#"npx -y "@scope/my server" --root '/a b'"#, "").unwrap();
        assert_eq!(server.command.as_deref(), Some("npx"));
        assert_eq!(server.args, ["-y", "@scope/my server", "--root", "/a b"]);
        assert_eq!(
            new("", "https://h/mcp").unwrap().url.as_deref(),
            Some("https://h/mcp")
        );
        assert!(new("npx 'open", "").is_err());
        assert!(new("npx", "https://h").is_err());
        assert!(new(" ", "").is_err());
    }
}
