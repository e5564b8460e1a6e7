//! The bubblewrap program the sandbox runs, and what it can do here.

use std::ffi::OsString;
use std::sync::OnceLock;

/// Names the bubblewrap program to use instead of `bwrap` from the PATH (set-ups without
/// it on the PATH, and tests of a machine where it cannot start).
const BWRAP_VAR: &str = "CAIRN_BWRAP";

/// The bubblewrap program.
pub(crate) fn bwrap_program() -> OsString {
    std::env::var_os(BWRAP_VAR).unwrap_or_else(|| "bwrap".into())
}

/// Whether bubblewrap here can forbid a sandbox to make user namespaces of its own
/// (`--disable-userns`, bubblewrap 0.8 and later, with a user namespace of its own);
/// tried once per process.
#[cfg(target_os = "linux")]
pub(crate) fn userns_disabled() -> bool {
    static RESULT: OnceLock<bool> = OnceLock::new();
    *RESULT.get_or_init(|| {
        std::process::Command::new(bwrap_program())
            .args(["--unshare-user", "--disable-userns", "--ro-bind", "/", "/"])
            .args(["--", "true"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn userns_disabled() -> bool {
    false
}
