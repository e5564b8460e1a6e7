//! The sessions folder: create, open (with repair), list.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use cairn_protocol::{EntryKind, Message, ParentLink, SessionHeader, ToolResultMessage};
use serde::{Deserialize, Serialize};

use super::context::{INTERRUPTED_STARTED, NOT_STARTED};
use super::load::{self, LoadedSession, Repair};
use super::summaries::{Keeper, Summaries};
use super::timestamp;
use super::tree::SessionTree;
use super::writer::SessionWriter;
use crate::error::HarnessError;
use crate::upkeep::lock::JobLock;

/// How long [`SessionStore::open`] waits for a session's lock.
const LOCK_PATIENCE: Duration = Duration::from_millis(200);

/// The session locks this process holds, by lock file.
static HELD: LazyLock<Mutex<HashMap<PathBuf, Weak<JobLock>>>> = LazyLock::new(Mutex::default);

/// A session ready for a run: its entries and its writer.
#[derive(Debug)]
pub struct OpenedSession {
    pub tree: SessionTree,
    pub writer: SessionWriter,
    pub repairs: Vec<Repair>,
}

impl OpenedSession {
    /// Appends one entry of `kind` at the active leaf, synced to disk, outside any run.
    pub async fn record(&mut self, kind: EntryKind) -> Result<(), HarnessError> {
        let entry = self.tree.draft(kind);
        self.writer.append(&entry)?;
        self.writer.sync().await?;
        self.tree.apply(entry);
        Ok(())
    }
}

/// One line of `cairn sessions list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct SessionSummary {
    pub id: String,
    pub title: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub messages: usize,
    /// For a subagent's session: the session that started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
}

/// `<workspace>/sessions/`. Clones share the listed summaries.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
    summaries: Arc<Mutex<Summaries>>,
}

impl SessionStore {
    /// The sessions in `dir`; their summaries are kept in memory only.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            summaries: Arc::default(),
        }
    }

    /// The sessions in `dir`, their summaries also kept in the catalog at `db` (so a new
    /// process lists thousands of sessions without reading their files).
    pub fn with_catalog(dir: impl Into<PathBuf>, db: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            summaries: Arc::new(Mutex::new(Summaries::in_catalog(db.into()))),
        }
    }

    /// The hold a writer of session `id` has on its summary.
    fn keeper(&self, id: &str) -> Keeper {
        Keeper::new(self.summaries.clone(), id.to_string())
    }

    pub fn path_of(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    /// A new, empty session. The file appears with the first entry.
    pub fn create(&self) -> Result<OpenedSession, HarnessError> {
        self.create_linked(None)
    }

    /// A new, empty session; a subagent's names the session and entry that started it.
    pub fn create_linked(&self, parent: Option<ParentLink>) -> Result<OpenedSession, HarnessError> {
        self.create_with(parent, None)
    }

    /// A new, empty session for a conversation imported from `origin`.
    pub fn create_imported(&self, origin: String) -> Result<OpenedSession, HarnessError> {
        self.create_with(None, Some(origin))
    }

    fn create_with(
        &self,
        parent: Option<ParentLink>,
        origin: Option<String>,
    ) -> Result<OpenedSession, HarnessError> {
        fs::create_dir_all(&self.dir).map_err(|e| HarnessError::io(&self.dir, e))?;
        let id = uuid::Uuid::now_v7().to_string();
        let mut header = SessionHeader::new(&id, timestamp());
        header.parent = parent;
        header.origin = origin;
        let lock = self
            .try_lock(&id)?
            .ok_or(HarnessError::SessionInUse(id.clone()))?;
        let writer = SessionWriter::start(
            self.path_of(&id),
            &header,
            false,
            Some(lock),
            Some(self.keeper(&id)),
        )?;
        Ok(OpenedSession {
            tree: SessionTree::new(header),
            writer,
            repairs: Vec::new(),
        })
    }

    /// Opens a session for new runs (`id` may be a unique prefix), repairing it: a torn last
    /// line is set aside and unfinished tool calls get an "interrupted" result on disk, so
    /// the session is valid to send to a provider. One process at a time writes a session:
    /// it holds the session's lock (in `.cairn/locks/`) until its writer ends, and repairs
    /// happen only under it, so another process's line being written is never cut. While
    /// another process holds it, this fails with [`HarnessError::SessionInUse`].
    pub async fn open(&self, id: &str) -> Result<OpenedSession, HarnessError> {
        let id = self.resolve(id)?;
        let lock = self.lock(&id).await?;
        let path = self.path_of(&id);
        let LoadedSession {
            mut tree,
            mut repairs,
            needs_newline,
        } = load::load(&path, true)?;
        let writer = SessionWriter::start(
            path,
            tree.header(),
            needs_newline,
            Some(lock),
            Some(self.keeper(&id)),
        )?;
        let orphans = tree.trailing_orphan_calls();
        if !orphans.is_empty() {
            // A call's start marker is saved before it runs: without one it never did.
            let started: std::collections::HashSet<&str> = tree
                .entries()
                .iter()
                .filter_map(|e| match &e.kind {
                    EntryKind::ToolStarted { call_id, .. } => Some(call_id.as_str()),
                    _ => None,
                })
                .collect();
            let (ran, not_run): (Vec<_>, Vec<_>) = orphans
                .iter()
                .map(|c| c.id.clone())
                .partition(|id| started.contains(id.as_str()));
            let answers: Vec<ToolResultMessage> = orphans
                .iter()
                .map(|call| ToolResultMessage {
                    call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    content: match started.contains(call.id.as_str()) {
                        true => INTERRUPTED_STARTED.to_string(),
                        false => NOT_STARTED.to_string(),
                    },
                    is_error: true,
                    pictures: Vec::new(),
                })
                .collect();
            for result in answers {
                let entry = tree.draft(EntryKind::Message {
                    message: Message::ToolResult(result),
                });
                writer.append(&entry)?;
                tree.apply(entry);
            }
            writer.sync().await?;
            repairs.push(Repair::InterruptedCalls { ran, not_run });
        }
        Ok(OpenedSession {
            tree,
            writer,
            repairs,
        })
    }

    /// The lock file of session `id`: `.cairn/locks/` beside the sessions folder.
    fn lock_path(&self, id: &str) -> PathBuf {
        self.dir
            .parent()
            .unwrap_or(&self.dir)
            .join(".cairn/locks")
            .join(format!("session-{id}.lock"))
    }

    /// Takes session `id`'s lock, or shares it when this process holds it already (the OS
    /// lock belongs to one open file, so a second one here would refuse this process
    /// itself). `None`: another process holds it.
    fn try_lock(&self, id: &str) -> Result<Option<Arc<JobLock>>, HarnessError> {
        let path = self.lock_path(id);
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(lock) = held.get(&path).and_then(Weak::upgrade) {
            return Ok(Some(lock));
        }
        held.retain(|_, lock| lock.strong_count() > 0);
        let Some(lock) = JobLock::try_acquire_at(&path).map_err(|e| HarnessError::io(&path, e))?
        else {
            return Ok(None);
        };
        let lock = Arc::new(lock);
        held.insert(path, Arc::downgrade(&lock));
        Ok(Some(lock))
    }

    /// [`Self::try_lock`], waiting a moment for a lock of this process being let go of.
    async fn lock(&self, id: &str) -> Result<Arc<JobLock>, HarnessError> {
        let deadline = Instant::now() + LOCK_PATIENCE;
        loop {
            match self.try_lock(id)? {
                Some(lock) => return Ok(lock),
                None if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(20)).await
                }
                None => return Err(HarnessError::SessionInUse(id.to_string())),
            }
        }
    }

    /// Moves session `id` to `.cairn/deleted-sessions/` beside the sessions folder: out of
    /// the list and the memory index, still on disk to bring back. Never over a file already
    /// there (a second deletion of the same id gets `<id>-2.jsonl`); refused with
    /// [`HarnessError::SessionInUse`] while another process has the session open. Returns
    /// where the file went, relative to the workspace.
    pub async fn delete(&self, id: &str) -> Result<String, HarnessError> {
        let id = self.resolve(id)?;
        // Held while the file moves: no other process writes it or deletes it meanwhile,
        // so the name found free below stays free.
        let _lock = self.lock(&id).await?;
        let root = self.dir.parent().unwrap_or(&self.dir);
        let bin = root.join(".cairn/deleted-sessions");
        std::fs::create_dir_all(&bin).map_err(|e| HarnessError::io(&bin, e))?;
        // A workspace someone else prepared may hold a link there: the session must not
        // be moved out of the workspace through it.
        let real = std::fs::canonicalize(&bin).map_err(|e| HarnessError::io(&bin, e))?;
        let meant = std::fs::canonicalize(root)
            .map_err(|e| HarnessError::io(root, e))?
            .join(".cairn/deleted-sessions");
        if real != meant {
            let out = std::io::Error::other("it leads out of the workspace's .cairn/ folder");
            return Err(HarnessError::io(&bin, out));
        }
        let free = (1..1000)
            .map(|n| match n {
                1 => format!("{id}.jsonl"),
                n => format!("{id}-{n}.jsonl"),
            })
            .find(|name| bin.join(name).symlink_metadata().is_err())
            .ok_or_else(|| {
                let full = std::io::Error::other("too many deleted copies of this session");
                HarnessError::io(&bin, full)
            })?;
        let from = self.path_of(&id);
        std::fs::rename(&from, bin.join(&free)).map_err(|e| HarnessError::io(&from, e))?;
        Ok(format!(".cairn/deleted-sessions/{free}"))
    }

    /// Reads a session without changing its file.
    pub fn load(&self, id: &str) -> Result<LoadedSession, HarnessError> {
        let id = self.resolve(id)?;
        load::load(&self.path_of(&id), false)
    }

    /// Every session, most recently updated first. Files that cannot be read are skipped
    /// with a warning. Only files that changed since their summary was made are read.
    pub fn list(&self) -> Result<Vec<SessionSummary>, HarnessError> {
        let ids = self.ids()?;
        let mut out = self
            .summaries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .list(
                &ids,
                |id| self.path_of(id),
                |id, path| match load::load(path, false) {
                    Ok(loaded) => Some(summarize(&loaded.tree)),
                    Err(e) => {
                        tracing::warn!("skipping session {id}: {e}");
                        None
                    }
                },
            );
        out.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(b.id.cmp(&a.id)));
        Ok(out)
    }

    /// The most recently updated session a user started (subagents' sessions left out).
    pub fn latest(&self) -> Result<Option<String>, HarnessError> {
        Ok(self
            .list()?
            .into_iter()
            .find(|s| s.parent_session.is_none())
            .map(|s| s.id))
    }

    /// The full id for `prefix` (an id or a unique start of one).
    pub fn resolve(&self, prefix: &str) -> Result<String, HarnessError> {
        let prefix = prefix.trim();
        if prefix.is_empty() || prefix.contains(['/', '\\']) || prefix.contains("..") {
            return Err(HarnessError::SessionNotFound(prefix.to_string()));
        }
        let ids = self.ids()?;
        if ids.iter().any(|id| id == prefix) {
            return Ok(prefix.to_string());
        }
        let matches: Vec<_> = ids
            .into_iter()
            .filter(|id| id.starts_with(prefix))
            .collect();
        match matches.len() {
            0 => Err(HarnessError::SessionNotFound(prefix.to_string())),
            1 => Ok(matches.into_iter().next().unwrap_or_default()),
            _ => Err(HarnessError::AmbiguousSession {
                prefix: prefix.to_string(),
                candidates: matches.join(", "),
            }),
        }
    }

    /// The origin of every imported session, with its id (read from the files' first lines).
    pub fn origins(&self) -> Result<HashMap<String, String>, HarnessError> {
        use std::io::{BufRead as _, Read as _};
        let mut origins = HashMap::new();
        for id in self.ids()? {
            let Ok(file) = fs::File::open(self.path_of(&id)) else {
                continue;
            };
            let mut first = String::new();
            // A header is a short line: a file without one is not read whole.
            if std::io::BufReader::new(file.take(64 * 1024))
                .read_line(&mut first)
                .is_err()
            {
                continue;
            }
            if let Ok(SessionHeader {
                origin: Some(origin),
                ..
            }) = serde_json::from_str::<SessionHeader>(&first)
            {
                origins.insert(origin, id);
            }
        }
        Ok(origins)
    }

    fn ids(&self) -> Result<Vec<String>, HarnessError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(HarnessError::io(&self.dir, e)),
        };
        Ok(entries
            .flatten()
            .filter_map(|e| session_id(&e.path()))
            .collect())
    }
}

fn session_id(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    name.strip_suffix(".jsonl").map(str::to_string)
}

fn summarize(tree: &SessionTree) -> SessionSummary {
    let header = tree.header();
    let updated_at = tree
        .entries()
        .last()
        .map(|e| e.ts.clone())
        .unwrap_or_else(|| header.created_at.clone());
    SessionSummary {
        id: header.id.clone(),
        title: tree.title().map(str::to_string),
        created_at: header.created_at.clone(),
        updated_at,
        messages: tree.message_count(),
        parent_session: header.parent.as_ref().map(|p| p.session_id.clone()),
    }
}
