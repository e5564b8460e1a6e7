//! The sandbox seen from outside: commands run through the launcher inside it, and what
//! they did is looked for on the real file system afterwards. Also run as an unprivileged
//! user (root makes mount namespaces without user namespaces and ignores permissions, so a
//! sandbox that holds for root proves little for a normal user).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn_process::{capture, probe, Captured, EnvScrub, Launch, Sandbox};
use pretty_assertions::assert_eq;

const LIMIT: Duration = Duration::from_secs(30);

/// A workspace with the protected entries, beside a folder outside it and a config folder.
struct Scene {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    config: PathBuf,
}

impl Scene {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
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
        std::fs::write(config.join("secrets.toml"), "openai = \"sk-secret\"").unwrap();
        Self {
            _dir: dir,
            ws,
            outside,
            config,
        }
    }

    fn sandbox(&self, network: bool) -> Sandbox {
        Sandbox::new(&self.ws, std::slice::from_ref(&self.config), network)
    }

    async fn run(&self, sandbox: &Sandbox, script: &str) -> Captured {
        let launch = Launch::new("bash", &self.ws, &EnvScrub::default())
            .args(["-c", script])
            .git_protected()
            .sandboxed(sandbox);
        capture(launch.prepare(), b"", 1 << 20, LIMIT)
            .await
            .unwrap()
    }
}

fn available() {
    if let Err(why) = probe() {
        panic!("the sandbox must start on this machine (set-up installs bubblewrap): {why}");
    }
}

/// The script that tries every write, one line each, so that one refusal stops nothing.
fn writes(scene: &Scene) -> String {
    let mut lines = vec!["echo ok > notes/allowed.md".to_string()];
    for target in [
        ".git/config",
        ".cairn/state",
        "sessions/s.jsonl",
        "AGENTS.md",
        "skills/evil.md",
        "subagents/evil.md",
        ".env",
        ".bashrc",
        "projects/app/.git/hooks/pre-commit",
        "notes/.envrc",
    ] {
        lines.push(format!("echo pwned >> {target}"));
    }
    lines.push(format!("echo pwned > {}/escaped", scene.outside.display()));
    lines.push("echo private > /tmp/cairn-sandbox-private".into());
    lines.push("mount -o remount,rw,bind .git 2>/dev/null; echo pwned >> .git/config".into());
    lines.join("\n")
}

fn assert_only_the_allowed_write_landed(scene: &Scene) {
    let ws = &scene.ws;
    assert_eq!(
        std::fs::read_to_string(ws.join("notes/allowed.md")).unwrap(),
        "ok\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("AGENTS.md")).unwrap(),
        "rules"
    );
    assert_eq!(std::fs::read_to_string(ws.join(".env")).unwrap(), "A=1");
    for gone in [
        ".git/config",
        ".cairn/state",
        "sessions/s.jsonl",
        "skills/evil.md",
        "subagents/evil.md",
        "projects/app/.git/hooks/pre-commit",
    ] {
        assert!(!ws.join(gone).exists(), "{gone} was written");
    }
    assert!(
        !scene.outside.join("escaped").exists(),
        "wrote outside the workspace"
    );
    assert!(
        !Path::new("/tmp/cairn-sandbox-private").exists(),
        "/tmp is shared"
    );
}

#[tokio::test]
async fn commands_write_the_workspace_but_not_its_protected_parts_nor_the_system() {
    available();
    let scene = Scene::new();
    let out = scene.run(&scene.sandbox(false), &writes(&scene)).await;
    assert!(out.stderr.contains("Read-only file system"), "{out:?}");
    assert_only_the_allowed_write_landed(&scene);
    // `.bashrc` and `notes/.envrc` did not exist: a dot entry made now, at any depth, is
    // protected from the next call on.
    let script = "echo again >> .bashrc || echo a; echo again >> notes/.envrc || echo b";
    let out = scene.run(&scene.sandbox(false), script).await;
    assert_eq!(out.stdout, "a\nb\n", "{out:?}");
}

#[tokio::test]
async fn the_config_folder_is_not_visible() {
    available();
    let scene = Scene::new();
    let script = format!(
        "cat {}/secrets.toml; ls -A {}",
        scene.config.display(),
        scene.config.display()
    );
    let out = scene.run(&scene.sandbox(false), &script).await;
    assert!(!out.stdout.contains("sk-secret"), "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
}

#[tokio::test]
async fn there_is_no_network_unless_asked_for() {
    available();
    let scene = Scene::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let out = scene.run(&scene.sandbox(false), &script).await;
    assert_ne!(out.code, Some(0), "{out:?}");
    let out = scene.run(&scene.sandbox(true), &script).await;
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), "connected\n"));
}

#[tokio::test]
async fn nothing_a_command_started_outlives_it() {
    available();
    let scene = Scene::new();
    let out = scene
        .run(
            &scene.sandbox(false),
            "setsid sleep 987.654 >/dev/null 2>&1 & echo started",
        )
        .await;
    assert_eq!(out.stdout, "started\n");
    let mut alive = true;
    for _ in 0..40 {
        alive = std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("987.654"))
        });
        if !alive {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive, "a background process outlived its command");
}

#[tokio::test]
async fn git_never_takes_the_workspace_for_a_bare_repository() {
    available();
    let scene = Scene::new();
    std::fs::remove_dir_all(scene.ws.join(".git")).unwrap();
    let flag = scene.ws.join("notes/fsmonitor-ran");
    cairn_testkit::planted::bare_repository(&scene.ws, &flag).unwrap();
    let out = scene.run(&scene.sandbox(false), "git status").await;
    assert!(out.stderr.contains("cannot use bare repository"), "{out:?}");
    let diff = "git diff --no-index a.md b.md";
    let out = scene.run(&scene.sandbox(false), diff).await;
    assert!(!flag.exists(), "git ran the planted command: {out:?}");
    assert!(out.stdout.contains("+two"), "{out:?}");
    // What the protection stops: the same command without it runs the planted one.
    let plain = Launch::new("git", &scene.ws, &EnvScrub::default()).args([
        "diff",
        "--no-index",
        "a.md",
        "b.md",
    ]);
    capture(plain.prepare(), b"", 1 << 16, LIMIT).await.unwrap();
    assert!(
        flag.exists(),
        "the planted repository is not what git would use"
    );
}

#[tokio::test]
async fn the_sandbox_holds_for_an_unprivileged_user_too() {
    available();
    let Some(user) = cairn_testkit::unprivileged_user() else {
        eprintln!("not root: this process is the unprivileged user, the other tests cover it");
        return;
    };
    let scene = Scene::new();
    let top = scene.ws.parent().unwrap();
    let chown = std::process::Command::new("chown")
        .args(["-R", &format!("{user}:{user}")])
        .arg(top)
        .status()
        .unwrap();
    assert!(chown.success());
    // The temp folder's parents must be passable for the user.
    std::fs::set_permissions(top, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let sandbox = scene.sandbox(false);
    let mut command = tokio::process::Command::new("runuser");
    command
        .args(["-u", user, "--", "bwrap"])
        .args(sandbox.bwrap_args(&scene.ws))
        .args(["--", "bash", "-c", &writes(&scene)])
        .current_dir(&scene.ws)
        .kill_on_drop(true);
    let out = tokio::time::timeout(LIMIT, command.output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Read-only file system"), "{stderr}");
    assert_only_the_allowed_write_landed(&scene);
    // The user could write these without the sandbox: the refusals above were its doing.
    let direct = std::process::Command::new("runuser")
        .args(["-u", user, "--", "sh", "-c"])
        .arg(format!(
            "echo x > {}/.git/direct && echo y > {}/direct",
            scene.ws.display(),
            scene.outside.display()
        ))
        .status()
        .unwrap();
    assert!(direct.success());
}
