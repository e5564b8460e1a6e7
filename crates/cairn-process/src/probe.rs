//! Whether the sandbox can start on this machine, found out once per process by starting
//! it around `true`, and why not when it cannot (no bubblewrap, user namespaces turned off
//! or restricted, another operating system).

use std::sync::OnceLock;

use crate::bwrap::bwrap_program;
use crate::sandbox::Sandbox;

/// Whether the bash tool's commands run sandboxed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxStatus {
    /// Every command runs inside it.
    Active(Sandbox),
    /// `[tools.bash] sandbox = false`: the user turned it off.
    Off,
    /// It cannot start here; the text says why and what to do.
    Unavailable(String),
}

impl SandboxStatus {
    /// `Active` when the sandbox starts here, `Unavailable` with the reason otherwise.
    pub fn of(sandbox: Sandbox) -> Self {
        match probe() {
            Ok(()) => Self::Active(sandbox),
            Err(why) => Self::Unavailable(why),
        }
    }

    /// Why every command must be approved one by one, when it must.
    pub fn why_ask(&self) -> Option<String> {
        match self {
            Self::Active(_) => None,
            Self::Off => Some(
                "the shell sandbox is off (`[tools.bash] sandbox = false`): this command would \
                 run with all your rights"
                    .into(),
            ),
            Self::Unavailable(why) => Some(format!(
                "the shell sandbox cannot start ({why}): this command would run with all your \
                 rights"
            )),
        }
    }
}

/// `Ok` when the sandbox starts here, else why not; tried once per process.
pub fn probe() -> Result<(), String> {
    static RESULT: OnceLock<Result<(), String>> = OnceLock::new();
    RESULT.get_or_init(try_start).clone()
}

#[cfg(target_os = "linux")]
fn try_start() -> Result<(), String> {
    // Cairn's own empty folder stands in for a workspace.
    let root = crate::neutral::neutral_dir();
    let sandbox = Sandbox::new(&root, &[], false);
    let program = bwrap_program();
    let out = std::process::Command::new(&program)
        .args(sandbox.bwrap_args(&root))
        .arg("--")
        .arg("true")
        .stdin(std::process::Stdio::null())
        .output();
    match out {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(refusal(&String::from_utf8_lossy(&out.stderr))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "bubblewrap (`{}`) is not installed; install the `bubblewrap` package",
            program.to_string_lossy()
        )),
        Err(e) => Err(format!(
            "bubblewrap (`{}`) could not be started: {e}",
            program.to_string_lossy()
        )),
    }
}

#[cfg(not(target_os = "linux"))]
fn try_start() -> Result<(), String> {
    Err("no sandbox is built for this operating system yet".into())
}

/// What bubblewrap said, with what to do about the usual causes.
#[cfg(target_os = "linux")]
fn refusal(stderr: &str) -> String {
    let said = stderr
        .trim()
        .lines()
        .last()
        .unwrap_or("it exited with an error");
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    let hint =
        if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
            "; AppArmor restricts unprivileged user namespaces here \
         (kernel.apparmor_restrict_unprivileged_userns=1): give bwrap an AppArmor profile \
         that allows them, or set that sysctl to 0"
        } else if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0")
            || read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0")
        {
            "; user namespaces are turned off on this system (user.max_user_namespaces or \
         kernel.unprivileged_userns_clone)"
        } else {
            ""
        };
    format!("bubblewrap: {said}{hint}")
}
