//! A disk that fills up under a run: the run ends with a clear error, and the
//! conversation saved before it is whole and goes on once there is room again.
//!
//! The full disk is the file size limit (`ulimit -f`) with SIGXFSZ ignored, which stays
//! ignored across exec: every write that would grow a file past the limit fails as a
//! write to a full disk does. Unlike a small tmpfs it needs no mount, so it runs anywhere.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_e2e::{cairn_bin, text_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer};
use serde_json::Value;

fn session_file(sandbox: &Sandbox) -> std::path::PathBuf {
    let dir = sandbox.workspace().join("sessions");
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap()
}

fn openai(server: &MockServer) -> Vec<String> {
    [
        "--provider",
        "openai",
        "--base-url",
        &server.url(),
        "--model",
        "m",
    ]
    .map(String::from)
    .to_vec()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_ends_the_run_clearly_and_keeps_the_saved_conversation() {
    let sandbox = Sandbox::new();
    let server =
        MockServer::respond_with(|_| MockResponse::sse(text_stream("First answer."))).await;
    let mut args = openai(&server);
    args.extend(["ask".into(), "First question.".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sandbox.cairn(&args).output().await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let session = session_file(&sandbox);
    let saved = std::fs::read_to_string(&session).unwrap();

    // The next answer is 40 KB; files may grow to 8 KB past what the session holds.
    let long = "A very long answer indeed. ".repeat(1500);
    let full = MockServer::respond_with(move |_| MockResponse::sse(text_stream(&long))).await;
    let limit_blocks = (saved.len() + 8192) / 512;
    let mut args = openai(&full);
    args.extend(["ask".into(), "--continue".into(), "Second question.".into()]);
    let script = format!("trap '' XFSZ; ulimit -f {limit_blocks}; exec \"$0\" \"$@\"",);
    let mut cmd = sandbox.cairn(&[]);
    let std_cmd = cmd.as_std_mut();
    let workspace = sandbox.workspace();
    let program = cairn_bin();
    let mut full_args: Vec<String> = vec![
        program.display().to_string(),
        "--workspace".into(),
        workspace.display().to_string(),
    ];
    full_args.extend(args);
    let out = tokio::process::Command::from({
        let mut sh = std::process::Command::new("sh");
        sh.arg("-c").arg(&script).args(&full_args);
        for (key, value) in std_cmd.get_envs() {
            match value {
                Some(value) => sh.env(key, value),
                None => sh.env_remove(key),
            };
        }
        sh
    })
    .output()
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("File too large") || stderr.contains("No space"),
        "the error does not say why: {stderr}"
    );

    // What was saved is still there, line for line, and no torn line follows it.
    let now = std::fs::read_to_string(&session).unwrap();
    assert!(now.starts_with(&saved), "the saved conversation changed");
    for line in now.lines() {
        assert!(
            serde_json::from_str::<Value>(line).is_ok(),
            "a torn line was left: {line:.80}"
        );
    }

    // With room again the conversation goes on.
    let server =
        MockServer::respond_with(|_| MockResponse::sse(text_stream("Third answer."))).await;
    let mut args = openai(&server);
    args.extend(["ask".into(), "--continue".into(), "Third question.".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sandbox.cairn(&args).output().await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Third answer."));
    let sent = server.requests()[0].body_json().unwrap();
    assert!(sent["messages"].to_string().contains("First answer."));
}
