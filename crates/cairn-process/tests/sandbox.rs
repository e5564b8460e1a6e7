//! The sandbox seen from outside: commands run through the launcher inside it, and what
//! they did is looked for on the real file system afterwards. Also run as an unprivileged
//! user (root makes mount namespaces without user namespaces and ignores permissions, so a
//! sandbox that holds for root proves little for a normal user).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

use cairn_process::{capture, Captured, EnvScrub, Launch};
use pretty_assertions::assert_eq;
use support::launched::Stop;
use support::{available, Scene, Who, CREDENTIALS, LIMIT, SECRET, SOCKETS, TRIED};

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

/// The config folder: its key file can be read and listed without the sandbox, and inside
/// it the folder is empty.
async fn config_folder_check(scene: &Scene, who: Who) {
    let dir = scene.config.display();
    let script = format!("cat {dir}/secrets.toml; ls -A {dir}; echo {TRIED}");
    let out = scene.run_as(who, None, &script).await;
    let seen = format!("{SECRET}secrets.toml\n{TRIED}\n");
    assert_eq!(out.stdout, seen, "without the sandbox: {out:?}");
    let out = scene
        .run_as(who, Some(&scene.sandbox(false)), &script)
        .await;
    assert_eq!(out.stdout, format!("{TRIED}\n"), "{out:?}");
}

#[tokio::test]
async fn the_config_folder_is_not_visible() {
    available();
    config_folder_check(&Scene::new(), Who::Launcher).await;
}

#[tokio::test]
async fn the_config_folder_is_not_visible_to_an_unprivileged_user_either() {
    available();
    if let Some((scene, user)) = Scene::unprivileged() {
        config_folder_check(&scene, Who::User(user)).await;
    }
}

/// Other tools' credentials in a home like a real user's: read without the sandbox, and
/// nothing of them inside it (an empty folder or an empty file in their place).
async fn credentials_check(scene: &Scene, who: Who) {
    let reads: Vec<String> = CREDENTIALS
        .iter()
        .map(|path| format!("cat {}/{path} 2>/dev/null;", scene.home.display()))
        .collect();
    let script = format!("{} echo {TRIED}", reads.join(" "));
    let out = scene.run_as(who, None, &script).await;
    let all = SECRET.repeat(CREDENTIALS.len());
    assert_eq!(
        out.stdout,
        format!("{all}{TRIED}\n"),
        "without the sandbox: {out:?}"
    );
    let out = scene
        .run_as(who, Some(&scene.sandbox(false)), &script)
        .await;
    assert_eq!(out.stdout, format!("{TRIED}\n"), "{out:?}");
}

/// `script` run as `who` outside the sandbox, then inside it, which must run it to its end.
async fn outside_then_inside(scene: &Scene, who: Who, script: &str) -> (Captured, Captured) {
    let outside = scene.run_as(who, None, script).await;
    let inside = scene.run_as(who, Some(&scene.sandbox(false)), script).await;
    assert!(
        inside.stdout.ends_with(&format!("{TRIED}\n")),
        "{who:?}: {inside:?}"
    );
    (outside, inside)
}

/// The home's sockets are not there inside (seen from outside first), and what programs
/// need of the home is: the toolchains, and git's settings without their credentials.
async fn home_check(scene: &Scene, who: Who) {
    let home = scene.home.display();
    std::fs::create_dir_all(scene.home.join(".cargo/bin")).unwrap();
    std::fs::write(scene.home.join(".cargo/bin/tool"), "a tool\n").unwrap();
    std::fs::write(
        scene.home.join(".gitconfig"),
        "[user]\n\tname = Ann\n[credential]\n\thelper = store --file ~/.tokens\n",
    )
    .unwrap();
    scene.give_to(who);
    let tests: Vec<String> = SOCKETS
        .iter()
        .map(|s| format!("[ -S {home}/{s} ] && echo socket;"))
        .collect();
    let script = format!(
        "{} cat {home}/.cargo/bin/tool {home}/.gitconfig; echo ---; ls -A {home}; echo {TRIED}",
        tests.join(" ")
    );
    let (outside, out) = outside_then_inside(scene, who, &script).await;
    assert_eq!(
        outside.stdout.matches("socket").count(),
        SOCKETS.len(),
        "{outside:?}"
    );
    assert!(!out.stdout.contains("socket"), "{who:?}: {out:?}");
    assert!(out.stdout.contains("a tool\n"), "{who:?}: {out:?}");
    assert!(out.stdout.contains("name = Ann"), "{who:?}: {out:?}");
    assert!(!out.stdout.contains("helper"), "{who:?}: {out:?}");
    // Of the home, only what was shown is there.
    let listing = out.stdout.split("---\n").nth(1).unwrap_or_default();
    let listed: Vec<&str> = listing.lines().filter(|l| *l != TRIED).collect();
    assert_eq!(listed, [".cargo", ".gitconfig"], "{who:?}: {out:?}");
}

#[tokio::test]
async fn of_the_home_only_toolchains_and_git_settings_are_there() {
    available();
    home_check(&Scene::new(), Who::Launcher).await;
}

#[tokio::test]
async fn of_the_home_only_toolchains_and_git_settings_are_there_for_an_unprivileged_user_too() {
    available();
    if let Some((scene, user)) = Scene::unprivileged() {
        home_check(&scene, Who::User(user)).await;
    }
}

/// A user namespace of a command's own would give it the capabilities to remount what
/// the sandbox hides: it cannot make one (seen possible outside first).
async fn userns_check(scene: &Scene, who: Who) {
    scene.give_to(who);
    let script = format!("unshare -U true && echo made; echo {TRIED}");
    let out = scene.run_as(who, None, &script).await;
    assert_eq!(
        out.stdout,
        format!("made\n{TRIED}\n"),
        "{who:?}: outside: {out:?}"
    );
    let out = scene
        .run_as(who, Some(&scene.sandbox(false)), &script)
        .await;
    assert_eq!(out.stdout, format!("{TRIED}\n"), "{who:?}: {out:?}");
}

/// The keys of the login session (kerberos tickets, an ecryptfs key) are not the
/// command's: its session keyring is one of its own.
#[tokio::test]
async fn a_command_has_a_session_keyring_of_its_own() {
    available();
    // This test's process joins a session keyring of its own, as a login has one, which
    // commands started from it inherit.
    #[allow(unsafe_code)]
    // SAFETY: keyctl(JOIN_SESSION_KEYRING, NULL) takes no pointer to read or write.
    let joined = unsafe { libc::syscall(libc::SYS_keyctl, 1, std::ptr::null::<u8>()) };
    assert!(joined > 0, "{}", std::io::Error::last_os_error());
    let scene = Scene::new();
    // keyctl(GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, create = 0): the keyring's serial.
    let script = format!(
        "perl -e 'print syscall({}, 0, -3, 0)'; echo; echo {TRIED}",
        libc::SYS_keyctl
    );
    let outside = scene.run_as(Who::Launcher, None, &script).await;
    let inside = scene.run(&scene.sandbox(false), &script).await;
    let serial = |out: &cairn_process::Captured| {
        assert!(out.stdout.ends_with(&format!("{TRIED}\n")), "{out:?}");
        out.stdout.lines().next().unwrap_or_default().to_string()
    };
    let (outside, inside) = (serial(&outside), serial(&inside));
    assert_eq!(
        outside,
        joined.to_string(),
        "commands inherit the session keyring"
    );
    assert!(inside.parse::<i64>().is_ok_and(|n| n > 0), "{inside}");
    assert_ne!(inside, outside);
}

#[tokio::test]
async fn a_command_cannot_make_a_user_namespace() {
    available();
    userns_check(&Scene::new(), Who::Launcher).await;
}

#[tokio::test]
async fn an_unprivileged_users_command_cannot_make_a_user_namespace_either() {
    available();
    if let Some((scene, user)) = Scene::unprivileged() {
        userns_check(&scene, Who::User(user)).await;
    }
}

#[tokio::test]
async fn other_tools_credentials_are_hidden() {
    available();
    credentials_check(&Scene::new(), Who::Launcher).await;
}

#[tokio::test]
async fn other_tools_credentials_are_hidden_from_an_unprivileged_user_too() {
    available();
    if let Some((scene, user)) = Scene::unprivileged() {
        credentials_check(&scene, Who::User(user)).await;
    }
}

/// A command killed by a signal says so inside the sandbox as outside (bubblewrap alone
/// would give the exit code 128 + the signal), and one that exits with that code says that.
async fn signal_check(scene: &Scene, who: Who) {
    for network in [false, true] {
        let killed = scene
            .launch_as(who, network, "echo $$; kill -TERM $$", Stop::Never)
            .await;
        let status = killed.end.as_ref().unwrap();
        assert_eq!(status.signal(), Some(15), "{who:?}, {network}: {killed:?}");
        // The command is still the sandbox's pid 2, as bubblewrap starts it.
        assert_eq!(killed.output, "2\n", "{who:?}, {network}");
        let exited = scene.launch_as(who, network, "exit 143", Stop::Never).await;
        let status = exited.end.as_ref().unwrap();
        assert_eq!(
            (status.code(), status.signal()),
            (Some(143), None),
            "{who:?}, {network}: {exited:?}"
        );
    }
}

#[tokio::test]
async fn a_command_killed_by_a_signal_says_so_inside_the_sandbox() {
    available();
    signal_check(&Scene::new(), Who::Launcher).await;
}

#[tokio::test]
async fn a_command_killed_by_a_signal_says_so_for_an_unprivileged_user_too() {
    available();
    if let Some((scene, user)) = Scene::unprivileged() {
        signal_check(&scene, Who::User(user)).await;
    }
}

/// The launch another run of this binary asks for (see `support/launched.rs`).
#[tokio::test]
#[ignore = "run by the tests that launch in a run of their own (as an unprivileged user)"]
async fn launch_for_another_run() {
    support::launched::serve().await;
}

/// A script that starts `sleep <seconds>` in the background, out of its process group and
/// with no environment (so no marker of the launcher's finds it: only the sandbox's pid
/// namespace can end it), and prints the marker once it runs: once the process is `sleep`
/// itself (before, `env` or `setsid` still carry the marker or the group, and die with them).
fn background(seconds: &str) -> String {
    format!(
        "env -i setsid sleep {seconds} >/dev/null 2>&1 &\n\
         for _ in $(seq 1000); do\n\
         [ \"$(tr '\\0' ' ' < /proc/$!/cmdline 2>/dev/null)\" = 'sleep {seconds} ' ] \
         && echo {TRIED} && break; sleep 0.01\n\
         done"
    )
}

/// The `sleep <seconds>` processes [`background`] started, waiting up to 10 s for them to
/// go when `until_gone`; what is left is killed, and its pids returned.
async fn survivors(seconds: &str, until_gone: bool) -> Vec<String> {
    let command = format!("sleep\0{seconds}\0");
    let mut left = Vec::new();
    for _ in 0..200 {
        left = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == command.as_bytes())
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if left.is_empty() || !until_gone {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for pid in &left {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid])
            .status();
    }
    left
}

/// `seconds` with digits of this run's own added, so that no other run's sleep matches.
fn of_this_run(seconds: &str) -> String {
    format!(
        "{seconds}{:012}",
        uuid::Uuid::new_v4().as_u128() % 1_000_000_000_000
    )
}

/// A background process outlives a command run without the sandbox, not one inside it.
/// `outside` and `inside` are the sleeps' lengths, told apart from other tests' sleeps (and,
/// by digits of this run's own, from other runs').
async fn cleanup_check(scene: &Scene, who: Who, outside: &str, inside: &str) {
    let (outside, inside) = (&of_this_run(outside), &of_this_run(inside));
    let out = scene.run_as(who, None, &background(outside)).await;
    assert_eq!(
        out.stdout,
        format!("{TRIED}\n"),
        "without the sandbox: {out:?}"
    );
    let left = survivors(outside, false).await;
    assert_eq!(
        left.len(),
        1,
        "without the sandbox, the process should outlive the command"
    );
    let out = scene
        .run_as(who, Some(&scene.sandbox(false)), &background(inside))
        .await;
    assert_eq!(out.stdout, format!("{TRIED}\n"), "{out:?}");
    let left = survivors(inside, true).await;
    assert_eq!(
        left,
        Vec::<String>::new(),
        "a background process outlived its command"
    );
}

#[tokio::test]
async fn nothing_a_command_started_outlives_it() {
    available();
    cleanup_check(&Scene::new(), Who::Launcher, "987.611", "987.612").await;
}

#[tokio::test]
async fn nothing_an_unprivileged_user_started_outlives_it_either() {
    available();
    if let Some((scene, user)) = Scene::unprivileged() {
        cleanup_check(&scene, Who::User(user), "987.621", "987.622").await;
    }
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
    let Some((scene, user)) = Scene::unprivileged() else {
        return;
    };
    let sandbox = scene.sandbox(false);
    let out = scene
        .run_as(Who::User(user), Some(&sandbox), &writes(&scene))
        .await;
    assert!(out.stderr.contains("Read-only file system"), "{out:?}");
    assert_only_the_allowed_write_landed(&scene);
    // The user could write these without the sandbox: the refusals above were its doing.
    let direct = format!(
        "echo x > {}/.git/direct && echo y > {}/direct && echo {TRIED}",
        scene.ws.display(),
        scene.outside.display()
    );
    let out = scene.run_as(Who::User(user), None, &direct).await;
    assert_eq!(out.stdout, format!("{TRIED}\n"), "{out:?}");
}

/// A unix socket a daemon bound outside every hidden folder (another user's, as one under
/// `/srv` or `/var/lib` is) refuses a command, though the folder holding it is there
/// (reached from outside first).
async fn host_socket_check(scene: &Scene, who: Who) {
    use std::os::unix::fs::PermissionsExt;
    let socket = scene.outside.join("daemon.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    // Every sandbox planned meanwhile hides it, an unprivileged user's planned by this
    // root process among them: that user's bubblewrap must be able to find it.
    let open = |path: &Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    open(scene.ws.parent().unwrap(), 0o755);
    open(&scene.outside, 0o755);
    open(&socket, 0o777);
    scene.give_to(who);
    // A daemon's: another user's (`nobody`).
    if std::os::unix::fs::chown(&socket, Some(65534), Some(65534)).is_err() {
        eprintln!("not root: no socket of another user's can be made here");
        return;
    }
    let script = format!(
        "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{}\"); \
         print(\"reached\")' 2>/dev/null; ls {} ; echo {TRIED}",
        socket.display(),
        scene.outside.display()
    );
    let (outside, out) = outside_then_inside(scene, who, &script).await;
    assert!(
        outside.stdout.starts_with("reached\n"),
        "{who:?}: {outside:?}"
    );
    assert!(!out.stdout.contains("reached"), "{who:?}: {out:?}");
    // Its folder is there, the socket's name too: only the socket is not.
    assert!(out.stdout.contains("daemon.sock\n"), "{who:?}: {out:?}");
    // Out of the host's table before its folder goes: a sandbox planned with it a moment
    // ago has its bubblewrap started by then.
    drop(listener);
    std::thread::sleep(Duration::from_millis(300));
}

#[tokio::test]
async fn a_socket_the_host_bound_outside_the_home_refuses() {
    available();
    host_socket_check(&Scene::new(), Who::Launcher).await;
}

#[tokio::test]
async fn a_socket_the_host_bound_outside_the_home_refuses_an_unprivileged_user_too() {
    available();
    if let Some((scene, user)) = Scene::unprivileged() {
        host_socket_check(&scene, Who::User(user)).await;
    }
}
