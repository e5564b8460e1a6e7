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
        read_credentials(sandbox, &paths.outside).await,
        connect_loopback(sandbox).await,
    ]
}

/// Printed by every check's script after its attempt: without it the sandbox never ran
/// the attempt (bubblewrap failed to start), which proves nothing either way.
const TRIED: &str = "cairn-tried";

/// Runs `script` with bash in the sandbox, then prints [`TRIED`]; what the script printed
/// before it, or why the sandbox did not run it.
async fn run(sandbox: &Sandbox, script: &str) -> Result<String, String> {
    let script = format!("{script}\necho {TRIED}");
    let launch = Launch::new("bash", sandbox.workspace(), &EnvScrub::default())
        .args(["-c", &script])
        .sandboxed(sandbox);
    let captured = capture(launch.prepare(), b"", 4096, TIMEOUT)
        .await
        .map_err(|e| e.to_string())?;
    match captured.stdout.strip_suffix(&format!("{TRIED}\n")) {
        Some(printed) => Ok(printed.to_string()),
        None => {
            let why = captured.stderr.lines().next().unwrap_or("no output");
            Err(format!("it never ran the check ({why})"))
        }
    }
}

async fn write_check(name: &str, sandbox: &Sandbox, dir: &Path) -> Check {
    let probe = dir.join(format!(".cairn-sandbox-probe-{}", uuid::Uuid::new_v4()));
    let script = format!("echo x 2>/dev/null > {}", quote(&probe));
    let ran = run(sandbox, &script).await;
    let landed = probe.exists();
    let _ = std::fs::remove_file(&probe);
    let detail = match (&ran, landed) {
        (_, true) => format!("{} was written", dir.display()),
        (Err(e), _) => format!("the sandbox did not run: {e}"),
        (Ok(_), false) => format!("{} stays unchanged", dir.display()),
    };
    check(name, ran.is_ok() && !landed, detail)
}

async fn read_config(sandbox: &Sandbox, config: &Path) -> Check {
    let script = format!("ls -A {} 2>/dev/null", quote(config));
    let (passed, detail) = match run(sandbox, &script).await {
        Ok(listed) if listed.is_empty() => (true, format!("{} is not visible", config.display())),
        Ok(_) => (false, format!("{} can be listed", config.display())),
        Err(e) => (false, format!("the sandbox did not run: {e}")),
    };
    check("read the config folder", passed, detail)
}

/// Plants a credential file in a home folder made for the check (inside `base`) and tries
/// to read it.
async fn read_credentials(sandbox: &Sandbox, base: &Path) -> Check {
    let name = "read a planted credential file";
    let marker = format!("cairn-planted-{}", uuid::Uuid::new_v4());
    let home = base.join(format!(".cairn-sandbox-home-{}", uuid::Uuid::new_v4()));
    let file = home.join(".aws/credentials");
    let planted = std::fs::create_dir_all(home.join(".aws"))
        .and_then(|()| std::fs::write(&file, format!("aws_secret_access_key = {marker}\n")));
    if let Err(e) = planted {
        let _ = std::fs::remove_dir_all(&home);
        return check(
            name,
            false,
            format!("could not plant one in {}: {e}", home.display()),
        );
    }
    let in_home = sandbox.clone().with_home(&home);
    let ran = run(&in_home, &format!("cat {} 2>/dev/null", quote(&file))).await;
    let _ = std::fs::remove_dir_all(&home);
    match ran {
        Ok(printed) if printed.contains(&marker) => {
            check(name, false, "~/.aws/credentials was read".into())
        }
        Ok(_) => check(name, true, "~/.aws/credentials cannot be read".into()),
        Err(e) => check(name, false, format!("the sandbox did not run: {e}")),
    }
}

async fn connect_loopback(sandbox: &Sandbox) -> Check {
    let name = "connect to a loopback port";
    let listener = match std::net::TcpListener::bind("127.0.0.1:0") {
        Ok(listener) => listener,
        Err(e) => return check(name, false, format!("no port to try: {e}")),
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let script = format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected");
    let ran = run(sandbox, &script).await;
    drop(listener);
    let reached = |printed: &str| printed.trim() == "connected";
    // With `network = true` the sandbox has a network of its own, away from the host's
    // loopback, unless the host's must be shared here (the note says why).
    let shared = match sandbox.network() {
        true => crate::network::network_note(),
        false => None,
    };
    match (ran, shared) {
        (Err(e), _) => check(name, false, format!("the sandbox did not run: {e}")),
        (Ok(p), Some(note)) if reached(&p) => {
            check(name, true, format!("port {port} reached: {note}"))
        }
        (Ok(p), None) if reached(&p) => check(name, false, format!("port {port} was reached")),
        (Ok(_), Some(_)) => check(
            name,
            false,
            format!("port {port} not reached although the host's network is shared"),
        ),
        (Ok(_), None) if sandbox.network() => check(
            name,
            true,
            format!("port {port} cannot be reached (network = true: a network of its own)"),
        ),
        (Ok(_), None) => check(name, true, format!("port {port} cannot be reached")),
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
