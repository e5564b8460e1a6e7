//! The scene the sandbox's tests run commands in: a workspace with its protected entries,
//! a folder outside it, a config folder and a home folder like a real user's, and a way to
//! run a command in it as this process or as an unprivileged user.

#![allow(dead_code)]

pub mod launched;

use std::path::PathBuf;
use std::time::Duration;

use cairn_process::{capture, probe, Captured, EnvScrub, Launch, Sandbox};

pub const LIMIT: Duration = Duration::from_secs(30);

/// What every check's command prints after its attempt: an output without it means the
/// command never ran (and an empty output proves nothing then).
pub const TRIED: &str = "tried";

/// The key file in the config folder.
pub const SECRET: &str = "openai = \"sk-secret\"\n";

/// Who runs a command: this process through the launcher, or an unprivileged user through
/// `runuser` (bubblewrap started as that user when there is a sandbox).
#[derive(Debug, Clone, Copy)]
pub enum Who {
    Launcher,
    User(&'static str),
}

/// A workspace with the protected entries, beside a folder outside it and a config folder.
pub struct Scene {
    _dir: tempfile::TempDir,
    pub ws: PathBuf,
    pub outside: PathBuf,
    pub config: PathBuf,
    /// A home folder like a real user's, other tools' credentials in it.
    pub home: PathBuf,
}

/// Other tools' credentials planted in the scene's home folder, each a file: stores the
/// named list holds, and stores no list names, which only the home's hiding keeps out
/// (other agents' and tools' keys, a `.env` of another project, another workspace's
/// sessions, a history kept in a place of the user's choosing).
pub const CREDENTIALS: [&str; 27] = [
    ".aws/credentials",
    ".git-credentials",
    ".netrc",
    ".config/gh/hosts.yml",
    ".kube/config",
    ".mozilla/firefox/a1b2.default/cookies.sqlite",
    ".bash_history",
    ".claude/.credentials.json",
    ".config/github-copilot/hosts.json",
    ".gemini/oauth_creds.json",
    ".local/share/opencode/auth.json",
    ".config/io.datasette.llm/keys.json",
    ".claude.json",
    ".config/Claude/claude_desktop_config.json",
    ".m2/settings.xml",
    ".config/containers/auth.json",
    ".config/rclone/rclone.conf",
    ".pgpass",
    ".config/sops/age/keys.txt",
    ".cache/huggingface/token",
    ".kaggle/kaggle.json",
    ".config/glab-cli/config.yml",
    ".minikube/profiles/minikube/client.key",
    ".docker/machine/certs/key.pem",
    "projects/other/.env",
    "Cairn-old/sessions/0193.jsonl",
    ".histories/zsh",
];

/// Agents' and daemons' sockets planted in the scene's home folder: a read-only bind
/// would not stop `connect()` to them, so they must not be there at all.
pub const SOCKETS: [&str; 3] = [
    ".1password/agent.sock",
    ".bitwarden-ssh-agent.sock",
    ".docker/desktop/docker.sock",
];

impl Scene {
    pub fn new() -> Self {
        // Not under /tmp, which the sandbox replaces whole: there the config folder would
        // be out of sight whether or not the sandbox hides it.
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let ws = root.join("ws");
        for sub in [
            ".git",
            ".cairn",
            "sessions",
            "skills",
            "subagents",
            "notes",
            "projects/app/.git/hooks",
        ] {
            std::fs::create_dir_all(ws.join(sub)).unwrap();
        }
        std::fs::write(ws.join("AGENTS.md"), "rules").unwrap();
        std::fs::write(ws.join(".env"), "A=1").unwrap();
        let outside = root.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let config = root.join("config");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join("secrets.toml"), SECRET).unwrap();
        let home = root.join("home");
        for path in CREDENTIALS {
            let file = home.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, SECRET).unwrap();
        }
        for path in SOCKETS {
            let file = home.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            // The socket file stays when the listener is dropped.
            std::os::unix::net::UnixListener::bind(file).unwrap();
        }
        Self {
            _dir: dir,
            ws,
            outside,
            config,
            home,
        }
    }

    /// A scene owned by the unprivileged user, and its name; `None` when this process is
    /// not root (it is then an unprivileged user itself, and the other tests run as it).
    pub fn unprivileged() -> Option<(Self, &'static str)> {
        let Some(user) = cairn_testkit::unprivileged_user() else {
            eprintln!("not root: this process is the unprivileged user, the other tests cover it");
            return None;
        };
        let scene = Self::new();
        scene.give_to(Who::User(user));
        Some((scene, user))
    }

    /// Makes everything in the scene `who`'s, as files made since by this process must be.
    pub fn give_to(&self, who: Who) {
        let Who::User(user) = who else { return };
        let top = self.ws.parent().unwrap();
        let chown = std::process::Command::new("chown")
            .args(["-R", &format!("{user}:{user}")])
            .arg(top)
            .status()
            .unwrap();
        assert!(chown.success());
        // The temp folder's parents must be passable for the user.
        std::fs::set_permissions(top, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }

    /// The sandbox of the scene's workspace, hiding the scene's config folder and the
    /// credentials of its home (not those of whoever runs the tests).
    pub fn sandbox(&self, network: bool) -> Sandbox {
        Sandbox::new(&self.ws, std::slice::from_ref(&self.config), network).with_home(&self.home)
    }

    /// Runs `script` with bash in the workspace, through the launcher, inside `sandbox`.
    pub async fn run(&self, sandbox: &Sandbox, script: &str) -> Captured {
        self.run_as(Who::Launcher, Some(sandbox), script).await
    }

    /// Runs `script` with bash in the workspace as `who`, inside `sandbox` if there is one.
    pub async fn run_as(&self, who: Who, sandbox: Option<&Sandbox>, script: &str) -> Captured {
        match who {
            Who::Launcher => {
                let mut launch = Launch::new("bash", &self.ws, &EnvScrub::default())
                    .args(["-c", script])
                    .git_protected();
                if let Some(sandbox) = sandbox {
                    launch = launch.sandboxed(sandbox);
                }
                capture(launch.prepare(), b"", 1 << 20, LIMIT)
                    .await
                    .unwrap()
            }
            Who::User(user) => self.run_as_user(user, sandbox, script).await,
        }
    }

    pub async fn run_as_user(
        &self,
        user: &str,
        sandbox: Option<&Sandbox>,
        script: &str,
    ) -> Captured {
        let mut command = tokio::process::Command::new("runuser");
        command.args(["-u", user, "--"]);
        if let Some(sandbox) = sandbox {
            command
                .arg("bwrap")
                .args(sandbox.bwrap_args(&self.ws))
                .arg("--");
        }
        command
            .args(["bash", "-c", script])
            .current_dir(&self.ws)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        let out = tokio::time::timeout(LIMIT, command.output())
            .await
            .unwrap()
            .unwrap();
        Captured {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

pub fn available() {
    if let Err(why) = probe() {
        panic!("the sandbox must start on this machine (set-up installs bubblewrap): {why}");
    }
}
