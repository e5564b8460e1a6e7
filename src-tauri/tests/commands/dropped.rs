//! Files dropped onto the window, through the window's own drop handler.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_desktop::hub::AppEvent;
use serde_json::json;
use tauri::{DragDropEvent, Manager, PhysicalPosition};

use super::App;

/// Waits (up to 20 s) until `found` finds something in the events heard so far.
fn wait_for<T>(heard: &Mutex<Vec<AppEvent>>, found: impl Fn(&[AppEvent]) -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(it) = found(&heard.lock().unwrap()) {
            return it;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "not heard");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn files_dropped_on_the_window_land_in_the_inbox_and_are_found_by_search() {
    let app = App::new("http://127.0.0.1:9/v1");
    let heard = Arc::new(Mutex::new(Vec::new()));
    app.desktop.subscribe({
        let heard = heard.clone();
        move |event| {
            heard.lock().unwrap().push(event);
            true
        }
    });
    let outside = tempfile::tempdir().unwrap();
    let note = outside.path().join("Trip plan.md");
    std::fs::write(&note, "# Trip\n\nThe zanzibarite ferry leaves at nine.\n").unwrap();
    let photo = outside.path().join("photo.png");
    std::fs::write(&photo, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let receipt = outside.path().join("receipt.png");
    std::fs::write(&receipt, cairn_testkit::pictures::RECEIPT_PNG).unwrap();
    let handle = app.webview.app_handle().clone();
    let at = PhysicalPosition::new(40.0, 40.0);

    cairn_desktop::window::dragged(
        &handle,
        &DragDropEvent::Enter {
            paths: vec![note.clone()],
            position: at,
        },
    );
    cairn_desktop::window::dragged(
        &handle,
        &DragDropEvent::Drop {
            paths: vec![note.clone(), photo.clone(), receipt.clone()],
            position: at,
        },
    );
    let (added, pictures, refused) = wait_for(&heard, |events| {
        events.iter().find_map(|e| match e {
            AppEvent::FilesDropped {
                added,
                pictures,
                refused,
            } => Some((added.clone(), pictures.clone(), refused.clone())),
            _ => None,
        })
    });
    assert_eq!(added, ["knowledge/inbox/Trip plan.md"]);
    // The picture is kept for the next message, the broken one refused with why.
    let names: Vec<_> = pictures.iter().map(|p| p.name.as_deref()).collect();
    assert_eq!(names, [Some("receipt.png")]);
    assert_eq!((pictures[0].width, pictures[0].height), (900, 220));
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0].name, "photo.png");
    assert!(refused[0].reason.contains("cannot be read"), "{refused:?}");
    // The drag shown over the window, then not, before the result.
    let overs: Vec<bool> = heard
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AppEvent::DragOver { active } => Some(*active),
            _ => None,
        })
        .collect();
    assert_eq!(overs, [true, false]);
    // A copy: the file dropped is left where it was, and the copy is in the workspace.
    let copied = app.workspace.join("knowledge/inbox/Trip plan.md");
    assert_eq!(
        std::fs::read(&copied).unwrap(),
        std::fs::read(&note).unwrap()
    );
    assert!(!app.workspace.join("knowledge/inbox/photo.png").exists());
    assert!(!app.workspace.join("knowledge/inbox/receipt.png").exists());
    // Indexed: search finds it.
    let started = Instant::now();
    loop {
        let found = app.ok("memory_search", json!({"query": "zanzibarite"}));
        if found["hits"][0]["path"] == "knowledge/inbox/Trip plan.md" {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{found}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
