//! App-wide events for the page: file changes, index status, memory flushes,
//! consolidations, session list changes. Each `subscribe` adds a sink; a sink whose page
//! is gone is dropped at the next event.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cairn_app::cairn_core::upkeep::{RunResult, SchedulerHandle};
use cairn_app::cairn_core::Agent;
use cairn_protocol::AgentEvent;
use serde::Serialize;
use ts_rs::TS;

use crate::desktop::Desktop;
use crate::ipc::memory::ConsolidationResult;

/// App-wide events, through the channel given to `subscribe`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AppEvent {
    /// A workspace file changed on disk (`version: None`: it was deleted).
    FileChanged {
        path: String,
        version: Option<String>,
    },
    /// Files were added or removed: the tree changed.
    FilesChanged,
    IndexStatus {
        status: cairn_app::cairn_memory::IndexStatus,
    },
    MemoryFlushed {
        path: String,
        bullets: u32,
    },
    Consolidated {
        result: ConsolidationResult,
    },
    SessionsChanged,
    /// Files dropped onto the window: copied into the inbox, pictures kept for the next
    /// message, or refused with why.
    FilesDropped {
        added: Vec<String>,
        pictures: Vec<cairn_protocol::Picture>,
        refused: Vec<crate::ipc::dropped::Refused>,
    },
    /// Files are dragged over the window (`false`: they left it, or were dropped).
    DragOver {
        active: bool,
    },
    /// The bundled models are being downloaded (`finished`: done, or given up).
    ModelFetch {
        package: String,
        done: u64,
        total: u64,
        finished: bool,
    },
    /// A local model is loading: how far (0 to 1); `None` once it is loaded (or failed).
    ModelLoad {
        progress: Option<f32>,
    },
}

type Sink = Box<dyn FnMut(AppEvent) -> bool + Send>;

#[derive(Default)]
pub struct Hub {
    sinks: Mutex<Vec<Sink>>,
}

impl Hub {
    pub fn subscribe(&self, sink: impl FnMut(AppEvent) -> bool + Send + 'static) {
        self.lock().push(Box::new(sink));
    }

    pub fn emit(&self, event: AppEvent) {
        self.lock().retain_mut(|sink| sink(event.clone()));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Sink>> {
        self.sinks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Relays what an agent does outside the page's run stream: flushes (which may come
/// after the run's end) and the end of each run (titles, new sessions).
pub fn follow_agent(desktop: &Arc<Desktop>, agent: &Agent) {
    let mut events = agent.subscribe();
    let desktop = Arc::downgrade(desktop);
    tauri::async_runtime::spawn(async move {
        while let Some(event) = events.recv().await {
            let Some(desktop) = desktop.upgrade() else {
                return;
            };
            match event {
                AgentEvent::MemoryFlushed { path, bullets } => {
                    desktop.emit(AppEvent::MemoryFlushed { path, bullets })
                }
                AgentEvent::AgentEnd { .. } => desktop.emit(AppEvent::SessionsChanged),
                _ => {}
            }
        }
    });
}

/// Tells the page about each background consolidation that finishes.
pub fn follow_scheduler(desktop: &Arc<Desktop>, scheduler: &SchedulerHandle) {
    let mut status = scheduler.subscribe();
    let desktop = Arc::downgrade(desktop);
    tauri::async_runtime::spawn(async move {
        let mut runs = status.borrow().runs;
        while status.changed().await.is_ok() {
            let (now, result) = {
                let s = status.borrow();
                (s.runs, s.last_result.clone())
            };
            if now == runs {
                continue;
            }
            runs = now;
            let (Some(desktop), Some(result)) = (desktop.upgrade(), result) else {
                continue;
            };
            let result = match result {
                RunResult::Finished { report } => ConsolidationResult::of(&report),
                RunResult::Failed { message } => ConsolidationResult::failed(message),
            };
            desktop.emit(AppEvent::Consolidated { result });
        }
    });
}

/// Tells the page how far a local model's loading is (a large model takes seconds), at
/// most ten times a second, and always when it is done.
pub fn follow_model_load(desktop: &Arc<Desktop>) {
    let mut loading = cairn_app::cairn_llm::local::load_progress();
    let desktop = desktop.clone();
    tauri::async_runtime::spawn(async move {
        let mut told = std::time::Instant::now() - Duration::from_secs(1);
        while loading.changed().await.is_ok() {
            let progress = *loading.borrow_and_update();
            if progress.is_none() || told.elapsed() >= Duration::from_millis(100) {
                told = std::time::Instant::now();
                desktop.emit(AppEvent::ModelLoad { progress });
            }
        }
    });
}

/// Sends the index status whenever it changes (checked a few times a second; reading it
/// is a few atomic loads).
pub fn follow_index(desktop: &Arc<Desktop>) {
    let desktop = Arc::downgrade(desktop);
    tauri::async_runtime::spawn(async move {
        let mut last = None;
        loop {
            let Some(d) = desktop.upgrade() else { return };
            if let Some(index) = d.index() {
                let status = index.status();
                if last.as_ref() != Some(&status) {
                    last = Some(status.clone());
                    d.emit(AppEvent::IndexStatus { status });
                }
            }
            drop(d);
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    });
}
