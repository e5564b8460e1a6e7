//! Follows outside edits of workspace files for the page: a file that changed (its new
//! version, so an open editor with no unsaved edits reloads) and files added or removed
//! (the tree is listed again).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::Duration;

use notify_debouncer_full::notify::event::{CreateKind, ModifyKind, RemoveKind, RenameMode};
use notify_debouncer_full::notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};

use crate::desktop::Desktop;
use crate::hub::AppEvent;
use crate::ipc::files::version;

pub struct FileWatch {
    _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
}

const DEBOUNCE: Duration = Duration::from_millis(150);

pub fn start(desktop: &Arc<Desktop>) -> Result<FileWatch, String> {
    let root = desktop.workspace.root().to_path_buf();
    let handler_root = root.clone();
    let desktop: Weak<Desktop> = Arc::downgrade(desktop);
    let mut debouncer = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
        let Some(desktop) = desktop.upgrade() else {
            return;
        };
        let Ok(events) = result else {
            desktop.emit(AppEvent::FilesChanged);
            return;
        };
        let mut changed: Vec<PathBuf> = Vec::new();
        let mut tree = false;
        for event in events.iter() {
            if matches!(event.kind, EventKind::Access(_)) {
                continue;
            }
            tree |= matches!(
                event.kind,
                EventKind::Create(CreateKind::File | CreateKind::Folder | CreateKind::Any)
                    | EventKind::Remove(RemoveKind::File | RemoveKind::Folder | RemoveKind::Any)
                    | EventKind::Modify(ModifyKind::Name(
                        RenameMode::From | RenameMode::To | RenameMode::Both | RenameMode::Any
                    ))
            );
            for path in &event.paths {
                if visible(&handler_root, path) && !changed.contains(path) {
                    changed.push(path.clone());
                }
            }
        }
        for path in changed {
            let Some(relative) = relative(&handler_root, &path) else {
                continue;
            };
            if path.is_dir() {
                continue;
            }
            let version = std::fs::read(&path).ok().map(|bytes| version(&bytes));
            desktop.emit(AppEvent::FileChanged {
                path: relative,
                version,
            });
        }
        if tree {
            desktop.emit(AppEvent::FilesChanged);
        }
    })
    .map_err(|e| e.to_string())?;
    debouncer
        .watch(&root, RecursiveMode::Recursive)
        .map_err(|e| e.to_string())?;
    Ok(FileWatch {
        _debouncer: debouncer,
    })
}

fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

/// Not hidden and not in `.cairn/`.
fn visible(root: &Path, path: &Path) -> bool {
    relative(root, path)
        .is_some_and(|rel| !rel.is_empty() && !rel.split('/').any(|part| part.starts_with('.')))
}
