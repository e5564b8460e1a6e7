//! One run: Ingest -> Gather -> Respond -> Recover.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use cairn_llm::ChatRequest;
use cairn_protocol::{
    AgentEvent, EntryKind, ErrorInfo, ErrorKind, Message, NoticeLevel, Outcome, Phase, RunSummary,
    SessionEntry, StopReason,
};
use futures::FutureExt;
use tokio_util::sync::CancellationToken;

use super::flow::RunReport;
use super::flow::{panic_message, Flow, Run};
use super::inner::Inner;
use super::{execute, stream};
use crate::error::HarnessError;
use crate::hooks::{HookCtx, HookDecision, HookPoint};

/// How a run begins: with the user's message, or going on from an interrupted run's
/// checkpoint.
enum Begin {
    Prompt(String, Vec<cairn_protocol::Picture>),
    Resume(cairn_protocol::RunCheckpoint),
}

pub(super) async fn run_prompt(
    inner: &Arc<Inner>,
    text: String,
    pictures: Vec<cairn_protocol::Picture>,
) -> Result<RunReport, HarnessError> {
    begin(inner, Begin::Prompt(text, pictures)).await
}

/// Goes on with the session's interrupted run from its last checkpoint.
pub(super) async fn run_resume(inner: &Arc<Inner>) -> Result<RunReport, HarnessError> {
    let checkpoint = inner.session().interrupted_run().cloned();
    begin(
        inner,
        Begin::Resume(checkpoint.ok_or(HarnessError::NothingToResume)?),
    )
    .await
}

async fn begin(inner: &Arc<Inner>, start: Begin) -> Result<RunReport, HarnessError> {
    let (cancel, queued) = {
        let mut state = inner.state();
        if state.phase != Phase::Idle {
            return Err(HarnessError::Busy("a prompt needs the agent idle".into()));
        }
        state.phase = Phase::Turn;
        let cancel = CancellationToken::new();
        state.cancel = Some(cancel.clone());
        // Going on, the messages kept for the next prompt stay kept for it.
        let queued = match start {
            Begin::Resume(_) => Vec::new(),
            Begin::Prompt(..) => std::mem::take(&mut state.next_turn),
        };
        (cancel, queued)
    };
    let run_id = uuid::Uuid::now_v7().to_string();
    let mut run = Run::new(inner.clone(), cancel.clone(), run_id.clone());
    run.checkpointing = true;
    let deadline = super::deadline::Deadline::start(run.settings.config.deadline, cancel);
    inner.events.emit(AgentEvent::AgentStart {
        run_id,
        session_id: run.session_id.clone(),
    });
    inner
        .events
        .emit(AgentEvent::PhaseChanged { phase: Phase::Turn });
    // A panic anywhere in the run still ends it: failed, synced, idle again.
    let executed = match start {
        Begin::Prompt(text, pictures) => {
            AssertUnwindSafe(run.execute(queued, text, pictures))
                .catch_unwind()
                .await
        }
        Begin::Resume(checkpoint) => {
            AssertUnwindSafe(run.resume(checkpoint))
                .catch_unwind()
                .await
        }
    };
    let outcome = match executed {
        Ok(Ok(())) => Outcome::Completed,
        Ok(Err(Outcome::Aborted)) if deadline.passed() => Outcome::Failed {
            error: ErrorInfo::new(
                ErrorKind::Timeout,
                format!(
                    "the run passed its deadline of {} s and was stopped",
                    run.settings.config.deadline.unwrap_or_default().as_secs()
                ),
            ),
        },
        Ok(Err(outcome)) => outcome,
        Err(panic) => Outcome::Failed {
            error: ErrorInfo::new(
                ErrorKind::Fatal,
                format!(
                    "internal error, the run was stopped: {}",
                    panic_message(&*panic)
                ),
            ),
        },
    };
    Ok(run.recover(outcome).await)
}

/// The agent's last calibration, which a new run starts from.
fn inner_calibration(inner: &Inner) -> Option<super::flow::Calibration> {
    inner
        .calibration
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

impl Run {
    /// Takes `calibration` for the estimates from now on (the agent keeps it for the
    /// context meter and its next run).
    pub(super) fn calibrate(&mut self, calibration: Option<super::flow::Calibration>) {
        *self
            .inner
            .calibration
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = calibration.clone();
        self.calibration = calibration;
    }

    pub(super) fn new(inner: Arc<Inner>, cancel: CancellationToken, run_id: String) -> Self {
        let session_id = inner.session().id().to_string();
        let settings = inner.state().settings.clone();
        let stall = super::stall::StallTracker::new(settings.config.stall);
        let calibration = inner_calibration(&inner);
        Self {
            inner,
            cancel,
            session_id,
            run_id,
            step: 0,
            summary: RunSummary::default(),
            settings,
            system_prompt: String::new(),
            message: String::new(),
            stall,
            answer: None,
            intent: None,
            invoked: None,
            hook_context: Vec::new(),
            nudges: 0,
            stop_blocked: false,
            checkpointing: false,
            context_stamp: None,
            context_touched: false,
            calibration,
            count_tried: false,
            started: Instant::now(),
        }
    }

    pub fn hook_ctx(&self) -> HookCtx {
        HookCtx {
            session_id: self.session_id.clone(),
            run_id: self.run_id.clone(),
            step: self.step,
            workspace: self.inner.workspace.clone(),
        }
    }

    /// Runs the hooks for `point`; `Block` ends the run.
    pub async fn hooks(&self, point: &mut HookPoint<'_>) -> Flow<HookDecision> {
        let decision = self
            .inner
            .hooks
            .run(&self.hook_ctx(), point, &self.inner.events)
            .await;
        match decision {
            HookDecision::Block { reason } => Err(Outcome::Blocked { reason }),
            other => Ok(other),
        }
    }

    /// Adds an entry to the session (the persistence hook writes it).
    pub async fn record(&mut self, kind: EntryKind) -> Flow<SessionEntry> {
        let entry = {
            let mut tree = self.inner.session();
            let entry = tree.draft(kind);
            tree.apply(entry.clone());
            entry
        };
        self.hooks(&mut HookPoint::Entry { entry: &entry })
            .await
            .map_err(unsaved)?;
        Ok(entry)
    }

    /// Records a message and tells subscribers about it.
    pub async fn record_message(&mut self, message: Message) -> Flow<SessionEntry> {
        let entry = self
            .record(EntryKind::Message {
                message: message.clone(),
            })
            .await?;
        self.inner.events.emit(AgentEvent::MessageEnd {
            entry_id: entry.id.clone(),
            message,
        });
        Ok(entry)
    }

    pub(super) async fn add_user_message(&mut self, text: String) -> Flow {
        self.inner.events.emit(AgentEvent::MessageStart {
            role: "user".into(),
        });
        self.record_message(Message::user(text)).await.map(drop)
    }

    /// A save point; `last` when nothing follows in this run (everything synced on return).
    /// Until the run ends, the run's own state is checkpointed with it, so a run that is
    /// interrupted can go on from here.
    pub async fn save_point(&mut self, wait: bool) -> Flow {
        if self.checkpointing {
            self.checkpoint().await?;
        }
        self.hooks(&mut HookPoint::SavePoint { wait })
            .await
            .map(drop)
            .map_err(unsaved)
    }

    pub fn notice(&self, level: NoticeLevel, message: impl Into<String>) {
        self.inner.events.emit(AgentEvent::Notice {
            level,
            message: message.into(),
        });
    }

    /// Ingest and Gather, then Respond.
    async fn execute(
        &mut self,
        queued: Vec<String>,
        text: String,
        pictures: Vec<cairn_protocol::Picture>,
    ) -> Flow {
        for message in queued {
            self.add_user_message(message).await?;
        }
        let text = self.expand_template(text).await;
        self.add_user_message_with(text.clone(), pictures).await?;
        self.message = text.clone();
        // The request is on disk with the run's first checkpoint: a run cut short from
        // here on can go on.
        self.save_point(false).await?;
        let mut context = Vec::new();
        self.hooks(&mut HookPoint::PreCall {
            prompt: &text,
            context: &mut context,
        })
        .await?;
        self.hook_context = context;
        self.invoked = self.invoked_skill(&text).await;
        self.message = text;
        self.attach_mcp_tools().await?;
        self.gather().await;
        self.respond().await
    }

    /// The loop: model -> tools -> save point -> steering -> again.
    pub(super) async fn respond(&mut self) -> Flow {
        let tool_less =
            !self.settings.provider.info().supports_tools && !self.settings.tools.is_empty();
        // Said once per agent (a chat would repeat it on every message otherwise).
        if tool_less && !std::mem::replace(&mut self.inner.state().told_tool_less, true) {
            self.notice(
                NoticeLevel::Warning,
                format!(
                    "the model `{}` cannot use tools; this run goes on without them",
                    self.settings.config.model
                ),
            );
        }
        loop {
            self.apply_pending_settings().await?;
            if self.cancel.is_cancelled() {
                return Err(Outcome::Aborted);
            }
            // AGENTS.md edited, MEMORY.md consolidated, a line logged while the run works:
            // the model sees the files as they are now.
            let touched = std::mem::take(&mut self.context_touched);
            let root = self.inner.workspace.root();
            let changed = self
                .context_stamp
                .as_mut()
                .is_some_and(|stamp| stamp.changed(root, touched));
            if changed {
                self.gather().await;
            }
            self.step += 1;
            self.summary.steps = self.step;
            self.inner
                .events
                .emit(AgentEvent::TurnStart { step: self.step });
            self.ensure_room().await?;
            let message = match self.model_step().await {
                Err(Outcome::Failed { error }) if error.code == ErrorKind::ContextOverflow => {
                    self.recover_from_overflow(error).await?
                }
                other => other?,
            };
            let calls: Vec<_> = message.tool_calls().cloned().collect();
            let executed = execute::execute_tool_calls(self, calls.clone()).await?;
            self.save_point(false).await?;
            self.inner.events.emit(AgentEvent::TurnEnd {
                step: self.step,
                tool_calls: calls.len() as u32,
            });
            executed.into_flow()?;
            if self.cancel.is_cancelled() {
                return Err(Outcome::Aborted);
            }
            if message.stop_reason == StopReason::Refusal {
                let reason = format!("the model declined to go on: {}", message.text());
                return Err(Outcome::Blocked { reason });
            }
            if self.deliver_queued(true).await? {
                continue;
            }
            if calls.is_empty() {
                if self.deliver_queued(false).await?
                    || self.nudge_open_work().await?
                    || self.stop_hooks_veto().await?
                {
                    continue;
                }
                return Ok(());
            }
            if self.step >= self.settings.config.max_steps {
                return Err(Outcome::MaxSteps { steps: self.step });
            }
        }
    }

    /// Streams one model answer and records it.
    pub(super) async fn model_step(&mut self) -> Flow<cairn_protocol::AssistantMessage> {
        self.attach_pictures().await;
        let mut request = self.build_request();
        self.hooks(&mut HookPoint::PreReasoning {
            request: &mut request,
        })
        .await?;
        let estimated = self.estimate_raw();
        let answer = stream::stream_assistant_response(self, request).await;
        let reported = answer.usage.input_tokens + answer.usage.cache_read_tokens;
        if reported > 0 {
            self.calibrate(Some(super::flow::Calibration {
                counted: reported,
                estimated,
                by: "the provider's count of the last request".into(),
            }));
        }
        self.summary.input_tokens += answer.usage.input_tokens;
        self.summary.output_tokens += answer.usage.output_tokens;
        if let Some(partial) = answer.partial {
            self.record_message(Message::Assistant(partial)).await?;
        }
        let message = match answer.end {
            stream::StepEnd::Done(message) => message,
            stream::StepEnd::Aborted => return Err(Outcome::Aborted),
            stream::StepEnd::Failed(error) => {
                return Err(Outcome::Failed {
                    error: error.to_info(),
                })
            }
        };
        self.record_message(Message::Assistant(message.clone()))
            .await?;
        let text = message.text();
        if !text.trim().is_empty() {
            self.answer = Some(text);
        }
        self.hooks(&mut HookPoint::PostReasoning { message: &message })
            .await?;
        Ok(message)
    }

    pub(super) fn build_request(&self) -> ChatRequest {
        let config = &self.settings.config;
        let tools = if self.settings.provider.info().supports_tools {
            self.settings.tools.specs()
        } else {
            Default::default()
        };
        ChatRequest {
            model: config.model.clone(),
            system: Some(self.system_prompt.clone()),
            messages: self.inner.session().context_messages(),
            tools,
            max_tokens: config.max_tokens,
            temperature: config.temperature,
            thinking: config.thinking,
        }
    }

    /// Settings changed during the run take effect here, between model requests.
    async fn apply_pending_settings(&mut self) -> Flow {
        let changed = {
            let mut state = self.inner.state();
            let changed = state.apply_pending();
            if changed.any {
                self.settings = state.settings.clone();
            }
            changed
        };
        self.stall.set_limits(self.settings.config.stall);
        if changed.prompt_changed {
            self.gather().await;
        }
        if let Some((provider, model)) = changed.model {
            self.record(EntryKind::ModelChange { provider, model })
                .await?;
        }
        if let Some(level) = changed.thinking {
            self.record(EntryKind::ThinkingLevel { level }).await?;
        }
        Ok(())
    }

    /// Recover: final hooks, title, sync, back to idle, `agent_end`.
    async fn recover(mut self, outcome: Outcome) -> RunReport {
        self.checkpointing = false;
        let stopped = self
            .inner
            .tasks
            .stop_uncollected(crate::subagents::STOP_GRACE)
            .await;
        if !stopped.is_empty() {
            self.notice(
                NoticeLevel::Warning,
                format!(
                    "the run ended before collecting what it started, so these subagents were \
                     stopped: {}",
                    stopped.join(", ")
                ),
            );
        }
        if let Outcome::Failed { error } = &outcome {
            let _ = self.hooks(&mut HookPoint::Error { error }).await;
        }
        self.summary.duration_ms = self.started.elapsed().as_millis() as u64;
        let summary = self.summary;
        let _ = self
            .hooks(&mut HookPoint::PostCall {
                outcome: &outcome,
                summary: &summary,
            })
            .await;
        self.ensure_title().await;
        // How it ended is kept, to be shown under the last message when the session opens.
        let _ = self
            .record(EntryKind::RunEnd {
                outcome: outcome.clone(),
                steps: summary.steps,
                duration_ms: summary.duration_ms,
            })
            .await;
        let mut saved = Ok(());
        if outcome != Outcome::Aborted {
            // Synced first, so the flush's marker never points past what is on disk.
            saved = self.save_point(true).await;
            self.flush_memory().await;
        }
        // A failed write is reported once: the first failure decides, not a later sync.
        let saved = match saved {
            Ok(()) => self.save_point(true).await,
            failed => failed,
        };
        let outcome = match saved {
            Err(failed) if !matches!(outcome, Outcome::Failed { .. }) => failed,
            _ => outcome,
        };
        {
            let mut state = self.inner.state();
            state.phase = Phase::Idle;
            state.cancel = None;
            if outcome == Outcome::Aborted {
                state.steer.clear();
            } else {
                // Steering that arrived after the last save point waits for the next prompt.
                let state = &mut *state;
                state.next_turn.extend(state.steer.drain(..));
            }
            // Follow-ups the run did not reach go back to whoever queued them.
            let returned: Vec<String> = state.follow_up.drain(..).collect();
            if !returned.is_empty() {
                self.inner.follow_ups_changed(&state, returned);
            }
        }
        self.inner.idle.notify_waiters();
        self.inner
            .events
            .emit(AgentEvent::PhaseChanged { phase: Phase::Idle });
        self.inner.events.emit(AgentEvent::AgentEnd {
            outcome: outcome.clone(),
            summary,
            session_id: self.session_id.clone(),
            answer: self.answer.clone(),
        });
        RunReport {
            outcome,
            summary,
            session_id: self.session_id,
            answer: self.answer,
        }
    }

    /// Gives an untitled session a title from its first user message.
    async fn ensure_title(&mut self) {
        let title = {
            let tree = self.inner.session();
            if tree.title().is_some() {
                return;
            }
            tree.active_path().iter().find_map(|e| match &e.kind {
                EntryKind::Message {
                    message: m @ Message::User { .. },
                } => Some(title_from(&m.text())),
                _ => None,
            })
        };
        if let Some(title) = title {
            let _ = self.record(EntryKind::SessionInfo { title }).await;
        }
    }
}

fn title_from(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut title: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        title.push('…');
    }
    if title.is_empty() {
        "Untitled".to_string()
    } else {
        title
    }
}

impl From<HarnessError> for Outcome {
    fn from(error: HarnessError) -> Self {
        Outcome::Failed {
            error: error.to_info(),
        }
    }
}

/// A run stopped at an entry or a save point stopped because the session could not be
/// written (only the persistence hook stops a run there): that is a failure, not a
/// decision, and it ends the run as one (exit status 1).
fn unsaved(outcome: Outcome) -> Outcome {
    match outcome {
        Outcome::Blocked { reason } => Outcome::Failed {
            error: ErrorInfo::new(ErrorKind::Io, reason),
        },
        other => other,
    }
}
