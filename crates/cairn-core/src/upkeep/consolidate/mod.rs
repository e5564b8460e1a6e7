//! Consolidation: merging the daily logs into MEMORY.md.
//!
//! A run takes the workspace's consolidation lock, reads MEMORY.md and the text of the
//! daily logs not merged yet (the watermark in the catalog says which), and asks the model
//! for the new MEMORY.md. The answer must pass the guards: not empty, within the size
//! budget, dropping no more than the allowed share of the old bullets. Then the old file
//! is copied to memory/archive/, the file on disk is compared with the one read at the
//! start (a user's edit wins: the run is deferred), and the new file is written
//! atomically. Only then does the watermark advance. Merged logs older than the archive
//! age move to memory/archive/.
//!
//! [`ConsolidationScheduler`] runs it in the background.

mod bullets;
mod logs;
mod options;
mod prompt;
mod report;
mod scheduler;
mod state;
mod write;

use std::sync::Arc;
use std::time::Instant;

use cairn_memory::{MemoryIndex, Workspace};
use chrono::{DateTime, Local, NaiveDate, Utc};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

pub use bullets::{bullets, diff, BulletDiff};
pub use options::ConsolidationOptions;
pub use report::{ConsolidateError, ConsolidationReport, ConsolidationStatus};
pub use scheduler::{ConsolidationScheduler, RunResult, SchedulerHandle, SchedulerStatus};

use self::logs::DailyLog;
use self::prompt::LogPart;
use self::state::Watermark;
use self::write::Replaced;
use super::clock::Clock;
use super::lock::JobLock;
use super::ModelChoice;

/// Name of the lock file in `.cairn/` held while a consolidation runs.
pub const LOCK_NAME: &str = "consolidate";

/// Whether a run may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    Write,
    /// Ask the model and report what would change; write nothing.
    DryRun,
}

/// Builds the model when a run has logs to offer.
pub type ModelLoader =
    Box<dyn Fn() -> BoxFuture<'static, Result<ModelChoice, ConsolidateError>> + Send + Sync>;

/// Where a consolidator's model comes from.
pub enum ModelSource {
    /// A model already built (the chat model shared, or a remote provider).
    Ready(ModelChoice),
    /// Built by each run that has logs to offer, and dropped when it ends: a run that
    /// finds nothing new loads no model (a local one takes seconds and its size in
    /// memory), and nothing stays loaded between runs.
    OnDemand(ModelLoader),
}

impl From<ModelChoice> for ModelSource {
    fn from(model: ModelChoice) -> Self {
        Self::Ready(model)
    }
}

impl ModelSource {
    async fn get(&self) -> Result<ModelChoice, ConsolidateError> {
        match self {
            Self::Ready(model) => Ok(model.clone()),
            Self::OnDemand(load) => load().await,
        }
    }
}

/// Consolidates one workspace's memory with one model.
pub struct Consolidator {
    workspace: Arc<Workspace>,
    model: ModelSource,
    options: ConsolidationOptions,
    clock: Arc<dyn Clock>,
    index: Option<MemoryIndex>,
}

/// What a run read at its start.
struct Plan {
    /// MEMORY.md as read (`None`: there is none).
    memory: Option<String>,
    logs: Vec<DailyLog>,
    watermark: Watermark,
    /// Indexes into `logs` of the logs offered to the model.
    offered: Vec<usize>,
}

impl Consolidator {
    pub fn new(
        workspace: Arc<Workspace>,
        model: impl Into<ModelSource>,
        options: ConsolidationOptions,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            workspace,
            model: model.into(),
            options,
            clock,
            index: None,
        }
    }

    /// Tells `index` about the files a run writes or moves, so they are searchable at once.
    pub fn with_index(mut self, index: MemoryIndex) -> Self {
        self.index = Some(index);
        self
    }

    pub fn options(&self) -> &ConsolidationOptions {
        &self.options
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// When the last run that counts for the timer ended, from the catalog (so the
    /// interval survives restarts and runs of other processes count).
    pub async fn last_run(&self) -> Result<Option<DateTime<Utc>>, ConsolidateError> {
        let workspace = self.workspace.clone();
        blocking(move || state::last_run(&state::open(&workspace)?)).await
    }

    /// One run. A run that cannot start or finish its work says so in the report's
    /// status (busy, rejected, deferred); errors are failures of the disk, the catalog or
    /// the model, and leave MEMORY.md and the watermark as they were.
    pub async fn run(
        &self,
        mode: RunMode,
        cancel: CancellationToken,
    ) -> Result<ConsolidationReport, ConsolidateError> {
        let started = Instant::now();
        let lock = JobLock::try_acquire(&self.workspace, LOCK_NAME)
            .map_err(|e| ConsolidateError::io(format!(".cairn/{LOCK_NAME}.lock"), e))?;
        let mut report = match lock {
            Some(_held) => self.run_locked(mode, cancel).await?,
            None => ConsolidationReport::new(ConsolidationStatus::Busy)
                .because("another consolidation of this workspace is running"),
        };
        report.took_ms = started.elapsed().as_millis() as u64;
        Ok(report)
    }

    async fn run_locked(
        &self,
        mode: RunMode,
        cancel: CancellationToken,
    ) -> Result<ConsolidationReport, ConsolidateError> {
        let (workspace, max_chars) = (self.workspace.clone(), self.options.max_log_chars);
        let plan = blocking(move || Plan::read(&workspace, max_chars)).await?;
        let mut report = ConsolidationReport::new(ConsolidationStatus::NothingNew);
        report.merged_logs = plan.offered_paths();
        if plan.offered.is_empty() {
            if mode == RunMode::Write {
                report.archived_logs = self.commit(plan).await?;
            }
            return Ok(report);
        }
        let old = plan.memory.clone().unwrap_or_default();
        let new = self.ask(&plan, &old, cancel).await?;
        let diff = bullets::diff(&old, &new);
        let refusal = self.refusal(&new, &diff);
        report.tally(diff, new.chars().count());
        if let Some(reason) = refusal {
            report.status = ConsolidationStatus::Rejected;
            report.reason = Some(reason);
            if mode == RunMode::Write {
                self.record_run().await?;
            }
            return Ok(report);
        }
        if mode == RunMode::DryRun {
            report.status = ConsolidationStatus::DryRun;
            return Ok(report);
        }
        report.status = ConsolidationStatus::Unchanged;
        if new.trim_end() != old.trim_end() {
            let (workspace, now) = (self.workspace.clone(), self.clock.now());
            let read = plan.memory.clone();
            match blocking(move || write::replace(&workspace, read.as_deref(), &new, now)).await? {
                Replaced::Written { backup } => report.backup = backup,
                Replaced::EditedMeanwhile => return Ok(report.deferred()),
            }
            report.status = ConsolidationStatus::Written;
            self.tell_index(&["MEMORY.md".to_string()]);
        }
        report.archived_logs = self.commit(plan).await?;
        Ok(report)
    }

    /// The model's new MEMORY.md for `old` and the offered logs.
    async fn ask(
        &self,
        plan: &Plan,
        old: &str,
        cancel: CancellationToken,
    ) -> Result<String, ConsolidateError> {
        let user = prompt::user(self.today(), old, &plan.parts());
        let system = prompt::system(self.options.budget_chars);
        let answer = self
            .model
            .get()
            .await?
            .complete(&system, user, self.options.max_tokens(), cancel)
            .await?;
        Ok(prompt::file_from_answer(&answer.text))
    }

    /// Why `new` must not replace MEMORY.md, if it must not.
    fn refusal(&self, new: &str, diff: &BulletDiff) -> Option<String> {
        let chars = new.chars().count();
        let budget = self.options.budget_chars;
        let share = diff.dropped_share();
        if new.trim().is_empty() {
            Some("the model's answer was empty".into())
        } else if chars > budget {
            Some(format!(
                "the new MEMORY.md would have {chars} characters, over the budget of {budget}"
            ))
        } else if share > self.options.max_dropped_share {
            let old = diff.kept + diff.removed.len();
            Some(format!(
                "the new MEMORY.md would drop {} of {old} bullets ({:.0}%), more than the \
                 allowed {:.0}%",
                diff.removed.len(),
                share * 100.0,
                self.options.max_dropped_share * 100.0
            ))
        } else {
            None
        }
    }

    /// After a run that merged the offered logs (or had none to merge): advance the
    /// watermark, archive old merged logs, record the run. Returns the archived logs.
    async fn commit(&self, plan: Plan) -> Result<Vec<String>, ConsolidateError> {
        let workspace = self.workspace.clone();
        let cutoff = self.archive_cutoff();
        let now = self.clock.now();
        let moved = blocking(move || {
            let catalog = state::open(&workspace)?;
            let Plan {
                logs,
                mut watermark,
                offered,
                ..
            } = plan;
            for log in offered.iter().filter_map(|&i| logs.get(i)) {
                watermark.mark(log);
            }
            watermark.save(&catalog)?;
            let moved = match cutoff {
                Some(cutoff) => logs::archive_old(&workspace, &logs, &mut watermark, cutoff)?,
                None => Vec::new(),
            };
            watermark.save(&catalog)?;
            state::set_last_run(&catalog, now)?;
            Ok(moved)
        })
        .await?;
        let changed: Vec<String> = moved.iter().flat_map(|(a, b)| [a, b]).cloned().collect();
        self.tell_index(&changed);
        Ok(moved.into_iter().map(|(from, _)| from).collect())
    }

    async fn record_run(&self) -> Result<(), ConsolidateError> {
        let (workspace, now) = (self.workspace.clone(), self.clock.now());
        blocking(move || state::set_last_run(&state::open(&workspace)?, now)).await
    }

    fn tell_index(&self, paths: &[String]) {
        if let (Some(index), false) = (&self.index, paths.is_empty()) {
            // A read-only index (another process writes it) follows the files itself.
            let _ = index.changed(paths);
        }
    }

    fn today(&self) -> NaiveDate {
        self.clock.now().with_timezone(&Local).date_naive()
    }

    /// Logs dated before this day are archived once merged (`None`: never).
    fn archive_cutoff(&self) -> Option<NaiveDate> {
        let days = self.options.archive_after_days;
        (days > 0).then(|| self.today() - chrono::Days::new(u64::from(days)))
    }
}

impl Plan {
    /// Reads MEMORY.md, the daily logs and the watermark; offers the logs with text not
    /// merged yet, oldest first, up to `max_chars` of it (at least one log).
    fn read(workspace: &Workspace, max_chars: usize) -> Result<Self, ConsolidateError> {
        let memory = write::read_memory(workspace)?;
        let logs = logs::daily_logs(workspace)?;
        let watermark = Watermark::load(&state::open(workspace)?)?;
        let mut offered = Vec::new();
        let mut total = 0;
        for (i, log) in logs.iter().enumerate() {
            let Some(text) = watermark.unmerged(log) else {
                continue;
            };
            total += text.chars().count();
            if total > max_chars && !offered.is_empty() {
                break;
            }
            offered.push(i);
        }
        Ok(Self {
            memory,
            logs,
            watermark,
            offered,
        })
    }

    fn offered_logs(&self) -> impl Iterator<Item = &DailyLog> {
        self.offered.iter().filter_map(|&i| self.logs.get(i))
    }

    fn offered_paths(&self) -> Vec<String> {
        self.offered_logs()
            .map(|log| log.relative.clone())
            .collect()
    }

    fn parts(&self) -> Vec<LogPart<'_>> {
        self.offered_logs()
            .filter_map(|log| {
                let text = self.watermark.unmerged(log)?;
                Some(LogPart {
                    relative: &log.relative,
                    text,
                    tail: text.len() < log.text.len(),
                })
            })
            .collect()
    }
}

impl ConsolidationReport {
    /// Records what the rewrite (of `chars` characters) does to the bullets.
    fn tally(&mut self, diff: BulletDiff, chars: usize) {
        self.added = diff.added.len();
        self.removed = diff.removed.len();
        self.kept = diff.kept;
        self.chars = Some(chars);
        self.added_bullets = diff.added;
        self.removed_bullets = diff.removed;
    }

    fn deferred(mut self) -> Self {
        self.status = ConsolidationStatus::Deferred;
        self.reason = Some(
            "MEMORY.md changed while the model was working; the rewrite was discarded to keep \
             that edit and will be tried again later"
                .into(),
        );
        self.backup = None;
        self
    }
}

/// Runs blocking file and catalog work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ConsolidateError> + Send + 'static,
) -> Result<T, ConsolidateError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ConsolidateError::Task(e.to_string()))?
}
