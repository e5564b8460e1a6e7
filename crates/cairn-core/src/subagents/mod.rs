//! Subagents: agents a run starts for one task, from definitions in `subagents/`. Each
//! runs with its own session (its header links the parent's session and entry) and its
//! own events, forwarded nested into the parent's stream; the parent's abort stops it,
//! and a report comes back when it ends.

use std::sync::Arc;
use std::time::Duration;

use cairn_protocol::{AgentEvent, ParentLink};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::agent::{AgentLink, ChildSpec};
use crate::session::SessionStore;
use crate::tools::ToolError;
use crate::Agent;

mod models;

pub use cairn_tools::subagents::{
    definition, Definitions, Escalation, Finding, Report, Start, Started, SubagentDef, TaskLine,
    TaskStatus, Tasks, WorkerNotes, STOP_GRACE,
};
pub use models::{ModelResolver, ResolvedModel};

/// Starts a subagent of `parent` in the background.
pub(crate) async fn start(parent: &AgentLink, start: Start<'_>) -> Result<Started, ToolError> {
    let Start {
        call_id,
        def,
        model: asked,
        task,
        timeout,
        cancel,
        changes,
    } = start;
    let model = model_for(parent, def, asked).await?;
    let model_used = match &model {
        Some(resolved) => resolved.label.clone(),
        None => parent.inner.state().settings.config.model_label(),
    };
    let model = model.map(|r| (r.provider, r.model));
    let task_id = format!("task-{}", &uuid::Uuid::now_v7().simple().to_string()[20..]);
    let link = ParentLink {
        session_id: parent.inner.session().id().to_string(),
        entry_id: parent.entry_id.clone(),
        call_id: call_id.to_string(),
        agent: def.name.clone(),
        task_id: task_id.clone(),
    };
    let store = SessionStore::new(parent.inner.workspace.sessions_dir());
    let session = store
        .create_linked(Some(link))
        .map_err(|e| ToolError::Failed(format!("cannot create the subagent's session: {e}")))?;
    let child = Agent::child(
        &parent.inner,
        ChildSpec {
            name: def.name.clone(),
            instructions: def.instructions.clone(),
            session,
            model,
            model_label: model_used.clone(),
            tools: def.tools.clone(),
            max_steps: def.max_steps,
            changes,
        },
    );
    let (tx, done) = watch::channel(None);
    let runner = Runner {
        child,
        parent_events: parent.inner.events.clone(),
        // Learnings reach the daily log as the parent's flush would write them: only when
        // it is on.
        log_learnings: parent
            .inner
            .upkeep
            .flush
            .is_some()
            .then(|| parent.inner.workspace.clone()),
        agent: def.name.clone(),
        task_id: task_id.clone(),
        call_id: call_id.to_string(),
        model_used,
    };
    tokio::spawn(async move {
        let report = runner.run(task, timeout, cancel).await;
        let _ = tx.send(Some(report));
    });
    Ok(Started { task_id, done })
}

/// The model the call or else the definition names, built by the agent's resolver;
/// `None`: the parent's own.
async fn model_for(
    parent: &AgentLink,
    def: &SubagentDef,
    asked: Option<String>,
) -> Result<Option<ResolvedModel>, ToolError> {
    let (spec, named_by) = match (asked, &def.model) {
        (Some(spec), _) => (spec, "the call asks for".to_string()),
        (None, Some(spec)) => (spec.clone(), format!("the subagent `{}` names", def.name)),
        (None, None) => return Ok(None),
    };
    let Some(models) = parent.inner.models.as_deref() else {
        return Err(ToolError::Failed(format!(
            "{named_by} the model `{spec}`, but no other models can be started here"
        )));
    };
    models.resolve(&spec).await.map(Some).map_err(|e| {
        ToolError::Failed(format!(
            "{named_by} the model `{spec}`, which cannot be used: {e}"
        ))
    })
}

struct Runner {
    child: Agent,
    parent_events: crate::events::EventBus,
    log_learnings: Option<Arc<cairn_memory::Workspace>>,
    agent: String,
    task_id: String,
    call_id: String,
    /// `provider/model` (or the parent's model) the subagent runs on.
    model_used: String,
}

impl Runner {
    /// Runs the child to its end, a timeout or a cancel, forwarding its events.
    async fn run(self, task: String, timeout: Duration, cancel: CancellationToken) -> Report {
        let mut events = self.child.subscribe();
        let forward = {
            let parent = self.parent_events.clone();
            let (agent, task_id, call_id, model_used) = (
                self.agent.clone(),
                self.task_id.clone(),
                self.call_id.clone(),
                self.model_used.clone(),
            );
            tokio::spawn(async move {
                let mut progress = cairn_tools::subagents::Progress::default();
                while let Some(event) = events.recv().await {
                    progress.observe(&event);
                    // Its text arrives whole in `message_end`: deltas would flood the
                    // parent's stream, which shows the parent's own answer as it streams.
                    if matches!(event, AgentEvent::MessageDelta { .. }) {
                        continue;
                    }
                    let end = matches!(event, AgentEvent::AgentEnd { .. });
                    parent.emit(AgentEvent::Subagent {
                        task_id: task_id.clone(),
                        agent: agent.clone(),
                        call_id: call_id.clone(),
                        model_used: Some(model_used.clone()),
                        event: Box::new(event),
                    });
                    if end {
                        break;
                    }
                }
                progress
            })
        };
        let prompt = self.child.prompt(task);
        tokio::pin!(prompt);
        let (result, forced) = tokio::select! {
            result = &mut prompt => (result, crate::subagents::TaskStatus::Cancelled),
            () = tokio::time::sleep(timeout) => {
                self.child.request_abort();
                (prompt.await, TaskStatus::Timeout)
            }
            () = cancel.cancelled() => {
                self.child.request_abort();
                (prompt.await, TaskStatus::Cancelled)
            }
        };
        let progress = forward.await.unwrap_or_default();
        let report_entry = progress.report_entry.clone();
        let outcome = result.as_ref().ok().map(|r| &r.outcome);
        let mut report = progress.report(&self.agent, &self.task_id, outcome, forced);
        report.model_used = Some(self.model_used.clone());
        if let Ok(run) = &result {
            report.session_id = run.session_id.clone();
            if let Some(answer) = run.answer.as_ref().filter(|a| !a.trim().is_empty()) {
                report.answer = answer.trim().to_string();
            }
        }
        if let Err(e) = result {
            report.status = TaskStatus::Failed;
            report.reason = Some(e.to_string());
        }
        self.hand_over(&report, report_entry).await;
        report
    }

    /// What the report asks of others: each escalation told to the user, the learnings
    /// kept in today's log with a link to the subagent's session.
    async fn hand_over(&self, report: &Report, entry: Option<String>) {
        for escalation in &report.escalations {
            let needs = match escalation.needs.trim() {
                "" => String::new(),
                needs => format!("; it needs: {needs}"),
            };
            self.parent_events.emit(AgentEvent::Notice {
                level: cairn_protocol::NoticeLevel::Warning,
                message: format!(
                    "the subagent `{}` ({}) escalates: {}{needs}",
                    self.agent, self.task_id, escalation.reason
                ),
            });
        }
        let (Some(workspace), Some(entry)) = (&self.log_learnings, entry) else {
            return;
        };
        if report.learnings.is_empty() {
            return;
        }
        let (workspace, learnings) = (workspace.clone(), report.learnings.clone());
        let (session, title) = (
            report.session_id.clone(),
            format!("subagent {} ({})", self.agent, self.task_id),
        );
        let written = tokio::task::spawn_blocking(move || {
            let origin = crate::upkeep::flush::Origin {
                session_id: &session,
                title: &title,
                entry_id: &entry,
            };
            crate::upkeep::flush::append(&workspace, chrono::Local::now(), &origin, &learnings)
        })
        .await;
        if let Ok(Err(error)) = written {
            self.parent_events.emit(AgentEvent::Notice {
                level: cairn_protocol::NoticeLevel::Warning,
                message: format!(
                    "the learnings of the subagent `{}` could not be logged: {error}",
                    self.agent
                ),
            });
        }
    }
}

#[async_trait::async_trait]
impl crate::tools::Workers for AgentLink {
    fn limits(&self) -> crate::config::SubagentLimits {
        self.inner.state().settings.config.subagents
    }

    fn depth(&self) -> u32 {
        self.inner.depth
    }

    async fn start(
        &self,
        start: crate::subagents::Start<'_>,
    ) -> Result<crate::subagents::Started, crate::tools::ToolError> {
        self::start(self, start).await
    }

    fn tasks(&self) -> &crate::subagents::Tasks {
        &self.inner.tasks
    }

    fn work_items(&self) -> Vec<cairn_protocol::WorkItem> {
        self.inner.session().work_items()
    }
}
