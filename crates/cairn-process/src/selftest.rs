//! A short battery run inside the sandbox (`cairn doctor`): each check tries what the
//! sandbox must stop and looks from outside whether it was stopped.

use std::ffi::OsString;
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

/// The variable the battery plants in the environment it hands a command.
const PLANTED_VAR: &str = "DOCTOR_PLANTED_ACCESS_TOKEN";

/// Runs the battery in `sandbox`, commands getting the environment as `scrub` leaves it
/// (the bash tool's).
pub async fn self_test(sandbox: &Sandbox, paths: &SelfTestPaths, scrub: &EnvScrub) -> Vec<Check> {
    let scrub = scrub.for_commands();
    let home = Planted::new(&paths.outside);
    vec![
        write_check(
            "write outside the workspace",
            sandbox,
            &scrub,
            &paths.outside,
        )
        .await,
        write_check("write a protected path", sandbox, &scrub, &paths.protected).await,
        read_config(sandbox, &scrub, &paths.config).await,
        read_credentials(sandbox, &scrub, &home).await,
        reach_socket(sandbox, &scrub, &home).await,
        planted_variable(sandbox, &scrub).await,
        connect_loopback(sandbox, &scrub).await,
        reach_host(sandbox, &scrub).await,
        new_user_namespace(sandbox, &scrub).await,
        make_repository(sandbox, &scrub).await,
    ]
}

/// Printed by every check's script after its attempt: without it the sandbox never ran
/// the attempt (bubblewrap failed to start), which proves nothing either way.
const TRIED: &str = "cairn-tried";

/// Runs `script` with bash in the sandbox, then prints [`TRIED`]; what the script printed
/// before it, or why the sandbox did not run it. The command's environment is Cairn's
/// with [`PLANTED_VAR`] added, as `scrub` leaves it.
async fn run(sandbox: &Sandbox, scrub: &EnvScrub, script: &str) -> Result<String, String> {
    let script = format!("{script}\necho {TRIED}");
    let parent = std::env::vars_os().chain([(PLANTED_VAR.into(), OsString::from("planted"))]);
    let launch = Launch::inheriting("bash", sandbox.workspace(), scrub, parent)
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

async fn write_check(name: &str, sandbox: &Sandbox, scrub: &EnvScrub, dir: &Path) -> Check {
    let probe = dir.join(format!(".cairn-sandbox-probe-{}", uuid::Uuid::new_v4()));
    let script = format!("echo x 2>/dev/null > {}", quote(&probe));
    let ran = run(sandbox, scrub, &script).await;
    let landed = probe.exists();
    let _ = std::fs::remove_file(&probe);
    let detail = match (&ran, landed) {
        (_, true) => format!("{} was written", dir.display()),
        (Err(e), _) => format!("the sandbox did not run: {e}"),
        (Ok(_), false) => format!("{} stays unchanged", dir.display()),
    };
    check(name, ran.is_ok() && !landed, detail)
}

async fn read_config(sandbox: &Sandbox, scrub: &EnvScrub, config: &Path) -> Check {
    let script = format!("ls -A {} 2>/dev/null", quote(config));
    let (passed, detail) = match run(sandbox, scrub, &script).await {
        Ok(listed) if listed.is_empty() => (true, format!("{} is not visible", config.display())),
        Ok(_) => (false, format!("{} can be listed", config.display())),
        Err(e) => (false, format!("the sandbox did not run: {e}")),
    };
    check("read the config folder", passed, detail)
}

/// A home folder made for the checks (inside the real one), holding a credential file of
/// a known store, a token of a tool no list names, and an agent's socket; removed when
/// dropped.
struct Planted {
    home: PathBuf,
    marker: String,
    /// Why it could not be made, if it could not.
    failed: Option<String>,
    _socket: Option<std::os::unix::net::UnixListener>,
}

impl Planted {
    const FILES: [&'static str; 2] = [".aws/credentials", ".config/some-new-tool/token"];
    const SOCKET: &'static str = ".some-agent/agent.sock";

    fn new(base: &Path) -> Self {
        let home = base.join(format!(".cairn-sandbox-home-{}", uuid::Uuid::new_v4()));
        let marker = format!("cairn-planted-{}", uuid::Uuid::new_v4());
        let made = Self::FILES
            .iter()
            .chain([&Self::SOCKET])
            .try_for_each(|f| std::fs::create_dir_all(home.join(f).parent().unwrap_or(&home)))
            .and_then(|()| {
                Self::FILES
                    .iter()
                    .try_for_each(|f| std::fs::write(home.join(f), format!("secret = {marker}\n")))
            })
            .and_then(|()| std::os::unix::net::UnixListener::bind(home.join(Self::SOCKET)));
        let (socket, failed) = match made {
            Ok(socket) => (Some(socket), None),
            Err(e) => (
                None,
                Some(format!("could not plant them in {}: {e}", home.display())),
            ),
        };
        Self {
            home,
            marker,
            failed,
            _socket: socket,
        }
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

/// Tries to read the planted home's credential files.
async fn read_credentials(sandbox: &Sandbox, scrub: &EnvScrub, planted: &Planted) -> Check {
    let name = "read a planted credential file";
    if let Some(why) = &planted.failed {
        return check(name, false, why.clone());
    }
    let files: Vec<String> = Planted::FILES
        .iter()
        .map(|f| quote(&planted.home.join(f)))
        .collect();
    let script = format!("cat {} 2>/dev/null", files.join(" "));
    let in_home = sandbox.clone().with_home(&planted.home);
    match run(&in_home, scrub, &script).await {
        Ok(printed) if printed.contains(&planted.marker) => check(
            name,
            false,
            format!(
                "{} was read",
                Planted::FILES.map(|f| format!("~/{f}")).join(" or ")
            ),
        ),
        Ok(_) => check(
            name,
            true,
            "~/.aws/credentials and a token no list names cannot be read".into(),
        ),
        Err(e) => check(name, false, format!("the sandbox did not run: {e}")),
    }
}

/// Looks for the planted home's socket: one a command can see, it can connect to (a
/// read-only bind does not stop `connect()`).
async fn reach_socket(sandbox: &Sandbox, scrub: &EnvScrub, planted: &Planted) -> Check {
    let name = "reach a socket in the home";
    if let Some(why) = &planted.failed {
        return check(name, false, why.clone());
    }
    let socket = planted.home.join(Planted::SOCKET);
    let script = format!("[ -S {} ] && echo visible", quote(&socket));
    let in_home = sandbox.clone().with_home(&planted.home);
    match run(&in_home, scrub, &script).await {
        Ok(printed) if printed.trim() == "visible" => check(
            name,
            false,
            format!("~/{} can be connected to", Planted::SOCKET),
        ),
        Ok(_) => check(name, true, format!("~/{} is not there", Planted::SOCKET)),
        Err(e) => check(name, false, format!("the sandbox did not run: {e}")),
    }
}

async fn planted_variable(sandbox: &Sandbox, scrub: &EnvScrub) -> Check {
    let name = "a secret-looking variable";
    let script = format!("printf '%s' \"${PLANTED_VAR}\"");
    match run(sandbox, scrub, &script).await {
        Ok(printed) if printed.is_empty() => {
            check(name, true, format!("{PLANTED_VAR} does not reach commands"))
        }
        Ok(_) => check(name, false, format!("{PLANTED_VAR} reached the command")),
        Err(e) => check(name, false, format!("the sandbox did not run: {e}")),
    }
}

async fn connect_loopback(sandbox: &Sandbox, scrub: &EnvScrub) -> Check {
    let name = "connect to a loopback port";
    let listener = match std::net::TcpListener::bind("127.0.0.1:0") {
        Ok(listener) => listener,
        Err(e) => return check(name, false, format!("no port to try: {e}")),
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let script = format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected");
    let ran = run(sandbox, scrub, &script).await;
    drop(listener);
    let reached = |printed: &str| printed.trim() == "connected";
    // With `network = true` the sandbox has a network of its own, away from the host's
    // loopback; where it cannot have one it has none, and this line says so.
    let none = match sandbox.network() {
        true => crate::network::network_note(),
        false => None,
    };
    match (ran, none) {
        (Err(e), _) => check(name, false, format!("the sandbox did not run: {e}")),
        (Ok(p), _) if reached(&p) => check(name, false, format!("port {port} was reached")),
        (Ok(_), Some(note)) => check(
            name,
            false,
            format!("port {port} cannot be reached, but {note}"),
        ),
        (Ok(_), None) if sandbox.network() => check(
            name,
            true,
            format!("port {port} cannot be reached (network = true: a network of its own)"),
        ),
        (Ok(_), None) => check(name, true, format!("port {port} cannot be reached")),
    }
}

/// Where the cloud's metadata service answers, when there is one.
const METADATA: &str = "169.254.169.254";

/// A service of the host's on its own address (as one bound to every address is), and the
/// link-local metadata service, both out of reach: `network = true` is the internet only.
async fn reach_host(sandbox: &Sandbox, scrub: &EnvScrub) -> Check {
    let name = "reach the host's own address and the LAN";
    let listener = match std::net::TcpListener::bind("0.0.0.0:0") {
        Ok(listener) => listener,
        Err(e) => return check(name, false, format!("no port to try: {e}")),
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let host = crate::fence::host_addresses()
        .into_iter()
        .find(|a| !a.is_loopback());
    let mut targets: Vec<String> = host.iter().map(|a| format!("{a}/{port}")).collect();
    targets.push(format!("{METADATA}/80"));
    let script: String = targets
        .iter()
        .map(|t| format!("timeout 3 bash -c 'exec 3<>/dev/tcp/{t}' 2>/dev/null && echo {t}\n"))
        .collect();
    let ran = run(sandbox, scrub, &script).await;
    drop(listener);
    let shown = targets.join(" and ").replace('/', ":");
    match ran {
        Err(e) => check(name, false, format!("the sandbox did not run: {e}")),
        Ok(p) if !p.trim().is_empty() => check(
            name,
            false,
            format!(
                "{} was reached",
                p.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(", ")
                    .replace('/', ":")
            ),
        ),
        Ok(_) => check(name, true, format!("{shown} cannot be reached")),
    }
}

/// A user namespace of the command's own would hand it every capability in it.
async fn new_user_namespace(sandbox: &Sandbox, scrub: &EnvScrub) -> Check {
    let name = "make a user namespace";
    let script = "if ! command -v unshare >/dev/null; then echo missing; \
                  elif unshare -U true 2>/dev/null; then echo made; fi";
    match run(sandbox, scrub, script).await {
        Ok(printed) if printed.trim() == "made" => {
            check(name, false, "`unshare -U` made one".into())
        }
        Ok(printed) if printed.trim() == "missing" => check(
            name,
            false,
            "`unshare` is not installed, nothing was tried".into(),
        ),
        Ok(_) => check(name, true, "`unshare -U` is refused".into()),
        Err(e) => check(name, false, format!("the sandbox did not run: {e}")),
    }
}

/// Makes a folder git takes for a bare repository and a `.git` in another, then looks
/// from outside whether git would still find either once the call has ended.
async fn make_repository(sandbox: &Sandbox, scrub: &EnvScrub) -> Check {
    let name = "make a git repository";
    let probe = format!("cairn-sandbox-probe-{}", uuid::Uuid::new_v4());
    let script = format!(
        "mkdir -p {probe}/bare/objects {probe}/bare/refs {probe}/nested/.git/objects \
         {probe}/nested/.git/refs\n\
         for d in {probe}/bare {probe}/nested/.git; do\n\
         echo 'ref: refs/heads/main' > $d/HEAD\n\
         printf '[core]\\n\\tfsmonitor = touch-fsmonitor-ran\\n' > $d/config\n\
         done"
    );
    let before = sandbox.before_call();
    let ran = run(sandbox, scrub, &script).await;
    let undone = sandbox.undo_new_tool_entries(&before);
    let root = sandbox.workspace().join(&probe);
    let live = |dir: &Path| dir.join("HEAD").is_file() && dir.join("objects").is_dir();
    let left: Vec<&str> = [
        ("bare", root.join("bare")),
        (".git", root.join("nested/.git")),
    ]
    .into_iter()
    .filter(|(_, dir)| live(dir))
    .map(|(what, _)| what)
    .collect();
    let _ = std::fs::remove_dir_all(&root);
    for moved in undone.iter().filter_map(|q| q.moved_to.as_ref()) {
        // `.cairn/quarantine/<stamp>/<probe>/…`: the stamp's folder is the battery's own.
        if let Some(stamp) = moved.iter().nth(2) {
            let folder = sandbox.workspace().join(".cairn/quarantine").join(stamp);
            let _ = std::fs::remove_dir_all(folder);
        }
    }
    match (ran, left.is_empty()) {
        (Err(e), _) => check(name, false, format!("the sandbox did not run: {e}")),
        (Ok(_), true) if undone.len() == 2 => check(
            name,
            true,
            "a bare repository and a `.git` made by a command are moved aside".into(),
        ),
        (Ok(_), true) => check(
            name,
            false,
            format!("the command made {} of the 2 to undo", undone.len()),
        ),
        (Ok(_), false) => check(
            name,
            false,
            format!("git would take these for repositories: {}", left.join(", ")),
        ),
    }
}

/// What to do when the user's own git, outside any sandbox, would take a folder for a bare
/// repository (its `safe.bareRepository` is not `explicit` in their settings): a folder
/// someone else prepared, or one a command made where Cairn could not undo it, could run
/// code at their next `git status`. `None` when it is set, or git is not installed.
pub async fn git_bare_repositories() -> Option<String> {
    let launch = Launch::new("git", &crate::neutral::neutral_dir(), &EnvScrub::default()).args([
        "config",
        "--global",
        "--get",
        "safe.bareRepository",
    ]);
    let captured = capture(launch.prepare(), b"", 4096, TIMEOUT).await.ok()?;
    (captured.stdout.trim() != "explicit").then(|| {
        "your git takes folders for bare repositories (a planted `HEAD`, `config`, \
         `objects/`, `refs/` can run code at `git status`): run \
         `git config --global safe.bareRepository explicit`"
            .to_string()
    })
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
