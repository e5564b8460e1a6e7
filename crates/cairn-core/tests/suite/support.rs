//! A temp workspace with an agent on the scripted provider.

use std::sync::Arc;
use std::time::Duration;

use cairn_core::agent::Upkeep;
use cairn_core::hooks::Hook;
use cairn_core::session::SessionStore;
use cairn_core::subagents::ModelResolver;
use cairn_core::tools::ToolRegistry;
use cairn_core::{Agent, AgentConfig, AgentParts};
use cairn_llm::{ChatRequest, ScriptedProvider, ScriptedTurn};
use cairn_memory::{IndexOptions, MemoryIndex, Workspace};
use cairn_protocol::{AgentEvent, Message};
use tokio::sync::mpsc;

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub workspace: Arc<Workspace>,
    pub provider: Arc<ScriptedProvider>,
    pub agent: Agent,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
}

/// How long an abort may take: the work it stops runs for 30 s or never ends, and a
/// loaded two-core machine needs a few seconds to kill a process and save.
pub const ABORT_LIMIT: Duration = Duration::from_secs(10);

type Responder = Arc<dyn Fn(&ChatRequest) -> ScriptedTurn + Send + Sync>;

pub struct Builder {
    turns: Vec<ScriptedTurn>,
    responder: Option<Responder>,
    config: AgentConfig,
    tools: ToolRegistry,
    hooks: Vec<Arc<dyn Hook>>,
    files: Vec<(String, String)>,
    memory: bool,
    upkeep: Upkeep,
    mcp: Option<Arc<cairn_core::mcp::McpHub>>,
    models: Option<Arc<dyn ModelResolver>>,
    tool_less: bool,
    seeing: bool,
    counting: Option<u64>,
}

pub fn harness(turns: Vec<ScriptedTurn>) -> Builder {
    Builder {
        turns,
        responder: None,
        config: AgentConfig {
            model: "test-model".into(),
            ..AgentConfig::default()
        },
        tools: ToolRegistry::builtin(),
        hooks: Vec::new(),
        files: Vec::new(),
        memory: false,
        upkeep: Upkeep::default(),
        mcp: None,
        models: None,
        tool_less: false,
        seeing: false,
        counting: None,
    }
}

impl Builder {
    pub fn config(mut self, f: impl FnOnce(&mut AgentConfig)) -> Self {
        f(&mut self.config);
        self
    }

    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = tools;
        self
    }

    /// Writes a workspace file before the agent starts.
    pub fn file(mut self, path: &str, text: &str) -> Self {
        self.files.push((path.to_string(), text.to_string()));
        self
    }

    /// Gives the agent a memory index (synced before it starts) and the memory tools.
    pub fn memory(mut self) -> Self {
        self.memory = true;
        self
    }

    /// The model's answers, in order.
    pub fn turns(mut self, turns: Vec<ScriptedTurn>) -> Self {
        self.turns = turns;
        self
    }

    /// The model answers every request with what `f` makes of it (instead of turns).
    pub fn responder(
        mut self,
        f: impl Fn(&ChatRequest) -> ScriptedTurn + Send + Sync + 'static,
    ) -> Self {
        self.responder = Some(Arc::new(f));
        self
    }

    /// Memory flush and compaction models.
    pub fn upkeep(mut self, upkeep: Upkeep) -> Self {
        self.upkeep = upkeep;
        self
    }

    /// MCP servers, their tools asked about as their settings say.
    pub fn mcp(mut self, hub: Arc<cairn_core::mcp::McpHub>) -> Self {
        self.config.approval.mcp = hub.policies();
        self.mcp = Some(hub);
        self
    }

    /// Builds the models subagent definitions name.
    pub fn models(mut self, models: Arc<dyn ModelResolver>) -> Self {
        self.models = Some(models);
        self
    }

    /// A model that cannot use tools.
    /// The model sees pictures.
    /// The model counts tokens, `factor` times the characters/4 estimate.
    pub fn counting(mut self, factor: u64) -> Self {
        self.counting = Some(factor);
        self
    }

    pub fn seeing(mut self) -> Self {
        self.seeing = true;
        self
    }

    pub fn tool_less(mut self) -> Self {
        self.tool_less = true;
        self
    }

    pub fn hook(mut self, hook: Arc<dyn Hook>) -> Self {
        self.hooks.push(hook);
        self
    }

    pub async fn build(self) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Arc::new(Workspace::open_or_create(dir.path()).unwrap());
        for (path, text) in &self.files {
            let path = workspace.root().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let memory = self.memory.then(|| {
            let index = MemoryIndex::open(&workspace, IndexOptions::default()).unwrap();
            index.sync().unwrap();
            index
        });
        let tools = match &memory {
            Some(index) => ToolRegistry::with_memory(Some(index.clone())),
            None => self.tools,
        };
        let provider = match self.responder {
            Some(f) => ScriptedProvider::with_responder(move |r| f(r)).recording(),
            None => ScriptedProvider::new(self.turns),
        };
        let provider = if self.seeing {
            provider.seeing()
        } else {
            provider
        };
        let provider = match self.counting {
            Some(factor) => provider.counting(factor),
            None => provider,
        };
        let provider = Arc::new(if self.tool_less {
            provider.without_tools()
        } else {
            provider
        });
        let session = SessionStore::new(workspace.sessions_dir())
            .create()
            .unwrap();
        let agent = Agent::new(AgentParts {
            workspace: workspace.clone(),
            provider: provider.clone(),
            session,
            config: self.config,
            tools,
            hooks: self.hooks,
            memory,
            upkeep: self.upkeep,
            mcp: self.mcp,
            models: self.models,
        });
        let events = agent.subscribe();
        Harness {
            dir,
            workspace,
            provider,
            agent,
            events,
        }
    }
}

impl Harness {
    /// Every event received so far.
    pub fn drain(&mut self) -> Vec<AgentEvent> {
        let mut out = Vec::new();
        while let Ok(event) = self.events.try_recv() {
            out.push(event);
        }
        out
    }

    pub fn requests(&self) -> Vec<ChatRequest> {
        self.provider.requests()
    }

    /// The session as the provider would get it on the next call, reloaded from disk.
    pub async fn reloaded_context(&self) -> Vec<Message> {
        let store = SessionStore::new(self.workspace.sessions_dir());
        let mut opened = store.open(&self.agent.session_id()).await.unwrap();
        opened.tree.context_messages().to_vec()
    }

    /// The notices received so far (the other events are drained too) that mention
    /// `about`.
    pub fn notices_about(&mut self, about: &str) -> Vec<String> {
        self.drain()
            .into_iter()
            .filter_map(|e| match e {
                AgentEvent::Notice { message, .. } if message.contains(about) => Some(message),
                _ => None,
            })
            .collect()
    }

    /// The text of every tool result in the session, reloaded from disk.
    pub async fn tool_results(&self) -> Vec<String> {
        self.reloaded_context()
            .await
            .into_iter()
            .filter_map(|m| match m {
                Message::ToolResult(r) => Some(r.content),
                _ => None,
            })
            .collect()
    }

    /// Starts a run on `prompt`, aborts it at the first event `at` matches, and gives its
    /// report (which must come promptly).
    pub async fn abort_at(
        &mut self,
        prompt: &str,
        at: impl Fn(&AgentEvent) -> bool,
    ) -> cairn_core::agent::RunReport {
        let agent = self.agent.clone();
        let prompt = prompt.to_string();
        let run = tokio::spawn(async move { agent.prompt(&prompt).await });
        while let Some(event) = self.events.recv().await {
            if at(&event) {
                break;
            }
        }
        self.abort_promptly(run).await.unwrap()
    }

    /// Aborts the run that `run` is waiting on and gives what the run returned. `abort`
    /// itself must return within [`ABORT_LIMIT`] (it waits until the agent is idle), and
    /// the run must end within the same limit after it.
    pub async fn abort_promptly<T>(&self, run: tokio::task::JoinHandle<T>) -> T {
        tokio::time::timeout(ABORT_LIMIT, self.agent.abort())
            .await
            .expect("abort is prompt: the agent was not idle within the limit");
        tokio::time::timeout(ABORT_LIMIT, run)
            .await
            .expect("the run ends once abort has returned")
            .unwrap()
    }

    pub fn session_path(&self) -> std::path::PathBuf {
        SessionStore::new(self.workspace.sessions_dir()).path_of(&self.agent.session_id())
    }
}

/// A compact view of a message: role and text (tool calls as `name(args)`, results as
/// `=> text`).
pub fn brief(message: &Message) -> String {
    match message {
        Message::User { .. } => format!("user: {}", message.text()),
        Message::Assistant(a) => {
            let mut parts = vec![];
            if !a.text().is_empty() {
                parts.push(a.text());
            }
            for call in a.tool_calls() {
                parts.push(format!("{}({})", call.name, call.arguments));
            }
            format!("assistant: {}", parts.join(" "))
        }
        Message::ToolResult(r) => {
            let mark = if r.is_error { "!" } else { "" };
            format!("result{mark}: {}", r.content.lines().next().unwrap_or(""))
        }
    }
}

pub fn briefs(messages: &[Message]) -> Vec<String> {
    messages.iter().map(brief).collect()
}

/// The kinds of events, as their `type` tags.
pub fn kinds(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// A tool that signals when it starts and finishes only when released: lets a test act
/// "while a tool runs" without sleeping.
pub struct GateTool {
    pub name: String,
    pub parallel: bool,
    started: tokio::sync::mpsc::UnboundedSender<String>,
    release: Arc<tokio::sync::Semaphore>,
}

pub struct Gate {
    pub started: tokio::sync::mpsc::UnboundedReceiver<String>,
    release: Arc<tokio::sync::Semaphore>,
}

impl Gate {
    pub fn release(&self, calls: usize) {
        self.release.add_permits(calls);
    }

    pub async fn wait_started(&mut self) -> String {
        self.started.recv().await.unwrap()
    }
}

pub fn gate_tool(name: &str, parallel: bool) -> (Arc<GateTool>, Gate) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let tool = GateTool {
        name: name.into(),
        parallel,
        started: tx,
        release: release.clone(),
    };
    (
        Arc::new(tool),
        Gate {
            started: rx,
            release,
        },
    )
}

#[async_trait::async_trait]
impl cairn_core::tools::Tool for GateTool {
    fn spec(&self) -> cairn_protocol::ToolSpec {
        cairn_protocol::ToolSpec {
            name: self.name.clone(),
            description: "waits for the test".into(),
            parameters: serde_json::json!({"type": "object"}),
        }
    }

    fn parallel_safe(&self) -> bool {
        self.parallel
    }

    async fn call(
        &self,
        args: serde_json::Value,
        ctx: cairn_core::tools::ToolCtx,
    ) -> Result<cairn_core::tools::ToolOutput, cairn_core::tools::ToolError> {
        let tag = args["tag"].as_str().unwrap_or("").to_string();
        self.started.send(tag.clone()).unwrap();
        tokio::select! {
            permit = self.release.acquire() => permit.unwrap().forget(),
            () = ctx.cancel.cancelled() => return Err(cairn_core::tools::ToolError::Aborted),
        }
        Ok(cairn_core::tools::ToolOutput::ok(format!("done {tag}")))
    }
}

/// The built-in tools plus `tool`.
pub fn with_tool(tool: Arc<dyn cairn_core::tools::Tool>) -> ToolRegistry {
    let mut tools = ToolRegistry::builtin();
    tools.register(tool);
    tools
}
