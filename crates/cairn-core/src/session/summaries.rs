//! The session list's summaries. Listing a session means reading its whole file, which for
//! thousands of sessions takes seconds, so each summary is kept, with the file's length and
//! modification time when it was made: in memory for the process, and in the workspace's
//! catalog (`.cairn/state.db`) for the next start. A summary is used only while its file
//! still has that length and time; any other file is read again and its summary replaced.
//! The session's writer keeps its summary current as it appends ([`Keeper`]), so the
//! session being written is not read again at the next listing.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

use cairn_memory::catalog::{Catalog, StoredSummary};
use cairn_protocol::{EntryKind, SessionEntry};

use super::store::SessionSummary;

/// A session file's length and modification time: session files only grow or are
/// rewritten, so an unchanged stamp means an unchanged summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    len: u64,
    mtime_ns: i64,
}

impl Stamp {
    pub(super) fn of(path: &Path) -> Option<Self> {
        Self::of_meta(&fs::metadata(path).ok()?)
    }

    /// The stamp of a file held open (no path to look up).
    pub(super) fn of_file(file: &fs::File) -> Option<Self> {
        Self::of_meta(&file.metadata().ok()?)
    }

    fn of_meta(meta: &fs::Metadata) -> Option<Self> {
        let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
        Some(Self {
            len: meta.len(),
            mtime_ns: i64::try_from(modified.as_nanos()).ok()?,
        })
    }
}

#[derive(Default)]
enum Kept {
    /// Summaries live in memory only.
    #[default]
    Nowhere,
    /// In the catalog at this path, not read yet.
    Unread(PathBuf),
    Open(Catalog),
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Nowhere => f.write_str("Nowhere"),
            Self::Unread(db) => f.debug_tuple("Unread").field(db).finish(),
            Self::Open(_) => f.write_str("Open"),
        }
    }
}

/// The summaries known, and where they are kept.
#[derive(Debug, Default)]
pub(super) struct Summaries {
    seen: HashMap<String, (Stamp, SessionSummary)>,
    /// Sessions whose summary a writer moved on since the catalog last got it.
    moved: HashSet<String>,
    kept: Kept,
}

/// What one entry changes in its session's summary.
#[derive(Debug, Clone)]
pub(super) struct Growth {
    ts: String,
    title: Option<String>,
    message: bool,
}

impl Growth {
    pub(super) fn of(entry: &SessionEntry) -> Self {
        Self {
            ts: entry.ts.clone(),
            title: match &entry.kind {
                EntryKind::SessionInfo { title } => Some(title.clone()),
                _ => None,
            },
            message: matches!(entry.kind, EntryKind::Message { .. }),
        }
    }
}

/// A session writer's hold on its session's summary.
#[derive(Debug, Clone)]
pub(super) struct Keeper {
    summaries: Arc<Mutex<Summaries>>,
    id: String,
}

impl Keeper {
    pub(super) fn new(summaries: Arc<Mutex<Summaries>>, id: String) -> Self {
        Self { summaries, id }
    }

    /// Runs `append` (lines added to the session's file) on `state`. When the summary known
    /// was made from the file as it was just before (its stamp by `stamp`), it takes in
    /// `grown` (the entries appended) and the file's new stamp, instead of the file being
    /// read again at the next listing. While a listing holds the summaries, the append goes
    /// ahead without: the stamp then differs and the listing reads the file. A session no
    /// listing has summarised yet is not looked at (the next listing reads it anyway).
    pub(super) fn around<S>(
        &self,
        state: &mut S,
        stamp: impl Fn(&S) -> Option<Stamp>,
        grown: &[Growth],
        append: impl FnOnce(&mut S) -> io::Result<()>,
    ) -> io::Result<()> {
        let Ok(mut summaries) = self.summaries.try_lock() else {
            return append(state);
        };
        if !summaries.seen.contains_key(&self.id) {
            return append(state);
        }
        let before = stamp(state);
        append(state)?;
        summaries.advance(&self.id, before, stamp(state), grown);
        Ok(())
    }
}

impl Summaries {
    /// Summaries kept in the catalog at `db` besides memory.
    pub(super) fn in_catalog(db: PathBuf) -> Self {
        Self {
            kept: Kept::Unread(db),
            ..Self::default()
        }
    }

    /// Reads the catalog's summaries the first time; a catalog that cannot be opened or
    /// read leaves them in memory only.
    fn open(&mut self) {
        let Kept::Unread(db) = &self.kept else {
            return;
        };
        let opened = Catalog::open(db).and_then(|catalog| {
            let stored = catalog.session_summaries()?;
            Ok((catalog, stored))
        });
        match opened {
            Ok((catalog, stored)) => {
                for row in stored {
                    if let Ok(summary) = serde_json::from_str::<SessionSummary>(&row.summary) {
                        let stamp = Stamp {
                            len: row.len,
                            mtime_ns: row.mtime_ns,
                        };
                        self.seen.entry(row.id).or_insert((stamp, summary));
                    }
                }
                self.kept = Kept::Open(catalog);
            }
            Err(e) => {
                tracing::warn!("session summaries are not kept: {e}");
                self.kept = Kept::Nowhere;
            }
        }
    }

    /// Moves the summary of `id` on by `grown` when it was made at `before`.
    fn advance(&mut self, id: &str, before: Option<Stamp>, after: Option<Stamp>, grown: &[Growth]) {
        let Some((stamp, summary)) = self.seen.get_mut(id) else {
            return;
        };
        match (before, after) {
            (Some(before), Some(after)) if *stamp == before => {
                for growth in grown {
                    summary.updated_at.clone_from(&growth.ts);
                    if let Some(title) = &growth.title {
                        summary.title = Some(title.clone());
                    }
                    summary.messages += usize::from(growth.message);
                }
                *stamp = after;
                self.moved.insert(id.to_string());
            }
            // Made from another state of the file: the next listing reads it.
            _ => {}
        }
    }

    /// The summaries of the sessions `ids` (files at `path_of(id)`), reading only the files
    /// whose stamp changed since their summary was made (`read`; `None`: cannot be read,
    /// left out). What changed is written back to the catalog.
    pub(super) fn list(
        &mut self,
        ids: &[String],
        path_of: impl Fn(&str) -> PathBuf,
        read: impl Fn(&str, &Path) -> Option<SessionSummary>,
    ) -> Vec<SessionSummary> {
        self.open();
        let present: HashSet<&String> = ids.iter().collect();
        let gone: Vec<String> = self
            .seen
            .keys()
            .filter(|id| !present.contains(id))
            .cloned()
            .collect();
        for id in &gone {
            self.seen.remove(id);
            self.moved.remove(id);
        }
        let mut put = Vec::new();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let path = path_of(id);
            // Stamped before reading: a write during the read shows as a change next time.
            let stamp = Stamp::of(&path);
            if let (Some(stamp), Some((seen, summary))) = (stamp, self.seen.get(id)) {
                if *seen == stamp {
                    if self.moved.remove(id) {
                        put.push(stored(id, stamp, summary));
                    }
                    out.push(summary.clone());
                    continue;
                }
            }
            self.moved.remove(id);
            let Some(summary) = read(id, &path) else {
                self.seen.remove(id);
                continue;
            };
            if let Some(stamp) = stamp {
                self.seen.insert(id.clone(), (stamp, summary.clone()));
                put.push(stored(id, stamp, &summary));
            }
            out.push(summary);
        }
        if let Kept::Open(catalog) = &mut self.kept {
            if !(put.is_empty() && gone.is_empty()) {
                if let Err(e) = catalog.update_session_summaries(&put, &gone) {
                    tracing::warn!("cannot keep session summaries: {e}");
                }
            }
        }
        out
    }
}

/// The catalog's row for the summary of `id` made at `stamp`.
fn stored(id: &str, stamp: Stamp, summary: &SessionSummary) -> StoredSummary {
    StoredSummary {
        id: id.to_string(),
        len: stamp.len,
        mtime_ns: stamp.mtime_ns,
        summary: serde_json::to_string(summary).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A summary made from the file: its id, and as many messages as the file has lines.
    fn summary(id: &str, path: &Path) -> SessionSummary {
        let lines = fs::read_to_string(path).unwrap_or_default().lines().count();
        SessionSummary {
            id: id.to_string(),
            title: Some(format!("session {id}")),
            created_at: "2026-11-25T10:00:00Z".into(),
            updated_at: "2026-11-25T10:00:00Z".into(),
            messages: lines,
            parent_session: None,
        }
    }

    struct Folder {
        dir: tempfile::TempDir,
        reads: RefCell<Vec<String>>,
    }

    impl Folder {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            fs::create_dir_all(dir.path().join("sessions")).unwrap();
            Self {
                dir,
                reads: RefCell::default(),
            }
        }

        fn path(&self, id: &str) -> PathBuf {
            self.dir.path().join("sessions").join(format!("{id}.jsonl"))
        }

        fn db(&self) -> PathBuf {
            self.dir.path().join("state.db")
        }

        /// Lists `ids` as a new process would, returning the summaries and the files read.
        fn list(&self, summaries: &mut Summaries, ids: &[&str]) -> (Vec<usize>, Vec<String>) {
            self.reads.borrow_mut().clear();
            let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
            let listed = summaries.list(
                &ids,
                |id| self.path(id),
                |id, path| {
                    self.reads.borrow_mut().push(id.to_string());
                    path.exists().then(|| summary(id, path))
                },
            );
            let messages = listed.iter().map(|s| s.messages).collect();
            (messages, self.reads.borrow().clone())
        }
    }

    #[test]
    fn a_new_process_reads_only_the_sessions_that_changed() {
        let f = Folder::new();
        fs::write(f.path("a"), "1\n").unwrap();
        fs::write(f.path("b"), "1\n2\n").unwrap();
        let (listed, read) = f.list(&mut Summaries::in_catalog(f.db()), &["a", "b"]);
        assert_eq!((listed, read), (vec![1, 2], vec!["a".into(), "b".into()]));

        // The next start lists both without opening either file.
        let (listed, read) = f.list(&mut Summaries::in_catalog(f.db()), &["a", "b"]);
        assert_eq!((listed, read), (vec![1, 2], Vec::<String>::new()));

        // b grew: only b is read, and its summary follows.
        fs::write(f.path("b"), "1\n2\n3\n").unwrap();
        let (listed, read) = f.list(&mut Summaries::in_catalog(f.db()), &["a", "b"]);
        assert_eq!((listed, read), (vec![1, 3], vec!["b".to_string()]));

        // a deleted: its summary leaves the catalog too.
        fs::remove_file(f.path("a")).unwrap();
        f.list(&mut Summaries::in_catalog(f.db()), &["b"]);
        let kept = Catalog::open(&f.db()).unwrap().session_summaries().unwrap();
        assert_eq!(
            kept.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
            ["b"]
        );
    }

    /// A message entry at `ts`, as a writer appends it.
    fn message(ts: &str) -> Growth {
        Growth {
            ts: ts.into(),
            title: None,
            message: true,
        }
    }

    /// Appends `line` to the file of `id` the way a writer does.
    fn append(f: &Folder, id: &str, line: &str) -> io::Result<()> {
        use std::io::Write as _;
        let mut file = fs::File::options().append(true).open(f.path(id))?;
        file.write_all(line.as_bytes())
    }

    #[test]
    fn the_writer_keeps_its_sessions_summary_so_the_next_listing_reads_nothing() {
        let f = Folder::new();
        fs::write(f.path("a"), "1\n").unwrap();
        let summaries = Arc::new(Mutex::new(Summaries::in_catalog(f.db())));
        let (listed, read) = f.list(&mut summaries.lock().unwrap(), &["a"]);
        assert_eq!((listed, read), (vec![1], vec!["a".to_string()]));

        let keeper = Keeper::new(summaries.clone(), "a".into());
        let path = f.path("a");
        keeper
            .around(
                &mut (),
                |_| Stamp::of(&path),
                &[message("2026-11-26T10:00:00Z")],
                |_| append(&f, "a", "2\n"),
            )
            .unwrap();
        let title = Growth {
            ts: "2026-11-26T10:01:00Z".into(),
            title: Some("Roses".into()),
            message: false,
        };
        keeper
            .around(
                &mut (),
                |_| Stamp::of(&path),
                &[title],
                |_| append(&f, "a", "3\n"),
            )
            .unwrap();

        let (listed, read) = f.list(&mut summaries.lock().unwrap(), &["a"]);
        assert_eq!((listed, read), (vec![2], Vec::<String>::new()));
        let known = summaries.lock().unwrap().seen["a"].1.clone();
        assert_eq!(known.title.as_deref(), Some("Roses"));
        assert_eq!(known.updated_at, "2026-11-26T10:01:00Z");
        // The catalog got it too: a new process reads nothing either.
        let (listed, read) = f.list(&mut Summaries::in_catalog(f.db()), &["a"]);
        assert_eq!((listed, read), (vec![2], Vec::<String>::new()));
    }

    #[test]
    fn a_summary_of_another_state_of_the_file_is_not_moved_on_but_read_again() {
        let f = Folder::new();
        fs::write(f.path("a"), "1\n").unwrap();
        let summaries = Arc::new(Mutex::new(Summaries::in_catalog(f.db())));
        f.list(&mut summaries.lock().unwrap(), &["a"]);
        // Someone else wrote to the file since the summary was made.
        append(&f, "a", "x\n").unwrap();
        let keeper = Keeper::new(summaries.clone(), "a".into());
        keeper
            .around(
                &mut (),
                |_| Stamp::of(&f.path("a")),
                &[message("t")],
                |_| append(&f, "a", "2\n"),
            )
            .unwrap();
        let (listed, read) = f.list(&mut summaries.lock().unwrap(), &["a"]);
        assert_eq!((listed, read), (vec![3], vec!["a".to_string()]));

        // While a listing holds the summaries, the append still happens; the file is read
        // at the next listing.
        let held = summaries.lock().unwrap();
        keeper
            .around(
                &mut (),
                |_| Stamp::of(&f.path("a")),
                &[message("t")],
                |_| append(&f, "a", "3\n"),
            )
            .unwrap();
        drop(held);
        let (listed, read) = f.list(&mut summaries.lock().unwrap(), &["a"]);
        assert_eq!((listed, read), (vec![4], vec!["a".to_string()]));

        // A failed append leaves the summary as it was.
        let failed = keeper.around(
            &mut (),
            |_| Stamp::of(&f.path("a")),
            &[message("t")],
            |_| Err(io::Error::other("disk full")),
        );
        assert!(failed.is_err());
        let (listed, read) = f.list(&mut summaries.lock().unwrap(), &["a"]);
        assert_eq!((listed, read), (vec![4], Vec::<String>::new()));
    }

    #[test]
    fn a_file_rewritten_to_the_same_length_is_read_again() {
        let f = Folder::new();
        fs::write(f.path("a"), "1\n").unwrap();
        f.list(&mut Summaries::in_catalog(f.db()), &["a"]);
        // Same length, another modification time (as a repair rewriting the file does).
        let file = fs::File::options().write(true).open(f.path("a")).unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        file.set_modified(later).unwrap();
        let (_, read) = f.list(&mut Summaries::in_catalog(f.db()), &["a"]);
        assert_eq!(read, ["a"]);
    }

    #[test]
    fn a_broken_catalog_or_row_costs_a_read_never_the_list() {
        let f = Folder::new();
        fs::write(f.path("a"), "1\n").unwrap();
        // A row whose summary is not one: the file is read instead.
        let mut catalog = Catalog::open(&f.db()).unwrap();
        let stamp = Stamp::of(&f.path("a")).unwrap();
        let row = StoredSummary {
            id: "a".into(),
            len: stamp.len,
            mtime_ns: stamp.mtime_ns,
            summary: "{not json".into(),
        };
        catalog.update_session_summaries(&[row], &[]).unwrap();
        let (listed, read) = f.list(&mut Summaries::in_catalog(f.db()), &["a"]);
        assert_eq!((listed, read), (vec![1], vec!["a".to_string()]));

        // A catalog that cannot be opened: everything is read, nothing fails.
        let blocked = f.dir.path().join("blocked.db");
        fs::create_dir_all(&blocked).unwrap();
        let (listed, read) = f.list(&mut Summaries::in_catalog(blocked), &["a"]);
        assert_eq!((listed, read), (vec![1], vec!["a".to_string()]));
    }
}
