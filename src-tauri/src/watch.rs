//! Follows outside edits of the workspace's files, and of the folders searched in place,
//! for the page: a file that changed (its new version, so an open editor with no unsaved
//! edits reloads) and files added or removed (the tree is listed again). It hears the
//! memory's watcher, which the index follows too, rather than watching on its own.

use std::sync::{Arc, Weak};

use cairn_app::cairn_memory::watch::{Batch, Subscription};

use crate::desktop::Desktop;
use crate::hub::AppEvent;
use crate::ipc::files::version;

/// The page hears outside edits while this lives.
pub struct FileWatch {
    _subscription: Subscription,
}

/// Subscribes the page to the memory's watcher; why not, when it could not start.
pub fn start(desktop: &Arc<Desktop>) -> Result<FileWatch, String> {
    let watcher = desktop.watcher().map_err(|e| e.to_string())?;
    let desktop: Weak<Desktop> = Arc::downgrade(desktop);
    let subscription = watcher.subscribe(move |batch| {
        if let Some(desktop) = desktop.upgrade() {
            tell(&desktop, batch);
        }
    });
    Ok(FileWatch {
        _subscription: subscription,
    })
}

/// Emits a [`AppEvent::FileChanged`] for each visible file of `batch`, then
/// [`AppEvent::FilesChanged`] when the tree changed or events were lost.
fn tell(desktop: &Desktop, batch: &Batch) {
    for change in &batch.changes {
        if !visible(&change.path) || change.file.is_dir() {
            continue;
        }
        let version = std::fs::read(&change.file)
            .ok()
            .map(|bytes| version(&bytes));
        desktop.emit(AppEvent::FileChanged {
            path: change.path.clone(),
            version,
        });
    }
    if batch.tree_changed || batch.lost {
        desktop.emit(AppEvent::FilesChanged);
    }
}

/// Not hidden and not in `.cairn/`.
fn visible(path: &str) -> bool {
    !path.is_empty() && !path.split('/').any(|part| part.starts_with('.'))
}
