//! Compaction that does not stop the run (`[compaction] mode = "background"`): when the
//! conversation passes a share of the room before the window (75% by default), the
//! summary of its older part is asked for while the run goes on; it is swapped in at the
//! next save point after it is ready. At the limit, a summary under way is waited for; one
//! that failed, or one made for a path that has changed since (a branch, another
//! compaction), gives way to the compaction inline. A summary still under way when a run
//! ends is kept for the agent's next run.

use std::time::Instant;

use cairn_protocol::{AgentEvent, EntryKind, NoticeLevel, Outcome, Phase};

use super::flow::{Flow, Run};
use super::inner::Inner;
use super::upkeep::{latest_compaction, summarise_entries, Summary};

/// A summary asked for in the background, or why the last one failed.
pub(crate) enum Background {
    Running(Summarising),
    /// The last one failed: the next compaction happens inline, at the limit.
    Failed,
}

/// A summary being written while the run goes on. Dropped, it stops.
pub(crate) struct Summarising {
    task: tokio::task::JoinHandle<Result<Summary, String>>,
    /// The first entry the summary keeps as it is.
    first_kept_id: String,
    /// The latest compaction on the path when it was asked for.
    after_compaction: Option<String>,
    started: Instant,
}

impl Drop for Summarising {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Inner {
    /// Whether a summary is being written in the background (the context meter says
    /// "compacting…").
    pub(crate) fn compacting_in_background(&self) -> bool {
        matches!(*self.background(), Some(Background::Running(_)))
    }

    /// Forgets a background summary (a compaction inline supersedes it); one under way
    /// stops, and front ends are told it ended.
    pub(crate) fn discard_background(&self) {
        let taken = self.background().take();
        if let Some(Background::Running(_)) = taken {
            self.events.emit(AgentEvent::CompactionEnd {
                tokens_before: 0,
                tokens_after: 0,
            });
        }
    }

    fn background(&self) -> std::sync::MutexGuard<'_, Option<Background>> {
        self.background
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Run {
    /// Whether summaries are asked for before they are needed.
    pub(super) fn compacts_in_background(&self) -> bool {
        let context = &self.settings.config.context;
        context.compaction && context.background
    }

    /// Starts the summary of the older conversation in the background, unless one is under
    /// way, the last one failed, or there is nothing old enough to summarise.
    pub(super) fn start_background_summary(&mut self, needed: u64, window: u64) {
        if self.inner.background().is_some() {
            return;
        }
        let Ok(plan) = self.plan_summary() else {
            return;
        };
        let model = self.summary_model();
        let (previous, entries) = (plan.previous, plan.entries);
        let task = tokio::spawn(async move {
            summarise_entries(&model, previous.as_deref(), entries, None).await
        });
        *self.inner.background() = Some(Background::Running(Summarising {
            task,
            first_kept_id: plan.first_kept_id,
            after_compaction: plan.after_compaction,
            started: Instant::now(),
        }));
        self.inner.events.emit(AgentEvent::CompactionStart {
            reason: format!(
                "the conversation (about {needed} tokens) passed {}% of the room in the \
                 model's window of {window}; summarising in the background",
                self.settings.config.context.start_percent
            ),
            background: true,
        });
    }

    /// Swaps in a background summary that is ready; with `wait`, waits for one under way
    /// (the run is at the limit). `Some(true)`: the conversation was compacted;
    /// `Some(false)`: the summary failed or no longer fits the path (compact inline);
    /// `None`: nothing was under way, or it is not ready yet.
    pub(super) async fn swap_in_background(&mut self, wait: bool) -> Flow<Option<bool>> {
        let summarising = {
            let mut slot = self.inner.background();
            match slot.as_ref() {
                Some(Background::Running(s)) if wait || s.task.is_finished() => {}
                Some(Background::Failed) if wait => return Ok(Some(false)),
                _ => return Ok(None),
            }
            match slot.take() {
                Some(Background::Running(s)) => s,
                _ => return Ok(None),
            }
        };
        let mut summarising = summarising;
        if wait {
            self.set_phase(Phase::Compaction);
        }
        let done = tokio::select! {
            done = &mut summarising.task => done,
            () = self.cancel.cancelled() => return Err(Outcome::Aborted),
        };
        if wait {
            self.set_phase(Phase::Turn);
        }
        let summary = match done {
            Ok(Ok(summary)) => summary,
            Ok(Err(why)) => return Ok(Some(self.background_failed(&why))),
            Err(e) => return Ok(Some(self.background_failed(&e.to_string()))),
        };
        let fits = {
            let tree = self.inner.session();
            let visible = tree.visible_path();
            visible.iter().any(|e| e.id == summarising.first_kept_id)
                && latest_compaction(&visible) == summarising.after_compaction
        };
        if !fits {
            // The conversation moved on another way (a branch, a compaction by hand): the
            // summary is of a path that is not this one. A new one starts when needed.
            self.inner.events.emit(AgentEvent::CompactionEnd {
                tokens_before: 0,
                tokens_after: 0,
            });
            return Ok(Some(false));
        }
        let tokens_before = self.estimate_request();
        self.record(EntryKind::Compaction {
            summary: summary.text,
            first_kept_id: summarising.first_kept_id.clone(),
            tokens_before,
        })
        .await?;
        self.save_point(false).await?;
        // The workspace context is rebuilt, never summarised away.
        self.gather().await;
        self.calibrate(None);
        let tokens_after = self.estimate_request();
        tracing::info!(
            took_ms = summarising.started.elapsed().as_millis() as u64,
            tokens_before,
            tokens_after,
            "background summary swapped in"
        );
        self.tell_dropped(summary.dropped);
        self.inner.events.emit(AgentEvent::CompactionEnd {
            tokens_before,
            tokens_after,
        });
        Ok(Some(true))
    }

    /// A background summary failed: said, remembered (the compaction at the limit happens
    /// inline), and front ends told it ended.
    fn background_failed(&self, why: &str) -> bool {
        *self.inner.background() = Some(Background::Failed);
        self.notice(
            NoticeLevel::Warning,
            format!("the summary in the background failed ({why}); the conversation will be compacted when it reaches the limit"),
        );
        self.inner.events.emit(AgentEvent::CompactionEnd {
            tokens_before: 0,
            tokens_after: 0,
        });
        false
    }
}
