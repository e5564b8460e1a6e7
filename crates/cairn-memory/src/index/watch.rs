//! Following edits made inside or outside the app: a debounced recursive watcher on the
//! workspace whose settled events become index jobs. `.cairn/` (where the index itself is
//! written) and other hidden files are ignored, except the ignore files (`.gitignore`,
//! `.ignore`, `.cairnignore`): a change to one, or to a folder (moved, deleted), triggers a
//! reconcile, since the files it concerns are not reported one by one.

use std::time::Duration;

use notify_debouncer_full::notify::event::RemoveKind;
use notify_debouncer_full::notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};

use super::rules::IGNORE_FILES;
use super::{scan, IndexError, MemoryIndex};
use crate::source::classify;

/// Watching stops when this is dropped.
pub struct Watch {
    _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
}

pub(super) fn start(index: MemoryIndex, debounce: Duration) -> Result<Watch, IndexError> {
    let root = index.root().to_path_buf();
    let handler_root = root.clone();
    let mut debouncer = new_debouncer(debounce, None, move |result: DebounceEventResult| {
        let events = match result {
            Ok(events) => events,
            Err(errors) => {
                for error in errors {
                    tracing::warn!(%error, "file watcher");
                }
                // Events may have been lost: look at everything.
                let _ = index.sync_in_background();
                return;
            }
        };
        let mut changed = Vec::new();
        let mut reconcile = false;
        // Opening or reading a file is not a change (and the index's own reads would
        // otherwise trigger endless reconciles).
        let changes = events
            .iter()
            .filter(|e| !matches!(e.kind, EventKind::Access(_)));
        for (event, path) in changes.flat_map(|e| e.paths.iter().map(move |p| (e, p))) {
            let Some(relative) = scan::relative(&handler_root, path) else {
                continue;
            };
            let (folders, name) = relative.rsplit_once('/').unwrap_or(("", &relative));
            if folders.split('/').any(|part| part.starts_with('.')) {
                continue;
            }
            if IGNORE_FILES.contains(&name) {
                reconcile = true;
            } else if name.starts_with('.') {
                continue;
            } else if classify(&relative).is_some() {
                if !changed.contains(&relative) {
                    changed.push(relative);
                }
            } else if path.is_dir()
                || matches!(event.kind, EventKind::Remove(RemoveKind::Folder))
                || (!path.exists() && !name.contains('.'))
            {
                // A folder made, moved or deleted.
                reconcile = true;
            }
        }
        let sent = if reconcile {
            index.sync_in_background()
        } else if !changed.is_empty() {
            index.changed(&changed)
        } else {
            Ok(())
        };
        if let Err(error) = sent {
            tracing::warn!(%error, "cannot queue changed files for indexing");
        }
    })
    .map_err(|e| IndexError::Watch(e.to_string()))?;
    debouncer
        .watch(&root, RecursiveMode::Recursive)
        .map_err(|e| IndexError::Watch(e.to_string()))?;
    Ok(Watch {
        _debouncer: debouncer,
    })
}
