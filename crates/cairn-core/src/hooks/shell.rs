//! The user's own hooks: shell commands from `[hooks]` in config.toml, given the event as
//! JSON on stdin in the shape popular agent CLIs use (`hook_event_name`, `tool_name`,
//! `tool_input`, `tool_response`, `prompt`), so existing hook scripts need little change.
//!
//! - `pre_tool`: exit 2 denies the call, stderr being the reason the model is given; JSON
//!   on stdout may deny it (`{"decision": "block", "reason": …}`) or replace its arguments
//!   (`{"updatedInput": {…}}`, also under `hookSpecificOutput`). A hook never approves a
//!   call: the gate (protected paths, approvals) judges the call as it ends up.
//! - `post_tool`: stdout (or its `additionalContext`) and, on exit 2, stderr are added to
//!   the result the model sees.
//! - `user_prompt`, `session_start`: stdout (or `additionalContext`) joins the model's
//!   context for the run; `user_prompt` exiting 2 blocks the run with stderr as the reason.
//! - `stop`: run when the model has answered and the run would end (`stop_hook_active`
//!   says whether a stop hook already kept it going); exit 2, or `{"decision": "block",
//!   "reason": …}` on stdout, keeps the run going once, the reason told to the model. A run
//!   that ends otherwise (failed, aborted, blocked) tells them how it ended.
//!
//! A hook that fails, exits otherwise or runs past its timeout is reported and the run
//! goes on; its process group is killed. Commands get the environment bash commands get,
//! start in a neutral folder (not the workspace) and find the workspace in `CAIRN_WORKSPACE`.
//! With `[hooks] sandbox = true` they run inside the shell's sandbox (no network unless
//! `[hooks] network = true`); one that cannot start there is not run and is reported.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use cairn_process::{capture, EnvScrub, Launch, SandboxStatus};
use cairn_tools::handlers::bash::SandboxChoice;
use regex::Regex;
use serde_json::{json, Value};

use super::settings::{HookCommand, HookSettings};
use super::{Hook, HookCtx, HookDecision, HookError, HookKind, HookPoint};

/// Output kept from a hook, per stream.
const MAX_OUTPUT: usize = 64 << 10;
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_TIMEOUT: Duration = Duration::from_secs(600);

/// One command and which tools it is for.
struct Command_ {
    matcher: Option<Regex>,
    command: String,
    timeout: Duration,
}

impl Command_ {
    fn of(hook: &HookCommand) -> Result<Self, String> {
        let matcher = match hook.matcher.as_deref().map(str::trim) {
            None | Some("") | Some("*") => None,
            Some(pattern) => Some(
                Regex::new(&format!("^(?:{pattern})$"))
                    .map_err(|e| format!("the matcher `{pattern}` is not a valid pattern: {e}"))?,
            ),
        };
        Ok(Self {
            matcher,
            command: hook.command.clone(),
            timeout: hook
                .timeout_s
                .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
                .clamp(Duration::from_secs(1), MAX_TIMEOUT),
        })
    }

    fn matches(&self, tool: &str) -> bool {
        self.matcher.as_ref().is_none_or(|m| m.is_match(tool))
    }
}

/// What a hook command did.
struct Ran {
    /// `None`: killed by a signal.
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// The `[hooks]` commands as one hook of the agent.
pub struct ShellHooks {
    pre_tool: Vec<Command_>,
    post_tool: Vec<Command_>,
    user_prompt: Vec<Command_>,
    stop: Vec<Command_>,
    session_start: Vec<Command_>,
    env: EnvScrub,
    /// The sandbox every hook runs in, when `[hooks] sandbox = true`.
    sandbox: Option<SandboxChoice>,
    started: AtomicBool,
}

impl ShellHooks {
    /// The hooks of `settings`; an invalid matcher is an error naming it.
    pub fn new(settings: &HookSettings, env: EnvScrub) -> Result<Self, String> {
        let all =
            |list: &[HookCommand]| list.iter().map(Command_::of).collect::<Result<Vec<_>, _>>();
        Ok(Self {
            pre_tool: all(&settings.pre_tool)?,
            post_tool: all(&settings.post_tool)?,
            user_prompt: all(&settings.user_prompt)?,
            stop: all(&settings.stop)?,
            session_start: all(&settings.session_start)?,
            env,
            sandbox: (settings.sandbox == Some(true)).then(|| SandboxChoice {
                network: settings.network == Some(true),
                ..SandboxChoice::default()
            }),
            started: AtomicBool::new(false),
        })
    }

    /// Hides what `choice` hides (Cairn's config folder, the user's own paths) from hooks
    /// that run in the sandbox; the network stays as `[hooks] network` says.
    pub fn hiding(mut self, choice: &SandboxChoice) -> Self {
        if let Some(sandbox) = &mut self.sandbox {
            *sandbox = SandboxChoice {
                on: true,
                network: sandbox.network,
                ..choice.clone()
            };
        }
        self
    }

    /// Runs `hook` with `event` on stdin, through the one launcher: in a neutral
    /// working directory (a workspace someone else prepared could plant code that a
    /// command run there picks up), the workspace named in `CAIRN_WORKSPACE`.
    async fn run(&self, ctx: &HookCtx, hook: &Command_, event: &Value) -> Result<Ran, HookError> {
        let root = ctx.workspace.root();
        let mut launch = Launch::new("sh", &cairn_process::neutral_dir(), &self.env)
            .args(["-c", &hook.command])
            .env("CAIRN_WORKSPACE", root)
            .stdin_piped();
        let mut watched = None;
        if let Some(choice) = &self.sandbox {
            match SandboxStatus::of(choice.sandbox(root)) {
                SandboxStatus::Active(sandbox) => {
                    launch = launch.sandboxed(&sandbox);
                    watched = Some(sandbox);
                }
                SandboxStatus::Unavailable(why) => {
                    return Err(HookError(format!(
                        "`{}` was not run: `[hooks] sandbox = true` and the sandbox cannot \
                         start ({why})",
                        hook.command
                    )))
                }
                SandboxStatus::Off => {}
            }
        }
        let input = event.to_string();
        let prepared = launch.prepare();
        let before = prepared.before.clone();
        let captured = capture(prepared, input.as_bytes(), MAX_OUTPUT, hook.timeout).await;
        // A sandboxed hook leaves no new git repository or tool's settings behind, as a
        // command does not.
        if let (Some(sandbox), Some(before)) = (watched, before) {
            for moved in sandbox.undo_new_tool_entries(&before) {
                tracing::warn!(hook = %hook.command, "{}", moved.line());
            }
        }
        match captured {
            Ok(ran) => Ok(Ran {
                code: ran.code,
                stdout: ran.stdout,
                stderr: ran.stderr,
            }),
            Err(e) => Err(HookError(format!("`{}` {e}", hook.command))),
        }
    }

    /// Runs the hooks of `list` matching `tool` (every one for events without a tool),
    /// reporting failures through `failed` and going on.
    async fn each<'a>(
        &self,
        ctx: &HookCtx,
        list: &'a [Command_],
        tool: Option<&str>,
        event: &Value,
        failed: &mut Vec<String>,
    ) -> Vec<(&'a Command_, Ran)> {
        let mut ran = Vec::new();
        for hook in list.iter().filter(|h| tool.is_none_or(|t| h.matches(t))) {
            match self.run(ctx, hook, event).await {
                Ok(result) => ran.push((hook, result)),
                Err(e) => failed.push(e.0),
            }
        }
        ran
    }

    async fn pre_tool(
        &self,
        ctx: &HookCtx,
        call: &mut cairn_protocol::ToolCall,
    ) -> Result<HookDecision, HookError> {
        let mut failed = Vec::new();
        for hook in self.pre_tool.iter().filter(|h| h.matches(&call.name)) {
            let event = base(ctx, "PreToolUse")
                .with("tool_name", json!(call.name))
                .with("tool_input", call.arguments.clone());
            let ran = match self.run(ctx, hook, &event).await {
                Ok(ran) => ran,
                Err(e) => {
                    failed.push(e.0);
                    continue;
                }
            };
            match ran.code {
                Some(2) => {
                    return Ok(HookDecision::Deny {
                        reason: reason_of(&ran.stderr, &hook.command),
                    })
                }
                Some(0) => {}
                _ => {
                    failed.push(exit_failure(hook, &ran));
                    continue;
                }
            }
            let Some(answer) = json_of(&ran.stdout) else {
                continue;
            };
            let decision = answer["decision"]
                .as_str()
                .or(answer["hookSpecificOutput"]["permissionDecision"].as_str());
            if matches!(decision, Some("block" | "deny")) {
                let reason = answer["reason"]
                    .as_str()
                    .or(answer["hookSpecificOutput"]["permissionDecisionReason"].as_str())
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("the hook `{}` refused it", hook.command));
                return Ok(HookDecision::Deny { reason });
            }
            let updated = answer
                .get("updatedInput")
                .or(answer["hookSpecificOutput"].get("updatedInput"));
            if let Some(input @ Value::Object(_)) = updated {
                call.arguments = input.clone();
            }
        }
        report(failed)
    }

    async fn post_tool(
        &self,
        ctx: &HookCtx,
        call: &cairn_protocol::ToolCall,
        output: &mut crate::tools::ToolOutput,
    ) -> Result<HookDecision, HookError> {
        let event = base(ctx, "PostToolUse")
            .with("tool_name", json!(call.name))
            .with("tool_input", call.arguments.clone())
            .with(
                "tool_response",
                json!({"content": output.content, "is_error": output.is_error}),
            );
        let mut failed = Vec::new();
        for (hook, ran) in self
            .each(ctx, &self.post_tool, Some(&call.name), &event, &mut failed)
            .await
        {
            let added = match ran.code {
                Some(0) => context_of(&ran.stdout),
                Some(2) => Some(ran.stderr.trim().to_string()).filter(|s| !s.is_empty()),
                _ => {
                    failed.push(exit_failure(hook, &ran));
                    None
                }
            };
            if let Some(text) = added {
                output
                    .content
                    .push_str(&format!("\n\n[Added by the user's hook]\n{text}"));
            }
        }
        report(failed)
    }

    async fn pre_call(
        &self,
        ctx: &HookCtx,
        prompt: &str,
        context: &mut Vec<String>,
    ) -> Result<HookDecision, HookError> {
        let mut failed = Vec::new();
        if !self.started.swap(true, Ordering::SeqCst) {
            let event = base(ctx, "SessionStart").with("source", json!("startup"));
            for (hook, ran) in self
                .each(ctx, &self.session_start, None, &event, &mut failed)
                .await
            {
                match ran.code {
                    Some(0) => context.extend(context_of(&ran.stdout)),
                    _ => failed.push(exit_failure(hook, &ran)),
                }
            }
        }
        let event = base(ctx, "UserPromptSubmit").with("prompt", json!(prompt));
        for (hook, ran) in self
            .each(ctx, &self.user_prompt, None, &event, &mut failed)
            .await
        {
            match ran.code {
                Some(0) => context.extend(context_of(&ran.stdout)),
                Some(2) => {
                    return Ok(HookDecision::Block {
                        reason: reason_of(&ran.stderr, &hook.command),
                    })
                }
                _ => failed.push(exit_failure(hook, &ran)),
            }
        }
        report(failed)
    }

    /// The model would stop: a hook may ask it to go on.
    async fn stop(
        &self,
        ctx: &HookCtx,
        answer: &str,
        active: bool,
    ) -> Result<HookDecision, HookError> {
        let event = base(ctx, "Stop")
            .with("stop_hook_active", json!(active))
            .with("last_assistant_message", json!(answer));
        let mut failed = Vec::new();
        for (hook, ran) in self.each(ctx, &self.stop, None, &event, &mut failed).await {
            let blocked = match ran.code {
                Some(2) => Some(reason_of(&ran.stderr, &hook.command)),
                Some(0) => json_of(&ran.stdout)
                    .filter(|answer| answer["decision"] == "block")
                    .map(|answer| {
                        answer["reason"]
                            .as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| format!("the hook `{}` asks to go on", hook.command))
                    }),
                _ => {
                    failed.push(exit_failure(hook, &ran));
                    None
                }
            };
            if let Some(reason) = blocked {
                return Ok(HookDecision::Block { reason });
            }
        }
        report(failed)
    }

    /// The run ended otherwise than by the model stopping: the hooks are told how.
    async fn ended(
        &self,
        ctx: &HookCtx,
        outcome: &cairn_protocol::Outcome,
    ) -> Result<HookDecision, HookError> {
        if *outcome == cairn_protocol::Outcome::Completed {
            return Ok(HookDecision::Continue);
        }
        let event = base(ctx, "Stop")
            .with("outcome", json!(outcome))
            .with("stop_hook_active", json!(false));
        let mut failed = Vec::new();
        for (hook, ran) in self.each(ctx, &self.stop, None, &event, &mut failed).await {
            if !matches!(ran.code, Some(0 | 2)) {
                failed.push(exit_failure(hook, &ran));
            }
        }
        report(failed)
    }
}

#[async_trait]
impl Hook for ShellHooks {
    fn name(&self) -> &str {
        "user-hooks"
    }

    /// After tracing, before the approval policy: the policy judges the call a hook may
    /// have rewritten.
    fn priority(&self) -> i32 {
        50
    }

    fn subscribes(&self, kind: HookKind) -> bool {
        match kind {
            HookKind::PreTool => !self.pre_tool.is_empty(),
            HookKind::PostTool => !self.post_tool.is_empty(),
            HookKind::PreCall => !self.user_prompt.is_empty() || !self.session_start.is_empty(),
            HookKind::Stop | HookKind::PostCall => !self.stop.is_empty(),
            _ => false,
        }
    }

    async fn on(
        &self,
        ctx: &HookCtx,
        point: &mut HookPoint<'_>,
    ) -> Result<HookDecision, HookError> {
        match point {
            HookPoint::PreTool { call } => self.pre_tool(ctx, call).await,
            HookPoint::PostTool { call, output } => self.post_tool(ctx, call, output).await,
            HookPoint::PreCall { prompt, context } => self.pre_call(ctx, prompt, context).await,
            HookPoint::Stop { answer, active } => self.stop(ctx, answer, *active).await,
            HookPoint::PostCall { outcome, .. } => self.ended(ctx, outcome).await,
            _ => Ok(HookDecision::Continue),
        }
    }
}

/// The fields every event carries.
fn base(ctx: &HookCtx, event: &str) -> Value {
    json!({
        "hook_event_name": event,
        "session_id": ctx.session_id,
        "cwd": ctx.workspace.root(),
    })
}

trait With {
    fn with(self, key: &str, value: Value) -> Value;
}

impl With for Value {
    fn with(mut self, key: &str, value: Value) -> Value {
        if let Some(map) = self.as_object_mut() {
            map.insert(key.to_string(), value);
        }
        self
    }
}

/// The JSON object a hook printed, if it printed one.
fn json_of(stdout: &str) -> Option<Value> {
    let text = stdout.trim();
    text.starts_with('{')
        .then(|| serde_json::from_str::<Value>(text).ok())
        .flatten()
        .filter(Value::is_object)
}

/// What a hook adds to the model's context: its JSON's `additionalContext`, else its
/// plain output.
fn context_of(stdout: &str) -> Option<String> {
    let text = match json_of(stdout) {
        Some(answer) => answer["additionalContext"]
            .as_str()
            .or(answer["hookSpecificOutput"]["additionalContext"].as_str())
            .unwrap_or_default()
            .to_string(),
        None => stdout.trim().to_string(),
    };
    (!text.trim().is_empty()).then_some(text)
}

fn reason_of(stderr: &str, command: &str) -> String {
    match stderr.trim() {
        "" => format!("the hook `{command}` refused it"),
        text => text.to_string(),
    }
}

fn exit_failure(hook: &Command_, ran: &Ran) -> String {
    let how = match ran.code {
        Some(code) => format!("exited with status {code}"),
        None => "was killed by a signal".to_string(),
    };
    let said = ran.stderr.trim();
    let said = if said.is_empty() {
        String::new()
    } else {
        format!(": {}", said.lines().next().unwrap_or_default())
    };
    format!("`{}` {how}{said}", hook.command)
}

fn report(failed: Vec<String>) -> Result<HookDecision, HookError> {
    match failed.is_empty() {
        true => Ok(HookDecision::Continue),
        false => Err(HookError(failed.join("; "))),
    }
}
