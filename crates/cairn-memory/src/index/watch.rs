//! Following edits made inside or outside the app: a debounced recursive watcher on the
//! workspace whose settled events become index jobs. `.cairn/` (where the index itself is
//! written) and hidden files are ignored; a change to a folder (moved, deleted) triggers a
//! reconcile, since the files inside it are not reported one by one.

use std::time::Duration;

use notify_debouncer_full::notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};

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
        for path in changes.flat_map(|e| e.paths.iter()) {
            let Some(relative) = scan::relative(&handler_root, path) else {
                continue;
            };
            if relative.split('/').any(|part| part.starts_with('.')) {
                continue;
            }
            if classify(&relative).is_some() {
                if !changed.contains(&relative) {
                    changed.push(relative);
                }
            } else if ["memory", "knowledge", "sessions"]
                .iter()
                .any(|dir| relative == *dir || relative.starts_with(&format!("{dir}/")))
                && !path.is_file()
            {
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
