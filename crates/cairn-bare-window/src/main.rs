//! An empty Tauri window built like the app (the same Tauri, features and profile, linked
//! with the app's library): the baseline `cairn-bench desktop` measures Cairn's start-up
//! and memory against.

use std::time::Instant;

use tauri::{WebviewUrl, WebviewWindowBuilder};

struct Started(Instant);

/// The bare page names itself: a window that served some other page (the app's, which
/// calls `ui_ready` with no arguments) reports nothing, and the benchmark fails instead of
/// measuring the wrong window.
#[tauri::command(rename_all = "snake_case")]
fn ui_ready(
    started: tauri::State<'_, Started>,
    page: String,
    marks: Option<cairn_desktop::PageMarks>,
) -> Result<(), String> {
    if page != "bare" {
        return Err(format!("the bare window shows the page {page:?}"));
    }
    let ms = started.0.elapsed().as_secs_f64() * 1000.0;
    let steps = marks.map(|m| m.steps(ms)).unwrap_or_default();
    cairn_desktop::report_ready(ms, &steps);
    Ok(())
}

fn main() {
    let started = Started(Instant::now());
    let result = tauri::Builder::default()
        .manage(started)
        .invoke_handler(tauri::generate_handler![ui_ready])
        .setup(|app| {
            WebviewWindowBuilder::new(app, "main", WebviewUrl::App("index.html".into()))
                .title("Bare window")
                .inner_size(1280.0, 800.0)
                .build()?;
            Ok(())
        })
        .run(tauri::generate_context!());
    if let Err(e) = result {
        eprintln!("cairn-bare-window: {e}");
        std::process::exit(1);
    }
}
