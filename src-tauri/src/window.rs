//! The main window. It never leaves the app's own pages: links go to the system browser
//! through `open_link`, any other navigation is refused.

use tauri::{AppHandle, Runtime, WebviewUrl, WebviewWindowBuilder};

use crate::hub::AppEvent;

pub fn main<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let mut builder = WebviewWindowBuilder::new(app, "main", WebviewUrl::App("index.html".into()))
        .title("Cairn")
        .inner_size(1280.0, 800.0)
        .min_inner_size(720.0, 480.0)
        .on_navigation(is_app_page);
    if let Some(script) = crate::fonts::page_script() {
        builder = builder.initialization_script(&script);
    }
    let window = builder.build()?;
    let handle = app.clone();
    window.on_window_event(move |event| {
        if let tauri::WindowEvent::DragDrop(drop) = event {
            dragged(&handle, drop);
        }
    });
    Ok(())
}

/// Files dragged over the window, and dropped: the page shows where they will go, text
/// files dropped are copied into the inbox and pictures kept for the next message (the
/// paths come from the system's drop event only; the page cannot name any).
pub fn dragged<R: Runtime>(app: &AppHandle<R>, drop: &tauri::DragDropEvent) {
    use std::sync::Arc;
    use tauri::{DragDropEvent, Manager};
    let Some(desktop) = app.try_state::<Arc<crate::desktop::Desktop>>() else {
        return;
    };
    let desktop = desktop.inner().clone();
    match drop {
        DragDropEvent::Enter { .. } => desktop.emit(AppEvent::DragOver { active: true }),
        DragDropEvent::Leave => desktop.emit(AppEvent::DragOver { active: false }),
        DragDropEvent::Drop { paths, .. } => {
            desktop.emit(AppEvent::DragOver { active: false });
            let paths = paths.clone();
            tauri::async_runtime::spawn_blocking(move || {
                let dropped = crate::ipc::dropped::add(&desktop.workspace, &paths);
                if !dropped.added.is_empty() {
                    desktop.emit(AppEvent::FilesChanged);
                    if let Some(index) = desktop.index() {
                        if let Err(e) = index.changed(&dropped.added) {
                            tracing::warn!("cannot queue dropped files for indexing: {e}");
                        }
                    }
                }
                desktop.emit(AppEvent::FilesDropped {
                    added: dropped.added,
                    pictures: dropped.pictures,
                    refused: dropped.refused,
                });
            });
        }
        _ => {}
    }
}

/// Brings the main window to the front (another launch on the same workspace asked).
pub fn show_main<R: Runtime>(app: &AppHandle<R>) {
    use tauri::Manager;
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
    tracing::info!("another launch on this workspace: showed this window");
}

/// The app's own origin (and the dev server in a development build).
fn is_app_page(url: &tauri::Url) -> bool {
    match url.scheme() {
        "tauri" => true,
        "http" | "https" => {
            let host = url.host_str().unwrap_or_default();
            host == "tauri.localhost" || (cfg!(dev) && host == "localhost")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_app_origin_is_a_page_of_the_app() {
        let page = |s: &str| is_app_page(&tauri::Url::parse(s).unwrap());
        assert!(page("tauri://localhost/index.html"));
        assert!(page("http://tauri.localhost/"));
        assert!(!page("https://example.com/"));
        assert!(!page("javascript:alert(1)"));
        assert!(!page("file:///etc/passwd"));
        assert!(!page("data:text/html,<script>alert(1)</script>"));
    }
}
