//! The app itself: what runs, start-up timing, app-wide events, links.

use serde::{Deserialize, Serialize};
use tauri::ipc::Channel;
use ts_rs::TS;

use super::sessions::{summaries, SessionSummary};
use super::DesktopState;
use crate::desktop::Desktop;
use crate::hub::AppEvent;
use crate::ipc::error::{AppError, AppResult, ErrorCode};
use crate::ipc::views::SessionView;

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

/// What the first screen shows, in one call the page makes before its first render:
/// the app, the sessions and the open one, the index's state.
#[derive(Debug, Clone, Serialize, TS)]
pub struct FirstScreen {
    pub info: AppInfo,
    pub sessions: Vec<SessionSummary>,
    /// The newest session, opened as choosing it in the list opens it (a new one when
    /// there is none). None while a run goes on (the page was loaded again): the page
    /// then attaches to the run and opens its session.
    pub session: Option<SessionView>,
    pub index: Option<cairn_app::cairn_memory::IndexStatus>,
}

#[tauri::command(rename_all = "snake_case")]
pub async fn first_screen(desktop: DesktopState<'_>) -> AppResult<FirstScreen> {
    let sessions = summaries(&desktop)?;
    let session = if desktop.is_running().await {
        None
    } else {
        let newest = sessions.first().map(|s| s.id.as_str());
        match desktop.open_session(newest).await {
            Ok(view) => Some(view),
            // A run began meanwhile: as above.
            Err(e) if e.code == ErrorCode::Busy => None,
            Err(e) => return Err(e),
        }
    };
    Ok(FirstScreen {
        info: info(&desktop).await,
        sessions,
        session,
        index: desktop.index().map(|index| index.status()),
    })
}

/// The page's first interactive frame: logged with the time since start and where the
/// page's part of it went, and printed as `cairn-ready <ms> <build> <step>=<ms> ...` when
/// `CAIRN_REPORT_READY` is set (start-up benchmark).
#[tauri::command(rename_all = "snake_case")]
pub fn ui_ready(desktop: DesktopState<'_>, marks: Option<PageMarks>) {
    let ms = desktop.started.elapsed().as_secs_f64() * 1000.0;
    let steps = marks.map(|m| m.steps(ms)).unwrap_or_default();
    let said: Vec<String> = steps
        .iter()
        .map(|(name, at)| format!("{name} {at:.0} ms"))
        .collect();
    tracing::info!("interactive after {ms:.0} ms ({})", said.join(", "));
    report_ready(ms, &steps);
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

/// When the page's start-up steps came, as it measured them: `performance.now()` at each
/// (milliseconds since its navigation began) and `performance.timeOrigin` (when that was,
/// in milliseconds since the epoch).
#[derive(Debug, Clone, Default, Deserialize, TS)]
pub struct PageMarks {
    pub origin: f64,
    pub marks: StartSteps,
}

/// The page's start-up steps, each when it was first reached.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[serde(default)]
pub struct StartSteps {
    /// The bundle, parsed, began to run.
    #[ts(optional)]
    pub script: Option<f64>,
    /// Every module of the bundle had run.
    #[ts(optional)]
    pub evaluated: Option<f64>,
    /// The first render was committed.
    #[ts(optional)]
    pub rendered: Option<f64>,
    /// What the first screen shows had arrived (before the first render when the page
    /// could ask for it all at once; after it while a run goes on).
    #[ts(optional)]
    pub booted: Option<f64>,
    /// The frame that shows it.
    #[ts(optional)]
    pub frame: Option<f64>,
}

impl PageMarks {
    /// The steps in milliseconds since the process started, in the order they came, the
    /// navigation's start first (`page`), given that `ready_ms` have passed since then.
    /// Empty when the page's clock does not agree with ours (a time before the start or
    /// after now): a page cannot make the shell report nonsense.
    pub fn steps(&self, ready_ms: f64) -> Vec<(&'static str, f64)> {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        let page = self.origin - (since_epoch - ready_ms);
        let m = &self.marks;
        let steps = [
            ("script", m.script),
            ("evaluated", m.evaluated),
            ("rendered", m.rendered),
            ("booted", m.booted),
            ("frame", m.frame),
        ];
        let mut came: Vec<(&'static str, f64)> = steps
            .into_iter()
            .filter_map(|(name, at)| at.map(|at| (name, page + at)))
            .collect();
        came.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut out = vec![("page", page)];
        out.extend(came);
        // A little slack: the page's clock and ours are read at different instants.
        let sane = out
            .iter()
            .all(|(_, at)| at.is_finite() && *at >= -5.0 && *at <= ready_ms + 5.0);
        if sane {
            out
        } else {
            Vec::new()
        }
    }
}

/// Prints `cairn-ready <ms> <release|debug> <step>=<ms> ...` when `CAIRN_REPORT_READY` is
/// set (the start-up benchmark reads it; `steps` as [`PageMarks::steps`] gives them).
pub fn report_ready(ms: f64, steps: &[(&str, f64)]) {
    if std::env::var_os("CAIRN_REPORT_READY").is_some() {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        // How it was built, as the binary knows it (a copied release binary is one still).
        let build = if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        };
        let steps: String = steps
            .iter()
            .map(|(name, at)| format!(" {name}={at:.1}"))
            .collect();
        let _ = writeln!(out, "cairn-ready {ms:.1} {build}{steps}");
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now_ms() -> f64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
            * 1000.0
    }

    #[test]
    fn the_page_steps_are_told_from_the_process_start_in_order() {
        // Ready 400 ms after the start; the page's navigation began 150 ms after it.
        let marks = PageMarks {
            origin: now_ms() - 250.0,
            marks: StartSteps {
                script: Some(60.0),
                rendered: Some(200.0),
                booted: Some(120.0),
                frame: Some(240.0),
                ..StartSteps::default()
            },
        };
        let steps = marks.steps(400.0);
        let names: Vec<&str> = steps.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["page", "script", "booted", "rendered", "frame"]);
        let near = |at: f64, want: f64| (at - want).abs() < 20.0;
        assert!(near(steps[0].1, 150.0), "{steps:?}");
        assert!(near(steps[1].1, 210.0), "{steps:?}");
        assert!(near(steps[4].1, 390.0), "{steps:?}");
    }

    #[test]
    fn a_page_clock_that_disagrees_reports_no_steps() {
        for origin in [now_ms() + 60_000.0, now_ms() - 3_600_000.0, f64::NAN, 0.0] {
            let marks = PageMarks {
                origin,
                marks: StartSteps {
                    frame: Some(10.0),
                    ..StartSteps::default()
                },
            };
            assert!(marks.steps(400.0).is_empty(), "origin {origin}");
        }
        // A step said to come after the ready call is refused too.
        let late = PageMarks {
            origin: now_ms() - 100.0,
            marks: StartSteps {
                frame: Some(5_000.0),
                ..StartSteps::default()
            },
        };
        assert!(late.steps(400.0).is_empty());
    }
}
