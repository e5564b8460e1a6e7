//! The one writer of a session file: a dedicated thread that appends lines and syncs them
//! to disk at save points.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;

use cairn_protocol::{SessionEntry, SessionHeader};
use tokio::sync::oneshot;

use crate::error::HarnessError;

enum Command {
    Append(Vec<u8>),
    Sync(oneshot::Sender<Result<(), String>>),
}

/// Handle to a session's writer thread. Cloning shares the same thread; the thread ends
/// (after writing everything queued) when the last handle is dropped.
#[derive(Clone, Debug)]
pub struct SessionWriter {
    tx: mpsc::Sender<Command>,
    path: PathBuf,
}

impl SessionWriter {
    /// Starts the writer for `path`. When the file does not exist yet, `header` is written
    /// before the first entry. `needs_newline`: the file's last line lacks its `\n`.
    pub(crate) fn start(
        path: PathBuf,
        header: &SessionHeader,
        needs_newline: bool,
    ) -> Result<Self, HarnessError> {
        let header = serde_json::to_vec(header).map_err(|e| HarnessError::SessionFormat {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let (tx, rx) = mpsc::channel();
        let mut state = WriterState {
            path: path.clone(),
            file: None,
            header: Some(header),
            needs_newline,
            error: None,
        };
        thread::Builder::new()
            .name("cairn-session-writer".into())
            .spawn(move || state.run(rx))
            .map_err(|e| HarnessError::io(&path, e))?;
        Ok(Self { tx, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues an entry. Write errors are reported by the next [`sync`](Self::sync).
    pub fn append(&self, entry: &SessionEntry) -> Result<(), HarnessError> {
        let mut line = serde_json::to_vec(entry).map_err(|e| HarnessError::SessionFormat {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        line.push(b'\n');
        self.send(Command::Append(line))
    }

    /// Waits until everything queued is written and synced to disk.
    pub async fn sync(&self) -> Result<(), HarnessError> {
        let (tx, rx) = oneshot::channel();
        self.send(Command::Sync(tx))?;
        let result = rx
            .await
            .unwrap_or_else(|_| Err("the session writer stopped".into()));
        result.map_err(|message| HarnessError::SessionFormat {
            path: self.path.clone(),
            message,
        })
    }

    fn send(&self, command: Command) -> Result<(), HarnessError> {
        self.tx
            .send(command)
            .map_err(|_| HarnessError::SessionFormat {
                path: self.path.clone(),
                message: "the session writer stopped".into(),
            })
    }
}

struct WriterState {
    path: PathBuf,
    file: Option<File>,
    header: Option<Vec<u8>>,
    needs_newline: bool,
    /// The first write error since the last sync.
    error: Option<String>,
}

impl WriterState {
    fn run(&mut self, rx: mpsc::Receiver<Command>) {
        while let Ok(command) = rx.recv() {
            match command {
                Command::Append(line) => {
                    if let Err(e) = self.write(&line) {
                        self.error
                            .get_or_insert_with(|| format!("cannot write: {e}"));
                    }
                }
                Command::Sync(reply) => {
                    let result = match self.error.take() {
                        Some(e) => Err(e),
                        None => self.sync().map_err(|e| format!("cannot sync: {e}")),
                    };
                    let _ = reply.send(result);
                }
            }
        }
        let _ = self.sync();
    }

    fn write(&mut self, line: &[u8]) -> io::Result<()> {
        let file = self.open()?;
        file.write_all(line)
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
            } else if self.needs_newline {
                file.write_all(b"\n")?;
            }
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
