//! Cairn's desktop app: a Tauri v2 shell over cairn-core. The harness, the memory index
//! and its watcher, and background consolidation run in this process; the page (ui/)
//! reaches them only through the commands in [`commands`].

pub mod commands;
pub mod desktop;
pub mod hub;
pub mod ipc;
mod watch;
mod window;

use std::io::Write;
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

/// Prints `cairn-ready <ms>` when `CAIRN_REPORT_READY` is set (the start-up benchmark
/// reads it).
pub fn report_ready(ms: f64) {
    if std::env::var_os("CAIRN_REPORT_READY").is_some() {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "cairn-ready {ms:.1}");
        let _ = out.flush();
    }
}

/// Opens the workspace and runs the app until its window closes (`started`: when the
/// process started). The error says what stopped it from starting.
pub fn run(paths: Paths, started: std::time::Instant) -> Result<(), String> {
    let desktop =
        tauri::async_runtime::block_on(Desktop::open(paths, started)).map_err(|e| e.message)?;
    let app = tauri::Builder::default()
        .manage(desktop.clone())
        .invoke_handler(commands::handler())
        .setup({
            let desktop = desktop.clone();
            move |app| {
                use tauri::Manager;
                window::main(app.handle())?;
                start_background(&desktop);
                match watch::start(&desktop) {
                    Ok(watch) => {
                        app.manage(watch);
                    }
                    Err(e) => desktop.notice(format!("outside edits are not followed: {e}")),
                }
                Ok(())
            }
        })
        .build(tauri::generate_context!())
        .map_err(|e| format!("cannot start the window: {e}"))?;
    app.run(move |_, event| {
        if let tauri::RunEvent::Exit = event {
            // Pending session writes reach the disk; a consolidation stops unwritten.
            tauri::async_runtime::block_on(desktop.shutdown());
        }
    });
    Ok(())
}

fn start_background(desktop: &Arc<Desktop>) {
    hub::follow_index(desktop);
    let warm = desktop.clone();
    tauri::async_runtime::spawn(async move { warm.warm_up().await });
}
