//! Finding what a bash call started after it left the call's process group (`setsid`,
//! double forks): every process of the call carries a marker in its environment, and
//! whatever still carries it when the call ends is killed. A process that clears its own
//! environment (`env -i`) is not found; that is the known limit.

/// The variable that marks a call's processes.
pub const MARKER_VAR: &str = "CAIRN_TOOL_CALL";

/// Kills every process whose environment holds `MARKER_VAR=marker`; returns how many.
#[cfg(target_os = "linux")]
pub fn kill_marked(marker: &str) -> usize {
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
    // just read from /proc with the call's unique marker in its environment, so it is a
    // process the call started (or a descendant of one).
    unsafe { libc::kill(pid, libc::SIGKILL) == 0 }
}

#[cfg(not(target_os = "linux"))]
pub fn kill_marked(_marker: &str) -> usize {
    0
}
