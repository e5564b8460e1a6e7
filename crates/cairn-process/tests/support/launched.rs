//! Commands run through the launcher as the bash tool runs them (`spawn`, then `supervise`
//! until they end, time out or are cancelled), by this process or by an unprivileged user:
//! for the user, this test binary runs again under `runuser`, and its ignored test that
//! calls [`serve`] runs the command its environment names and writes what happened into the
//! scene. So the launcher's whole path, with the sandbox's parent and network helper, runs
//! as that user.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;

use cairn_process::{supervise, End, EnvScrub, Launch, Sandbox, Sink};
use tokio_util::sync::CancellationToken;

use super::{Scene, Who, LIMIT};

/// The test that calls [`serve`], by its name in the test binary.
pub const SERVE_TEST: &str = "launch_for_another_run";

const ROOT_VAR: &str = "CAIRN_TEST_LAUNCH_ROOT";
const NETWORK_VAR: &str = "CAIRN_TEST_LAUNCH_NETWORK";
const SCRIPT_VAR: &str = "CAIRN_TEST_LAUNCH_SCRIPT";
const STOP_VAR: &str = "CAIRN_TEST_LAUNCH_STOP";

/// How long a command runs before [`Stop::Timeout`] or [`Stop::Cancel`] ends it.
const STOPPED_AFTER: Duration = Duration::from_secs(2);

/// How a launched command is let end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// It ends by itself (within [`LIMIT`]).
    Never,
    /// Its timeout passes.
    Timeout,
    /// The caller cancels it.
    Cancel,
}

impl Stop {
    fn name(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::Timeout => "timeout",
            Self::Cancel => "cancel",
        }
    }

    fn named(name: &str) -> Self {
        match name {
            "timeout" => Self::Timeout,
            "cancel" => Self::Cancel,
            _ => Self::Never,
        }
    }
}

/// What a launched command did.
#[derive(Debug)]
pub struct Launched {
    /// Its status, or how it was stopped (`timed out`, `cancelled`).
    pub end: Result<ExitStatus, String>,
    /// stdout and stderr, interleaved.
    pub output: String,
    /// The network helpers (slirp4netns) the launch left running after it returned.
    pub helpers_left: Vec<u32>,
    /// Why the network was the host's, in the process that launched it.
    pub note: Option<String>,
}

impl Scene {
    /// Runs `script` with bash in the scene's sandbox (reaching the network or not) as
    /// `who`, through the launcher, until it ends as `stop` says.
    pub async fn launch_as(&self, who: Who, network: bool, script: &str, stop: Stop) -> Launched {
        let root = self.ws.parent().unwrap();
        match who {
            Who::Launcher => launch(root, network, script, stop).await,
            Who::User(user) => rerun(Some(user), &[], root, network, script, stop).await,
        }
    }

    /// As [`Scene::launch_as`], in a new run of this test binary (as `user` when there is
    /// one) with `env` added to its environment.
    pub async fn launch_apart(
        &self,
        user: Option<&str>,
        env: &[(&str, &str)],
        network: bool,
        script: &str,
    ) -> Launched {
        let root = self.ws.parent().unwrap();
        rerun(user, env, root, network, script, Stop::Never).await
    }
}

/// The scene's sandbox as [`Scene::sandbox`] makes it, from the scene's root.
fn sandbox_at(root: &Path, network: bool) -> Sandbox {
    Sandbox::new(&root.join("ws"), &[root.join("config")], network).with_home(&root.join("home"))
}

async fn launch(root: &Path, network: bool, script: &str, stop: Stop) -> Launched {
    let ws = root.join("ws");
    let launch = Launch::new("bash", &ws, &EnvScrub::default())
        .args(["-c", script])
        .git_protected()
        .sandboxed(&sandbox_at(root, network));
    let (mut child, group) = launch.prepare().spawn().unwrap();
    let cancel = CancellationToken::new();
    let limit = match stop {
        Stop::Timeout => STOPPED_AFTER,
        Stop::Never | Stop::Cancel => LIMIT,
    };
    if stop == Stop::Cancel {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(STOPPED_AFTER).await;
            cancel.cancel();
        });
    }
    let mut output = Collected::default();
    let tick = Duration::from_secs(1);
    let end = supervise(&mut child, &group, limit, tick, &cancel, &mut output).await;
    let end = match end {
        End::Exited(status) => Ok(status),
        End::TimedOut => Err("timed out".into()),
        End::Cancelled => Err("cancelled".into()),
        End::Lost(e) => Err(format!("lost: {e}")),
    };
    Launched {
        end,
        output: String::from_utf8_lossy(&output.0).into_owned(),
        helpers_left: helpers_left().await,
        note: cairn_process::network_note(),
    }
}

#[derive(Default)]
struct Collected(Vec<u8>);

impl Sink for Collected {
    fn output(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
}

/// This process's children named slirp4netns still running, after waiting up to 5 s for
/// them to go.
pub async fn helpers_left() -> Vec<u32> {
    let own = std::process::id();
    let mut left = Vec::new();
    for _ in 0..100 {
        left = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| is_running_helper_of(pid, own))
            .collect();
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    left
}

/// Whether `pid` is a slirp4netns child of `parent`, not yet ended (a zombie has ended).
fn is_running_helper_of(pid: u32, parent: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let Some((head, rest)) = stat.rsplit_once(')') else {
        return false;
    };
    let mut fields = rest.split_whitespace();
    let state = fields.next().unwrap_or("");
    let ppid = fields.next().and_then(|p| p.parse::<u32>().ok());
    head.ends_with("(slirp4netns") && state != "Z" && ppid == Some(parent)
}

/// A copy of this test binary another user can run: the build folder may lie where only
/// this user may go (a checkout in a private temp folder or in root's home).
fn shared_copy(exe: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    static COPY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    COPY.get_or_init(|| {
        // One copy per build of the binary, shared by the test processes that run it.
        let meta = std::fs::metadata(exe).unwrap();
        let stamp = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join("cairn-test-bins");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let name = exe.file_name().unwrap().to_string_lossy();
        let copy = dir.join(format!("{name}-{}-{stamp}", meta.len()));
        if !copy.exists() {
            let part = dir.join(format!("{name}.{}.part", std::process::id()));
            std::fs::copy(exe, &part).unwrap();
            std::fs::set_permissions(&part, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::rename(&part, &copy).unwrap();
        }
        copy
    })
    .clone()
}

/// Runs this test binary again (as `user` when there is one), [`SERVE_TEST`] alone, and
/// reads what it wrote.
async fn rerun(
    user: Option<&str>,
    env: &[(&str, &str)],
    root: &Path,
    network: bool,
    script: &str,
    stop: Stop,
) -> Launched {
    let exe = std::env::current_exe().unwrap();
    for name in ["end", "note"] {
        let _ = std::fs::remove_file(result(root, name));
    }
    let mut command = match user {
        Some(user) => {
            let mut command = tokio::process::Command::new("runuser");
            command.args(["-u", user, "--"]).arg(shared_copy(&exe));
            command
        }
        None => tokio::process::Command::new(&exe),
    };
    command
        .args(["--exact", SERVE_TEST, "--ignored", "--nocapture"])
        .envs(env.iter().copied())
        .env(ROOT_VAR, root)
        .env(NETWORK_VAR, network.to_string())
        .env(SCRIPT_VAR, script)
        .env(STOP_VAR, stop.name())
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let ran = tokio::time::timeout(LIMIT * 2, command.output())
        .await
        .unwrap()
        .unwrap();
    let said = |name: &str| std::fs::read_to_string(result(root, name));
    let Ok(end) = said("end") else {
        panic!(
            "{} as {user:?} wrote no result (it must be readable by that user): {ran:?}",
            exe.display()
        );
    };
    let end = match end.strip_prefix("status ") {
        Some(raw) => Ok(ExitStatus::from_raw(raw.trim().parse().unwrap())),
        None => Err(end),
    };
    let helpers = said("helpers").unwrap();
    Launched {
        end,
        output: said("output").unwrap(),
        helpers_left: helpers
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect(),
        note: said("note").ok(),
    }
}

fn result(root: &Path, name: &str) -> PathBuf {
    root.join(format!("launched.{name}"))
}

/// Runs the launch this process's environment names and writes what happened into the
/// scene (see [`launch_as_user`]); does nothing when none is named.
pub async fn serve() {
    let Some(root) = std::env::var_os(ROOT_VAR).map(PathBuf::from) else {
        eprintln!("run by the tests that launch in a run of their own, which name the launch");
        return;
    };
    let network = std::env::var(NETWORK_VAR).unwrap() == "true";
    let script = std::env::var(SCRIPT_VAR).unwrap();
    let stop = Stop::named(&std::env::var(STOP_VAR).unwrap());
    let launched = launch(&root, network, &script, stop).await;
    let end = match launched.end {
        Ok(status) => format!("status {}", status.into_raw()),
        Err(how) => how,
    };
    let helpers: Vec<String> = launched.helpers_left.iter().map(u32::to_string).collect();
    std::fs::write(result(&root, "output"), launched.output).unwrap();
    std::fs::write(result(&root, "helpers"), helpers.join(" ")).unwrap();
    if let Some(note) = launched.note {
        std::fs::write(result(&root, "note"), note).unwrap();
    }
    std::fs::write(result(&root, "end"), end).unwrap();
}
