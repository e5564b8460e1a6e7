//! The app's log file. Launched from a menu, the app has no terminal for its warnings:
//! they also go to `cairn.log` in the platform's log folder (`~/.local/state/cairn/logs`
//! on Linux, `~/Library/Logs/Cairn` on macOS, the local data folder on Windows). One
//! earlier log is kept as `cairn.log.1` once the file passes [`MAX_BYTES`].

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

/// Past this size at start-up, the log starts afresh (the old one kept once).
pub const MAX_BYTES: u64 = 5 * 1024 * 1024;

/// The platform's folder for the app's logs.
pub fn log_dir() -> Option<PathBuf> {
    if cfg!(target_os = "macos") {
        return dirs::home_dir().map(|h| h.join("Library/Logs/Cairn"));
    }
    dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .map(|d| d.join("cairn").join("logs"))
}

/// Opens `cairn.log` in `dir` for appending, first moving a log over [`MAX_BYTES`] aside.
pub fn open(dir: &Path) -> std::io::Result<(PathBuf, File)> {
    fs::create_dir_all(dir)?;
    let path = dir.join("cairn.log");
    if fs::metadata(&path).is_ok_and(|m| m.len() > MAX_BYTES) {
        fs::rename(&path, dir.join("cairn.log.1"))?;
    }
    let file = OpenOptions::new().create(true).append(true).open(&path)?;
    Ok((path, file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_log_appends_and_a_big_one_is_moved_aside_once() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("state/cairn/logs");
        let (path, mut file) = open(&logs).unwrap();
        writeln!(file, "first").unwrap();
        drop(file);
        let (_, mut file) = open(&logs).unwrap();
        writeln!(file, "second").unwrap();
        drop(file);
        assert_eq!(fs::read_to_string(&path).unwrap(), "first\nsecond\n");
        fs::write(&path, vec![b'x'; MAX_BYTES as usize + 1]).unwrap();
        let (_, mut file) = open(&logs).unwrap();
        writeln!(file, "fresh").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "fresh\n");
        assert_eq!(
            fs::metadata(logs.join("cairn.log.1")).unwrap().len(),
            MAX_BYTES + 1
        );
    }

    #[test]
    fn the_log_folder_follows_the_platform() {
        let dir = log_dir().unwrap();
        assert!(
            dir.ends_with("cairn/logs") || dir.ends_with("Logs/Cairn"),
            "{dir:?}"
        );
    }
}
