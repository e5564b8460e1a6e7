//! Consolidation in the background: every `interval` after the last run (the last run is
//! read from the catalog, so the interval survives restarts and counts runs of other
//! processes), after a flush once `after_flush_gap` has passed since the last run, and on
//! demand. One task runs them one at a time; the workspace lock keeps other processes out.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use tokio::sync::{mpsc, oneshot, watch, Notify};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{ConsolidateError, ConsolidationReport, ConsolidationStatus, Consolidator, RunMode};

/// What the scheduler is doing, for a status line.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct SchedulerStatus {
    /// The last run that counts for the timer (from any process).
    pub last_run: Option<DateTime<Utc>>,
    /// When the next background run is due (`None`: background runs are off).
    pub next_run: Option<DateTime<Utc>>,
    pub running: bool,
    /// Runs this scheduler finished (or failed).
    pub runs: u64,
    pub last_result: Option<RunResult>,
}

/// How the scheduler's last run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunResult {
    Finished { report: ConsolidationReport },
    Failed { message: String },
}

type Reply = oneshot::Sender<Result<ConsolidationReport, ConsolidateError>>;

/// Starts the background task.
pub struct ConsolidationScheduler;

impl ConsolidationScheduler {
    /// Runs `consolidator` on its clock's timers, and soon after `flushed` is notified
    /// (the agent does after each flush that wrote facts). Must be called inside a tokio
    /// runtime.
    pub fn spawn(consolidator: Arc<Consolidator>, flushed: Arc<Notify>) -> SchedulerHandle {
        let (requests, receiver) = mpsc::unbounded_channel();
        let (status, watcher) = watch::channel(SchedulerStatus::default());
        let cancel = CancellationToken::new();
        let scheduler = Scheduler {
            consolidator,
            flushed,
            requests: receiver,
            status,
            cancel: cancel.clone(),
            last_run: None,
            retry_at: None,
            flush_pending: false,
        };
        SchedulerHandle {
            requests,
            status: watcher,
            cancel,
            task: Some(tokio::spawn(scheduler.run())),
        }
    }
}

/// Talks to the background task; dropping it stops the task (a run in progress is
/// cancelled and writes nothing).
pub struct SchedulerHandle {
    requests: mpsc::UnboundedSender<Reply>,
    status: watch::Receiver<SchedulerStatus>,
    cancel: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl SchedulerHandle {
    /// Runs a consolidation now (after the one in progress, if any) and returns its report.
    pub async fn run_now(&self) -> Result<ConsolidationReport, ConsolidateError> {
        let (reply, answer) = oneshot::channel();
        self.requests
            .send(reply)
            .map_err(|_| ConsolidateError::Stopped)?;
        answer.await.map_err(|_| ConsolidateError::Stopped)?
    }

    pub fn status(&self) -> SchedulerStatus {
        self.status.borrow().clone()
    }

    /// Status changes as they happen.
    pub fn subscribe(&self) -> watch::Receiver<SchedulerStatus> {
        self.status.clone()
    }

    /// Stops the task (cancelling a run in progress) and waits for it to end.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for SchedulerHandle {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

struct Scheduler {
    consolidator: Arc<Consolidator>,
    flushed: Arc<Notify>,
    requests: mpsc::UnboundedReceiver<Reply>,
    status: watch::Sender<SchedulerStatus>,
    cancel: CancellationToken,
    last_run: Option<DateTime<Utc>>,
    /// Set after a run that could not finish: the next try, instead of the timers.
    retry_at: Option<DateTime<Utc>>,
    /// A flush happened since the last run.
    flush_pending: bool,
}

impl Scheduler {
    async fn run(mut self) {
        loop {
            self.refresh_last_run().await;
            let next = self.next_due();
            let last_run = self.last_run;
            self.status.send_modify(|s| {
                s.last_run = last_run;
                s.next_run = next;
            });
            let clock = self.consolidator.clock().clone();
            let due = async move {
                match next {
                    Some(deadline) => clock.sleep_until(deadline).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = self.cancel.cancelled() => return,
                request = self.requests.recv() => match request {
                    Some(reply) => {
                        let result = self.run_once().await;
                        let _ = reply.send(result);
                    }
                    None => return,
                },
                () = self.flushed.notified() => self.flush_pending = true,
                () = due => {
                    let _ = self.run_once().await;
                }
            }
        }
    }

    /// When the next background run is due; `None` when background runs are off.
    fn next_due(&self) -> Option<DateTime<Utc>> {
        let options = self.consolidator.options();
        let interval = chrono::Duration::from_std(options.interval?).ok()?;
        if let Some(retry) = self.retry_at {
            return Some(retry);
        }
        let now = self.consolidator.clock().now();
        let after = |gap| self.last_run.map_or(now, |last| last + gap);
        let mut due = after(interval);
        if self.flush_pending {
            let gap = chrono::Duration::from_std(options.after_flush_gap).unwrap_or_default();
            due = due.min(after(gap));
        }
        Some(due)
    }

    async fn refresh_last_run(&mut self) {
        match self.consolidator.last_run().await {
            Ok(last) => self.last_run = last.max(self.last_run),
            Err(e) => tracing::warn!("consolidation: cannot read the last run: {e}"),
        }
    }

    async fn run_once(&mut self) -> Result<ConsolidationReport, ConsolidateError> {
        self.status.send_modify(|s| s.running = true);
        let result = self
            .consolidator
            .run(RunMode::Write, self.cancel.child_token())
            .await;
        let unfinished = match &result {
            Ok(report) => matches!(
                report.status,
                ConsolidationStatus::Deferred | ConsolidationStatus::Busy
            ),
            Err(_) => true,
        };
        let retry_after =
            chrono::Duration::from_std(self.consolidator.options().retry_after).unwrap_or_default();
        self.retry_at = unfinished.then(|| self.consolidator.clock().now() + retry_after);
        self.flush_pending = false;
        let last_result = match &result {
            Ok(report) => RunResult::Finished {
                report: report.clone(),
            },
            Err(e) => {
                tracing::warn!("consolidation failed: {e}");
                RunResult::Failed {
                    message: e.to_string(),
                }
            }
        };
        self.status.send_modify(|s| {
            s.running = false;
            s.runs += 1;
            s.last_result = Some(last_result);
        });
        result
    }
}
