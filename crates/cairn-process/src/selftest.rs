//! A short battery run inside the sandbox (`cairn doctor`): each check tries what the
//! sandbox must stop and looks from outside whether it was stopped.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::capture::capture;
use crate::env::EnvScrub;
use crate::launch::Launch;
use crate::sandbox::Sandbox;

const TIMEOUT: Duration = Duration::from_secs(10);

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub name: String,
    /// Whether the sandbox behaved as it must.
    pub passed: bool,
    pub detail: String,
}

/// Where the battery tries to reach.
#[derive(Debug, Clone)]
pub struct SelfTestPaths {
    /// A folder outside the workspace the user can write (the home folder).
    pub outside: PathBuf,
    /// A protected folder inside the workspace (`.cairn/`).
    pub protected: PathBuf,
    /// Cairn's config folder.
    pub config: PathBuf,
}

/// Runs the battery in `sandbox`.
pub async fn self_test(sandbox: &Sandbox, paths: &SelfTestPaths) -> Vec<Check> {
    vec![
        write_check("write outside the workspace", sandbox, &paths.outside).await,
        write_check("write a protected path", sandbox, &paths.protected).await,
        read_config(sandbox, &paths.config).await,
        connect_loopback(sandbox).await,
    ]
}

/// Runs `script` with bash in the sandbox; the exit code, or why there is none.
async fn run(sandbox: &Sandbox, script: &str) -> Result<Option<i32>, String> {
    let launch = Launch::new("bash", sandbox.workspace(), &EnvScrub::default())
        .args(["-c", script])
        .sandboxed(sandbox);
    capture(launch.prepare(), b"", 4096, TIMEOUT)
        .await
        .map(|c| c.code)
        .map_err(|e| e.to_string())
}

async fn write_check(name: &str, sandbox: &Sandbox, dir: &Path) -> Check {
    let probe = dir.join(format!(".cairn-sandbox-probe-{}", uuid::Uuid::new_v4()));
    let script = format!("echo x > {}", quote(&probe));
    let ran = run(sandbox, &script).await;
    let landed = probe.exists();
    let _ = std::fs::remove_file(&probe);
    let detail = match (&ran, landed) {
        (Err(e), _) => format!("the sandbox did not run: {e}"),
        (_, true) => format!("{} was written", dir.display()),
        (_, false) => format!("{} stays unchanged", dir.display()),
    };
    check(name, ran.is_ok() && !landed, detail)
}

async fn read_config(sandbox: &Sandbox, config: &Path) -> Check {
    let script = format!("test -z \"$(ls -A {} 2>/dev/null)\"", quote(config));
    let ran = run(sandbox, &script).await;
    let (passed, detail) = match ran {
        Ok(Some(0)) => (true, format!("{} is not visible", config.display())),
        Ok(_) => (false, format!("{} can be listed", config.display())),
        Err(e) => (false, format!("the sandbox did not run: {e}")),
    };
    check("read the config folder", passed, detail)
}

async fn connect_loopback(sandbox: &Sandbox) -> Check {
    let name = "connect to a loopback port";
    let listener = match std::net::TcpListener::bind("127.0.0.1:0") {
        Ok(listener) => listener,
        Err(e) => return check(name, false, format!("no port to try: {e}")),
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port}");
    let ran = run(sandbox, &script).await;
    drop(listener);
    match (ran, sandbox.network()) {
        (Err(e), _) => check(name, false, format!("the sandbox did not run: {e}")),
        (Ok(Some(0)), true) => check(name, true, format!("port {port} reached (network = true)")),
        (Ok(Some(0)), false) => check(name, false, format!("port {port} was reached")),
        (Ok(_), true) => check(
            name,
            false,
            format!("port {port} not reached although network = true"),
        ),
        (Ok(_), false) => check(name, true, format!("port {port} cannot be reached")),
    }
}

fn check(name: &str, passed: bool, detail: String) -> Check {
    Check {
        name: name.to_string(),
        passed,
        detail,
    }
}

/// `path` quoted for bash.
fn quote(path: &Path) -> String {
    format!("'{}'", path.to_string_lossy().replace('\'', r"'\''"))
}
