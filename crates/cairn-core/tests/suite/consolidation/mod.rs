//! Consolidation of daily logs into MEMORY.md: the guards of one run (`guards.rs`), links
//! planted in the workspace (`planted.rs`), and the background scheduler on a manual clock
//! (`scheduler.rs`).

mod guards;
#[cfg(unix)]
mod planted;
mod scheduler;
mod stress;

use std::sync::Arc;

use async_trait::async_trait;
use cairn_core::upkeep::{
    ConsolidationOptions, ConsolidationReport, Consolidator, ManualClock, ModelChoice, RunMode,
};
use cairn_llm::{
    ChatRequest, EventStream, LlmError, Provider, ProviderInfo, ScriptedProvider, ScriptedTurn,
};
use cairn_memory::Workspace;
use chrono::{DateTime, Utc};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// MEMORY.md before the runs: four bullets.
const MEMORY_MD: &str = "# Memory\n\n## People\n- Ana leads the garden project.\n\
                         - Ben fixes the bikes.\n\n## Preferences\n- Prefers tea over coffee.\n\
                         - Works from home on Fridays.\n";

/// Yesterday's daily log (the clock starts on 2026-03-10).
const LOG: &str = "memory/2026-03-09.md";
const LOG_TEXT: &str = "# 2026-03-09\n\n- 09:00 — Ana moved the garden meeting to Thursdays.\n\
                        - 10:00 — Booked the dentist for March 14.\n";

/// A good rewrite: every old fact kept (one merged), one added.
const MERGED: &str = "# Memory\n\n## People\n\
                      - Ana leads the garden project; its meeting is on Thursdays.\n\
                      - Ben fixes the bikes.\n\n## Preferences\n- Prefers tea over coffee.\n\
                      - Works from home on Fridays.\n\n## Dates\n- Dentist on March 14.\n";

fn start() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-03-10T12:00:00Z")
        .unwrap()
        .to_utc()
}

struct Fixture {
    _dir: tempfile::TempDir,
    workspace: Arc<Workspace>,
    clock: ManualClock,
    provider: Arc<ScriptedProvider>,
    gate: Option<Arc<Gate>>,
}

/// A workspace holding [`MEMORY_MD`] and [`LOG`], a manual clock at [`start`], and a model
/// answering `answers` in order.
fn fixture(answers: &[&str]) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Arc::new(Workspace::open_or_create(dir.path()).unwrap());
    let turns = answers.iter().map(|a| ScriptedTurn::text(*a)).collect();
    let fixture = Fixture {
        _dir: dir,
        workspace,
        clock: ManualClock::new(start()),
        provider: Arc::new(ScriptedProvider::new(turns)),
        gate: None,
    };
    fixture.write("MEMORY.md", MEMORY_MD);
    fixture.write(LOG, LOG_TEXT);
    fixture
}

impl Fixture {
    /// The model answers every request with what `f` makes of it.
    fn responding(
        mut self,
        f: impl Fn(&ChatRequest) -> ScriptedTurn + Send + Sync + 'static,
    ) -> Self {
        self.provider = Arc::new(ScriptedProvider::with_responder(f).recording());
        self
    }

    fn write(&self, path: &str, text: &str) {
        let path = self.workspace.root().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn append(&self, path: &str, text: &str) {
        let old = self.read(path);
        self.write(path, &format!("{old}{text}"));
    }

    fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.workspace.root().join(path)).unwrap()
    }

    fn exists(&self, path: &str) -> bool {
        self.workspace.root().join(path).exists()
    }

    /// The files in memory/archive/, sorted.
    fn archive(&self) -> Vec<String> {
        let dir = self.workspace.root().join("memory/archive");
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Makes the model's calls wait until [`Gate::release`]d (after saying they started).
    fn gated(mut self) -> Self {
        self.gate = Some(Arc::new(Gate::default()));
        self
    }

    fn consolidator(&self) -> Consolidator {
        self.consolidator_with(ConsolidationOptions::default())
    }

    fn consolidator_with(&self, options: ConsolidationOptions) -> Consolidator {
        let provider: Arc<dyn Provider> = match &self.gate {
            Some(gate) => Arc::new(Gated {
                inner: self.provider.clone(),
                gate: gate.clone(),
            }),
            None => self.provider.clone(),
        };
        Consolidator::new(
            self.workspace.clone(),
            ModelChoice::new(provider, "consolidation-model"),
            options,
            Arc::new(self.clock.clone()),
        )
    }

    /// The user messages the model received, one per call.
    fn asked(&self) -> Vec<String> {
        self.provider
            .requests()
            .iter()
            .map(|r| r.messages[0].text())
            .collect()
    }
}

async fn run(consolidator: &Consolidator, mode: RunMode) -> ConsolidationReport {
    let mut report = consolidator
        .run(mode, CancellationToken::new())
        .await
        .unwrap();
    report.took_ms = 0;
    report
}

#[derive(Default)]
struct Gate {
    started: Notify,
    release: Notify,
}

/// A provider whose calls wait at a gate before the scripted answer streams.
struct Gated {
    inner: Arc<ScriptedProvider>,
    gate: Arc<Gate>,
}

#[async_trait]
impl Provider for Gated {
    fn info(&self) -> ProviderInfo {
        self.inner.info()
    }

    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, LlmError> {
        self.gate.started.notify_one();
        self.gate.release.notified().await;
        self.inner.stream(request, cancel).await
    }
}
