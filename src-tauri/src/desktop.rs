//! The app's state: the workspace, its memory index, the chat model, the open session
//! and its agent, the consolidation scheduler, and the page's event subscribers. Tauri
//! commands are thin wrappers over these methods.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Instant;

use cairn_app::cairn_core::mcp::McpHub;
use cairn_app::cairn_core::session::{OpenedSession, SessionStore};
use cairn_app::cairn_core::upkeep::SchedulerHandle;
use cairn_app::cairn_core::Agent;
use cairn_app::cairn_memory::{FolderWatch, MemoryIndex, WatchError, Workspace};
use cairn_app::launch::{self, AgentOptions, ChatModel, Config, Memory};
use cairn_app::settings::ProviderKind;
use cairn_protocol::{AgentEvent, EntryKind, Phase};
use tokio::sync::Notify;

use crate::hub::{AppEvent, Hub};
use crate::ipc::error::{AppError, AppResult, ErrorCode};
use crate::ipc::stream::Feed;
use crate::ipc::views::SessionView;

/// The managed state every command gets.
pub type DesktopState<'a> = tauri::State<'a, Arc<Desktop>>;

/// Where the app finds its settings and workspace (the defaults, or a test's folders).
#[derive(Debug, Clone, Default)]
pub struct Paths {
    /// The folder of config.toml (default: the platform's config folder + `cairn`).
    pub config_dir: Option<PathBuf>,
    /// The workspace (default: the settings', else `~/Cairn`).
    pub workspace: Option<PathBuf>,
}

pub struct Desktop {
    pub(crate) paths: Paths,
    config: RwLock<Arc<Config>>,
    pub(crate) workspace: Arc<Workspace>,
    pub(crate) store: SessionStore,
    memory: Memory,
    chat: tokio::sync::Mutex<Option<ChatModel>>,
    current: tokio::sync::Mutex<Current>,
    /// Told after each flush that wrote facts (the scheduler consolidates soon after).
    flushed: Arc<Notify>,
    /// What `flushed` is passed on to: the running scheduler's own signal, if one runs.
    relayed: Arc<Mutex<Option<Arc<Notify>>>>,
    pub(crate) scheduler: tokio::sync::Mutex<Option<SchedulerHandle>>,
    pub(crate) hub: Hub,
    /// The user's MCP servers (`None`: none configured); built again when they change.
    mcp: RwLock<Option<Arc<McpHub>>>,
    notices: Mutex<Vec<String>>,
    /// The run going on, for a page that comes back to it.
    live: Mutex<Option<LiveRun>>,
    pub(crate) started: Instant,
}

/// A run in progress: its events so far, and how many entries its session had before it.
struct LiveRun {
    feed: Feed,
    known: usize,
}

/// The session the window shows, and its agent once a run needed one.
struct Current {
    id: String,
    /// A new session not yet handed to an agent (it has no file until its first entry).
    fresh: Option<OpenedSession>,
    agent: Option<Agent>,
}

impl Desktop {
    /// Reads the settings, opens (or makes) the workspace and its memory index, and
    /// starts with the most recent session (or a new one). The chat model is built later
    /// ([`Desktop::warm_up`]) so the window shows at once. `started`: when the process
    /// started (start-up is timed from it).
    pub async fn open(paths: Paths, started: Instant) -> AppResult<Arc<Self>> {
        let config = Config::load(paths.config_dir.as_deref())?;
        let workspace = config.workspace(paths.workspace.as_deref())?;
        let mut notices = Vec::new();
        let memory = Memory::open(&workspace, &config, &mut |n| notices.push(n));
        let store = launch::store(&workspace);
        let mcp = launch::mcp_hub(&config, &workspace, &mut |n| notices.push(n));
        let current = match store.latest()? {
            Some(id) => Current {
                id,
                fresh: None,
                agent: None,
            },
            None => Current::fresh(&store)?,
        };
        Ok(Arc::new(Self {
            paths,
            config: RwLock::new(Arc::new(config)),
            workspace,
            store,
            memory,
            chat: tokio::sync::Mutex::new(None),
            current: tokio::sync::Mutex::new(current),
            flushed: Arc::new(Notify::new()),
            relayed: Arc::new(Mutex::new(None)),
            scheduler: tokio::sync::Mutex::new(None),
            hub: Hub::default(),
            mcp: RwLock::new(mcp),
            notices: Mutex::new(notices),
            live: Mutex::new(None),
            started,
        }))
    }

    /// Forgets kept changes past their keeping time, builds the chat model and starts
    /// background consolidation. A failure is kept as a notice; the next run tries the
    /// model again and reports the error.
    pub async fn warm_up(self: &Arc<Self>) {
        let workspace = self.workspace.clone();
        // Kept changes older than their keeping time go (they would grow without end).
        tauri::async_runtime::spawn_blocking(move || {
            let keep = cairn_app::cairn_memory::changes::KEEP_DAYS;
            match cairn_app::cairn_memory::changes::prune(&workspace, keep, chrono::Utc::now()) {
                Ok(0) => {}
                Ok(n) => tracing::info!("forgot {n} kept changes older than {keep} days"),
                Err(e) => tracing::warn!("cannot prune the kept changes: {e}"),
            }
        });
        self.relay_flushes();
        crate::fetch::bundled(self).await;
        self.start_consolidation().await;
    }

    /// (Re)starts background consolidation as the settings now say: a scheduler already
    /// running stops first (a consolidation in progress stops without writing), and none
    /// starts when consolidation is off or no model may write memory. Called at start and
    /// after the settings or a key change, so a provider added in Settings consolidates
    /// without a restart.
    pub async fn start_consolidation(self: &Arc<Self>) {
        // Not held while the model loads: the memory panel reads the scheduler meanwhile.
        let old = self.scheduler.lock().await.take();
        if let Some(old) = old {
            *self.relayed.lock().unwrap_or_else(PoisonError::into_inner) = None;
            old.shutdown().await;
        }
        let chat = match self.chat_model().await {
            Ok(chat) => chat,
            Err(e) => return self.notice(e.message),
        };
        let config = self.config();
        let mut upkeep = cairn_app::cairn_core::agent::Upkeep::default();
        let mut warnings = Vec::new();
        let scheduler = launch::consolidation(
            &config,
            &chat,
            &self.workspace,
            self.index(),
            &mut upkeep,
            &mut |w| warnings.push(w),
        )
        .await;
        for warning in warnings {
            self.notice(warning);
        }
        if let (Some(scheduler), Some(flushed)) = (scheduler, upkeep.flushed) {
            crate::hub::follow_scheduler(self, &scheduler);
            *self.relayed.lock().unwrap_or_else(PoisonError::into_inner) = Some(flushed);
            // One started meanwhile (settings saved twice in a row) gives way to this one.
            let replaced = self.scheduler.lock().await.replace(scheduler);
            if let Some(replaced) = replaced {
                replaced.shutdown().await;
            }
        }
    }

    /// Flushes of every agent reach the scheduler running at the time (one relay for the
    /// app's life, whichever scheduler the settings start).
    fn relay_flushes(&self) {
        let from = self.flushed.clone();
        let to = self.relayed.clone();
        tauri::async_runtime::spawn(async move {
            loop {
                from.notified().await;
                let target = to.lock().unwrap_or_else(PoisonError::into_inner).clone();
                if let Some(target) = target {
                    target.notify_one();
                }
            }
        });
    }

    /// Stops what runs in the background: a run in progress is aborted and its final
    /// save point awaited, a consolidation in progress stops without writing.
    pub async fn shutdown(&self) {
        let agent = self.current.lock().await.agent.take();
        if let Some(agent) = agent {
            let stopped = tokio::time::timeout(std::time::Duration::from_secs(5), agent.abort());
            if stopped.await.is_err() {
                tracing::warn!("the run did not stop within 5 s of the app closing");
            }
        }
        if let Some(scheduler) = self.scheduler.lock().await.take() {
            scheduler.shutdown().await;
        }
        if let Some(hub) = self.mcp_hub() {
            hub.shutdown().await;
        }
    }

    /// The MCP servers' hub, if any are configured.
    pub fn mcp_hub(&self) -> Option<Arc<McpHub>> {
        self.mcp
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn config(&self) -> Arc<Config> {
        self.config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the settings; the chat model and the agent are built again when next
    /// needed.
    pub async fn reload(&self, config: Config) -> AppResult<()> {
        let mut current = self.current.lock().await;
        if current.running() {
            return Err(busy());
        }
        let servers_changed = self.config().settings.mcp != config.settings.mcp;
        if servers_changed {
            let mut warnings = Vec::new();
            let next = launch::mcp_hub(&config, &self.workspace, &mut |w| warnings.push(w));
            let old = std::mem::replace(
                &mut *self.mcp.write().unwrap_or_else(PoisonError::into_inner),
                next,
            );
            if let Some(old) = old {
                tauri::async_runtime::spawn(async move { old.shutdown().await });
            }
            for warning in warnings {
                self.notice(warning);
            }
        }
        self.switch_embedder(&config);
        *self.config.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(config);
        *self.chat.lock().await = None;
        current.agent = None;
        Ok(())
    }

    /// Saves `[run] follow_up_mode` and applies it to the open session's agent at once,
    /// even during a run (nothing else in the settings changed, so the agent is kept).
    pub async fn set_follow_up_mode(&self, mode: cairn_protocol::QueueMode) -> AppResult<()> {
        let config = self.config();
        let mut next = config.settings.clone();
        next.run.follow_up_mode = Some(mode);
        crate::ipc::settings::save(&config, &next)?;
        let kept = Config::load(self.paths.config_dir.as_deref())?;
        *self.config.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(kept);
        if let Some(agent) = self.built_agent().await {
            agent.set_queue_modes(None, Some(mode));
        }
        Ok(())
    }

    /// A new `[memory] embedder` (or new settings of its provider) applies at once: the
    /// index embeds with it in the background.
    fn switch_embedder(&self, next: &Config) {
        let old = self.config();
        let spec = |c: &Config| c.settings.memory.embedder.clone();
        let provider_of = |c: &Config| {
            launch::embedder_provider(c).and_then(|name| c.settings.providers.get(&name).cloned())
        };
        if spec(&old) == spec(next) && provider_of(&old) == provider_of(next) {
            return;
        }
        self.apply_embedder(next);
    }

    /// Makes the embedder of the current settings again: the key of its provider changed.
    pub fn renew_embedder(&self) {
        self.apply_embedder(&self.config());
    }

    fn apply_embedder(&self, next: &Config) {
        let Some(index) = self.index() else { return };
        let mut warnings = Vec::new();
        let embedder = launch::embedder(next, &mut |w| warnings.push(w));
        if let Err(e) = index.set_embedder(embedder) {
            warnings.push(format!("search by meaning could not change model: {e}"));
        }
        for warning in warnings {
            self.notice(warning);
        }
    }

    /// Whether the open session's agent is working.
    pub async fn is_running(&self) -> bool {
        self.current.lock().await.running()
    }

    pub fn index(&self) -> Option<&MemoryIndex> {
        self.memory.index.as_ref()
    }

    /// The watcher of the workspace and its folders searched in place (the index's too),
    /// or why it could not start.
    pub fn watcher(&self) -> Result<&FolderWatch, &WatchError> {
        self.memory.watcher()
    }

    pub fn notice(&self, message: String) {
        tracing::warn!("{message}");
        self.notices
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message);
    }

    pub fn notices(&self) -> Vec<String> {
        self.notices
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The chat model, built on first use.
    pub async fn chat_model(&self) -> AppResult<ChatModel> {
        let mut chat = self.chat.lock().await;
        if let Some(chat) = chat.as_ref() {
            return Ok(chat.clone());
        }
        let built = self.config().chat().await?;
        *chat = Some(built.clone());
        Ok(built)
    }

    /// Drops the built chat model: the next use builds it again (its file arrived).
    pub async fn forget_chat_model(&self) {
        *self.chat.lock().await = None;
    }

    /// The chat model if it is built, without building it.
    pub async fn chat_if_built(&self) -> Option<ChatModel> {
        self.chat.lock().await.clone()
    }

    pub fn is_local(chat: &ChatModel) -> bool {
        chat.0.info().kind == ProviderKind::Local.name()
    }

    /// The open session's agent if it has been made (without making it, which would load
    /// the chat model).
    pub async fn built_agent(&self) -> Option<Agent> {
        self.current.lock().await.agent.clone()
    }

    /// The agent of the open session, made on first use.
    pub async fn agent(self: &Arc<Self>) -> AppResult<Agent> {
        let mut current = self.current.lock().await;
        if let Some(agent) = &current.agent {
            return Ok(agent.clone());
        }
        let chat = self.chat_model().await?;
        let session = match current.fresh.take() {
            Some(session) => session,
            None => self.open_file(&current.id).await?,
        };
        let config = self.config();
        let mut warnings = Vec::new();
        let mut options =
            AgentOptions::from_config(&config, &chat, false, None, &mut |w| warnings.push(w)).await;
        for warning in warnings {
            self.notice(warning);
        }
        options.upkeep.flushed = Some(self.flushed.clone());
        options.mcp = self.mcp_hub();
        let index = self.index().cloned();
        let agent = launch::build_agent(
            self.workspace.clone(),
            chat.0,
            chat.1,
            session,
            options,
            index,
        );
        crate::hub::follow_agent(self, &agent);
        current.agent = Some(agent.clone());
        Ok(agent)
    }

    async fn open_file(&self, id: &str) -> AppResult<OpenedSession> {
        let opened = self.store.open(id).await?;
        for repair in &opened.repairs {
            self.notice(format!("session {id}: {repair}"));
        }
        Ok(opened)
    }

    /// The agent of the open session if it has one.
    pub async fn current_agent(&self) -> Option<Agent> {
        self.current.lock().await.agent.clone()
    }

    pub async fn current_id(&self) -> String {
        self.current.lock().await.id.clone()
    }

    /// The open session as the page shows it.
    pub async fn view(&self) -> AppResult<SessionView> {
        let current = self.current.lock().await;
        self.view_of(&current)
    }

    fn view_of(&self, current: &Current) -> AppResult<SessionView> {
        if let Some(agent) = &current.agent {
            let running = agent.phase() != Phase::Idle;
            let mut view = agent.with_session(|tree| SessionView::of(tree, running));
            // A level chosen since the last save point.
            view.thinking = agent.thinking();
            return Ok(view);
        }
        if let Some(fresh) = &current.fresh {
            return Ok(SessionView::of(&fresh.tree, false));
        }
        match self.store.load(&current.id) {
            Ok(loaded) => Ok(SessionView::of(&loaded.tree, false)),
            Err(cairn_app::cairn_core::HarnessError::SessionNotFound(_)) => {
                Ok(SessionView::empty(current.id.clone()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Shows session `id` (a new one for `None`); refused while a run goes on.
    pub async fn open_session(&self, id: Option<&str>) -> AppResult<SessionView> {
        let mut current = self.current.lock().await;
        if current.running() {
            return Err(busy());
        }
        let next = match id {
            Some(id) => {
                let id = self.store.resolve(id)?;
                if id == current.id {
                    return self.view_of(&current);
                }
                Current {
                    id,
                    fresh: None,
                    agent: None,
                }
            }
            None => Current::fresh(&self.store)?,
        };
        let view = self.view_of(&next)?;
        *current = next;
        Ok(view)
    }

    /// Titles session `id`. The open session is written through its agent or its own
    /// writer, so renaming never builds a model; the lock keeps it from opening meanwhile.
    pub async fn rename(&self, id: &str, title: &str) -> AppResult<()> {
        let mut current = self.current.lock().await;
        let info = || EntryKind::SessionInfo {
            title: title.to_string(),
        };
        if current.id == id {
            if let Some(agent) = &current.agent {
                agent.set_title(title).await?;
                return Ok(());
            }
            if let Some(fresh) = current.fresh.as_mut() {
                return Ok(fresh.record(info()).await?);
            }
        }
        self.store.open(id).await?.record(info()).await?;
        Ok(())
    }

    /// When `id` is the open session, shows a new one instead (refused while a run goes
    /// on). Whether it was the open one.
    pub async fn replace_if_current(&self, id: &str) -> AppResult<bool> {
        let mut current = self.current.lock().await;
        if current.id != id {
            return Ok(false);
        }
        if current.running() {
            return Err(busy());
        }
        *current = Current::fresh(&self.store)?;
        Ok(true)
    }

    pub fn emit(&self, event: AppEvent) {
        self.hub.emit(event);
    }

    /// Hears every app-wide event from now on, until `sink` returns false.
    pub fn subscribe(&self, sink: impl FnMut(AppEvent) -> bool + Send + 'static) {
        self.hub.subscribe(sink);
    }

    /// Sends the open session's agent events of one run to `sink` while `run` drives it.
    pub async fn drive<F, Fut>(
        self: &Arc<Self>,
        sink: impl crate::ipc::stream::Sink,
        run: F,
    ) -> AppResult<()>
    where
        F: FnOnce(Agent) -> Fut,
        Fut: std::future::Future<Output = Result<(), AppError>>,
    {
        let agent = self.agent().await?;
        let feed = Feed::new(sink);
        {
            let mut live = self.live_run();
            if live.is_some() || agent.phase() != Phase::Idle {
                return Err(busy());
            }
            *live = Some(LiveRun {
                feed: feed.clone(),
                known: agent.with_session(|tree| tree.entries().len()),
            });
        }
        let events: tokio::sync::mpsc::UnboundedReceiver<AgentEvent> = agent.subscribe();
        let forwarder = tauri::async_runtime::spawn(crate::ipc::stream::forward(events, feed));
        let result = run(agent).await;
        self.live_run().take();
        match result {
            Ok(()) => {
                let _ = forwarder.await;
                self.emit(AppEvent::SessionsChanged);
                Ok(())
            }
            Err(e) => {
                forwarder.abort();
                Err(e)
            }
        }
    }

    fn live_run(&self) -> std::sync::MutexGuard<'_, Option<LiveRun>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes up the run going on for a page loaded again while it ran: `page` gets the
    /// run's events from its start, then the rest. Returns the open session as it was
    /// before the run (the events add the run's part); `None` when no run goes on.
    pub async fn attach(&self, page: impl crate::ipc::stream::Sink) -> Option<SessionView> {
        let current = self.current.lock().await;
        let agent = current.agent.as_ref()?;
        let live = self.live_run();
        let live = live.as_ref()?;
        let view = agent.with_session(|tree| SessionView::before(tree, true, live.known));
        live.feed.attach(page).then_some(view)
    }
}

impl Current {
    fn fresh(store: &SessionStore) -> AppResult<Self> {
        let opened = store.create()?;
        Ok(Self {
            id: opened.tree.id().to_string(),
            fresh: Some(opened),
            agent: None,
        })
    }

    fn running(&self) -> bool {
        self.agent
            .as_ref()
            .is_some_and(|agent| agent.phase() != Phase::Idle)
    }
}

pub fn busy() -> AppError {
    AppError::new(
        ErrorCode::Busy,
        "a run is going on; wait for it or stop it first",
    )
}
