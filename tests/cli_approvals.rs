//! The approval prompt of `cairn ask`: the whole call, escaped, and a diff for a file
//! change. The real binary against an OpenAI-compatible server on 127.0.0.1; the prompt is
//! answered through a pseudo-terminal (`script`), as a person at a terminal would.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use cairn_e2e::{text_stream, tool_call_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Generous: the run only waits for the loopback server.
const LIMIT: Duration = Duration::from_secs(60);

const ESC: u8 = 0x1b;

fn ask_args(server: &MockServer, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--provider",
        "openai",
        "--base-url",
        &server.url(),
        "--model",
        "test-model",
        "ask",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

async fn ask(sandbox: &Sandbox, server: &MockServer, extra: &[&str]) -> std::process::Output {
    let args = ask_args(server, extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sandbox.cairn(&args).output().await.unwrap()
}

/// The same command run inside a pseudo-terminal by `script`: stdin, stdout and stderr are
/// the terminal, so approvals are asked. Styles are off (`NO_COLOR`) so that every ESC
/// byte in the output would have come from the model.
fn in_terminal(command: tokio::process::Command) -> tokio::process::Command {
    let command = command.as_std();
    let mut line = quote(&command.get_program().to_string_lossy());
    for arg in command.get_args() {
        line.push(' ');
        line.push_str(&quote(&arg.to_string_lossy()));
    }
    let mut script = tokio::process::Command::new("script");
    script.args(["--quiet", "--return", "--command", &line, "/dev/null"]);
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => script.env(key, value),
            None => script.env_remove(key),
        };
    }
    script
        .env("NO_COLOR", "1")
        .env("SHELL", "/bin/sh")
        .env("TERM", "xterm")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    script
}

fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Reads the terminal until `needle` shows, returning everything read.
async fn read_until(output: &mut tokio::process::ChildStdout, seen: &mut Vec<u8>, needle: &str) {
    while !String::from_utf8_lossy(seen).contains(needle) {
        let mut buf = [0u8; 4096];
        let n = tokio::time::timeout(LIMIT, output.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("no {needle:?} in: {}", String::from_utf8_lossy(seen)))
            .unwrap();
        assert!(
            n > 0,
            "ended before {needle:?}: {}",
            String::from_utf8_lossy(seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_prompt_shows_every_line_of_a_bash_command_with_controls_escaped() {
    let sandbox = Sandbox::new();
    let command = "echo first line\n\
                   printf '\x1b]52;c;cHduZWQ=\x07'\rrm -rf ~ # looks harmless\n\
                   touch pwned\t\u{202e}txt.sh";
    let server = MockServer::start(vec![
        MockResponse::sse(tool_call_stream(
            "call_1",
            "bash",
            &json!({ "command": command }),
            4,
        )),
        MockResponse::sse(text_stream("Not run, as you asked.")),
    ])
    .await;
    let args = ask_args(&server, &["clean", "up"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = in_terminal(sandbox.cairn(&args)).spawn().unwrap();
    let mut terminal = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    read_until(&mut terminal, &mut seen, "Allow? [").await;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"n\n").await.unwrap();
    read_until(&mut terminal, &mut seen, "Not run, as you asked.").await;
    let status = tokio::time::timeout(LIMIT, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0), "{}", String::from_utf8_lossy(&seen));

    // The terminal ends lines with \r\n; what the model sent is shown escaped.
    let shown = String::from_utf8_lossy(&seen).replace("\r\n", "\n");
    assert!(
        !seen.contains(&ESC),
        "a raw ESC reached the terminal: {shown:?}"
    );
    for line in [
        "  │ echo first line\n",
        "  │ printf '\\x1b]52;c;cHduZWQ=\\x07'\\rrm -rf ~ # looks harmless\n",
        "  │ touch pwned\\t\\u{202e}txt.sh\n",
        "note: control and invisible characters are shown escaped",
        "  y  allow once\n",
        "  n  deny (the default)\n",
    ] {
        assert!(shown.contains(line), "no {line:?} in:\n{shown}");
    }
    assert!(!sandbox.workspace().join("pwned").exists());
    let messages = server.requests()[1].body_json().unwrap()["messages"].clone();
    let told = messages[3]["content"].as_str().unwrap();
    assert!(told.contains("did not approve"), "{told}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_terminal_the_denied_call_is_shown_whole() {
    let sandbox = Sandbox::new();
    let command = "echo a\necho b\x1b[2J";
    let server = MockServer::start(vec![
        MockResponse::sse(tool_call_stream(
            "call_1",
            "bash",
            &json!({ "command": command }),
            2,
        )),
        MockResponse::sse(text_stream("Understood.")),
    ])
    .await;
    let out = ask(&sandbox, &server, &["go"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("? bash:\n  │ echo a\n  │ echo b\\x1b[2J\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cairn: denied bash: no terminal"),
        "{stderr}"
    );
    assert!(!out.stderr.contains(&ESC), "{stderr:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_file_approval_shows_a_diff_against_the_file_on_disk() {
    let sandbox = Sandbox::new();
    sandbox.write_settings("[approval]\ndefault = \"allow\"\ntools = { write_file = \"ask\" }\n");
    let notes = sandbox.workspace().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("plan.md"), "# Plan\n- draft it\n- test it\n").unwrap();
    let arguments = json!({
        "path": "notes/plan.md",
        "content": "# Plan\n- ship it\n- test it\n"
    });
    let server = MockServer::start(vec![
        MockResponse::sse(tool_call_stream("call_w", "write_file", &arguments, 3)),
        MockResponse::sse(text_stream("Left as it was.")),
    ])
    .await;
    let out = ask(&sandbox, &server, &["update", "the", "plan"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "? write_file notes/plan.md:\n\
             --- a/notes/plan.md\n\
             +++ b/notes/plan.md\n\
             @@ -1,3 +1,3 @@\n\
             \x20# Plan\n\
             -- draft it\n\
             +- ship it\n\
             \x20- test it\n"
        ),
        "{stderr}"
    );
    let kept = std::fs::read_to_string(notes.join("plan.md")).unwrap();
    assert_eq!(kept, "# Plan\n- draft it\n- test it\n");
}
