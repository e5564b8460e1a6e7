//! The one writer of a session file: a dedicated thread that appends lines and syncs them
//! to disk at save points.
//!
//! A save point in the middle of a run does not wait for the disk:
//! [`SessionWriter::checkpoint`] asks the thread to sync and returns, so the fsync overlaps
//! the next model call. The thread commits in groups: a sync covers every line queued when
//! it starts, so a slow disk makes syncs rarer, never the run slower, and an unsynced tail
//! is at most what arrived during one fsync. A failure is reported by the next checkpoint
//! or sync. [`SessionWriter::sync`] waits for everything (the end of a run, operations
//! outside runs).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::thread;

use cairn_protocol::{SessionEntry, SessionHeader};
use tokio::sync::oneshot;

use super::summaries::{Growth, Keeper, Stamp};
use crate::error::HarnessError;
use crate::upkeep::lock::JobLock;

type Reply = oneshot::Sender<Result<(), String>>;

enum Command {
    /// A line, and what its entry changes in the session's summary.
    Append(Vec<u8>, Growth),
    /// Sync what is queued; with a reply, answer when it is on disk.
    Sync(Option<Reply>),
}

/// The first failure not yet reported, shared by the thread and the handles.
type Failure = Arc<Mutex<Option<String>>>;

fn take(failure: &Failure) -> Option<String> {
    failure
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
}

/// Handle to a session's writer thread. Cloning shares the same thread; the thread ends
/// (after writing everything queued) when the last handle is dropped.
#[derive(Clone, Debug)]
pub struct SessionWriter {
    tx: mpsc::Sender<Command>,
    path: PathBuf,
    failure: Failure,
}

impl SessionWriter {
    /// Starts the writer for `path`. When the file does not exist yet, `header` is written
    /// before the first entry. `needs_newline`: the file's last line lacks its `\n`.
    /// `lock`: the session's lock, held until the thread has written everything and ends.
    /// `keeper`: the session's summary in the store's list, kept current.
    pub(super) fn start(
        path: PathBuf,
        header: &SessionHeader,
        needs_newline: bool,
        lock: Option<Arc<JobLock>>,
        keeper: Option<Keeper>,
    ) -> Result<Self, HarnessError> {
        let header = serde_json::to_vec(header).map_err(|e| HarnessError::SessionFormat {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let (tx, rx) = mpsc::channel();
        let failure = Failure::default();
        let mut state = WriterState {
            path: path.clone(),
            file: None,
            header: Some(header),
            needs_newline,
            failure: failure.clone(),
            whole_len: None,
            keeper,
            _lock: lock,
        };
        thread::Builder::new()
            .name("cairn-session-writer".into())
            .spawn(move || state.run(rx))
            .map_err(|e| HarnessError::io(&path, e))?;
        Ok(Self { tx, path, failure })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues an entry. Write errors are reported by the next checkpoint or sync.
    pub fn append(&self, entry: &SessionEntry) -> Result<(), HarnessError> {
        let mut line = serde_json::to_vec(entry).map_err(|e| self.error(e.to_string()))?;
        line.push(b'\n');
        self.send(Command::Append(line, Growth::of(entry)))
    }

    /// Waits until everything queued is written and synced to disk.
    pub async fn sync(&self) -> Result<(), HarnessError> {
        let (tx, rx) = oneshot::channel();
        self.send(Command::Sync(Some(tx)))?;
        let result = rx
            .await
            .unwrap_or_else(|_| Err("the session writer stopped".into()));
        result.map_err(|message| self.error(message))
    }

    /// A save point that does not wait for the disk: reports any failure since the last
    /// one, then asks for everything queued to be synced.
    pub fn checkpoint(&self) -> Result<(), HarnessError> {
        if let Some(message) = take(&self.failure) {
            return Err(self.error(message));
        }
        self.send(Command::Sync(None))
    }

    fn send(&self, command: Command) -> Result<(), HarnessError> {
        self.tx
            .send(command)
            .map_err(|_| self.error("the session writer stopped".into()))
    }

    fn error(&self, message: String) -> HarnessError {
        HarnessError::SessionFormat {
            path: self.path.clone(),
            message,
        }
    }
}

struct WriterState {
    path: PathBuf,
    file: Option<File>,
    header: Option<Vec<u8>>,
    needs_newline: bool,
    failure: Failure,
    /// The file's length up to its last whole line (`None`: unknown, a cut is not tried).
    whole_len: Option<u64>,
    keeper: Option<Keeper>,
    _lock: Option<Arc<JobLock>>,
}

impl WriterState {
    fn run(&mut self, rx: mpsc::Receiver<Command>) {
        while let Ok(command) = rx.recv() {
            let mut replies = Vec::new();
            let is_sync = matches!(command, Command::Sync(_));
            self.handle(command, &mut replies);
            if !is_sync {
                continue;
            }
            // Group commit: whatever is already queued goes into the same fsync.
            while let Ok(command) = rx.try_recv() {
                self.handle(command, &mut replies);
            }
            if let Err(e) = self.sync() {
                self.fail(format!("cannot sync: {e}"));
            }
            if !replies.is_empty() {
                let result = take(&self.failure).map_or(Ok(()), Err);
                for reply in replies {
                    let _ = reply.send(result.clone());
                }
            }
        }
        let _ = self.sync();
    }

    /// Writes an appended line or collects a sync request's reply.
    fn handle(&mut self, command: Command, replies: &mut Vec<Reply>) {
        match command {
            Command::Append(line, growth) => {
                let written = match self.keeper.clone() {
                    Some(keeper) => {
                        keeper.around(self, Self::stamp, &[growth], |state| state.write(&line))
                    }
                    None => self.write(&line),
                };
                if let Err(e) = written {
                    self.fail(format!("cannot write: {e}"));
                }
            }
            Command::Sync(reply) => replies.extend(reply),
        }
    }

    /// The file's stamp: from the open file once it is open (no path walk per line).
    fn stamp(&self) -> Option<Stamp> {
        match &self.file {
            Some(file) => Stamp::of_file(file),
            None => Stamp::of(&self.path),
        }
    }

    /// Keeps the first failure until it is reported.
    fn fail(&self, message: String) {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(message);
    }

    /// Appends `line`. A write that fails part way (a full disk) is cut back to the last
    /// whole line, so the lines written once the disk has room again are not glued to a
    /// torn one (a reader would drop everything after it).
    fn write(&mut self, line: &[u8]) -> io::Result<()> {
        self.open()?;
        let whole = self.whole_len;
        let Some(file) = self.file.as_mut() else {
            return Err(io::Error::other("session file not open"));
        };
        match file.write_all(line) {
            Ok(()) => {
                self.whole_len = whole.map(|len| len + line.len() as u64);
                Ok(())
            }
            Err(e) => {
                let cut = match whole {
                    Some(len) => file.set_len(len),
                    None => Ok(()),
                };
                if let Err(cut) = cut {
                    tracing::warn!("{}: cannot cut a torn line: {cut}", self.path.display());
                    self.whole_len = None;
                }
                Err(e)
            }
        }
    }

    fn open(&mut self) -> io::Result<&mut File> {
        if self.file.is_none() {
            let exists = self.path.exists();
            let mut file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)?;
            if !exists {
                if let Some(mut header) = self.header.take() {
                    header.push(b'\n');
                    file.write_all(&header)?;
                }
                // The new file's name is on disk once its folder is synced.
                file.sync_data()?;
                cairn_memory::atomic::sync_parent(&self.path)?;
            } else if self.needs_newline {
                file.write_all(b"\n")?;
            }
            self.whole_len = file.metadata().ok().map(|m| m.len());
            self.file = Some(file);
        }
        match self.file.as_mut() {
            Some(file) => Ok(file),
            None => Err(io::Error::other("session file not open")),
        }
    }

    fn sync(&mut self) -> io::Result<()> {
        match self.file.as_mut() {
            Some(file) => file.sync_data(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use cairn_protocol::{EntryKind, Message};

    use super::*;

    fn header() -> SessionHeader {
        SessionHeader::new("s", "2026-01-01T00:00:00.000Z")
    }

    fn entry(n: usize) -> SessionEntry {
        SessionEntry {
            id: format!("{n:08x}"),
            parent_id: n.checked_sub(1).map(|p| format!("{p:08x}")),
            ts: "2026-01-01T00:00:00.000Z".into(),
            kind: EntryKind::Message {
                message: Message::user(format!("line {n}")),
            },
        }
    }

    #[tokio::test]
    async fn checkpoints_keep_every_line_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let writer = SessionWriter::start(path.clone(), &header(), false, None, None).unwrap();
        for n in 0..500 {
            writer.append(&entry(n)).unwrap();
            if n % 3 == 0 {
                writer.checkpoint().unwrap();
            }
        }
        writer.sync().await.unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 501);
        assert!(lines[0].contains(r#""type":"session""#));
        for (n, line) in lines[1..].iter().enumerate() {
            let parsed: SessionEntry = serde_json::from_str(line).unwrap();
            assert_eq!(parsed, entry(n));
        }
    }

    #[tokio::test]
    async fn a_failed_write_is_reported_by_the_next_sync() {
        // Every write to /dev/full fails with "no space left on device".
        let writer =
            SessionWriter::start("/dev/full".into(), &header(), false, None, None).unwrap();
        writer.append(&entry(0)).unwrap();
        let error = writer.sync().await.unwrap_err().to_string();
        assert!(error.contains("cannot write"), "{error}");
    }

    #[tokio::test]
    async fn a_failure_behind_a_checkpoint_is_reported_by_a_later_one() {
        let writer =
            SessionWriter::start("/dev/full".into(), &header(), false, None, None).unwrap();
        writer.append(&entry(0)).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let error = loop {
            match writer.checkpoint() {
                Err(error) => break error.to_string(),
                Ok(()) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                Ok(()) => panic!("the failed write was never reported"),
            }
        };
        assert!(error.contains("cannot write"), "{error}");
    }

    /// The file size limit (`RLIMIT_FSIZE`) stands in for a full disk: a write crossing it
    /// is cut short, the next fails. Run in a child process so the limit binds nothing else.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_write_cut_short_by_a_full_disk_leaves_no_torn_line() {
        const CHILD: &str = "CAIRN_TEST_WRITER_CHILD";
        if let Some(path) = std::env::var_os(CHILD) {
            return fill_past_the_limit(PathBuf::from(path));
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "session::writer::tests::a_write_cut_short_by_a_full_disk_leaves_no_torn_line",
                "--nocapture",
            ])
            .env(CHILD, &path)
            .status()
            .unwrap();
        assert!(status.success());
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(text.ends_with('\n'));
        for line in &lines[1..] {
            serde_json::from_str::<SessionEntry>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        }
        // The entries written after the disk had room again are all there.
        assert!(lines.last().unwrap().contains("after 9"), "{text}");
    }

    /// Lowers and raises its own file size limit: libc calls, in the child process only.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    fn fill_past_the_limit(path: PathBuf) {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let writer = SessionWriter::start(path.clone(), &header(), false, None, None).unwrap();
            writer.append(&entry(0)).unwrap();
            writer.sync().await.unwrap();
            let full = std::fs::metadata(&path).unwrap().len() + 150;
            let limit = |soft: u64| {
                let mut now = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                // SAFETY: plain calls on this (child, single-purpose) process's limits.
                unsafe {
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    libc::getrlimit(libc::RLIMIT_FSIZE, &mut now);
                    now.rlim_cur = soft.min(now.rlim_max);
                    libc::setrlimit(libc::RLIMIT_FSIZE, &now);
                }
            };
            limit(full);
            writer.append(&entry(1)).unwrap();
            writer.append(&entry(2)).unwrap();
            assert!(writer.sync().await.is_err(), "the disk was full");
            limit(u64::MAX);
            for n in 0..10 {
                let mut later = entry(3 + n);
                later.kind = EntryKind::Message {
                    message: Message::user(format!("after {n}")),
                };
                writer.append(&later).unwrap();
            }
            writer.sync().await.unwrap();
        });
    }
}
