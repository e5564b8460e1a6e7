//! The whole of a command's output, kept on disk when it is longer than the model is shown:
//! the model sees the head and the tail and where the rest is, so nothing the command
//! printed is out of reach. Saved in `.cairn/tool-results/` (beneath the workspace, never
//! through a link out), up to a cap so a command printing without end cannot fill the disk,
//! and the saved outputs together up to another: the oldest are removed to make room for a
//! new one, and its note says so.

use std::path::PathBuf;

use cairn_memory::beneath::{self, Appending};

use crate::output::thousands;

/// At most this much of one command's output is saved.
pub const MAX_SAVED_BYTES: u64 = 256 * 1024 * 1024;

/// At most this much of all commands' saved outputs is kept in the workspace.
pub const MAX_ALL_SAVED_BYTES: u64 = 1024 * 1024 * 1024;

/// How saved outputs are named (see `results::output_file`).
const OUTPUT_SUFFIX: &str = ".output.txt";

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
    /// The cap of all saved outputs together.
    all_cap: u64,
    failed: Option<String>,
    /// Older outputs removed to make room: how many, and their bytes.
    pruned: (usize, u64),
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
            all_cap: MAX_ALL_SAVED_BYTES,
            failed: None,
            pruned: (0, 0),
        }
    }

    /// The same, keeping all saved outputs together under `all_cap`.
    #[cfg(test)]
    pub fn with_all_cap(mut self, all_cap: u64) -> Self {
        self.all_cap = all_cap;
        self
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
            self.pruned = prune(&self.root, &self.rel, self.all_cap.saturating_sub(self.cap));
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
        if self.pruned.0 > 0 {
            note.push_str(&format!(
                "[the {} oldest saved outputs ({} bytes) were removed to keep them all under {} bytes]\n",
                self.pruned.0,
                thousands(self.pruned.1 as usize),
                thousands(self.all_cap as usize)
            ));
        }
        Some(note)
    }
}

/// Removes the oldest saved outputs in `rel`'s folder (never `rel`) until the rest take at
/// most `budget` bytes; how many were removed, and their bytes.
fn prune(root: &std::path::Path, rel: &str, budget: u64) -> (usize, u64) {
    let Some((folder, _)) = rel.rsplit_once('/') else {
        return (0, 0);
    };
    let Ok(entries) = beneath::entries(root, folder) else {
        return (0, 0);
    };
    let mut outputs: Vec<(std::time::SystemTime, u64, String)> = entries
        .into_iter()
        .filter(|e| e.kind == beneath::EntryKind::File)
        .filter_map(|e| {
            let name = e.name.to_str()?.to_string();
            let path = format!("{folder}/{name}");
            let meta = std::fs::symlink_metadata(root.join(&path)).ok()?;
            (name.ends_with(OUTPUT_SUFFIX) && path != rel && meta.is_file()).then(|| {
                (
                    meta.modified().unwrap_or(std::time::UNIX_EPOCH),
                    meta.len(),
                    path,
                )
            })
        })
        .collect();
    outputs.sort();
    let mut total: u64 = outputs.iter().map(|(_, len, _)| len).sum();
    let mut removed = (0, 0);
    for (_, len, path) in outputs {
        if total <= budget {
            break;
        }
        if beneath::remove_private(root, &path).is_ok() {
            total -= len;
            removed = (removed.0 + 1, removed.1 + len);
        }
    }
    removed
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

    #[test]
    fn the_oldest_saved_outputs_make_room_for_a_new_one_and_it_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(".cairn/tool-results");
        std::fs::create_dir_all(&folder).unwrap();
        for (n, name) in ["a.output.txt", "b.output.txt", "c.txt"].iter().enumerate() {
            std::fs::write(folder.join(name), vec![b'x'; 40]).unwrap();
            let at = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(n as u64);
            std::fs::File::options()
                .write(true)
                .open(folder.join(name))
                .unwrap()
                .set_modified(at)
                .unwrap();
        }
        // Room for 100 bytes in all, 30 of them this call's: the oldest output goes.
        let mut s = spill(dir.path(), 3, 30).with_all_cap(100);
        s.push(b"a long line of output");
        let note = s.finish(true).unwrap();
        assert!(!folder.join("a.output.txt").exists());
        assert!(folder.join("b.output.txt").exists());
        assert!(
            folder.join("c.txt").exists(),
            "an evicted result is never removed"
        );
        assert!(
            note.contains("[the 1 oldest saved outputs (40 bytes) were removed"),
            "{note}"
        );
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
