//! One watcher per watched root, shared: a debounced recursive watcher on the workspace
//! and one on each folder searched in place, whose settled events go, digested into a
//! [`Batch`], to every subscriber (the memory index; the desktop app's file tree and
//! editor). Subscribers come and go while it runs; watching stops when it is dropped.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use notify_debouncer_full::notify::event::{CreateKind, ModifyKind, RemoveKind, RenameMode};
use notify_debouncer_full::notify::{self, EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};
use rustc_hash::FxHashMap;

use crate::index::folders::Folder;
use crate::index::scan::relative;

/// What settled in one watched root since the batch before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// The folder searched in place it happened in, by name; `None` for the workspace.
    pub folder: Option<String>,
    /// What changed, each path once; reading a file is not a change.
    pub changes: Vec<Change>,
    /// Something was created, removed or renamed: a listing of the tree is out of date.
    pub tree_changed: bool,
    /// The watcher failed or overflowed and events were lost: anything may have changed.
    pub lost: bool,
}

/// One path that changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// As the index and the app name it: relative to the workspace, with `/`; in a
    /// folder searched in place, under the folder's name (`Notes/trips/croatia.md`).
    pub path: String,
    /// Where it is on disk.
    pub file: PathBuf,
    /// It was removed as a folder (which the disk can no longer tell).
    pub removed_folder: bool,
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("file watcher: {0}")]
pub struct WatchError(String);

/// Watches the workspace and its folders searched in place until dropped, telling each
/// settled batch to every [`subscribe`](FolderWatch::subscribe)r.
pub struct FolderWatch {
    subscribers: Arc<Subscribers>,
    _debouncers: Vec<Debouncer<RecommendedWatcher, RecommendedCache>>,
}

/// Hears a [`FolderWatch`]'s batches until dropped. Dropping it waits for a delivery to it
/// under way, so none comes after (drop it outside its own subscriber, or that waits
/// forever).
pub struct Subscription {
    subscribers: Weak<Subscribers>,
    slot: Slot,
}

type Subscriber = Box<dyn Fn(&Batch) + Send + Sync>;
type Slot = Arc<Mutex<Option<Subscriber>>>;

#[derive(Default)]
struct Subscribers(Mutex<Vec<Slot>>);

impl FolderWatch {
    /// Watches `root` (the workspace) and each of `folders` (known as `name/…`); a folder
    /// that cannot be watched (not there) is warned about and left out, the workspace
    /// must be watched. Events settle for `debounce` before they are told.
    pub fn start(root: &Path, folders: &[Folder], debounce: Duration) -> Result<Self, WatchError> {
        let subscribers = Arc::<Subscribers>::default();
        let mut debouncers = vec![watch_root(&subscribers, root, None, debounce)?];
        for folder in folders {
            match watch_root(&subscribers, &folder.root, Some(&folder.name), debounce) {
                Ok(debouncer) => debouncers.push(debouncer),
                Err(error) => {
                    tracing::warn!(folder = %folder.root.display(), %error, "not watched")
                }
            }
        }
        Ok(Self {
            subscribers,
            _debouncers: debouncers,
        })
    }

    /// Tells `subscriber` every batch from now on (on the watcher's threads, one root's
    /// batches in order), until the returned handle is dropped.
    #[must_use = "the subscription ends when dropped"]
    pub fn subscribe(&self, subscriber: impl Fn(&Batch) + Send + Sync + 'static) -> Subscription {
        let slot: Slot = Arc::new(Mutex::new(Some(Box::new(subscriber))));
        self.subscribers.lock().push(slot.clone());
        Subscription {
            subscribers: Arc::downgrade(&self.subscribers),
            slot,
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(subscribers) = self.subscribers.upgrade() {
            subscribers
                .lock()
                .retain(|slot| !Arc::ptr_eq(slot, &self.slot));
        }
        let subscriber = self
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(subscriber);
    }
}

impl Subscribers {
    fn lock(&self) -> MutexGuard<'_, Vec<Slot>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells each subscriber in turn, the list unlocked meanwhile (one may come or go).
    fn deliver(&self, batch: &Batch) {
        let slots = self.lock().clone();
        for slot in slots {
            let subscriber = slot.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(subscriber) = subscriber.as_ref() {
                subscriber(batch);
            }
        }
    }
}

/// Watches `root`, known as `folder` when it is a folder searched in place.
fn watch_root(
    subscribers: &Arc<Subscribers>,
    root: &Path,
    folder: Option<&str>,
    debounce: Duration,
) -> Result<Debouncer<RecommendedWatcher, RecommendedCache>, WatchError> {
    let subscribers = subscribers.clone();
    let base = root.to_path_buf();
    let name = folder.map(str::to_owned);
    let mut debouncer = new_debouncer(debounce, None, move |result: DebounceEventResult| {
        let batch = digest(&base, name.as_deref(), result);
        if batch.lost || batch.tree_changed || !batch.changes.is_empty() {
            subscribers.deliver(&batch);
        }
    })
    .map_err(|e| watch_error(&e))?;
    debouncer
        .watch(root, RecursiveMode::Recursive)
        .map_err(|e| watch_error(&e))?;
    Ok(debouncer)
}

/// The batch of the settled events `result` of `root`.
fn digest(root: &Path, folder: Option<&str>, result: DebounceEventResult) -> Batch {
    let mut batch = Batch {
        folder: folder.map(str::to_owned),
        changes: Vec::new(),
        tree_changed: false,
        lost: false,
    };
    let events = match result {
        Ok(events) => events,
        Err(errors) => {
            for error in errors {
                tracing::warn!(%error, "file watcher");
            }
            batch.lost = true;
            return batch;
        }
    };
    let mut seen: FxHashMap<String, usize> = FxHashMap::default();
    // Opening or reading a file is not a change (and the index's own reads would
    // otherwise trigger endless reconciles).
    let changes = events
        .iter()
        .filter(|e| !matches!(e.kind, EventKind::Access(_)));
    for event in changes {
        batch.lost |= event.need_rescan();
        batch.tree_changed |= reshapes(&event.kind);
        let removed_folder = matches!(event.kind, EventKind::Remove(RemoveKind::Folder));
        for file in &event.paths {
            let Some(relative) = relative(root, file) else {
                continue;
            };
            let path = match folder {
                Some(name) => format!("{name}/{relative}"),
                None => relative,
            };
            match seen.get(&path) {
                Some(&at) => batch.changes[at].removed_folder |= removed_folder,
                None => {
                    seen.insert(path.clone(), batch.changes.len());
                    batch.changes.push(Change {
                        path,
                        file: file.clone(),
                        removed_folder,
                    });
                }
            }
        }
    }
    batch
}

/// Whether an event of `kind` adds, removes or renames an entry.
fn reshapes(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Create(CreateKind::File | CreateKind::Folder | CreateKind::Any)
            | EventKind::Remove(RemoveKind::File | RemoveKind::Folder | RemoveKind::Any)
            | EventKind::Modify(ModifyKind::Name(
                RenameMode::From | RenameMode::To | RenameMode::Both | RenameMode::Any
            ))
    )
}

/// The message for a watch that could not start: the system's limit on watched folders
/// (inotify's, on Linux) is named with the setting that raises it.
fn watch_error(error: &notify::Error) -> WatchError {
    let text = error.to_string();
    let limit = matches!(&error.kind, notify::ErrorKind::MaxFilesWatch)
        || text.contains("No space left on device");
    if limit {
        let now = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
            .map(|v| format!(" (now {})", v.trim()))
            .unwrap_or_default();
        return WatchError(format!(
            "the system's limit on watched folders is reached{now}: edits made outside Cairn \
             are seen at the next start. Raise it with `sudo sysctl \
             fs.inotify.max_user_watches=524288` (and in /etc/sysctl.d/ to keep it)"
        ));
    }
    WatchError(text)
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use notify::event::{AccessKind, DataChange, Event, Flag};
    use notify_debouncer_full::DebouncedEvent;
    use pretty_assertions::assert_eq;

    use super::*;

    fn event(kind: EventKind, paths: &[&str]) -> DebouncedEvent {
        let event = paths
            .iter()
            .fold(Event::new(kind), |e, p| e.add_path(PathBuf::from(p)));
        DebouncedEvent::new(event, Instant::now())
    }

    fn change(path: &str, file: &str, removed_folder: bool) -> Change {
        Change {
            path: path.into(),
            file: file.into(),
            removed_folder,
        }
    }

    #[test]
    fn a_batch_names_each_changed_path_once_under_its_folder() {
        let events = vec![
            event(EventKind::Access(AccessKind::Any), &["/n/read.md"]),
            event(
                EventKind::Modify(ModifyKind::Data(DataChange::Any)),
                &["/n/trips/a.md", "/elsewhere/b.md"],
            ),
            event(EventKind::Remove(RemoveKind::Folder), &["/n/old"]),
            event(EventKind::Remove(RemoveKind::Any), &["/n/old", "/n"]),
            event(
                EventKind::Modify(ModifyKind::Data(DataChange::Any)),
                &["/n/trips/a.md"],
            ),
        ];
        let batch = digest(Path::new("/n"), Some("Notes"), Ok(events));
        let expected = Batch {
            folder: Some("Notes".into()),
            changes: vec![
                change("Notes/trips/a.md", "/n/trips/a.md", false),
                change("Notes/old", "/n/old", true),
            ],
            tree_changed: true,
            lost: false,
        };
        assert_eq!(batch, expected);
    }

    #[test]
    fn edits_alone_leave_the_tree_and_errors_or_overflows_lose_events() {
        let edit = event(
            EventKind::Modify(ModifyKind::Data(DataChange::Any)),
            &["/w/MEMORY.md"],
        );
        let batch = digest(Path::new("/w"), None, Ok(vec![edit]));
        assert_eq!(batch.changes, [change("MEMORY.md", "/w/MEMORY.md", false)]);
        assert!(!batch.tree_changed && !batch.lost && batch.folder.is_none());
        let failed = digest(
            Path::new("/w"),
            None,
            Err(vec![notify::Error::generic("x")]),
        );
        assert!(failed.lost && failed.changes.is_empty());
        let mut overflow = event(EventKind::Other, &[]);
        overflow.event = overflow.event.set_flag(Flag::Rescan);
        assert!(digest(Path::new("/w"), None, Ok(vec![overflow])).lost);
    }
}
