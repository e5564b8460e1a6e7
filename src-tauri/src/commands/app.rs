//! The app itself: what runs, start-up timing, app-wide events, links.

use serde::Serialize;
use tauri::ipc::Channel;
use ts_rs::TS;

use super::DesktopState;
use crate::desktop::Desktop;
use crate::hub::AppEvent;
use crate::ipc::error::{AppError, AppResult, ErrorCode};

/// What the window shows about the app.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AppInfo {
    pub version: String,
    /// The workspace folder (absolute).
    pub workspace: String,
    /// The provider's name in the settings, or `local`.
    pub provider: String,
    pub model: String,
    /// The bundled local model is in use because nothing else is configured.
    pub bundled_model: bool,
    /// Whether the chat model can call tools.
    pub tools: bool,
    /// Things to tell the user at start (index rebuilt, model missing ...).
    pub notices: Vec<String>,
    /// Why memory is not written in the background and how to turn it on, when only a
    /// local model is configured.
    pub memory_paused: Option<String>,
    /// How queued follow-ups are delivered (`[run] follow_up_mode`).
    pub follow_up_mode: cairn_protocol::QueueMode,
}

#[tauri::command(rename_all = "snake_case")]
pub async fn app_info(desktop: DesktopState<'_>) -> AppResult<AppInfo> {
    Ok(info(&desktop).await)
}

/// What the window shows about the app; the model is named from the settings when it is
/// not built yet (start-up does not wait for a model to load).
pub async fn info(desktop: &Desktop) -> AppInfo {
    let config = desktop.config();
    let resolved = config.resolve(cairn_app::settings::Purpose::Chat).ok();
    let chat = desktop.chat_if_built().await;
    let provider = resolved.as_ref().map_or("none".into(), |r| r.name.clone());
    let (model, local, tools) = match (&chat, &resolved) {
        (Some(chat), _) => (
            chat.1.clone(),
            Desktop::is_local(chat),
            chat.0.info().supports_tools,
        ),
        (None, Some(r)) => {
            let local = r.kind() == cairn_app::settings::ProviderKind::Local;
            (r.model.clone(), local, !local)
        }
        (None, None) => ("none".into(), false, false),
    };
    let configured = !config.settings.providers.is_empty()
        || config.settings.default_provider.is_some()
        || config.overrides.provider.is_some();
    AppInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        workspace: desktop.workspace.root().display().to_string(),
        provider,
        model,
        bundled_model: local && !configured,
        tools,
        notices: desktop.notices(),
        memory_paused: cairn_app::launch::memory_upkeep_paused(&config),
        follow_up_mode: config.settings.run.follow_up_mode.unwrap_or_default(),
    }
}

/// The page's first interactive frame: logged with the time since start, and printed
/// as `cairn-ready <ms> <build>` when `CAIRN_REPORT_READY` is set (start-up benchmark).
#[tauri::command(rename_all = "snake_case")]
pub fn ui_ready(desktop: DesktopState<'_>) {
    let ms = desktop.started.elapsed().as_secs_f64() * 1000.0;
    tracing::info!("interactive after {ms:.0} ms");
    report_ready(ms);
}

#[tauri::command(rename_all = "snake_case")]
pub fn subscribe(desktop: DesktopState<'_>, on_event: Channel<AppEvent>) {
    desktop.subscribe(move |event| on_event.send(event).is_ok());
}

/// Opens an http(s) or mailto link in the system's browser; nothing else is opened.
#[tauri::command(rename_all = "snake_case")]
pub fn open_link(url: String) -> AppResult<()> {
    let allowed = ["https://", "http://", "mailto:"]
        .iter()
        .any(|scheme| url.len() > scheme.len() && url.to_ascii_lowercase().starts_with(scheme));
    if !allowed || url.chars().any(char::is_control) {
        return Err(AppError::invalid(
            "only http, https and mailto links are opened",
        ));
    }
    tauri_plugin_opener::open_url(&url, None::<&str>)
        .map_err(|e| AppError::new(ErrorCode::Io, format!("cannot open the link: {e}")))
}

/// Starts the app again, for the settings read at start (the folders searched in place,
/// the workspace). Refused while the agent works; the session is saved on the way out as
/// at any exit.
#[tauri::command(rename_all = "snake_case")]
pub async fn restart_app<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    desktop: DesktopState<'_>,
) -> AppResult<()> {
    if desktop.is_running().await {
        return Err(crate::desktop::busy());
    }
    app.request_restart();
    Ok(())
}

/// Prints `cairn-ready <ms> <release|debug>` when `CAIRN_REPORT_READY` is set (the
/// start-up benchmark reads it).
pub fn report_ready(ms: f64) {
    if std::env::var_os("CAIRN_REPORT_READY").is_some() {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        // How it was built, as the binary knows it (a copied release binary is one still).
        let build = if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        };
        let _ = writeln!(out, "cairn-ready {ms:.1} {build}");
        let _ = out.flush();
    }
}
