//! Ending everything a launch started. A child leads a process group of its own, so the
//! group is killed at once; what left the group (`setsid`, double forks) still carries the
//! launch's marker in its environment and is found through `/proc`. A process that clears
//! its own environment (`env -i`) outside the sandbox is not found; that is the known limit
//! (inside the sandbox the pid namespace ends with the call, so nothing survives it).

use std::process::ExitStatus;
use std::sync::Arc;

use tokio::process::Child;

use crate::link::Link;

/// The variable that marks a launch's processes.
pub const MARKER_VAR: &str = "CAIRN_TOOL_CALL";

/// What to kill to end one launch: its process group and its marker; for a sandboxed
/// launch also its network's helper, and the channel that says how its command ended.
#[derive(Debug, Clone)]
pub struct Group {
    pgid: Option<i32>,
    marker: String,
    link: Option<Arc<Link>>,
}

impl Group {
    /// The group `child` leads, read while it is alive (the id stays the group's as long
    /// as any member lives).
    pub fn of(child: &Child, marker: &str) -> Self {
        Self {
            pgid: child.id().and_then(|pid| i32::try_from(pid).ok()),
            marker: marker.to_string(),
            link: None,
        }
    }

    /// The same group, tied to a sandboxed launch's link.
    pub(crate) fn linked(mut self, link: Link) -> Self {
        self.link = Some(Arc::new(link));
        self
    }

    /// Kills the group and every process still carrying the marker.
    pub fn kill(&self) {
        if let Some(pgid) = self.pgid {
            signal_group(pgid);
        }
        kill_marked(&self.marker);
        if let Some(link) = &self.link {
            link.end();
        }
    }

    /// How the launch's program ended, given the child's `status`: inside the sandbox,
    /// bubblewrap turns a death by a signal into the exit code 128 + the signal, and the
    /// sandbox's parent says which it was.
    pub fn status(&self, status: ExitStatus) -> ExitStatus {
        match &self.link {
            Some(link) => link.status(status),
            None => status,
        }
    }
}

/// `killpg(pgid, SIGKILL)`. A syscall rather than spawning `kill`, so that it works even when
/// the command has exhausted the process table.
#[cfg(unix)]
#[allow(unsafe_code)]
fn signal_group(pgid: i32) {
    // SAFETY: killpg only takes two integers and touches no memory of this process. `pgid` is
    // the pid of our own child, which leads its own group (`process_group(0)`), read before the
    // child was reaped; a process group's id is not reused while any member lives, and once
    // the group is empty the call fails with ESRCH (the pid is only handed out again after
    // the whole pid space wraps), so it cannot name an unrelated group.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

#[cfg(not(unix))]
fn signal_group(_pgid: i32) {}

/// Kills every process whose environment holds `MARKER_VAR=marker`; returns how many.
#[cfg(target_os = "linux")]
pub(crate) fn kill_marked(marker: &str) -> usize {
    let needle = format!("{MARKER_VAR}={marker}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let own = std::process::id();
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != own && is_marked(pid, &needle))
        .filter(|&pid| kill(pid))
        .count()
}

#[cfg(target_os = "linux")]
fn is_marked(pid: u32, needle: &str) -> bool {
    // Unreadable (another user's, or gone): not ours.
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|env| env.split(|b| *b == 0).any(|var| var == needle.as_bytes()))
        .unwrap_or(false)
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn kill(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill only takes two integers and touches no memory of this process. `pid` was
    // just read from /proc with the launch's unique marker in its environment, so it is a
    // process the launch started (or a descendant of one).
    unsafe { libc::kill(pid, libc::SIGKILL) == 0 }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn kill_marked(_marker: &str) -> usize {
    0
}
