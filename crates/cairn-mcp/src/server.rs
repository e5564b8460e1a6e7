//! One MCP server: started when first needed, watched while it runs, started again with
//! backoff when it exits, reported with its command and error when it cannot start.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ContentBlock,
    Implementation, JsonObject, Tool as McpToolDef,
};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::ServiceExt;
use tokio::io::AsyncBufReadExt;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::settings::McpServerSettings;
use cairn_process::{EnvScrub, Launch, Sandbox, SandboxStatus};
use cairn_protocol::{McpState, McpTransport};

/// Default seconds a start may take.
const STARTUP_TIMEOUT_S: u64 = 30;
/// Default seconds a tool call may take.
const CALL_TIMEOUT_S: u64 = 300;
/// Restarts within `RESTART_WINDOW` before the server is given up as failed.
const MAX_RESTARTS: usize = 5;
const RESTART_WINDOW: Duration = Duration::from_secs(60);
/// A failed server is tried again by a later run once this long has passed.
const RETRY_FAILED_AFTER: Duration = Duration::from_secs(30);
/// Lines of a server's stderr kept to explain why it failed.
const STDERR_LINES: usize = 8;

/// What every server of a hub shares.
#[derive(Debug, Clone, Default)]
pub struct HubOptions {
    /// The workspace, named to stdio servers in `CAIRN_WORKSPACE`.
    pub workspace: Option<PathBuf>,
    /// Variables kept from servers (provider keys, Cairn's own).
    pub env: EnvScrub,
    /// The sandbox of servers whose settings ask for one (`sandbox = true`), the network
    /// set per server.
    pub sandbox: Option<Sandbox>,
}

/// A live connection.
#[derive(Clone)]
pub(super) struct Conn {
    pub peer: Peer<RoleClient>,
    pub tools: Arc<Vec<McpToolDef>>,
    /// Cancelled when the connection ends, so calls in flight end with it.
    gone: CancellationToken,
    /// Ends the connection on purpose.
    stop: CancellationToken,
}

#[derive(Clone)]
pub(super) enum Phase {
    Stopped,
    Starting,
    Running(Conn),
    Restarting { why: String },
    Failed { why: String, at: Instant },
}

/// One configured server and its state.
pub(super) struct Server {
    pub name: String,
    pub settings: McpServerSettings,
    options: Arc<HubOptions>,
    phase: watch::Sender<Phase>,
    /// One start at a time.
    starting: tokio::sync::Mutex<()>,
    restarts: Mutex<Vec<Instant>>,
    restarted: std::sync::atomic::AtomicU32,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl Server {
    pub fn new(name: String, settings: McpServerSettings, options: Arc<HubOptions>) -> Arc<Self> {
        Arc::new(Self {
            name,
            settings,
            options,
            phase: watch::Sender::new(Phase::Stopped),
            starting: tokio::sync::Mutex::new(()),
            restarts: Mutex::new(Vec::new()),
            restarted: Default::default(),
            stderr: Default::default(),
        })
    }

    pub fn transport(&self) -> McpTransport {
        match self.settings.command {
            Some(_) => McpTransport::Stdio,
            None => McpTransport::Http,
        }
    }

    /// Its state, error, restarts and tools as they stand.
    pub fn snapshot(&self) -> (McpState, Option<String>, u32, Arc<Vec<McpToolDef>>) {
        let restarts = self.restarted.load(std::sync::atomic::Ordering::Relaxed);
        let none = Arc::new(Vec::new());
        match &*self.phase.borrow() {
            Phase::Stopped => (McpState::Stopped, None, restarts, none),
            Phase::Starting => (McpState::Starting, None, restarts, none),
            Phase::Running(conn) => (McpState::Running, None, restarts, conn.tools.clone()),
            Phase::Restarting { why } => (McpState::Restarting, Some(why.clone()), restarts, none),
            Phase::Failed { why, .. } => (McpState::Failed, Some(why.clone()), restarts, none),
        }
    }

    /// The running connection, starting the server when it is stopped (or failed long
    /// enough ago) and waiting while it restarts.
    pub async fn connection(self: &Arc<Self>) -> Result<Conn, String> {
        if !self.settings.enabled() {
            return Err(format!("the MCP server `{}` is disabled", self.name));
        }
        let _one = self.starting.lock().await;
        let mut phase = self.phase.subscribe();
        loop {
            let current = phase.borrow_and_update().clone();
            match current {
                Phase::Running(conn) => return Ok(conn),
                Phase::Failed { why, at } if at.elapsed() < RETRY_FAILED_AFTER => return Err(why),
                Phase::Restarting { .. } | Phase::Starting => {
                    // The supervisor is at it: wait for its answer.
                    if phase.changed().await.is_err() {
                        return Err(format!("the MCP server `{}` was shut down", self.name));
                    }
                }
                Phase::Stopped | Phase::Failed { .. } => {
                    self.phase.send_replace(Phase::Starting);
                    return match self.connect().await {
                        Ok(conn) => Ok(conn),
                        Err(why) => {
                            tracing::warn!(server = %self.name, "MCP server failed: {why}");
                            let at = Instant::now();
                            self.phase.send_replace(Phase::Failed {
                                why: why.clone(),
                                at,
                            });
                            Err(why)
                        }
                    };
                }
            }
        }
    }

    /// Calls `tool` with `args`; ends with an error when the call takes too long, the run
    /// is aborted (`Ok(None)`) or the server exits meanwhile. A sandboxed server's call
    /// leaves no new git repository or tool's settings behind in the workspace: what it
    /// made is moved into `.cairn/quarantine/`, and the answer (or the log) says so.
    pub async fn call(
        self: &Arc<Self>,
        tool: &str,
        args: JsonObject,
        cancel: &CancellationToken,
    ) -> Result<Option<CallToolResult>, String> {
        let watched = (self.settings.sandbox == Some(true))
            .then(|| self.sandbox().ok())
            .flatten();
        let before = watched.as_ref().map(Sandbox::before_call);
        let mut answer = self.call_now(tool, args, cancel).await;
        let (Some(sandbox), Some(before)) = (watched, before) else {
            return answer;
        };
        let moved: Vec<String> = sandbox
            .undo_new_tool_entries(&before)
            .iter()
            .map(|q| q.line())
            .collect();
        if moved.is_empty() {
            return answer;
        }
        match &mut answer {
            Ok(Some(result)) => result.content.push(ContentBlock::text(moved.join("\n"))),
            _ => tracing::warn!(server = %self.name, "{}", moved.join("\n")),
        }
        answer
    }

    async fn call_now(
        self: &Arc<Self>,
        tool: &str,
        args: JsonObject,
        cancel: &CancellationToken,
    ) -> Result<Option<CallToolResult>, String> {
        let conn = self.connection().await?;
        let limit = Duration::from_secs(self.settings.call_timeout_s.unwrap_or(CALL_TIMEOUT_S));
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        let call = conn.peer.call_tool(params);
        let exited = || async {
            // Give the supervisor and the stderr reader a moment to see the exit.
            let _ = tokio::time::timeout(Duration::from_millis(300), conn.gone.cancelled()).await;
            Err(format!(
                "the MCP server `{}` exited during the call{}; it is being restarted",
                self.name,
                self.stderr_tail()
            ))
        };
        tokio::select! {
            result = call => match result {
                Ok(result) => Ok(Some(result)),
                Err(rmcp::ServiceError::TransportClosed) => exited().await,
                Err(e) => Err(format!("the MCP server `{}` failed the call: {e}", self.name)),
            },
            () = conn.gone.cancelled() => exited().await,
            () = tokio::time::sleep(limit) => Err(format!(
                "the MCP server `{}` did not answer within {} s (call_timeout_s)",
                self.name, limit.as_secs()
            )),
            () = cancel.cancelled() => Ok(None),
        }
    }

    /// Ends the connection (the process is stopped) and keeps the server stopped.
    pub async fn stop(&self) {
        let current = self.phase.send_replace(Phase::Stopped);
        if let Phase::Running(conn) = current {
            conn.stop.cancel();
            conn.gone.cancelled().await;
        }
    }

    /// Starts the server, lists its tools and leaves a supervisor watching it (boxed: the
    /// supervisor connects again when the server exits).
    fn connect(self: &Arc<Self>) -> futures::future::BoxFuture<'static, Result<Conn, String>> {
        Box::pin(self.clone().connect_now())
    }

    async fn connect_now(self: Arc<Self>) -> Result<Conn, String> {
        let limit = Duration::from_secs(
            self.settings
                .startup_timeout_s
                .unwrap_or(STARTUP_TIMEOUT_S)
                .max(1),
        );
        let started = tokio::time::timeout(limit, self.start()).await;
        let mut service = match started {
            Ok(result) => result?,
            Err(_) => {
                return Err(format!(
                    "`{}` did not start within {} s (startup_timeout_s){}",
                    self.settings.endpoint(),
                    limit.as_secs(),
                    self.stderr_tail()
                ))
            }
        };
        let listed = tokio::time::timeout(limit, service.peer().list_all_tools()).await;
        let tools = match listed {
            Ok(Ok(tools)) => tools,
            failed => {
                let why = match failed {
                    Ok(Err(e)) => e.to_string(),
                    _ => format!("no answer within {} s", limit.as_secs()),
                };
                let _ = service.close().await;
                return Err(format!(
                    "`{}` started but did not list its tools: {why}{}",
                    self.settings.endpoint(),
                    self.stderr_tail()
                ));
            }
        };
        let conn = Conn {
            peer: service.peer().clone(),
            tools: Arc::new(tools),
            gone: CancellationToken::new(),
            stop: CancellationToken::new(),
        };
        self.phase.send_replace(Phase::Running(conn.clone()));
        tracing::info!(server = %self.name, tools = conn.tools.len(), "MCP server running");
        tokio::spawn(self.clone().supervise(service, conn.clone()));
        Ok(conn)
    }

    /// Waits for the connection to end; unless it was ended on purpose, starts the server
    /// again with backoff, and gives up after `MAX_RESTARTS` within `RESTART_WINDOW`.
    async fn supervise(
        self: Arc<Self>,
        service: RunningService<RoleClient, ClientConfig>,
        conn: Conn,
    ) {
        let ending = service.cancellation_token();
        let stop = conn.stop.clone();
        let gone = conn.gone.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = stop.cancelled() => ending.cancel(),
                () = gone.cancelled() => {}
            }
        });
        let reason = match service.waiting().await {
            Ok(reason) => format!("{reason:?}"),
            Err(e) => e.to_string(),
        };
        conn.gone.cancel();
        let still_ours =
            matches!(&*self.phase.borrow(), Phase::Running(c) if c.gone.is_cancelled());
        if conn.stop.is_cancelled() || !still_ours {
            return;
        }
        let mut why = format!("exited ({reason}){}", self.stderr_tail());
        tracing::warn!(server = %self.name, "MCP server {why}");
        for attempt in 0u32.. {
            let recent = {
                let mut restarts = self.restarts.lock().unwrap_or_else(|e| e.into_inner());
                restarts.retain(|at| at.elapsed() < RESTART_WINDOW);
                restarts.push(Instant::now());
                restarts.len()
            };
            if recent > MAX_RESTARTS {
                let why = format!(
                    "exited {MAX_RESTARTS} times within {} s and was given up; last: {why}",
                    RESTART_WINDOW.as_secs()
                );
                self.phase.send_replace(Phase::Failed {
                    why,
                    at: Instant::now(),
                });
                return;
            }
            self.phase
                .send_replace(Phase::Restarting { why: why.clone() });
            tokio::time::sleep(Duration::from_millis(250u64 << attempt.min(6))).await;
            if !matches!(&*self.phase.borrow(), Phase::Restarting { .. }) {
                return; // stopped meanwhile
            }
            match self.connect().await {
                Ok(_) => {
                    self.restarted
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return;
                }
                Err(e) => why = e,
            }
        }
    }

    /// The sandbox this server asked for, or why it cannot start: it is never started
    /// outside the sandbox it asked for.
    fn sandbox(&self) -> Result<Sandbox, String> {
        let base = self.options.sandbox.clone().ok_or_else(|| {
            "asks for the sandbox (`sandbox = true`), which is not set up here".to_string()
        })?;
        let network = self.settings.network != Some(false);
        match SandboxStatus::of(base.with_network(network)) {
            SandboxStatus::Active(sandbox) => Ok(sandbox),
            SandboxStatus::Unavailable(why) => Err(format!(
                "asks for the sandbox (`sandbox = true`), which cannot start: {why}"
            )),
            SandboxStatus::Off => Err("asks for the sandbox, which is off".into()),
        }
    }

    /// The process or HTTP session, handshake done.
    async fn start(&self) -> Result<RunningService<RoleClient, ClientConfig>, String> {
        let client = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("cairn", env!("CARGO_PKG_VERSION")),
        );
        let endpoint = self.settings.endpoint();
        if let Some(program) = &self.settings.command {
            // A server starts where its settings say, else in a neutral folder: never in
            // the workspace, whose files (an `.npmrc`, a module shadowing one of Python's)
            // someone else may have written.
            let cwd = match &self.settings.cwd {
                Some(cwd) => cwd.clone(),
                None => cairn_process::neutral_dir(),
            };
            let mut launch =
                Launch::new(program, &cwd, &self.options.env).args(&self.settings.args);
            if let Some(workspace) = &self.options.workspace {
                launch = launch.env("CAIRN_WORKSPACE", workspace);
            }
            for (name, value) in &self.settings.env {
                launch = launch.env(name, value);
            }
            if self.settings.sandbox == Some(true) {
                launch = launch.sandboxed(&self.sandbox()?);
            }
            let command = launch.prepare().command;
            let (transport, stderr) = TokioChildProcess::builder(command)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| format!("`{endpoint}` could not be started: {e}"))?;
            self.stderr
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
            if let Some(stderr) = stderr {
                tokio::spawn(log_stderr(self.name.clone(), stderr, self.stderr.clone()));
            }
            return client.serve(transport).await.map_err(|e| {
                format!(
                    "`{endpoint}` started but the MCP handshake failed: {e}{}",
                    self.stderr_tail()
                )
            });
        }
        let url = self.settings.url.clone().unwrap_or_default();
        let mut headers = HashMap::new();
        for (name, value) in &self.settings.headers {
            let name = name
                .parse()
                .map_err(|_| format!("the header name `{name}` is not valid"))?;
            let value = value
                .parse()
                .map_err(|_| format!("the value of the header `{name}` is not valid"))?;
            headers.insert(name, value);
        }
        let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
        let transport = StreamableHttpClientTransport::from_config(config);
        client
            .serve(transport)
            .await
            .map_err(|e| format!("`{endpoint}` could not be reached: {e}"))
    }

    /// The last lines the server wrote to stderr, to add to an error.
    fn stderr_tail(&self) -> String {
        let lines = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        match lines.is_empty() {
            true => String::new(),
            false => format!(
                "; its last words: {}",
                lines.iter().cloned().collect::<Vec<_>>().join(" | ")
            ),
        }
    }
}

/// Sends a server's stderr to the log, line by line, keeping the last few.
async fn log_stderr(
    name: String,
    stderr: tokio::process::ChildStderr,
    kept: Arc<Mutex<VecDeque<String>>>,
) {
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let line: String = line.chars().take(500).collect();
        tracing::info!(target: "cairn::mcp", server = %name, "{line}");
        let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() == STDERR_LINES {
            kept.pop_front();
        }
        kept.push_back(line);
    }
}
