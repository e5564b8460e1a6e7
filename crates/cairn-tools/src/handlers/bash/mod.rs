//! `bash`: run a shell command in the workspace, inside the OS sandbox (see
//! `cairn_process`), with a timeout, a scrubbed environment, and nothing it started left
//! running after it. The model sees a bounded transcript; a longer output is saved whole
//! (see `spill`).

pub mod policy;
mod settings;
mod spill;

pub use cairn_process::EnvScrub;
pub use policy::CommandRules;
pub use settings::BashSettings;

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use async_trait::async_trait;
use cairn_process::{supervise, End, Group, Launch, Reach, Sandbox, SandboxStatus, Sink};
use cairn_protocol::ToolSpec;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::process::Child;

use crate::output::{last_chars, HeadTail};
use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};
use spill::Spill;

const DEFAULT_TIMEOUT_S: f64 = 120.0;
const MAX_TIMEOUT_S: f64 = 600.0;
/// The transcript the model sees is cut in the middle beyond this many characters (the
/// whole output is then saved to a file it can read).
const MAX_OUTPUT_CHARS: usize = 30_000;
/// How often progress is reported while the command runs.
const UPDATE_EVERY: Duration = Duration::from_secs(1);
/// How much of the newest output a progress report holds.
const UPDATE_CHARS: usize = 1_000;

/// Arguments of `bash`.
#[derive(Debug, Clone, Deserialize)]
pub struct BashArgs {
    pub command: String,
    /// Seconds before the command is killed (default 120, at most 600).
    #[serde(default)]
    pub timeout_s: Option<f64>,
}

/// How commands are held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxChoice {
    /// `[tools.bash] sandbox` (default true).
    pub on: bool,
    /// `[tools.bash] network` (default false).
    pub network: bool,
    /// Paths commands never see besides the user's keys: Cairn's config folder and key file.
    pub hidden: Vec<PathBuf>,
    /// `[tools.bash] hide`, `read_only` and `writable`.
    pub reach: Reach,
    /// `[approvals] ask_paths`: what asks through the file tools is read-only inside too.
    pub ask_paths: Vec<String>,
    /// `[approvals] ask_executables`: files with an execute bit are read-only inside.
    pub executables: bool,
}

impl Default for SandboxChoice {
    fn default() -> Self {
        Self {
            on: true,
            network: false,
            hidden: Vec::new(),
            reach: Reach::default(),
            ask_paths: Vec::new(),
            executables: true,
        }
    }
}

impl SandboxChoice {
    /// The sandbox of commands in `root` as chosen (whether it is on aside).
    /// A glob of `ask_paths` that does not parse leaves the others out too (the settings
    /// say so when they are read), never the executables.
    pub fn sandbox(&self, root: &std::path::Path) -> Sandbox {
        let plain = Sandbox::new(root, &self.hidden, self.network).with_reach(&self.reach);
        plain
            .clone()
            .protecting(&self.ask_paths, self.executables)
            .or_else(|_| plain.clone().protecting(&[], self.executables))
            .unwrap_or(plain)
    }
}

/// Runs `bash -c` in the workspace root.
#[derive(Debug, Clone, Default)]
pub struct Bash {
    env: EnvScrub,
    sandbox: SandboxChoice,
    /// Nobody approves calls (`--yes`): a command the sandbox cannot hold is refused
    /// instead of asked about.
    unattended: bool,
}

impl Bash {
    pub fn new(env: EnvScrub, sandbox: SandboxChoice, unattended: bool) -> Self {
        Self {
            env,
            sandbox,
            unattended,
        }
    }

    /// Commands run with the user's rights, asked about one by one (tests of the process
    /// handling itself, which look at pids from outside).
    pub fn unconfined(env: EnvScrub) -> Self {
        let sandbox = SandboxChoice {
            on: false,
            ..SandboxChoice::default()
        };
        Self::new(env, sandbox, false)
    }

    /// How commands in `root` are held right now.
    pub fn status(&self, root: &std::path::Path) -> SandboxStatus {
        match self.sandbox.on {
            false => SandboxStatus::Off,
            true => SandboxStatus::of(self.sandbox.sandbox(root)),
        }
    }

    fn described(&self) -> String {
        let held =
            match (self.sandbox.on, self.sandbox.network) {
                (false, _) => String::new(),
                (true, network) => {
                    format!(
                " It runs in a sandbox: the workspace is writable except .cairn/, sessions/, \
                 AGENTS.md, skills/, subagents/ at its root, every dot entry (.git/ among \
                 them), {}and the paths whose writes ask first; the rest of the system is \
                 read-only and /tmp is private to the call{}.",
                if self.sandbox.executables { "executable files, " } else { "" },
                if network { "" } else { "; there is no network" }
            )
                }
            };
        format!(
            "Run a command with `bash -c` in the workspace root. There is no input (stdin is \
             empty) and no terminal, so interactive programs will not work. Returns stdout and \
             stderr interleaved, then `[exit code N]`. Long output keeps its start and end \
             (30,000 characters). Everything the command started is stopped when it returns \
             (background jobs included, also under nohup or setsid) or when the timeout \
             passes, so do not start servers or watchers meant to keep running. Its \
             environment holds only what programs need (PATH, HOME, the language, the \
             toolchains' folders): no keys or tokens.{held}"
        )
    }
}

#[async_trait]
impl Tool for Bash {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "bash".into(),
            description: self.described(),
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

    fn must_ask(&self) -> Option<String> {
        if self.unattended {
            // Nobody would answer: the call refuses itself when the sandbox cannot start.
            return None;
        }
        match self.sandbox.on {
            false => SandboxStatus::Off.why_ask(),
            true => cairn_process::probe()
                .err()
                .and_then(|why| SandboxStatus::Unavailable(why).why_ask()),
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
        let status = self.status(ctx.workspace.root());
        if let (true, SandboxStatus::Unavailable(why)) = (self.unattended, &status) {
            return Err(ToolError::Failed(format!(
                "not run: the shell sandbox cannot start ({why}), and --yes never runs a \
                 command outside it; without --yes each command can be approved by the user"
            )));
        }
        let Started {
            mut child,
            group,
            unbound,
            before,
        } = spawn(&args.command, &ctx, &self.env, &status)?;
        let mut transcript = Transcript {
            kept: HeadTail::new(MAX_OUTPUT_CHARS),
            whole: Spill::new(
                ctx.workspace.root().to_path_buf(),
                crate::results::output_file(&ctx.call_id),
                MAX_OUTPUT_CHARS,
                spill::MAX_SAVED_BYTES,
            ),
            fresh: Vec::new(),
            ctx: &ctx,
        };
        let limit = Duration::from_secs_f64(timeout_s);
        let end = supervise(
            &mut child,
            &group,
            limit,
            UPDATE_EVERY,
            &ctx.cancel,
            &mut transcript,
        )
        .await;
        // Undone whatever the call's end: a killed command's `.git` is as live as another's.
        let undone: Vec<String> = match (&status, before) {
            (SandboxStatus::Active(sandbox), Some(before)) => sandbox
                .undo_new_tool_entries(&before)
                .iter()
                .map(|q| q.line())
                .collect(),
            _ => Vec::new(),
        };
        let saved = transcript.whole.finish(transcript.kept.is_cut());
        let mut text = if transcript.kept.is_empty() {
            "(no output)".into()
        } else {
            transcript.kept.finish()
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&saved.unwrap_or_default());
        text.push_str(&note);
        if let Some(unbound) = unbound {
            text.push_str(&unbound);
            text.push('\n');
        }
        for line in undone {
            text.push_str(&line);
            text.push('\n');
        }
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

/// A command started, and what its sandbox said of the call.
struct Started {
    child: Child,
    group: Group,
    /// What the sandbox left unbound in this call, as a line for the output.
    unbound: Option<String>,
    /// The workspace as the call started, when it is sandboxed.
    before: Option<cairn_process::Before>,
}

/// Starts `bash -c command` in the workspace root through the one launcher: its own
/// process group, the scrubbed environment, git's protected settings, and the sandbox when
/// it is active.
fn spawn(
    command: &str,
    ctx: &ToolCtx,
    env: &EnvScrub,
    status: &SandboxStatus,
) -> Result<Started, ToolError> {
    // Commands get only what programs need of the environment (and `pass_env`).
    let launch = Launch::new("bash", ctx.workspace.root(), &env.for_commands())
        .args(["-c", command])
        .git_protected()
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0");
    let launch = match status {
        SandboxStatus::Active(sandbox) => launch.sandboxed(sandbox),
        SandboxStatus::Off | SandboxStatus::Unavailable(_) => launch,
    };
    let mut prepared = launch.prepare();
    let unbound = prepared.note.clone();
    let before = prepared.before.take();
    let (child, group) = prepared
        .spawn()
        .map_err(|e| ToolError::Failed(format!("could not start bash: {e}")))?;
    Ok(Started {
        child,
        group,
        unbound,
        before,
    })
}

/// The transcript kept for the model (head and tail within its cap), the whole output when
/// it is longer, and the newest output for progress reports.
struct Transcript<'a> {
    kept: HeadTail,
    whole: Spill,
    fresh: Vec<u8>,
    ctx: &'a ToolCtx,
}

impl Sink for Transcript<'_> {
    fn output(&mut self, bytes: &[u8]) {
        self.kept.push(bytes);
        self.whole.push(bytes);
        self.fresh.extend_from_slice(bytes);
        let excess = self.fresh.len().saturating_sub(UPDATE_CHARS * 4);
        self.fresh.drain(..excess);
    }

    /// Sends the newest output as a progress update.
    fn tick(&mut self) {
        if self.fresh.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.fresh);
        self.ctx.update(last_chars(text.trim_end(), UPDATE_CHARS));
        self.fresh.clear();
    }
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
mod tests;
