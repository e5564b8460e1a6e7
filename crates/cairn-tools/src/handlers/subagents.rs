//! The subagent tools: `agent_send` (run one to completion and get its report),
//! `agent_spawn` (start one in the background), `task_output`, `task_cancel`, `task_list`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cairn_protocol::ToolSpec;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::subagents::SubagentLimits;
use crate::subagents::{self, definition, Report, Start, SubagentDef};
use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput, Workers};

/// The names of the subagent tools (left out of subagents at the depth cap).
pub const TOOL_NAMES: [&str; 5] = [
    "agent_send",
    "agent_spawn",
    "task_output",
    "task_cancel",
    "task_list",
];

/// How long `task_output` waits by default.
const OUTPUT_WAIT: Duration = Duration::from_secs(30);

/// The subagent tools. A definition that names a model starts only where the agent can
/// build that model.
pub fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(AgentSend),
        Arc::new(AgentSpawn),
        Arc::new(TaskOutput),
        Arc::new(TaskCancel),
        Arc::new(TaskList),
    ]
}

fn link(ctx: &ToolCtx) -> Result<&dyn Workers, ToolError> {
    ctx.agent
        .as_deref()
        .ok_or_else(|| ToolError::Failed("subagents can only be used inside a run".into()))
}

fn limits(link: &dyn Workers) -> SubagentLimits {
    link.limits()
}

/// The definition named `agent`, when this agent may start one.
async fn definition_of(
    ctx: &ToolCtx,
    link: &dyn Workers,
    agent: &str,
) -> Result<SubagentDef, ToolError> {
    let max_depth = limits(link).max_depth;
    if link.depth() >= max_depth {
        return Err(ToolError::Failed(format!(
            "subagents nest at most {max_depth} deep and this one is at that depth; do the \
             task yourself"
        )));
    }
    let root = ctx.workspace.root().to_path_buf();
    let found = tokio::task::spawn_blocking(move || definition::load(&root))
        .await
        .unwrap_or_default();
    if let Some(def) = found.get(agent) {
        return Ok(def.clone());
    }
    let file = format!("{}/{agent}.md:", definition::FOLDER);
    let broken = found.problems.iter().find(|p| p.starts_with(&file));
    let known = found.names();
    Err(ToolError::Failed(match broken {
        Some(problem) => format!("the subagent `{agent}` cannot be used: {problem}"),
        None if known.is_empty() => {
            format!("there is no subagent named `{agent}`; none are defined (subagents/<name>.md)")
        }
        None => format!(
            "there is no subagent named `{agent}`; the subagents are: {}",
            known.join(", ")
        ),
    }))
}

/// The wait for a run: asked for, else the definition's, else the default; at most the
/// limit.
fn timeout(
    asked: Option<u64>,
    def: &SubagentDef,
    fallback: Duration,
    limits: SubagentLimits,
) -> Duration {
    asked
        .or(def.timeout_s)
        .map(Duration::from_secs)
        .unwrap_or(fallback)
        .clamp(Duration::from_secs(1), limits.max_timeout)
}

fn report_output(report: &Report) -> ToolOutput {
    ToolOutput::ok(serde_json::to_string_pretty(report).unwrap_or_default())
}

fn agent_schema(extra: Value) -> Value {
    let mut properties = json!({
        "agent": {"type": "string", "description": "The subagent's name, as listed under Subagents."},
        "model": {"type": "string", "description": "Run it on this model (\"provider/model\", a configured provider) instead of its own or yours."}
    });
    if let (Some(map), Value::Object(extra)) = (properties.as_object_mut(), extra) {
        map.extend(extra);
    }
    properties
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SendArgs {
    agent: String,
    message: String,
    #[serde(default)]
    timeout_s: Option<u64>,
    #[serde(default)]
    model: Option<String>,
}

/// Runs a subagent to completion and returns its report.
pub struct AgentSend;

#[async_trait]
impl Tool for AgentSend {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "agent_send".into(),
            description: "Give a task to a subagent and wait for its report (JSON: agent, \
                task_id, status completed|failed|blocked|cancelled|timeout, answer, steps, \
                tools_used, session_id). The subagent starts fresh: put everything it needs \
                in the message. Several agent_send calls in one answer run at the same time."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": agent_schema(json!({
                    "message": {"type": "string", "description": "The task, complete and self-contained."},
                    "timeout_s": {"type": "integer", "description": "Seconds to wait (default 30, at most 600)."}
                })),
                "required": ["agent", "message"]
            }),
        }
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    /// It waits on a subagent, whose tools may write.
    fn may_write(&self) -> bool {
        true
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: SendArgs = parse_args(args)?;
        let begun = Begin {
            agent: &args.agent,
            task: args.message,
            timeout_s: args.timeout_s,
            model: args.model,
            background: false,
        };
        let mut started = begun.start(&ctx).await?;
        let report = started
            .done
            .wait_for(Option::is_some)
            .await
            .map(|r| r.clone())
            .ok()
            .flatten()
            .ok_or_else(|| ToolError::Failed("the subagent ended without a report".into()))?;
        Ok(report_output(&report))
    }
}

/// A subagent to start for a call.
struct Begin<'a> {
    agent: &'a str,
    task: String,
    timeout_s: Option<u64>,
    model: Option<String>,
    /// Started by `agent_spawn`: waited for by default up to the longest wait, and
    /// stopped at the end of the run unless collected.
    background: bool,
}

impl Begin<'_> {
    /// Starts it and records it in the agent's task table.
    async fn start(self, ctx: &ToolCtx) -> Result<subagents::Started, ToolError> {
        let link = link(ctx)?;
        let def = definition_of(ctx, link, self.agent).await?;
        let limits = limits(link);
        let fallback = match self.background {
            true => limits.max_timeout,
            false => limits.timeout,
        };
        let cancel = ctx.cancel.child_token();
        let started = link
            .start(Start {
                call_id: &ctx.call_id,
                def: &def,
                model: self.model.filter(|m| !m.trim().is_empty()),
                task: self.task,
                timeout: timeout(self.timeout_s, &def, fallback, limits),
                cancel: cancel.clone(),
                changes: ctx.changes.clone(),
            })
            .await?;
        let collected = !self.background;
        link.tasks().insert(
            &started.task_id,
            &def.name,
            cancel,
            started.done.clone(),
            collected,
        );
        Ok(started)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpawnArgs {
    agent: String,
    task: String,
    #[serde(default)]
    model: Option<String>,
}

/// Starts a subagent in the background.
pub struct AgentSpawn;

#[async_trait]
impl Tool for AgentSpawn {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "agent_spawn".into(),
            description: "Start a subagent on a task in the background and get its task_id at \
                once (JSON {\"task_id\": ...}). Collect its report with task_output before you \
                finish: a run that ends stops the subagents it did not collect."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": agent_schema(json!({
                    "task": {"type": "string", "description": "The task, complete and self-contained."}
                })),
                "required": ["agent", "task"]
            }),
        }
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: SpawnArgs = parse_args(args)?;
        let begun = Begin {
            agent: &args.agent,
            task: args.task,
            timeout_s: None,
            model: args.model,
            background: true,
        };
        let started = begun.start(&ctx).await?;
        Ok(ToolOutput::ok(
            json!({"task_id": started.task_id}).to_string(),
        ))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputArgs {
    task_id: String,
    #[serde(default)]
    block: Option<bool>,
    #[serde(default)]
    timeout_s: Option<u64>,
}

/// A background subagent's status, and its report once it is done.
pub struct TaskOutput;

#[async_trait]
impl Tool for TaskOutput {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "task_output".into(),
            description: "The status of a subagent started with agent_spawn, and its report \
                when it is done (JSON {\"status\", \"report\"}). Waits for it unless block is \
                false."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "task_id": {"type": "string"},
                    "block": {"type": "boolean", "description": "Wait for it to finish (default true)."},
                    "timeout_s": {"type": "integer", "description": "Longest wait in seconds (default 30, at most 600)."}
                },
                "required": ["task_id"]
            }),
        }
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    /// It waits on a subagent, whose tools may write.
    fn may_write(&self) -> bool {
        true
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: OutputArgs = parse_args(args)?;
        let link = link(&ctx)?;
        let max = limits(link).max_timeout;
        let wait = match args.block {
            Some(false) => Duration::ZERO,
            _ => args
                .timeout_s
                .map(Duration::from_secs)
                .unwrap_or(OUTPUT_WAIT)
                .min(max),
        };
        let output = tokio::select! {
            output = link.tasks().output(&args.task_id, wait) => output,
            () = ctx.cancel.cancelled() => return Err(ToolError::Aborted),
        };
        match output {
            None => Err(unknown_task(&args.task_id)),
            Some(None) => Ok(ToolOutput::ok(json!({"status": "running"}).to_string())),
            Some(Some(report)) => Ok(ToolOutput::ok(
                serde_json::to_string_pretty(&json!({"status": report.status, "report": report}))
                    .unwrap_or_default(),
            )),
        }
    }
}

fn unknown_task(task_id: &str) -> ToolError {
    ToolError::Failed(format!(
        "there is no task `{task_id}`; task_list shows the tasks of this conversation"
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CancelArgs {
    task_id: String,
}

/// Stops a background subagent.
pub struct TaskCancel;

#[async_trait]
impl Tool for TaskCancel {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "task_cancel".into(),
            description: "Stop a subagent started with agent_spawn; returns its report (status \
                cancelled, or how it ended if it had finished)."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {"task_id": {"type": "string"}},
                "required": ["task_id"]
            }),
        }
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: CancelArgs = parse_args(args)?;
        let link = link(&ctx)?;
        if !link.tasks().cancel(&args.task_id) {
            return Err(unknown_task(&args.task_id));
        }
        match link
            .tasks()
            .output(&args.task_id, subagents::STOP_GRACE)
            .await
        {
            Some(Some(report)) => Ok(report_output(&report)),
            _ => Ok(ToolOutput::ok(json!({"status": "cancelling"}).to_string())),
        }
    }
}

/// The subagents started in this conversation.
pub struct TaskList;

#[async_trait]
impl Tool for TaskList {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "task_list".into(),
            description: "The subagents started in this conversation: task_id, agent, status."
                .into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let _: serde_json::Map<String, Value> = parse_args(args)?;
        let link = link(&ctx)?;
        let tasks = link.tasks().list();
        Ok(ToolOutput::ok(
            serde_json::to_string_pretty(&json!({"tasks": tasks})).unwrap_or_default(),
        ))
    }
}
