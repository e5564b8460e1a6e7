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
use crate::source::{classify, Format};

/// Watching stops when this is dropped.
pub struct Watch {
    _debouncers: Vec<Debouncer<RecommendedWatcher, RecommendedCache>>,
}

/// Watches the workspace and every folder searched in place that is there (one that is
/// not is told in the index's status, and looked at again by each reconcile).
pub(super) fn start(index: MemoryIndex, debounce: Duration) -> Result<Watch, IndexError> {
    let mut debouncers = vec![watch_root(
        index.clone(),
        index.root().to_path_buf(),
        None,
        debounce,
    )?];
    for folder in index.folders().to_vec() {
        match watch_root(
            index.clone(),
            folder.root.clone(),
            Some(folder.name),
            debounce,
        ) {
            Ok(debouncer) => debouncers.push(debouncer),
            Err(error) => tracing::warn!(folder = %folder.root.display(), %error, "not watched"),
        }
    }
    Ok(Watch {
        _debouncers: debouncers,
    })
}

/// The message for a watch that could not start: the system's limit on watched folders
/// (inotify's, on Linux) is named with the setting that raises it.
fn watch_error(error: &notify_debouncer_full::notify::Error) -> IndexError {
    let text = error.to_string();
    let limit = matches!(
        &error.kind,
        notify_debouncer_full::notify::ErrorKind::MaxFilesWatch
    ) || text.contains("No space left on device");
    if limit {
        let now = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
            .map(|v| format!(" (now {})", v.trim()))
            .unwrap_or_default();
        return IndexError::Watch(format!(
            "the system's limit on watched folders is reached{now}: edits made outside Cairn \
             are seen at the next start. Raise it with `sudo sysctl \
             fs.inotify.max_user_watches=524288` (and in /etc/sysctl.d/ to keep it)"
        ));
    }
    IndexError::Watch(text)
}

/// Watches `root`; its files are known in the index under `name` when it is a folder
/// searched in place.
fn watch_root(
    index: MemoryIndex,
    root: std::path::PathBuf,
    name: Option<String>,
    debounce: Duration,
) -> Result<Debouncer<RecommendedWatcher, RecommendedCache>, IndexError> {
    let handler_root = root.clone();
    let name_of_root = name;
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
            } else if is_source(name_of_root.as_deref(), &relative) {
                let indexed = match &name_of_root {
                    Some(folder) => format!("{folder}/{relative}"),
                    None => relative,
                };
                if !changed.contains(&indexed) {
                    changed.push(indexed);
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
    .map_err(|e| watch_error(&e))?;
    debouncer
        .watch(&root, RecursiveMode::Recursive)
        .map_err(|e| watch_error(&e))?;
    Ok(debouncer)
}

/// Whether `relative` names a source by its path: in the workspace by its layout, in a
/// folder searched in place by its type.
fn is_source(folder: Option<&str>, relative: &str) -> bool {
    match folder {
        None => classify(relative).is_some(),
        Some(_) => Format::of(relative.rsplit('/').next().unwrap_or(relative)).is_some(),
    }
}
