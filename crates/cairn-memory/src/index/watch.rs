//! Following edits made inside or outside the app: the index subscribes to a
//! [`FolderWatch`] and turns its batches into index jobs. `.cairn/` (where the index
//! itself is written) and other hidden files are ignored, except the ignore files
//! (`.gitignore`, `.ignore`, `.cairnignore`): a change to one, or to a folder (made,
//! moved, deleted), triggers a reconcile, since the files it concerns are not reported
//! one by one; so does a batch whose events were lost.

use std::time::Duration;

use super::rules::IGNORE_FILES;
use super::{IndexError, MemoryIndex};
use crate::source::{classify, Format};
use crate::watch::{Batch, FolderWatch, Subscription};

/// Following stops when this is dropped.
pub struct Watch {
    _subscription: Subscription,
    /// The watcher the index started for itself, when it did not follow a shared one.
    _own: Option<FolderWatch>,
}

/// Watches the workspace and every folder searched in place that is there (one that is
/// not is told in the index's status, and looked at again by each reconcile).
pub(super) fn start(index: MemoryIndex, debounce: Duration) -> Result<Watch, IndexError> {
    let watcher = FolderWatch::start(index.root(), index.folders(), debounce)?;
    Ok(Watch {
        _subscription: follow(index, &watcher)._subscription,
        _own: Some(watcher),
    })
}

/// Follows the batches of `watcher`.
pub(super) fn follow(index: MemoryIndex, watcher: &FolderWatch) -> Watch {
    Watch {
        _subscription: watcher.subscribe(move |batch| take(&index, batch)),
        _own: None,
    }
}

/// Queues the jobs `batch` calls for.
fn take(index: &MemoryIndex, batch: &Batch) {
    let mut changed: Vec<&str> = Vec::new();
    let mut reconcile = batch.lost;
    for change in &batch.changes {
        let relative = match &batch.folder {
            Some(folder) => change
                .path
                .strip_prefix(folder.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
                .unwrap_or(&change.path),
            None => &change.path,
        };
        let (folders, name) = relative.rsplit_once('/').unwrap_or(("", relative));
        if folders.split('/').any(|part| part.starts_with('.')) {
            continue;
        }
        if IGNORE_FILES.contains(&name) {
            reconcile = true;
        } else if name.starts_with('.') {
            continue;
        } else if is_source(batch.folder.as_deref(), relative) {
            changed.push(&change.path);
        } else if change.file.is_dir()
            || change.removed_folder
            || (!change.file.exists() && !name.contains('.'))
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
}

/// Whether `relative` names a source by its path: in the workspace by its layout, in a
/// folder searched in place by its type.
fn is_source(folder: Option<&str>, relative: &str) -> bool {
    match folder {
        None => classify(relative).is_some(),
        Some(_) => Format::of(relative.rsplit('/').next().unwrap_or(relative)).is_some(),
    }
}
