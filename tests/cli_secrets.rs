//! API keys never leak: the `cairn` binary runs with test keys (in the environment and in
//! the key file used where no keyring exists) through tool calls, a memory flush, a
//! server error and a redirect, with `CAIRN_LOG=debug`; then no file in the workspace
//! (sessions, memory, `.cairn/` with the index and state.db), no other file of the
//! sandbox's home but the key file, and no output of any process holds a key. Keys set by
//! processes at once are all kept; a key file that cannot be read is reported by line
//! number, never by its text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use cairn_e2e::{text_stream, tool_call_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer};
use serde_json::json;
use tokio::io::AsyncWriteExt;

/// In `OPENAI_API_KEY` (and `ANTHROPIC_API_KEY` for the redirect).
const ENV_KEY: &str = "sk-env-e2e-7f3a9c1d5b2e8f4a6c0d4422";
/// In the key file, through `cairn key set`.
const FILE_KEY: &str = "sk-file-e2e-2b8d4f6a1c3e5a7b9d0f1133";
const KEYS: [&str; 2] = [ENV_KEY, FILE_KEY];

/// Everything the test's processes printed, to search for keys at the end.
#[derive(Default)]
struct Printed(Vec<(String, Vec<u8>)>);

impl Printed {
    fn keep(&mut self, label: &str, out: &Output) {
        self.0.push((format!("{label} stdout"), out.stdout.clone()));
        self.0.push((format!("{label} stderr"), out.stderr.clone()));
    }
}

fn secrets_path(sandbox: &Sandbox) -> PathBuf {
    sandbox.home().join(".config/cairn/secrets.toml")
}

/// `cairn ARGS` with debug logs, and the key in the environment when `env_key`.
fn cairn(sandbox: &Sandbox, env_key: bool, args: &[&str]) -> tokio::process::Command {
    let mut cmd = sandbox.cairn(args);
    cmd.env("CAIRN_LOG", "debug");
    if env_key {
        cmd.env("OPENAI_API_KEY", ENV_KEY)
            .env("ANTHROPIC_API_KEY", ENV_KEY);
    }
    cmd
}

async fn run(sandbox: &Sandbox, env_key: bool, args: &[&str]) -> Output {
    cairn(sandbox, env_key, args).output().await.unwrap()
}

/// `cairn key set <provider>` with `key` on stdin.
async fn key_set(sandbox: &Sandbox, provider: &str, key: &str) -> Output {
    let mut child = cairn(sandbox, false, &["key", "set", provider])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{key}\n").as_bytes())
        .await
        .unwrap();
    drop(stdin);
    child.wait_with_output().await.unwrap()
}

fn openai(server: &MockServer) -> Vec<String> {
    ["--provider", "openai", "--base-url", &server.url()]
        .into_iter()
        .map(String::from)
        .chain(["--model".into(), "test-model".into()])
        .collect()
}

fn args<'a>(head: &'a [String], tail: &[&'a str]) -> Vec<&'a str> {
    head.iter()
        .map(String::as_str)
        .chain(tail.iter().copied())
        .collect()
}

fn assert_ran(label: &str, out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{label}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every file under `dir` (following no links).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                todo.push(entry.path());
            } else if kind.is_file() {
                found.push(entry.path());
            }
        }
    }
    found
}

fn holds(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// The names of what holds a key, with the key.
fn leaks<'a>(places: impl IntoIterator<Item = (String, &'a [u8])>) -> Vec<String> {
    let mut found = Vec::new();
    for (name, bytes) in places {
        for key in KEYS {
            if holds(bytes, key) {
                found.push(format!("{name} holds {key}"));
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_from_the_environment_and_the_key_file_leave_no_trace() {
    let sandbox = Sandbox::new();
    sandbox.write_settings("[memory]\nflush = true\n");
    let mut printed = Printed::default();

    // 1. The key in the environment: bash and write_file calls, an answer, a flush.
    let server = MockServer::start(vec![
        MockResponse::sse(tool_call_stream(
            "call_bash",
            "bash",
            &json!({"command": "echo built > build.log && echo done"}),
            3,
        )),
        MockResponse::sse(tool_call_stream(
            "call_write",
            "write_file",
            &json!({"path": "notes/plan.md", "content": "# Plan\n- ship it\n"}),
            4,
        )),
        MockResponse::sse(text_stream("I ran the build and wrote the plan.")),
        MockResponse::sse(text_stream("- The user ships the plan this week.")),
    ])
    .await;
    let head = openai(&server);
    let out = run(
        &sandbox,
        true,
        &args(&head, &["ask", "--yes", "Build", "and", "plan"]),
    )
    .await;
    assert_ran("run with the key in the environment", &out, 0);
    printed.keep("run with the key in the environment", &out);
    assert!(sandbox.workspace().join("build.log").is_file());
    assert!(sandbox.workspace().join("notes/plan.md").is_file());
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        4,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The key was really used: every call, the flush's included, carries it.
    for request in &requests {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {ENV_KEY}").as_str())
        );
    }

    // 2. The key in the key file, stored by `cairn key set` (no keyring in the sandbox).
    let server = MockServer::start(vec![
        MockResponse::sse(tool_call_stream(
            "call_write2",
            "write_file",
            &json!({"path": "notes/todo.md", "content": "- water the plants\n"}),
            2,
        )),
        MockResponse::sse(text_stream("Added it to your list.")),
        MockResponse::sse(text_stream("- The user waters the plants.")),
    ])
    .await;
    sandbox.write_settings(&format!(
        "[providers.vault]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\n\
         [memory]\nflush = true\n",
        server.url()
    ));
    let out = key_set(&sandbox, "vault", FILE_KEY).await;
    assert_ran("cairn key set", &out, 0);
    printed.keep("cairn key set", &out);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!(
            "No system keyring was found: keys are kept in {}, readable only by you",
            secrets_path(&sandbox).display()
        )),
        "{said}"
    );
    let out = run(
        &sandbox,
        false,
        &["--provider", "vault", "ask", "--yes", "Remind", "me"],
    )
    .await;
    assert_ran("run with the key in the key file", &out, 0);
    printed.keep("run with the key in the key file", &out);
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        3,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for request in &requests {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {FILE_KEY}").as_str())
        );
    }

    // 3. The server refuses the key (401), quoting it masked as OpenAI does.
    // The run's call and the flush's after it.
    let refusal = MockResponse::status(
        401,
        r#"{"error": {"message": "Incorrect API key provided: sk-env-e2***********4422.", "code": "invalid_api_key"}}"#,
    );
    let server = MockServer::start(vec![refusal; 2]).await;
    let head = openai(&server);
    let out = run(&sandbox, true, &args(&head, &["ask", "hello"])).await;
    assert_ran("run refused with 401", &out, 1);
    printed.keep("run refused with 401", &out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("Incorrect API key"));

    // 4. The server redirects to another origin: the key does not follow, for neither
    // OpenAI's `authorization` nor Anthropic's `x-api-key` (which HTTP clients do not
    // know to drop); the run stops and says where it was sent.
    for (kind, path) in [
        ("openai", "/chat/completions"),
        ("anthropic", "/v1/messages"),
    ] {
        let target = MockServer::start(vec![
            MockResponse::sse(text_stream("Answered after a redirect.")),
            MockResponse::sse(text_stream("- Nothing new.")),
        ])
        .await;
        let location = format!("{}{path}", target.url());
        // The run's call and the flush's after it, each once: a refused redirect is not
        // retried.
        let server = MockServer::start(vec![
            MockResponse::status(307, "")
                .with_header("location", &location);
            4
        ])
        .await;
        let base = server.url();
        let head = ["--provider", kind, "--base-url", &base, "--model", "m"];
        let out = run(&sandbox, true, &[&head[..], &["ask", "hi"]].concat()).await;
        let label = format!("{kind} run redirected");
        printed.keep(&label, &out);
        assert_ran(&label, &out, 1);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains(&format!("redirected to {location}")),
            "{said}"
        );
        assert_eq!(target.requests(), [], "{label}");
        assert!(server.requests().len() <= 2, "{label}: retried: {said}");
    }

    // No file but the key file holds a key: the workspace (sessions, memory, .cairn with
    // the index and state.db) and the rest of the home; no output either.
    let workspace = files(&sandbox.workspace());
    for part in ["sessions", "memory", ".cairn/index", ".cairn/state.db"] {
        let part = sandbox.workspace().join(part);
        assert!(
            workspace.iter().any(|f| f.starts_with(&part)),
            "{} is missing: {workspace:?}",
            part.display()
        );
    }
    let contents: Vec<(String, Vec<u8>)> = workspace
        .into_iter()
        .chain(files(&sandbox.home()))
        .filter(|f| *f != secrets_path(&sandbox))
        .map(|f| {
            (
                f.display().to_string(),
                std::fs::read(&f).unwrap_or_default(),
            )
        })
        .collect();
    let found = leaks(
        contents
            .iter()
            .chain(&printed.0)
            .map(|(name, bytes)| (name.clone(), bytes.as_slice())),
    );
    assert_eq!(found, Vec::<String>::new());
    // The searches above read what they should: the key file does hold its key.
    assert!(holds(
        &std::fs::read(secrets_path(&sandbox)).unwrap(),
        FILE_KEY
    ));
}

/// A command run through the bash tool does not see the API keys the `cairn` process was
/// given (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`): the tool removes them from its child's
/// environment.
#[tokio::test(flavor = "multi_thread")]
async fn the_bash_tool_does_not_hand_the_key_to_its_commands() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![
        MockResponse::sse(tool_call_stream(
            "call_env",
            "bash",
            &json!({"command": "env"}),
            1,
        )),
        MockResponse::sse(text_stream("That is the environment.")),
    ])
    .await;
    let head = openai(&server);
    let out = run(
        &sandbox,
        true,
        &args(&head, &["ask", "--yes", "show", "env"]),
    )
    .await;
    assert_ran("bash env", &out, 0);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body_json().unwrap()["messages"].clone();
    let result = messages[3]["content"].as_str().unwrap().to_string();
    // The command ran (its output is the environment) ...
    assert!(result.contains("PATH="), "{result}");
    // ... without the key.
    assert!(
        !result.contains(ENV_KEY),
        "the bash tool's command saw the key"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_set_by_processes_at_once_are_all_kept() {
    let sandbox = Sandbox::new();
    let providers: Vec<String> = (0..24).map(|i| format!("p{i}")).collect();
    let settings: String = providers
        .iter()
        .map(|p| format!("[providers.{p}]\nkind = \"openai\"\n"))
        .collect();
    sandbox.write_settings(&settings);
    // Rounds of processes setting every key at once; each round must find all of its own.
    for round in 0..4 {
        let keys: Vec<String> = providers
            .iter()
            .map(|p| format!("sk-{p}-{round}"))
            .collect();
        let runs = providers
            .iter()
            .zip(&keys)
            .map(|(p, key)| key_set(&sandbox, p, key));
        for out in futures::future::join_all(runs).await {
            assert_ran("cairn key set", &out, 0);
        }
        let text = std::fs::read_to_string(secrets_path(&sandbox)).unwrap();
        for (p, key) in providers.iter().zip(&keys) {
            assert!(
                text.contains(&format!("{p} = \"{key}\"")),
                "round {round}, {p}: {text}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_file_that_cannot_be_read_is_told_by_line_never_by_its_text() {
    let sandbox = Sandbox::new();
    sandbox.write_settings(
        "[providers.vault]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9\"\n",
    );
    let bad = "sk-proj-BADLINE-9f8e7d6c5b4a39281706";
    let path = secrets_path(&sandbox);
    // The closing quote is missing: TOML's own message would quote the whole line.
    std::fs::write(
        &path,
        format!("[keys]\nother = \"sk-ok\"\nvault = \"{bad}\n"),
    )
    .unwrap();
    for command in [
        &["--provider", "vault", "ask", "hello"][..],
        &["key", "delete", "vault"][..],
        &["doctor"][..],
    ] {
        let out = run(&sandbox, false, command).await;
        let printed = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
        let printed = String::from_utf8_lossy(&printed);
        assert_ne!(out.status.code(), Some(0), "{command:?}: {printed}");
        assert!(!printed.contains(bad), "{command:?}: {printed}");
        assert!(!printed.contains("sk-proj"), "{command:?}: {printed}");
        assert!(
            printed.contains(&format!("{}: line 3 cannot be read", path.display())),
            "{command:?}: {printed}"
        );
    }
}
