//! `bash`: run a shell command in the workspace, with a timeout and a bounded transcript,
//! a scrubbed environment (`env.rs`), and nothing it started left running after it.

mod env;
pub mod policy;
mod reap;

pub use env::{BashSettings, EnvScrub};
pub use policy::CommandRules;

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use async_trait::async_trait;
use cairn_protocol::ToolSpec;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{interval_at, sleep, Instant, MissedTickBehavior};

use crate::tools::output::{last_chars, HeadTail};
use crate::tools::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

const DEFAULT_TIMEOUT_S: f64 = 120.0;
const MAX_TIMEOUT_S: f64 = 600.0;
/// The transcript the model sees is cut in the middle beyond this many characters.
const MAX_OUTPUT_CHARS: usize = 30_000;
/// How often progress is reported while the command runs.
const UPDATE_EVERY: Duration = Duration::from_secs(1);
/// How much of the newest output a progress report holds.
const UPDATE_CHARS: usize = 1_000;
/// How long output is still collected after the shell ends or is killed (background
/// processes may keep the pipes open).
const DRAIN_GRACE: Duration = Duration::from_millis(300);

/// Arguments of `bash`.
#[derive(Debug, Clone, Deserialize)]
pub struct BashArgs {
    pub command: String,
    /// Seconds before the command is killed (default 120, at most 600).
    #[serde(default)]
    pub timeout_s: Option<f64>,
}

/// Runs `bash -c` in the workspace root.
#[derive(Debug, Clone, Default)]
pub struct Bash {
    env: EnvScrub,
}

impl Bash {
    pub fn new(env: EnvScrub) -> Self {
        Self { env }
    }
}

#[async_trait]
impl Tool for Bash {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "bash".into(),
            description: "Run a command with `bash -c` in the workspace root. There is no input \
                (stdin is empty) and no terminal, so interactive programs will not work. Returns \
                stdout and stderr interleaved, then `[exit code N]`. Long output keeps its start \
                and end (30,000 characters). Everything the command started is stopped when it \
                returns (background jobs included, also under nohup or setsid) or when the timeout passes, so do not start \
                servers or watchers meant to keep running. API keys are not in its environment."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {
                        "type": "string",
                        "description": "The shell command line, e.g. `ls -la notes && wc -l notes/*.md`."
                    },
                    "timeout_s": {
                        "type": "number",
                        "minimum": 1,
                        "maximum": MAX_TIMEOUT_S,
                        "description": "Seconds before the command is killed (default 120, maximum 600)."
                    }
                },
                "required": ["command"]
            }),
        }
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: BashArgs = parse_args(args)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::InvalidArguments("`command` is empty".into()));
        }
        let (timeout_s, note) = timeout(args.timeout_s)?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Aborted);
        }
        // Marks every process of this call, wherever it goes (see `reap`).
        let marker = uuid::Uuid::now_v7().to_string();
        let mut child = spawn(&args.command, &ctx, &self.env, &marker)?;
        let (end, transcript) = supervise(&mut child, timeout_s, &ctx, &marker).await;
        let mut text = if transcript.is_empty() {
            "(no output)".into()
        } else {
            transcript.finish()
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&note);
        match end {
            End::Cancelled => Err(ToolError::Aborted),
            End::TimedOut => Ok(ToolOutput::error(
                text + &format!("[killed after {timeout_s} s timeout]"),
            )),
            End::Exited(status) => Ok(exit_output(text, status)),
            End::Lost(e) => Err(ToolError::Failed(format!("lost track of the command: {e}"))),
        }
    }
}

/// The timeout to use and, when the asked one was too long, a note saying so.
fn timeout(asked: Option<f64>) -> Result<(f64, String), ToolError> {
    let Some(secs) = asked else {
        return Ok((DEFAULT_TIMEOUT_S, String::new()));
    };
    if !secs.is_finite() || secs <= 0.0 {
        return Err(ToolError::InvalidArguments(format!(
            "`timeout_s` must be a positive number of seconds (at most {MAX_TIMEOUT_S}), got {secs}"
        )));
    }
    if secs > MAX_TIMEOUT_S {
        let note = format!("[timeout_s {secs} is above the maximum; used {MAX_TIMEOUT_S} s]\n");
        return Ok((MAX_TIMEOUT_S, note));
    }
    Ok((secs, String::new()))
}

/// Starts `bash -c command` in the workspace root, in a process group of its own, with the
/// scrubbed environment.
fn spawn(command: &str, ctx: &ToolCtx, env: &EnvScrub, marker: &str) -> Result<Child, ToolError> {
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(command)
        .current_dir(ctx.workspace.root())
        .env_clear()
        .envs(env.apply(std::env::vars_os()))
        .env(reap::MARKER_VAR, marker)
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    cmd.spawn()
        .map_err(|e| ToolError::Failed(format!("could not start bash: {e}")))
}

/// How the command ended.
#[derive(Debug)]
enum End {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
    /// Waiting for the shell failed (should not happen).
    Lost(String),
}

/// Collects the output until the shell exits, the timeout passes or the run is aborted; in
/// the last two cases the whole process group is killed.
async fn supervise(
    child: &mut Child,
    timeout_s: f64,
    ctx: &ToolCtx,
    marker: &str,
) -> (End, HeadTail) {
    let (tx, mut rx) = mpsc::channel(64);
    let pumps = [
        pump(child.stdout.take(), tx.clone()),
        pump(child.stderr.take(), tx),
    ];
    let mut transcript = HeadTail::new(MAX_OUTPUT_CHARS);
    let mut fresh = Vec::new();
    let deadline = sleep(Duration::from_secs_f64(timeout_s));
    tokio::pin!(deadline);
    let mut ticker = interval_at(Instant::now() + UPDATE_EVERY, UPDATE_EVERY);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let group = group_of(child);
    let end = loop {
        tokio::select! {
            _ = ctx.cancel.cancelled() => break End::Cancelled,
            _ = &mut deadline => break End::TimedOut,
            status = child.wait() => match status {
                Ok(status) => break End::Exited(status),
                Err(e) => break End::Lost(e.to_string()),
            },
            Some(chunk) = rx.recv() => {
                transcript.push(&chunk);
                fresh.extend_from_slice(&chunk);
                let excess = fresh.len().saturating_sub(UPDATE_CHARS * 4);
                fresh.drain(..excess);
            }
            _ = ticker.tick() => report_progress(ctx, &mut fresh),
        }
    };
    if !matches!(end, End::Exited(_)) {
        kill_group(child);
        let _ = child.wait().await;
    }
    // Background jobs the command left behind end with the call, also those that left
    // its process group.
    if let Some(group) = group {
        signal_group(group);
    }
    reap::kill_marked(marker);
    drain(&mut rx, &mut transcript).await;
    pumps.iter().for_each(JoinHandle::abort);
    (end, transcript)
}

/// Forwards chunks read from a pipe until it closes.
fn pump<R>(reader: Option<R>, tx: mpsc::Sender<Vec<u8>>) -> JoinHandle<()>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let Some(mut reader) = reader else { return };
        let mut buf = vec![0; 8 * 1024];
        while let Ok(n @ 1..) = reader.read(&mut buf).await {
            if tx.send(buf[..n].to_vec()).await.is_err() {
                return;
            }
        }
    })
}

/// Takes what is still in the pipes, waiting at most [`DRAIN_GRACE`].
async fn drain(rx: &mut mpsc::Receiver<Vec<u8>>, transcript: &mut HeadTail) {
    let grace = sleep(DRAIN_GRACE);
    tokio::pin!(grace);
    loop {
        tokio::select! {
            chunk = rx.recv() => match chunk {
                Some(chunk) => transcript.push(&chunk),
                None => return,
            },
            _ = &mut grace => return,
        }
    }
}

/// Sends the newest output as a progress update.
fn report_progress(ctx: &ToolCtx, fresh: &mut Vec<u8>) {
    if fresh.is_empty() {
        return;
    }
    let text = String::from_utf8_lossy(fresh);
    ctx.update(last_chars(text.trim_end(), UPDATE_CHARS));
    fresh.clear();
}

/// Kills the shell and everything it started (its process group).
#[cfg(unix)]
pub(crate) fn kill_group(child: &mut Child) {
    match group_of(child) {
        Some(pgid) => signal_group(pgid),
        None => {
            let _ = child.start_kill();
        }
    }
}

/// The process group the shell leads (its pid, see `process_group(0)`), taken while the
/// shell is alive: the id stays the group's as long as any member lives.
#[cfg(unix)]
fn group_of(child: &Child) -> Option<libc::pid_t> {
    child.id().and_then(|pid| libc::pid_t::try_from(pid).ok())
}

#[cfg(not(unix))]
fn group_of(_child: &Child) -> Option<i32> {
    None
}

#[cfg(not(unix))]
fn signal_group(_pgid: i32) {}

/// `killpg(pgid, SIGKILL)`. A syscall rather than spawning `kill`, so that it works even when
/// the command has exhausted the process table.
#[cfg(unix)]
#[allow(unsafe_code)]
fn signal_group(pgid: libc::pid_t) {
    // SAFETY: killpg only takes two integers and touches no memory of this process. `pgid` is
    // the pid of our own child, which leads its own group (`process_group(0)`), read before the
    // child was reaped; a process group's id is not reused while any member lives, and once
    // the group is empty the call fails with ESRCH (the pid is only handed out again after
    // the whole pid space wraps), so it cannot name an unrelated group.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

#[cfg(not(unix))]
pub(crate) fn kill_group(child: &mut Child) {
    let _ = child.start_kill();
}

/// The transcript with `[exit code N]`; an error output unless the command succeeded.
fn exit_output(mut text: String, status: ExitStatus) -> ToolOutput {
    match status.code() {
        Some(0) => ToolOutput::ok(text + "[exit code 0]"),
        Some(code) => ToolOutput::error(text + &format!("[exit code {code}]")),
        None => {
            text.push_str(&killed_by_signal(status));
            ToolOutput::error(text)
        }
    }
}

#[cfg(unix)]
fn killed_by_signal(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(signal) => format!("[killed by signal {signal}]"),
        None => "[ended without an exit code]".into(),
    }
}

#[cfg(not(unix))]
fn killed_by_signal(_status: ExitStatus) -> String {
    "[ended without an exit code]".into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::handlers::test_support::{ok, TestWs};
    use pretty_assertions::assert_eq;
    use std::time::Instant;

    async fn bash(ws: &TestWs, args: Value) -> Result<ToolOutput, ToolError> {
        ws.call(&Bash::default(), args).await
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
    async fn huge_output_keeps_head_and_tail() {
        let ws = TestWs::new();
        let cmd = "echo START; yes 0123456789 | head -c 5500000; echo END";
        let out = ok(bash(&ws, json!({"command": cmd})).await);
        assert!(out.starts_with("START\n0123456789\n"), "{}", &out[..40]);
        assert!(out.ends_with("0123456789\nEND\n[exit code 0]"));
        assert!(out.contains("characters cut from the middle ...]"));
        assert!(
            out.chars().count() < MAX_OUTPUT_CHARS + 200,
            "{}",
            out.len()
        );
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
        let tool = Bash::new(EnvScrub {
            also_remove: vec!["HOME".into()],
            pass: vec![],
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
}
