//! The bash tool from its caller's side: output, exit codes, timeouts, aborts, what a
//! command leaves behind, and the sandbox.

use super::*;
use crate::handlers::test_support::{ok, TestWs};
use pretty_assertions::assert_eq;
use std::time::Instant;

async fn bash(ws: &TestWs, args: Value) -> Result<ToolOutput, ToolError> {
    ws.call(&Bash::unconfined(EnvScrub::default()), args).await
}

#[tokio::test]
async fn runs_in_the_root_and_interleaves_streams() {
    let ws = TestWs::new();
    let out = ok(bash(&ws, json!({"command": "pwd"})).await);
    assert_eq!(out, format!("{}\n[exit code 0]", ws.root().display()));
    let cmd = "echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three";
    assert_eq!(
        ok(bash(&ws, json!({"command": cmd})).await),
        "one\ntwo\nthree\n[exit code 0]"
    );
    assert_eq!(
        ok(bash(&ws, json!({"command": "true"})).await),
        "(no output)\n[exit code 0]"
    );
}

#[tokio::test]
async fn a_failing_command_is_an_error_output() {
    let ws = TestWs::new();
    let out = bash(&ws, json!({"command": "echo bad >&2; exit 3"})).await;
    assert_eq!(out, Ok(ToolOutput::error("bad\n[exit code 3]")));
    let out = bash(&ws, json!({"command": "kill -TERM $$"})).await;
    assert_eq!(
        out,
        Ok(ToolOutput::error("(no output)\n[killed by signal 15]"))
    );
}

#[tokio::test]
async fn a_signal_reads_the_same_inside_the_sandbox() {
    let ws = TestWs::new();
    // Unattended: refused rather than run outside the sandbox.
    let sandboxed = Bash::new(EnvScrub::default(), SandboxChoice::default(), true);
    let out = ws
        .call(&sandboxed, json!({"command": "kill -TERM $$"}))
        .await;
    assert_eq!(
        out,
        Ok(ToolOutput::error("(no output)\n[killed by signal 15]"))
    );
    let out = ws.call(&sandboxed, json!({"command": "exit 143"})).await;
    assert_eq!(out, Ok(ToolOutput::error("(no output)\n[exit code 143]")));
}

/// A workspace with more executable files than one call binds still runs commands:
/// the deepest are left writable, and the output says so.
#[cfg(unix)]
#[tokio::test]
async fn more_executables_than_a_call_binds_are_said_not_failed() {
    use std::os::unix::fs::PermissionsExt;
    let ws = TestWs::new();
    for n in 0..400 {
        let file = ws.root().join(format!("bin/{n:03}/run"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let sandboxed = Bash::new(EnvScrub::default(), SandboxChoice::default(), true);
    let out = ok(ws.call(&sandboxed, json!({"command": "echo ran"})).await);
    assert!(out.starts_with("ran\n[sandbox: "), "{out}");
    assert!(
        out.contains("executable files are writable in this call"),
        "{out}"
    );
    assert!(out.ends_with("[exit code 0]"), "{out}");
}

#[tokio::test]
async fn huge_output_keeps_head_and_tail() {
    let ws = TestWs::new();
    let cmd = "echo START; yes 0123456789 | head -c 5500000; echo END";
    let out = ok(bash(&ws, json!({"command": cmd})).await);
    assert!(out.starts_with("START\n0123456789\n"), "{}", &out[..40]);
    assert!(out.contains("0123456789\nEND\n[the whole output"));
    assert!(out.ends_with("]\n[exit code 0]"));
    assert!(out.contains("characters cut from the middle ...]"));
    assert!(
        out.chars().count() < MAX_OUTPUT_CHARS + 400,
        "{}",
        out.len()
    );
    // Nothing is lost: the whole output is saved where the model is told.
    let rel = crate::results::output_file("call-1");
    assert!(
        out.contains(&format!("(5,500,010 bytes) is saved in {rel}")),
        "{}",
        last_chars(&out, 400)
    );
    let saved = std::fs::read(ws.root().join(&rel)).unwrap();
    let mut want = b"START\n".to_vec();
    want.extend(b"0123456789\n".repeat(500_000));
    want.extend(b"END\n");
    assert_eq!(saved.len(), want.len());
    assert!(saved == want, "the saved output differs");
    // And the model reaches any part of it with its own tool.
    let read = crate::handlers::read_file::ReadFile;
    let page = ok(ws
        .call(&read, json!({"path": rel, "offset": 250_000, "limit": 2}))
        .await);
    assert!(page.contains("0123456789"), "{page}");
    assert!(page.contains("250000"), "{page}");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_group() {
    let ws = TestWs::new();
    let started = Instant::now();
    let cmd = "echo waiting; sleep 30 & echo $! > bg.pid; sleep 30";
    let out = bash(&ws, json!({"command": cmd, "timeout_s": 1})).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        out,
        Ok(ToolOutput::error("waiting\n[killed after 1 s timeout]"))
    );
    let pid = ws.read("bg.pid").trim().to_string();
    assert!(
        wait_until_gone(&pid).await,
        "background sleep {pid} survived"
    );
}

/// Whether the process is gone (or a zombie) within two seconds.
async fn wait_until_gone(pid: &str) -> bool {
    for _ in 0..20 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|s| s.trim_start().starts_with('Z')) =>
            {
                return true
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    false
}

#[tokio::test]
async fn abort_stops_the_command() {
    let mut ws = TestWs::new();
    let cancel = ws.ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let cmd = "echo tick; sleep 30";
    assert_eq!(
        bash(&ws, json!({"command": cmd})).await,
        Err(ToolError::Aborted)
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let (call, text) = ws.updates.try_recv().unwrap();
    assert_eq!((call.as_str(), text.as_str()), ("call-1", "tick"));
}

#[tokio::test]
async fn background_jobs_end_with_the_call() {
    let ws = TestWs::new();
    let started = Instant::now();
    let out = ok(bash(
        &ws,
        json!({"command": "sleep 30 & echo $! > bg.pid; \
            nohup sleep 30 >/dev/null 2>&1 & echo $! > nohup.pid; \
            setsid sleep 30 >/dev/null 2>&1 & P=$!; echo $P > setsid.pid; \
            until [ \"$(ps -o sid= -p $P | tr -d ' ')\" = $P ]; do sleep 0.05; done; \
            echo started"}),
    )
    .await);
    assert_eq!(out, "started\n[exit code 0]");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    for file in ["bg.pid", "nohup.pid", "setsid.pid"] {
        let pid = ws.read(file).trim().to_string();
        assert!(
            wait_until_gone(&pid).await,
            "{file}: {pid} survived the call"
        );
    }
}

#[tokio::test]
async fn the_command_gets_the_scrubbed_environment() {
    let ws = TestWs::new();
    // HOME stands in for a provider's `api_key_env`: it is set in every test process.
    let tool = Bash::unconfined(EnvScrub {
        also_remove: vec!["HOME".into()],
        pass: vec![],
        allow_only: false,
    });
    let cmd = "echo \"${HOME-removed}\"; test -n \"$PATH\" && echo path-kept";
    let out = ok(ws.call(&tool, json!({ "command": cmd })).await);
    assert_eq!(out, "removed\npath-kept\n[exit code 0]");
}

#[tokio::test]
async fn bad_arguments_are_refused() {
    let ws = TestWs::new();
    for args in [
        json!({"command": " "}),
        json!({"command": "ls", "timeout_s": 0}),
        json!({}),
    ] {
        let out = bash(&ws, args.clone()).await;
        assert!(
            matches!(out, Err(ToolError::InvalidArguments(_))),
            "{args}: {out:?}"
        );
    }
    let out = ok(bash(&ws, json!({"command": "echo hi", "timeout_s": 9000})).await);
    assert_eq!(
        out,
        "hi\n[timeout_s 9000 is above the maximum; used 600 s]\n[exit code 0]"
    );
}

#[test]
fn without_the_sandbox_every_call_must_ask_with_the_reason() {
    let off = Bash::unconfined(EnvScrub::default());
    let why = off.must_ask().unwrap_or_default();
    assert!(why.contains("`[tools.bash] sandbox = false`"), "{why}");
    assert_eq!(Bash::default().must_ask(), None, "the sandbox starts here");
    // With --yes nobody would answer: such a call refuses itself instead of asking.
    let unattended = Bash::new(EnvScrub::default(), SandboxChoice::default(), true);
    assert_eq!(unattended.must_ask(), None);
}
