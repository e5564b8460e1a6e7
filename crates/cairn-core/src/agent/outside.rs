//! Structural operations while no run is going on: moving the leaf (with a summary of
//! the branch left, if asked), titles, compaction on demand.

use std::sync::Arc;

use cairn_protocol::{AgentEvent, EntryKind, NoticeLevel, Phase, SessionEntry};
use tokio_util::sync::CancellationToken;

use super::flow::Run;
use super::upkeep::ask;
use super::{CompactionReport, Inner};
use crate::error::HarnessError;
use crate::upkeep::transcript::{has_conversation, render};
use crate::upkeep::{compact, ModelChoice};

/// Holds the agent out of `Idle` for a structural operation; back to idle on drop.
pub(super) struct IdleGuard<'a> {
    inner: &'a Inner,
}

impl<'a> IdleGuard<'a> {
    pub fn acquire(inner: &'a Inner, what: &str) -> Result<Self, HarnessError> {
        let mut state = inner.state();
        if state.phase != Phase::Idle {
            return Err(HarnessError::Busy(format!("{what} needs the agent idle")));
        }
        state.phase = Phase::Turn;
        Ok(Self { inner })
    }
}

impl Drop for IdleGuard<'_> {
    fn drop(&mut self) {
        self.inner.state().phase = Phase::Idle;
        self.inner.idle.notify_waiters();
    }
}

/// Appends an entry while no run is going on (navigation, titles) and syncs it.
pub(super) async fn record_outside_run(
    inner: &Arc<Inner>,
    kind: EntryKind,
) -> Result<(), HarnessError> {
    let mut run = Run::new(inner.clone(), CancellationToken::new(), String::new());
    let saved = match run.record(kind).await {
        Ok(_) => run.save_point(true).await,
        Err(outcome) => Err(outcome),
    };
    saved.map_err(|outcome| HarnessError::SessionFormat {
        path: inner.workspace.sessions_dir(),
        message: format!("{outcome:?}"),
    })
}

/// A compaction asked for while no run is going on.
pub(super) async fn compact_outside_run(
    inner: &Arc<Inner>,
    instructions: Option<&str>,
) -> Result<CompactionReport, HarnessError> {
    let mut run = Run::new(inner.clone(), CancellationToken::new(), String::new());
    run.gather().await;
    let compacted = run.compact("asked for", instructions).await;
    let saved = run.save_point(true).await;
    announce_idle(inner);
    let report = match (compacted, saved) {
        (Ok(report), Ok(())) => report,
        (Err(outcome), _) | (_, Err(outcome)) => {
            return Err(HarnessError::SessionFormat {
                path: inner.workspace.sessions_dir(),
                message: format!("{outcome:?}"),
            })
        }
    };
    report.map_err(HarnessError::Compaction)
}

/// Moves the active leaf to `target` and, when the branch left holds conversation, records
/// a summary of it at the new place so the next turns know what was tried there. Returns
/// the summary. A summary that fails is told; the move happens either way.
pub(super) async fn navigate_summarised(
    inner: &Arc<Inner>,
    target: Option<&str>,
) -> Result<Option<String>, HarnessError> {
    let (left, from_id) = {
        let tree = inner.session();
        let old = tree.active_path();
        let new = tree.path_to(target);
        let common = old
            .iter()
            .zip(&new)
            .take_while(|(a, b)| a.id == b.id)
            .count();
        let left: Vec<SessionEntry> = old[common..].iter().map(|e| (*e).clone()).collect();
        (left, tree.leaf().map(str::to_string))
    };
    let mut run = Run::new(inner.clone(), CancellationToken::new(), String::new());
    let left: Vec<&SessionEntry> = left.iter().collect();
    let announced = from_id.is_some() && has_conversation(&left);
    let summary = match from_id {
        Some(from_id) if announced => {
            run.set_phase(Phase::BranchSummary);
            let model = inner
                .upkeep
                .compaction
                .clone()
                .unwrap_or_else(|| {
                    ModelChoice::new(
                        run.settings.provider.clone(),
                        run.settings.config.model.clone(),
                    )
                })
                .with_timeout(run.settings.config.timeouts.compaction);
            let prompt = compact::branch_prompt(&render(&left));
            let answer = ask(&model, compact::BRANCH_SYSTEM, prompt, 1_024).await;
            run.set_phase(Phase::Turn);
            match answer {
                Ok(answer) if !answer.text.trim().is_empty() => {
                    Some((from_id, answer.text.trim().to_string()))
                }
                Ok(_) => None,
                Err(message) => {
                    run.notice(
                        NoticeLevel::Warning,
                        format!("the branch left was not summarised: {message}"),
                    );
                    None
                }
            }
        }
        _ => None,
    };
    let target = target.map(str::to_string);
    let mut recorded = run
        .record(EntryKind::Leaf { target_id: target })
        .await
        .map(drop);
    if let (Ok(()), Some((from_id, summary))) = (&recorded, &summary) {
        recorded = run
            .record(EntryKind::BranchSummary {
                from_id: from_id.clone(),
                summary: summary.clone(),
            })
            .await
            .map(drop);
    }
    let saved = match recorded {
        Ok(()) => run.save_point(true).await,
        Err(outcome) => Err(outcome),
    };
    if announced {
        announce_idle(inner);
    }
    saved.map_err(|outcome| HarnessError::SessionFormat {
        path: inner.workspace.sessions_dir(),
        message: format!("{outcome:?}"),
    })?;
    Ok(summary.map(|(_, text)| text))
}

/// Tells subscribers the agent is idle again after an operation that announced other
/// phases (the guard sets the state itself when it drops).
fn announce_idle(inner: &Inner) {
    inner
        .events
        .emit(AgentEvent::PhaseChanged { phase: Phase::Idle });
}
