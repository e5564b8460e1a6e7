//! The workspace's memory index for a front end that lives a while.

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use cairn_memory::index::Watch;
use cairn_memory::{FolderWatch, IndexOptions, MemoryIndex, WatchError, Workspace};

use super::Warn;

/// How often a read-only process looks whether the writing process has gone.
const TAKE_OVER_EVERY: Duration = Duration::from_secs(3);

/// The workspace's memory index, brought up to date in the background and following
/// edits while this lives. When another process writes the index, this one reads it and
/// takes over writing (and following edits) once that process has gone.
///
/// It holds the process's one watcher of the workspace and its folders searched in place,
/// running whether or not this process writes the index: the index follows it while it
/// writes, and a front end subscribes to it ([`Memory::watcher`]) for outside edits.
pub struct Memory {
    pub index: Option<MemoryIndex>,
    watcher: Result<Arc<FolderWatch>, WatchError>,
    follow: Arc<Mutex<Option<Watch>>>,
}

impl Memory {
    /// Opens the memory index, with search by meaning when the settings give an
    /// embedder; without an index the agent still runs (memory_search is left out and
    /// recall is skipped), with a warning.
    pub fn open(workspace: &Workspace, config: &super::Config, warn: Warn<'_>) -> Self {
        let follow = Arc::new(Mutex::new(None));
        let options = IndexOptions {
            read: super::read_options(config, warn),
            ..base_options(config)
        };
        let watcher = FolderWatch::start(workspace.root(), workspace.folders(), options.debounce)
            .map(Arc::new)
            .inspect_err(|e| warn(format!("edits are not followed: {e}")));
        let options = IndexOptions {
            embedder: super::embedder(config, warn),
            ..options
        };
        let index = match MemoryIndex::open(workspace, options) {
            Ok(index) => index,
            Err(e) => {
                warn(format!("the memory index is unavailable: {e}"));
                return Self {
                    index: None,
                    watcher,
                    follow,
                };
            }
        };
        for notice in index.notices() {
            warn(format!("memory index: {notice}"));
        }
        if index.is_read_only() {
            // Another Cairn process writes the index and follows the edits, for now.
            let shared = watcher.as_ref().ok().map(Arc::downgrade);
            take_over_later(index.clone(), Arc::downgrade(&follow), shared);
        } else {
            if let Err(e) = index.sync_in_background() {
                warn(format!("the memory index cannot update: {e}"));
            }
            *follow.lock().unwrap_or_else(PoisonError::into_inner) =
                watcher.as_ref().ok().map(|w| index.follow(w));
        }
        Self {
            index: Some(index),
            watcher,
            follow,
        }
    }

    /// Whether the index follows edits to the workspace in this process.
    pub fn follows_edits(&self) -> bool {
        self.follow
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The watcher of the workspace and its folders searched in place, to subscribe to;
    /// or why it could not start.
    pub fn watcher(&self) -> Result<&FolderWatch, &WatchError> {
        self.watcher.as_deref()
    }
}

/// The index's options as the settings have them (the embedder aside: see
/// [`super::embedder`]); a warning about OCR goes to the log.
pub fn index_options(config: &super::Config) -> IndexOptions {
    IndexOptions {
        read: super::read_options(config, &mut |warning| tracing::warn!("{warning}")),
        ..base_options(config)
    }
}

/// [`index_options`] but how documents are read.
fn base_options(config: &super::Config) -> IndexOptions {
    let memory = &config.settings.memory;
    let mut options = IndexOptions {
        exclude: memory.exclude.clone().unwrap_or_default(),
        recency_strength: recency_strength(memory),
        ..IndexOptions::default()
    };
    if let Some(mb) = memory.max_file_mb {
        options.max_text_bytes = mb.saturating_mul(1 << 20);
        options.max_document_bytes = options.max_text_bytes;
    }
    options
}

/// How much age weighs on a dated log's hits: `[memory] recency_strength`, 0 with
/// `recency = "off"`; a strength outside 0..=0.9 is left for the default, with a warning.
fn recency_strength(memory: &crate::settings::MemorySettings) -> f64 {
    if memory.recency == Some(crate::settings::Recency::Off) {
        return 0.0;
    }
    match memory.recency_strength {
        None => cairn_memory::index::RECENCY_STRENGTH,
        Some(s) if (0.0..=0.9).contains(&s) => s,
        Some(s) => {
            tracing::warn!(
                "[memory] recency_strength = {s} is outside 0 to 0.9; the default {} is used",
                cairn_memory::index::RECENCY_STRENGTH
            );
            cairn_memory::index::RECENCY_STRENGTH
        }
    }
}

/// Tries, now and then while the [`Memory`] lives, to become the index's writer; once it
/// is, follows edits through `watcher` (when it started).
fn take_over_later(
    index: MemoryIndex,
    slot: Weak<Mutex<Option<Watch>>>,
    watcher: Option<Weak<FolderWatch>>,
) {
    let spawned = std::thread::Builder::new()
        .name("cairn-index-take-over".into())
        .spawn(move || loop {
            std::thread::sleep(TAKE_OVER_EVERY);
            let Some(slot) = slot.upgrade() else {
                return;
            };
            match index.take_over() {
                Ok(false) => continue,
                Ok(true) => {
                    if let Some(watcher) = watcher.as_ref().and_then(Weak::upgrade) {
                        *slot.lock().unwrap_or_else(PoisonError::into_inner) =
                            Some(index.follow(&watcher));
                    }
                    return;
                }
                Err(e) => {
                    tracing::warn!("cannot take over writing the memory index: {e}");
                    return;
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot watch for the memory index's writer to go: {e}");
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use cairn_memory::SearchQuery;

    use super::*;

    /// `[memory] recency` and `recency_strength` as written in config.toml reach the index;
    /// a strength out of range (or not a number) is left for the default, never used.
    #[test]
    fn recency_settings_reach_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let strength = |toml: &str| {
            std::fs::write(dir.path().join("config.toml"), toml).unwrap();
            base_options(&super::super::Config::load(Some(dir.path())).unwrap()).recency_strength
        };
        let default = cairn_memory::index::RECENCY_STRENGTH;
        assert_eq!(strength(""), default);
        assert_eq!(strength("[memory]\nrecency_strength = 0.4\n"), 0.4);
        assert_eq!(
            strength("[memory]\nrecency = \"off\"\nrecency_strength = 0.4\n"),
            0.0
        );
        assert_eq!(strength("[memory]\nrecency = \"on\"\n"), default);
        for bad in ["-0.1", "0.95", "7", "nan", "inf"] {
            assert_eq!(
                strength(&format!("[memory]\nrecency_strength = {bad}\n")),
                default,
                "{bad}"
            );
        }
        std::fs::write(
            dir.path().join("config.toml"),
            "[memory]\nrecency = \"sometimes\"\n",
        )
        .unwrap();
        assert!(
            super::super::Config::load(Some(dir.path())).is_err(),
            "an unknown value is refused"
        );
    }

    #[test]
    fn a_reader_takes_over_and_follows_edits_once_the_writer_has_gone() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::open_or_create(dir.path()).unwrap();
        let mut config = super::super::Config::load(Some(dir.path())).unwrap();
        config.settings.memory.embedder = Some("none".into());
        let mut warnings = Vec::new();
        let first = Memory::open(&workspace, &config, &mut |w| warnings.push(w));
        let second = Memory::open(&workspace, &config, &mut |w| warnings.push(w));
        assert!(first.follows_edits());
        assert!(!second.follows_edits());
        drop(first);
        let deadline = Instant::now() + Duration::from_secs(20);
        while !second.follows_edits() {
            assert!(Instant::now() < deadline, "it never took over");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::fs::write(
            workspace.root().join("knowledge/okra.md"),
            "# Okra\n\nOkra likes the heat.\n",
        )
        .unwrap();
        let index = second.index.as_ref().unwrap();
        let found = loop {
            let hits = index.search(&SearchQuery::new("okra")).unwrap().results;
            if !hits.is_empty() || Instant::now() > deadline {
                break hits;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(!found.is_empty(), "the edit was not followed");
        assert!(warnings.is_empty(), "{warnings:?}");
    }
}
