//! Turning flags and environment into a workspace, a provider and an agent, through
//! `cairn_app::launch`; warnings go to stderr.

use std::sync::Arc;

use cairn_app::cairn_core::session::{OpenedSession, SessionStore};
use cairn_app::cairn_memory::Workspace;
use cairn_app::launch::{self, Launch, LaunchRequest};

use crate::args::Cli;

pub use cairn_app::launch::Config;

/// Prints a warning that does not stop the command. Warnings quote files and servers
/// (a session's repair, a skipped note), so they are escaped.
pub fn warn(message: String) {
    eprintln!("cairn: warning: {}", crate::escape::prose_line(&message));
}

/// Reads config.toml and the environment, then the flags.
pub fn config(cli: &Cli) -> anyhow::Result<Config> {
    let mut config = Config::load(None)?;
    let overrides = &mut config.overrides;
    overrides.provider = cli.provider.clone().or(overrides.provider.take());
    overrides.model = cli.model.clone().or(overrides.model.take());
    overrides.base_url = cli.base_url.clone().or(overrides.base_url.take());
    Ok(config)
}

/// The workspace: `--workspace`, else `CAIRN_WORKSPACE`, else the settings, else `~/Cairn`.
pub fn workspace(cli: &Cli, config: &Config) -> anyhow::Result<Arc<Workspace>> {
    Ok(config.workspace(cli.workspace.as_deref())?)
}

pub fn store(workspace: &Workspace) -> SessionStore {
    launch::store(workspace)
}

/// Everything `ask` and `chat` open a conversation with, from the flags; the bundled
/// models the settings use are fetched first when they are not installed.
pub async fn launch(cli: &Cli, yes: bool, max_steps: Option<u32>) -> anyhow::Result<Launch> {
    let request = LaunchRequest {
        workspace: cli.workspace.as_deref(),
        yes,
        max_steps,
    };
    let config = config(cli)?;
    crate::fetch::used(&config).await?;
    Ok(Launch::prepare(config, request, &mut warn).await?)
}

/// Opens the named session, the latest one (`latest`), or a new one, and reports repairs.
pub async fn session(
    launch: &Launch,
    id: Option<&str>,
    latest: bool,
) -> anyhow::Result<OpenedSession> {
    Ok(launch.session(id, latest, &mut warn).await?)
}
