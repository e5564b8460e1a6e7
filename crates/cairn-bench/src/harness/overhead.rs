//! Harness overhead per step: an agent on a zero-latency scripted provider that calls a
//! do-nothing tool N times, timed beside the provider alone answering the same calls.

use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use cairn_core::session::{SessionStore, SessionTree};
use cairn_core::tools::{Tool, ToolCtx, ToolError, ToolOutput, ToolRegistry};
use cairn_core::{Agent, AgentConfig, AgentParts};
use cairn_llm::{ChatRequest, Provider, ScriptedProvider, ScriptedTurn};
use cairn_memory::Workspace;
use cairn_protocol::{Message, Outcome, ToolSpec};
use futures::StreamExt;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

const PROMPT: &str = "Call noop until told to stop.";
pub const TOOL: &str = "noop";

/// The in-bench tool: read-only, answers "ok".
struct NoopTool;

#[async_trait::async_trait]
impl Tool for NoopTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: TOOL.into(),
            description: "Does nothing and answers ok (benchmark tool).".into(),
            parameters: json!({"type": "object", "properties": {"i": {"type": "integer"}}}),
        }
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    async fn call(&self, _args: Value, _ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::ok("ok"))
    }
}

/// The tools of the benchmark agent: the built-ins (so the request carries realistic tool
/// specs) plus `noop`.
pub fn bench_tools() -> ToolRegistry {
    let mut tools = ToolRegistry::builtin();
    tools.register(Arc::new(NoopTool));
    tools
}

/// What the scripted model does: `noop({"i": n})` for the first `steps` calls, then a final
/// text answer. Records when each call arrives, which splits the run into steps.
struct Script {
    steps: u32,
    calls: AtomicU32,
    arrivals: Mutex<Vec<Instant>>,
}

impl Script {
    fn new(steps: u32) -> Arc<Self> {
        Arc::new(Self {
            steps,
            calls: AtomicU32::new(0),
            arrivals: Mutex::new(Vec::with_capacity(steps as usize + 1)),
        })
    }

    fn provider(self: &Arc<Self>) -> ScriptedProvider {
        let script = self.clone();
        ScriptedProvider::with_responder(move |_request| script.answer())
    }

    fn answer(&self) -> ScriptedTurn {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        self.arrivals_mut().push(Instant::now());
        if n < self.steps {
            ScriptedTurn::tool_call(TOOL, json!({ "i": n }))
        } else {
            ScriptedTurn::text("done")
        }
    }

    fn arrivals_mut(&self) -> std::sync::MutexGuard<'_, Vec<Instant>> {
        self.arrivals.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Mean time per step over steps `from..to` (step k runs from call k to call k + 1).
    fn mean_step(&self, from: usize, to: usize) -> Option<Duration> {
        let arrivals = self.arrivals_mut();
        let (start, end) = (arrivals.get(from)?, arrivals.get(to)?);
        Some(end.duration_since(*start) / (to - from).max(1) as u32)
    }
}

/// One timed agent run.
pub struct AgentRun {
    /// Model calls, i.e. harness steps (the tool steps plus the final answer).
    pub calls: u32,
    pub total: Duration,
    pub events: u64,
    /// Mean wall time per step over the first and the last 100 steps.
    pub first_100: Option<Duration>,
    pub last_100: Option<Duration>,
    /// The session at the end, for the breakdown.
    pub tree: SessionTree,
}

/// Runs an agent for `steps` tool steps in a fresh workspace under `dir`.
pub async fn run_agent(dir: &Path, steps: u32) -> anyhow::Result<AgentRun> {
    let workspace = Arc::new(Workspace::open_or_create(dir)?);
    let script = Script::new(steps);
    let session = SessionStore::new(workspace.sessions_dir()).create()?;
    let agent = Agent::new(AgentParts {
        workspace,
        provider: Arc::new(script.provider()),
        session,
        config: AgentConfig {
            model: "bench".into(),
            max_steps: steps.saturating_add(1),
            ..AgentConfig::default()
        },
        tools: bench_tools(),
        hooks: Vec::new(),
        memory: None,
        upkeep: Default::default(),
        mcp: None,
        models: None,
    });
    // A front end is always listening: drain events on another task, as the UI would.
    let events = Arc::new(AtomicU64::new(0));
    let mut rx = agent.subscribe();
    let counter = events.clone();
    let drain = tokio::spawn(async move {
        while rx.recv().await.is_some() {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    });
    let started = Instant::now();
    let report = agent.prompt(PROMPT).await?;
    let total = started.elapsed();
    ensure!(
        report.outcome == Outcome::Completed,
        "the benchmark run ended with {:?}, not completed",
        report.outcome
    );
    let calls = report.summary.steps;
    ensure!(
        calls == steps + 1,
        "expected {} steps, ran {calls}",
        steps + 1
    );
    let tree = agent.session_snapshot();
    drop(agent);
    let _ = tokio::time::timeout(Duration::from_secs(5), drain).await;
    // Arrival k - 1 starts step k; the last arrival starts the final (text) step.
    let last = calls as usize - 1;
    let long_enough = last >= 200;
    Ok(AgentRun {
        calls,
        total,
        events: events.load(Ordering::Relaxed),
        first_100: long_enough.then(|| script.mean_step(0, 100)).flatten(),
        last_100: long_enough
            .then(|| script.mean_step(last - 100, last))
            .flatten(),
        tree,
    })
}

/// The request the baseline sends on every call: the agent's tool specs, a system prompt
/// of typical size and the one user message.
pub fn baseline_request(tools: &ToolRegistry) -> ChatRequest {
    ChatRequest {
        model: "bench".into(),
        system: Some("You are a helpful agent. ".repeat(80)),
        messages: vec![Message::user(PROMPT)].into(),
        tools: tools.specs(),
        max_tokens: None,
        temperature: None,
        thinking: None,
    }
}

/// The provider alone: `calls` times, clone the fixed request, call `stream` and drain the
/// stream, with the same script (tool calls, then a text answer).
pub async fn provider_alone(calls: u32) -> anyhow::Result<Duration> {
    let script = Script::new(calls.saturating_sub(1));
    let provider = script.provider();
    let request = baseline_request(&bench_tools());
    let cancel = CancellationToken::new();
    let started = Instant::now();
    for _ in 0..calls {
        let mut stream = provider.stream(request.clone(), cancel.clone()).await?;
        while let Some(event) = stream.next().await {
            std::hint::black_box(event.context("the scripted provider failed")?);
        }
    }
    Ok(started.elapsed())
}
