//! The main window. It never leaves the app's own pages: links go to the system browser
//! through `open_link`, any other navigation is refused.

use tauri::{AppHandle, Runtime, WebviewUrl, WebviewWindowBuilder};

pub fn main<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    WebviewWindowBuilder::new(app, "main", WebviewUrl::App("index.html".into()))
        .title("Cairn")
        .inner_size(1280.0, 800.0)
        .min_inner_size(720.0, 480.0)
        .on_navigation(is_app_page)
        .build()?;
    Ok(())
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
