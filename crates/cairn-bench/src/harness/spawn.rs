//! The cost of starting a subagent: from the parent model's `agent_spawn` answer to the
//! subagent's first model request (definition read, session made, child agent built,
//! its gather), beside an ordinary step of the same run: from a `noop` call to the
//! parent's next request.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::ensure;
use cairn_core::session::SessionStore;
use cairn_core::tools::handlers;
use cairn_core::{Agent, AgentConfig, AgentParts};
use cairn_llm::{ChatRequest, ScriptedProvider, ScriptedTurn};
use cairn_memory::Workspace;
use cairn_protocol::{Message, Outcome};
use serde_json::json;

use super::overhead::{bench_tools, TOOL};
use crate::stats::Samples;

const ROLE: &str = "# Your role: the subagent `";
const DEFINITION: &str = "---\ndescription: Answers at once (benchmark)\n---\nAnswer ok.\n";

/// Spawn and plain-step times.
pub struct SpawnTimes {
    pub spawns: u32,
    pub spawn: Samples,
    pub step: Samples,
}

#[derive(Default)]
struct Marks {
    /// When the parent's answer asking for spawn `i` was made.
    asked: HashMap<u32, Instant>,
    spawn: Vec<Duration>,
    /// When the parent's answer asking for a `noop` was made.
    noop: Option<Instant>,
    step: Vec<Duration>,
}

struct Script {
    spawns: u32,
    step: AtomicU32,
    marks: Mutex<Marks>,
}

impl Script {
    fn marks(&self) -> std::sync::MutexGuard<'_, Marks> {
        self.marks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn answer(&self, request: &ChatRequest) -> ScriptedTurn {
        let now = Instant::now();
        let system = request.system.as_deref().unwrap_or_default();
        if system.contains(ROLE) {
            let task = request.messages.iter().find_map(|m| match m {
                Message::User { .. } => m.text().strip_prefix("task ")?.parse::<u32>().ok(),
                _ => None,
            });
            let mut marks = self.marks();
            if let Some(asked) = task.and_then(|i| marks.asked.get(&i).copied()) {
                marks.spawn.push(now - asked);
            }
            return ScriptedTurn::text("ok");
        }
        let k = self.step.fetch_add(1, Ordering::SeqCst);
        let mut marks = self.marks();
        if let Some(asked) = marks.noop.take() {
            marks.step.push(now - asked);
        }
        if k > self.spawns * 2 {
            return ScriptedTurn::text("done");
        }
        if k == self.spawns * 2 {
            // Collect the last one, so the run's end does not stop it before it asks.
            return match last_task(request) {
                Some(task_id) => {
                    ScriptedTurn::tool_call("task_output", json!({"task_id": task_id}))
                }
                None => ScriptedTurn::text("done"),
            };
        }
        let i = k / 2;
        let now = Instant::now();
        if k.is_multiple_of(2) {
            marks.asked.insert(i, now);
            ScriptedTurn::tool_call(
                "agent_spawn",
                json!({"agent": "quick", "task": format!("task {i}")}),
            )
        } else {
            marks.noop = Some(now);
            ScriptedTurn::tool_call(TOOL, json!({ "i": i }))
        }
    }
}

/// The task id of the latest `agent_spawn` result in `request`.
fn last_task(request: &ChatRequest) -> Option<String> {
    request.messages.iter().rev().find_map(|m| match m {
        Message::ToolResult(r) if r.tool_name == "agent_spawn" => {
            let value: serde_json::Value = serde_json::from_str(&r.content).ok()?;
            value["task_id"].as_str().map(str::to_string)
        }
        _ => None,
    })
}

/// Runs a parent that spawns `spawns` subagents, one every other step, in a workspace
/// under `dir`.
pub async fn measure(dir: &Path, spawns: u32) -> anyhow::Result<SpawnTimes> {
    let workspace = Arc::new(Workspace::open_or_create(dir)?);
    std::fs::create_dir_all(workspace.root().join("subagents"))?;
    std::fs::write(workspace.root().join("subagents/quick.md"), DEFINITION)?;
    let script = Arc::new(Script {
        spawns,
        step: AtomicU32::new(0),
        marks: Mutex::new(Marks::default()),
    });
    let answers = script.clone();
    let provider = ScriptedProvider::with_responder(move |request| answers.answer(request));
    let mut tools = bench_tools();
    for tool in handlers::subagents::tools() {
        tools.register(tool);
    }
    let agent = Agent::new(AgentParts {
        workspace: workspace.clone(),
        provider: Arc::new(provider),
        session: SessionStore::new(workspace.sessions_dir()).create()?,
        config: AgentConfig {
            model: "bench".into(),
            max_steps: spawns * 2 + 2,
            ..AgentConfig::default()
        },
        tools,
        hooks: Vec::new(),
        memory: None,
        upkeep: Default::default(),
        mcp: None,
        models: None,
    });
    let report = agent.prompt("spawn").await?;
    ensure!(
        report.outcome == Outcome::Completed,
        "the spawn run ended with {:?}",
        report.outcome
    );
    let marks = std::mem::take(&mut *script.marks());
    ensure!(
        marks.spawn.len() == spawns as usize,
        "{} of {spawns} subagents asked the model",
        marks.spawn.len()
    );
    Ok(SpawnTimes {
        spawns,
        spawn: Samples::new(marks.spawn),
        step: Samples::new(marks.step),
    })
}
