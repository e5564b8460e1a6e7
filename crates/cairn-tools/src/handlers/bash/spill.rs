//! The whole of a command's output, kept on disk when it is longer than the model is shown:
//! the model sees the head and the tail and where the rest is, so nothing the command
//! printed is out of reach. Saved in `.cairn/tool-results/` (beneath the workspace, never
//! through a link out), up to a cap so a command printing without end cannot fill the disk.

use std::path::PathBuf;

use cairn_memory::beneath::{self, Appending};

use crate::output::thousands;

/// At most this much of one command's output is saved.
pub const MAX_SAVED_BYTES: u64 = 256 * 1024 * 1024;

pub struct Spill {
    root: PathBuf,
    rel: String,
    /// Output is held here until it passes `after` bytes; then the file is opened.
    pending: Vec<u8>,
    after: usize,
    file: Option<Appending>,
    saved: u64,
    not_saved: u64,
    cap: u64,
    failed: Option<String>,
}

impl Spill {
    /// Output of more than `after` bytes is saved to `rel` under `root`, at most `cap`.
    pub fn new(root: PathBuf, rel: String, after: usize, cap: u64) -> Self {
        Self {
            root,
            rel,
            pending: Vec::new(),
            after,
            file: None,
            saved: 0,
            not_saved: 0,
            cap,
            failed: None,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        if self.file.is_none() {
            self.pending.extend_from_slice(bytes);
            if self.pending.len() <= self.after {
                return;
            }
            // A file left at this name (a workspace someone else prepared) is replaced.
            let _ = beneath::remove_private(&self.root, &self.rel);
            match beneath::open_private_append(&self.root, &self.rel) {
                Ok(file) => self.file = Some(file),
                Err(error) => {
                    self.failed = Some(error.to_string());
                    self.pending = Vec::new();
                    return;
                }
            }
            let pending = std::mem::take(&mut self.pending);
            self.write(&pending);
        } else {
            self.write(bytes);
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        let room = usize::try_from(self.cap.saturating_sub(self.saved)).unwrap_or(usize::MAX);
        let (kept, over) = bytes.split_at(room.min(bytes.len()));
        self.not_saved += over.len() as u64;
        if kept.is_empty() {
            return;
        }
        if let Some(file) = &mut self.file {
            match file.write(kept) {
                Ok(()) => self.saved += kept.len() as u64,
                Err(error) => self.failed = Some(error.to_string()),
            }
        }
    }

    /// The line telling the model where the whole output is, when the transcript it sees
    /// was `cut`; a file that turned out not to be needed is removed.
    pub fn finish(mut self, cut: bool) -> Option<String> {
        if !cut {
            if self.file.take().is_some() {
                let _ = beneath::remove_private(&self.root, &self.rel);
            }
            return None;
        }
        if let Some(error) = self.failed {
            return Some(format!(
                "[the whole output could not be saved ({error}): only the head and tail above remain]\n"
            ));
        }
        let file = self.file.as_mut()?;
        if let Err(error) = file.sync() {
            return Some(format!(
                "[the whole output could not be saved ({error}): only the head and tail above remain]\n"
            ));
        }
        let mut note = format!(
            "[the whole output ({} bytes) is saved in {}: read it with read_file (offset and limit to \
             page through it) or search it with grep",
            thousands(self.saved as usize),
            self.rel
        );
        if self.not_saved > 0 {
            note.push_str(&format!(
                "; it stops at {} bytes, and the last {} bytes are only in the tail above",
                thousands(self.cap as usize),
                thousands(self.not_saved as usize)
            ));
        }
        note.push_str("]\n");
        Some(note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spill(root: &std::path::Path, after: usize, cap: u64) -> Spill {
        Spill::new(
            root.to_path_buf(),
            ".cairn/tool-results/c.output.txt".into(),
            after,
            cap,
        )
    }

    #[test]
    fn output_past_the_cap_is_counted_not_saved() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spill(dir.path(), 10, 25);
        for _ in 0..4 {
            s.push(b"0123456789");
        }
        let note = s.finish(true).unwrap();
        let saved = std::fs::read(dir.path().join(".cairn/tool-results/c.output.txt")).unwrap();
        assert_eq!(saved, b"0123456789012345678901234");
        assert!(note.contains("(25 bytes)"), "{note}");
        assert!(
            note.contains("the last 15 bytes are only in the tail"),
            "{note}"
        );
    }

    #[test]
    fn short_output_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spill(dir.path(), 100, 1000);
        s.push(b"short");
        assert_eq!(s.finish(false), None);
        let mut s = spill(dir.path(), 3, 1000);
        s.push(b"four bytes of many-byte characters");
        assert_eq!(s.finish(false), None);
        assert!(!dir.path().join(".cairn/tool-results/c.output.txt").exists());
    }

    /// A prepared workspace whose `.cairn/tool-results` leads out of it gets nothing
    /// written there; the model is told the output could not be saved.
    #[cfg(unix)]
    #[test]
    fn a_results_folder_leading_out_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".cairn")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(".cairn/tool-results")).unwrap();
        let mut s = spill(dir.path(), 3, 1000);
        s.push(b"a long line of output");
        let note = s.finish(true).unwrap();
        assert!(note.contains("could not be saved"), "{note}");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}
