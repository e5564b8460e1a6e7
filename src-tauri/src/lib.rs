//! Cairn's desktop app: a Tauri v2 shell over cairn-core. The harness, the memory index
//! and its watcher, and background consolidation run in this process; the page (ui/)
//! reaches them only through the commands in [`commands`].

pub mod commands;
pub mod desktop;
mod fetch;
mod fonts;
pub mod hub;
pub mod ipc;
pub mod logfile;
mod watch;
pub mod window;

use std::path::PathBuf;
use std::sync::Arc;

pub use desktop::{Desktop, Paths};

/// The settings and workspace folders from the environment (`CAIRN_CONFIG_DIR`,
/// `CAIRN_WORKSPACE`), else the defaults.
pub fn paths_from_env() -> Paths {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    Paths {
        config_dir: var("CAIRN_CONFIG_DIR"),
        workspace: var("CAIRN_WORKSPACE"),
    }
}

pub use commands::app::{report_ready, PageMarks};

/// Runs the app until its window closes (`started`: when the process started). The
/// error says what stopped it from starting.
///
/// One app runs per workspace: a second launch on the same workspace and settings hands
/// over to the first (its window is shown and focused) and exits before it opens
/// anything, so it never touches the workspace. Where there is no session bus to find
/// the first one, the app starts anyway; its session and index locks still keep two
/// processes from writing the same files.
pub fn run(paths: Paths, started: std::time::Instant) -> Result<(), String> {
    let app = tauri::Builder::default()
        .plugin(
            tauri_plugin_single_instance::Builder::new()
                .dbus_id(instance_id(&paths))
                .callback(|app, _argv, _cwd| window::show_main(app))
                .build(),
        )
        // The window's size, place and maximised state, as the user left them.
        .plugin(
            tauri_plugin_window_state::Builder::default()
                .with_state_flags(
                    tauri_plugin_window_state::StateFlags::SIZE
                        | tauri_plugin_window_state::StateFlags::POSITION
                        | tauri_plugin_window_state::StateFlags::MAXIMIZED,
                )
                .build(),
        )
        // File dialogs, opened by the app's own commands (the page has no dialog access).
        .plugin(tauri_plugin_dialog::init())
        .invoke_handler(commands::handler())
        .setup(move |app| {
            use tauri::Manager;
            // The window first: WebKit starts its processes and loads the page while the
            // workspace, the memory and the sessions open here. The page's first call is
            // answered only once this returns (the event loop runs after setup), so it
            // always finds them open.
            let ms = |at: std::time::Instant| at.duration_since(started).as_secs_f64() * 1000.0;
            tracing::debug!(
                "set-up began {:.0} ms after start",
                ms(std::time::Instant::now())
            );
            window::main(app.handle())?;
            tracing::debug!(
                "window made {:.0} ms after start",
                ms(std::time::Instant::now())
            );
            let desktop = match tauri::async_runtime::block_on(Desktop::open(paths, started)) {
                Ok(desktop) => desktop,
                Err(e) => {
                    // Nothing is shown yet: say why and leave.
                    eprintln!("cairn-desktop: {}", e.message);
                    std::process::exit(1);
                }
            };
            tracing::debug!(
                "workspace open {:.0} ms after start",
                ms(std::time::Instant::now())
            );
            app.manage(desktop.clone());
            start_background(&desktop);
            match watch::start(&desktop) {
                Ok(watch) => {
                    app.manage(watch);
                }
                // Said once already, among the memory's notices at open.
                Err(e) => tracing::warn!("outside edits are not followed: {e}"),
            }
            Ok(())
        })
        .build(tauri::generate_context!())
        .map_err(|e| format!("cannot start the window: {e}"))?;
    app.run(move |app, event| {
        use tauri::Manager;
        if let tauri::RunEvent::Exit = event {
            // Pending session writes reach the disk; a consolidation stops unwritten.
            if let Some(desktop) = app.try_state::<Arc<Desktop>>() {
                tauri::async_runtime::block_on(desktop.shutdown());
            }
            // A local model stopped mid-answer lets go at its next token; exiting under
            // it would crash the process.
            cairn_app::cairn_llm::local::settle(std::time::Duration::from_secs(3));
            cairn_app::launch::settle_embedder(std::time::Duration::from_secs(3));
        }
    });
    Ok(())
}

/// The D-Bus name that makes the app single-instance: the same for launches with the same
/// workspace and settings folders (as given: both default when unset).
fn instance_id(paths: &Paths) -> String {
    let mut hasher = blake3::Hasher::new();
    for part in [&paths.workspace, &paths.config_dir] {
        let text = part.as_deref().map(|p| p.to_string_lossy().into_owned());
        hasher.update(text.unwrap_or_default().as_bytes());
        hasher.update(b"\0");
    }
    let hash = hasher.finalize().to_hex();
    format!("app.cairn.desktop.w{}", &hash[..16])
}

fn start_background(desktop: &Arc<Desktop>) {
    hub::follow_index(desktop);
    hub::follow_model_load(desktop);
    let warm = desktop.clone();
    tauri::async_runtime::spawn(async move { warm.warm_up().await });
}
