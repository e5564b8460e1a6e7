//! The run's memory upkeep: flushing durable facts to the daily log, and compacting the
//! conversation when it nears the context window.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use cairn_llm::LlmError;
use cairn_protocol::{
    AgentEvent, EntryKind, ErrorInfo, ErrorKind, NoticeLevel, Outcome, Phase, SessionEntry, Usage,
};
use chrono::{Duration as Days, Local};
use tokio_util::sync::CancellationToken;

use super::flow::{Flow, Run};
use crate::upkeep::transcript::{estimate_text, has_conversation, render};
use crate::upkeep::{compact, flush, ModelChoice};

/// Longest a flush or a summary may take before it is given up (and tried again later).
const UPKEEP_TIMEOUT: Duration = Duration::from_secs(180);
/// How many days of daily logs are searched for the receipts of earlier flushes.
const RECEIPT_DAYS: i64 = 7;
/// How many times a summary that does not fit the compaction model is retried with its
/// oldest quarter dropped.
const SHRINK_ATTEMPTS: usize = 4;

/// What a compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionReport {
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// What the summary request cost.
    pub usage: Usage,
    pub took: Duration,
    /// Oldest messages left out of the summary because they did not fit its model.
    pub dropped_messages: usize,
}

impl Run {
    /// Flushes the part of the conversation not yet flushed. Failures are told to the
    /// user and leave the part unflushed, so the next flush tries it again.
    pub(super) async fn flush_memory(&mut self) {
        let Some(model) = self.inner.upkeep.flush.clone() else {
            return;
        };
        let model = model.with_timeout(self.settings.config.timeouts.memory_flush);
        if let Err(message) = self.try_flush(&model).await {
            self.notice(
                NoticeLevel::Warning,
                format!(
                    "memory flush failed, it will be tried again after the next run: {message}"
                ),
            );
        }
    }

    async fn try_flush(&mut self, model: &ModelChoice) -> Result<(), String> {
        let now = Local::now();
        // Receipts of flushes whose marker did not reach the session, from the last week.
        let dates: Vec<_> = (0..RECEIPT_DAYS)
            .map(|back| now.date_naive() - Days::days(back))
            .collect();
        let workspace = self.inner.workspace.clone();
        let session_id = self.session_id.clone();
        let receipts = flush::receipts(&workspace, &session_id, &dates);
        let (pending, title) = {
            let tree = self.inner.session();
            let path = tree.active_path();
            let position: HashMap<&str, usize> = path
                .iter()
                .enumerate()
                .map(|(i, e)| (e.id.as_str(), i))
                .collect();
            let marked = tree.entries().iter().filter_map(|e| match &e.kind {
                EntryKind::MemoryFlush { up_to_id } => position.get(up_to_id.as_str()).copied(),
                _ => None,
            });
            let from_marker = marked.max();
            let from_logs = receipts
                .iter()
                .filter_map(|id| position.get(id.as_str()).copied())
                .max();
            let start = from_marker.max(from_logs).map_or(0, |i| i + 1);
            let pending: Vec<SessionEntry> = path[start..].iter().map(|e| (*e).clone()).collect();
            // Bullets already written (found in a log) but not marked: mark them first.
            let receipt_ahead = match (from_logs, from_marker) {
                (Some(log), marker) if marker.is_none_or(|m| log > m) => Some(path[log].id.clone()),
                _ => None,
            };
            let title = tree.title().unwrap_or("session").to_string();
            ((pending, receipt_ahead), title)
        };
        let (pending, receipt_ahead) = pending;
        if let Some(up_to_id) = receipt_ahead {
            self.mark_flushed(up_to_id).await?;
        }
        for stretch in stretches(&pending) {
            let Some(last) = stretch.last() else { continue };
            let up_to_id = last.id.clone();
            if !has_conversation(&stretch) {
                self.mark_flushed(up_to_id).await?;
                continue;
            }
            let memory_md = flush::read_or_empty(&workspace, "MEMORY.md")
                .map_err(|e| format!("cannot read MEMORY.md: {e}"))?;
            let today = cairn_memory::daily_log::read(&workspace, now.date_naive())
                .map_err(|e| format!("cannot read today's log: {e}"))?;
            // Summaries are made of what was flushed before: only messages are read.
            let messages: Vec<&SessionEntry> = stretch
                .iter()
                .copied()
                .filter(|e| matches!(e.kind, EntryKind::Message { .. }))
                .collect();
            let prompt = flush::prompt(&memory_md, &today, &render(&messages));
            let answer = ask(model, flush::SYSTEM, prompt, 1_024).await?;
            let bullets = match flush::parse(&answer.text)? {
                flush::Extracted::Nothing => Vec::new(),
                flush::Extracted::Bullets(b) => flush::new_bullets(b, &[&memory_md, &today]),
            };
            if !bullets.is_empty() {
                let origin = flush::Origin {
                    session_id: &session_id,
                    title: &title,
                    entry_id: &up_to_id,
                };
                let path = flush::append(&workspace, Local::now(), &origin, &bullets)
                    .map_err(|e| format!("cannot write today's log: {e}"))?;
                if let Some(memory) = &self.inner.memory {
                    let _ = memory.changed(std::slice::from_ref(&path));
                }
                self.inner.events.emit(AgentEvent::MemoryFlushed {
                    path,
                    bullets: bullets.len() as u32,
                });
                if let Some(flushed) = &self.inner.upkeep.flushed {
                    flushed.notify_one();
                }
            }
            self.mark_flushed(up_to_id).await?;
        }
        Ok(())
    }

    /// Records how far memory has been flushed, on disk before returning.
    async fn mark_flushed(&mut self, up_to_id: String) -> Result<(), String> {
        let recorded = match self.record(EntryKind::MemoryFlush { up_to_id }).await {
            Ok(_) => self.save_point(true).await,
            Err(outcome) => Err(outcome),
        };
        recorded.map_err(|outcome| format!("cannot record the flush in the session: {outcome:?}"))
    }

    /// The estimated size of the next request, in tokens, before correction.
    pub(super) fn estimate_raw(&self) -> u64 {
        let messages = self.inner.session().context_tokens();
        messages + self.settings.tools.estimated_tokens() + estimate_text(&self.system_prompt)
    }

    /// The estimated size of the next request, in tokens, corrected by how the provider's
    /// count for the last request compared with its estimate.
    pub(super) fn estimate_request(&self) -> u64 {
        let estimate = self.estimate_raw();
        calibrated(estimate, self.calibration.as_ref())
    }

    /// Before a threshold is judged on an estimate alone, the request is counted by the
    /// chat model's own tokenizer, once, when one is at hand (the local model's vocabulary,
    /// OpenAI's encodings, Anthropic's count), and the count corrects the estimates.
    async fn count_when_near(&mut self, limit: u64) {
        if self.calibration.is_some() || self.count_tried {
            return;
        }
        if self.estimate_raw() < limit / 2 {
            return;
        }
        self.count_tried = true;
        let request = self.build_request();
        let estimated = self.estimate_raw();
        let provider = self.settings.provider.clone();
        let counted = tokio::select! {
            counted = provider.count_tokens(&request) => counted,
            () = self.cancel.cancelled() => None,
        };
        if let Some(counted) = counted.filter(|c| c.tokens > 0) {
            self.calibrate(Some(super::flow::Calibration {
                counted: counted.tokens,
                estimated,
                by: counted.by,
            }));
        }
    }

    /// Compacts first when the next request would pass the window minus the reserve.
    /// In the background mode, a summary that is ready is swapped in first, and one is
    /// asked for once the conversation passes the start share; at the limit one under way
    /// is waited for. A compaction that fails is told and the run goes on: the provider may
    /// still take the request, and an overflow it reports gets one more try.
    pub(super) async fn ensure_room(&mut self) -> Flow {
        if !self.settings.config.context.compaction {
            return Ok(());
        }
        if self.compacts_in_background() {
            self.swap_in_background(false).await?;
        }
        let info = self.settings.provider.info();
        let (window, reserve, keep) = self.settings.config.context.resolve(info.context_window);
        let limit = window.saturating_sub(reserve);
        self.count_when_near(limit).await;
        let mut needed = self.estimate_request();
        if needed <= limit {
            let start = limit * u64::from(self.settings.config.context.start_percent) / 100;
            if self.compacts_in_background() && needed >= start {
                self.start_background_summary(needed, window);
            }
            return Ok(());
        }
        // Pruning old tool output costs no model call and keeps every message: first.
        if self.prune_tool_output(keep).await? > 0 {
            needed = self.estimate_request();
            if needed <= limit {
                return Ok(());
            }
        }
        if self.swap_in_background(true).await? == Some(true) {
            needed = self.estimate_request();
            if needed <= limit {
                return Ok(());
            }
        }
        let reason = format!(
            "the conversation (about {needed} tokens) nears the model's window of {window}"
        );
        if let Err(message) = self.compact(&reason, None).await? {
            self.notice(
                NoticeLevel::Warning,
                format!("compaction failed: {message}"),
            );
        }
        Ok(())
    }

    /// A step the provider refused as too long for its window: one forced compaction, then
    /// the same step again. With compaction off (or when it fails) the run ends saying why.
    pub(super) async fn recover_from_overflow(
        &mut self,
        error: ErrorInfo,
    ) -> Flow<cairn_protocol::AssistantMessage> {
        let failed = |why: String| Outcome::Failed {
            error: ErrorInfo::new(
                ErrorKind::ContextOverflow,
                format!("{}; {why}", error.message),
            ),
        };
        if !self.settings.config.context.compaction {
            return Err(failed(
                "compaction is off (`[compaction] enabled = false`): compact by hand, or \
                 start a new session"
                    .into(),
            ));
        }
        let reason = format!(
            "the provider said the request is too long: {}",
            error.message
        );
        match self.compact(&reason, None).await? {
            Ok(_) => self.model_step().await,
            Err(why) => Err(failed(format!("compaction failed: {why}"))),
        }
    }

    /// Flushes, then replaces the older part of the conversation with a summary. The
    /// inner `Err` says why nothing was compacted.
    pub(super) async fn compact(
        &mut self,
        reason: &str,
        instructions: Option<&str>,
    ) -> Flow<Result<CompactionReport, String>> {
        let started = Instant::now();
        // This one supersedes a summary being written in the background.
        self.inner.discard_background();
        self.set_phase(Phase::Compaction);
        self.inner.events.emit(AgentEvent::CompactionStart {
            reason: reason.to_string(),
            background: false,
        });
        self.flush_memory().await;
        let result = self.summarise(instructions).await;
        let report = match result {
            Ok((summary, first_kept_id, usage, dropped)) => {
                let tokens_before = self.estimate_request();
                self.record(EntryKind::Compaction {
                    summary,
                    first_kept_id,
                    tokens_before,
                })
                .await?;
                self.save_point(false).await?;
                // The workspace context is rebuilt, never summarised away.
                self.gather().await;
                let tokens_after = self.estimate_request();
                self.calibrate(None);
                Ok(CompactionReport {
                    tokens_before,
                    tokens_after,
                    usage,
                    took: started.elapsed(),
                    dropped_messages: dropped,
                })
            }
            Err(message) => Err(message),
        };
        let (before, after) = match &report {
            Ok(r) => (r.tokens_before, r.tokens_after),
            Err(_) => (0, 0),
        };
        self.inner.events.emit(AgentEvent::CompactionEnd {
            tokens_before: before,
            tokens_after: after,
        });
        self.set_phase(Phase::Turn);
        Ok(report)
    }

    /// Asks for the summary of everything before the cut. On a context overflow of the
    /// compaction model, the oldest quarter of what is summarised is dropped and the user
    /// told, up to a few times.
    async fn summarise(
        &mut self,
        instructions: Option<&str>,
    ) -> Result<(String, String, Usage, usize), String> {
        let plan = self.plan_summary()?;
        let summary = summarise_entries(
            &self.summary_model(),
            plan.previous.as_deref(),
            plan.entries,
            instructions,
        )
        .await?;
        self.tell_dropped(summary.dropped);
        Ok((
            summary.text,
            plan.first_kept_id,
            summary.usage,
            summary.dropped,
        ))
    }

    /// What a compaction now would summarise and keep.
    pub(super) fn plan_summary(&self) -> Result<SummaryPlan, String> {
        let (_, _, keep) = self
            .settings
            .config
            .context
            .resolve(self.settings.provider.info().context_window);
        let tree = self.inner.session();
        let visible = tree.visible_path();
        let cut = compact::plan(&visible, keep)
            .ok_or("there is nothing before the recent messages to summarise")?;
        Ok(SummaryPlan {
            first_kept_id: visible[cut.first_kept].id.clone(),
            after_compaction: latest_compaction(&visible),
            previous: cut.previous_summary,
            entries: visible[cut.summarised]
                .iter()
                .map(|e| (*e).clone())
                .collect(),
        })
    }

    /// The compaction model (the chat model unless one is set), with its time limit.
    pub(super) fn summary_model(&self) -> ModelChoice {
        self.inner
            .upkeep
            .compaction
            .clone()
            .unwrap_or_else(|| {
                ModelChoice::new(
                    self.settings.provider.clone(),
                    self.settings.config.model.clone(),
                )
            })
            .with_timeout(self.settings.config.timeouts.compaction)
    }

    pub(super) fn tell_dropped(&self, dropped: usize) {
        if dropped > 0 {
            self.notice(
                NoticeLevel::Warning,
                format!(
                    "the {dropped} oldest messages did not fit the compaction model and were \
                     left out of the summary"
                ),
            );
        }
    }

    pub(super) fn set_phase(&self, phase: Phase) {
        self.inner.state().phase = phase;
        self.inner.events.emit(AgentEvent::PhaseChanged { phase });
    }
}

/// `estimate` corrected by how a count compared with the estimate of the same request.
pub(super) fn calibrated(estimate: u64, calibration: Option<&super::flow::Calibration>) -> u64 {
    match calibration {
        Some(c) if c.estimated > 0 && c.counted > 0 => {
            let ratio = (c.counted as f64 / c.estimated as f64).clamp(0.5, 3.0);
            (estimate as f64 * ratio) as u64
        }
        _ => estimate,
    }
}

/// What a summary covers: the entries it replaces, the summary before them, and the first
/// entry kept as it is.
pub(super) struct SummaryPlan {
    pub first_kept_id: String,
    /// The latest compaction on the path when planned (a summary made for one path is
    /// only swapped in while that is still the latest).
    pub after_compaction: Option<String>,
    pub previous: Option<String>,
    pub entries: Vec<SessionEntry>,
}

/// A summary the compaction model wrote.
pub(super) struct Summary {
    pub text: String,
    pub usage: Usage,
    /// Oldest messages left out because they did not fit the compaction model.
    pub dropped: usize,
}

/// The id of the latest compaction on `path`.
pub(super) fn latest_compaction(path: &[&SessionEntry]) -> Option<String> {
    path.iter()
        .rev()
        .find(|e| matches!(e.kind, EntryKind::Compaction { .. }))
        .map(|e| e.id.clone())
}

/// Asks `model` for the summary of `entries` (after `previous`). On a context overflow of
/// the model, the oldest quarter is dropped, up to a few times.
pub(super) async fn summarise_entries(
    model: &ModelChoice,
    previous: Option<&str>,
    mut entries: Vec<SessionEntry>,
    instructions: Option<&str>,
) -> Result<Summary, String> {
    let total = entries.len();
    for _ in 0..SHRINK_ATTEMPTS {
        let refs: Vec<&SessionEntry> = entries.iter().collect();
        let prompt = compact::prompt(previous, &render(&refs), instructions);
        match ask_raw(model, compact::SYSTEM, prompt, compact::SUMMARY_MAX_TOKENS).await {
            Ok(answer) if !answer.text.trim().is_empty() => {
                return Ok(Summary {
                    text: answer.text.trim().to_string(),
                    usage: answer.usage,
                    dropped: total - entries.len(),
                })
            }
            Ok(_) => return Err("the compaction model answered with an empty summary".into()),
            Err(Some(LlmError::ContextOverflow(_))) if entries.len() > 1 => {
                let drop = (entries.len() / 4).max(1);
                entries.drain(..drop);
            }
            Err(Some(error)) => return Err(error.to_string()),
            Err(None) => return Err("the compaction model did not answer in time".into()),
        }
    }
    Err("the conversation does not fit the compaction model even in part".into())
}

/// The pending entries in stretches that each fit one flush request.
fn stretches(entries: &[SessionEntry]) -> Vec<Vec<&SessionEntry>> {
    let mut out: Vec<Vec<&SessionEntry>> = Vec::new();
    let mut current: Vec<&SessionEntry> = Vec::new();
    let mut chars = 0;
    for entry in entries {
        let size = render(&[entry]).len();
        if !current.is_empty() && chars + size > flush::MAX_TRANSCRIPT_CHARS {
            out.push(std::mem::take(&mut current));
            chars = 0;
        }
        current.push(entry);
        chars += size;
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// One model call with a time limit; errors as text.
pub(super) async fn ask(
    model: &ModelChoice,
    system: &str,
    prompt: String,
    max_tokens: u32,
) -> Result<crate::upkeep::Completion, String> {
    ask_raw(model, system, prompt, max_tokens)
        .await
        .map_err(|e| e.map_or("the model did not answer in time".into(), |e| e.to_string()))
}

/// One model call with a time limit; `Err(None)` on timeout.
async fn ask_raw(
    model: &ModelChoice,
    system: &str,
    prompt: String,
    max_tokens: u32,
) -> Result<crate::upkeep::Completion, Option<LlmError>> {
    let cancel = CancellationToken::new();
    let call = model.complete(system, prompt, max_tokens, cancel.clone());
    match tokio::time::timeout(UPKEEP_TIMEOUT, call).await {
        Ok(result) => result.map_err(Some),
        Err(_) => {
            cancel.cancel();
            Err(None)
        }
    }
}
