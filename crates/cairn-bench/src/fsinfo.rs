//! Where benchmarks write, and what kind of file system that is (a sync on tmpfs is free,
//! on a disk it is not, so every figure that writes says where it wrote).

use std::path::{Path, PathBuf};

use anyhow::Context;

/// A scratch directory, removed when dropped, with the file system it lives on.
pub struct ScratchDir {
    pub dir: tempfile::TempDir,
    pub fs_type: String,
}

impl ScratchDir {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A scratch directory on tmpfs (`/dev/shm`), when the machine has one.
pub fn tmpfs_scratch() -> anyhow::Result<Option<ScratchDir>> {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        return Ok(None);
    }
    scratch_in(shm).map(Some)
}

/// A scratch directory under `parent`.
pub fn scratch_in(parent: &Path) -> anyhow::Result<ScratchDir> {
    let dir = tempfile::Builder::new()
        .prefix("cairn-bench-")
        .tempdir_in(parent)
        .with_context(|| format!("cannot create a scratch directory in {}", parent.display()))?;
    let fs_type = fs_type(dir.path()).unwrap_or_else(|| "unknown".into());
    Ok(ScratchDir { dir, fs_type })
}

/// The default parent for "on disk" runs: the system temp dir.
pub fn default_disk_parent() -> PathBuf {
    std::env::temp_dir()
}

/// The type of the file system holding `path` (`ext4`, `tmpfs` ...), from /proc/mounts:
/// the mount with the longest mount point that contains `path`.
pub fn fs_type(path: &Path) -> Option<String> {
    let path = path.canonicalize().ok()?;
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let mount_point = PathBuf::from(fields.nth(1)?.replace("\\040", " "));
            let fs = fields.next()?;
            path.starts_with(&mount_point)
                .then(|| (mount_point.as_os_str().len(), fs.to_string()))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, fs)| fs)
}

/// The 1, 5 and 15 minute load averages (`?` where unknown).
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| "?".into())
}

/// This process's resident memory (`VmRSS`), in bytes; 0 where it cannot be read.
pub fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// CPU time this process has used so far, all threads, user and system (from
/// /proc/self/stat, in clock ticks of 1/100 s).
pub fn process_cpu_time() -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name (which may hold spaces) start with the state;
    // utime and stime are the 12th and 13th of them.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(std::time::Duration::from_millis(ticks * 10))
}
