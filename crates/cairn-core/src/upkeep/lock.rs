//! One background job of a kind per workspace, across processes: an advisory lock on a
//! file in `.cairn/` (the desktop app and a `cairn` command may run at once). The lock
//! goes away with the handle, also when the process dies.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

use cairn_memory::Workspace;

/// A held lock; dropping it releases the lock.
#[derive(Debug)]
pub struct JobLock {
    _file: File,
    path: PathBuf,
}

impl JobLock {
    /// Takes `.cairn/<name>.lock` without waiting: `Ok(None)` when another handle (in this
    /// process or another) holds it.
    pub fn try_acquire(workspace: &Workspace, name: &str) -> io::Result<Option<Self>> {
        let path = workspace.state_dir().join(format!("{name}.lock"));
        Self::try_acquire_at(&path)
    }

    /// The same for the lock file `path` (its folder is made when missing).
    pub(crate) fn try_acquire_at(path: &Path) -> io::Result<Option<Self>> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Self {
                _file: file,
                path: path.to_path_buf(),
            })),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(e),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_held_lock_refuses_a_second_handle_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".cairn/job.lock");
        let held = JobLock::try_acquire_at(&path).unwrap().unwrap();
        assert!(JobLock::try_acquire_at(&path).unwrap().is_none());
        drop(held);
        assert!(JobLock::try_acquire_at(&path).unwrap().is_some());
    }
}
