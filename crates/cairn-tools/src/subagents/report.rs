//! What a subagent reports back, and the progress it is built from.

use std::collections::HashMap;

use cairn_protocol::{AgentEvent, Message, Outcome};
use serde::{Deserialize, Serialize};

use crate::handlers::report::{checked, NAME};
pub use crate::handlers::report::{Escalation, Finding, WorkerNotes};

/// Where a subagent's task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Running,
    Completed,
    Failed,
    Blocked,
    Cancelled,
    Timeout,
}

impl TaskStatus {
    pub fn name(self) -> &'static str {
        match self {
            TaskStatus::Running => "running",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Blocked => "blocked",
            TaskStatus::Cancelled => "cancelled",
            TaskStatus::Timeout => "timeout",
        }
    }
}

/// A finished subagent's report, as its tools return it (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct Report {
    pub agent: String,
    pub task_id: String,
    pub status: TaskStatus,
    /// Its final answer; for a run that did not complete, the last thing it said.
    pub answer: String,
    pub steps: u32,
    /// The tools it called, in the order first used.
    pub tools_used: Vec<String>,
    pub session_id: String,
    /// Why it did not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What it reported with the `report` tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub escalations: Vec<Escalation>,
}

/// What a subagent has done so far, followed from its events.
#[derive(Debug, Default, Clone)]
pub struct Progress {
    pub steps: u32,
    pub tools_used: Vec<String>,
    pub last_text: String,
    pub session_id: String,
    /// What its `report` calls carried, once each call succeeded.
    pub notes: WorkerNotes,
    /// `report` calls started, by call id, until they end.
    reporting: HashMap<String, WorkerNotes>,
    /// The entry of the answer that last called `report` (where learnings link to).
    pub report_entry: Option<String>,
}

impl Progress {
    /// Takes in one of the subagent's own events (not its subagents').
    pub fn observe(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::AgentStart { session_id, .. } => self.session_id = session_id.clone(),
            AgentEvent::TurnStart { step } => self.steps = *step,
            AgentEvent::ToolStart {
                call_id,
                name,
                arguments,
                ..
            } => {
                if !self.tools_used.contains(name) {
                    self.tools_used.push(name.clone());
                }
                if name != NAME {
                    return;
                }
                let notes = serde_json::from_value::<WorkerNotes>(arguments.clone())
                    .ok()
                    .and_then(|n| checked(n).ok());
                if let Some(notes) = notes {
                    self.reporting.insert(call_id.clone(), notes);
                }
            }
            AgentEvent::ToolEnd {
                call_id, is_error, ..
            } => {
                if let Some(notes) = self.reporting.remove(call_id).filter(|_| !is_error) {
                    self.notes.findings.extend(notes.findings);
                    self.notes.learnings.extend(notes.learnings);
                    self.notes.escalations.extend(notes.escalations);
                }
            }
            AgentEvent::MessageEnd {
                entry_id,
                message: message @ Message::Assistant(assistant),
            } => {
                let text = message.text();
                if !text.trim().is_empty() {
                    self.last_text = text.trim().to_string();
                }
                let reports = assistant.tool_calls().any(|c| c.name == NAME);
                if reports {
                    self.report_entry = Some(entry_id.clone());
                }
            }
            _ => {}
        }
    }

    /// The report of a run that ended with `outcome` (`None`: it was stopped for
    /// `forced`, a timeout or a cancel).
    pub fn report(
        self,
        agent: &str,
        task_id: &str,
        outcome: Option<&Outcome>,
        forced: TaskStatus,
    ) -> Report {
        let (status, reason) = match outcome {
            Some(Outcome::Completed) => (TaskStatus::Completed, None),
            Some(Outcome::Blocked { reason }) => (TaskStatus::Blocked, Some(reason.clone())),
            Some(Outcome::Aborted) | None => (forced, None),
            Some(Outcome::Failed { error }) => (TaskStatus::Failed, Some(error.message.clone())),
            Some(Outcome::MaxSteps { steps }) => (
                TaskStatus::Failed,
                Some(format!("it used its {steps} steps without finishing")),
            ),
            Some(Outcome::Stalled { tool, detail, .. }) => (
                TaskStatus::Failed,
                Some(detail.clone().unwrap_or_else(|| {
                    format!("it repeated the same `{tool}` call without progress")
                })),
            ),
        };
        let reason = reason.or_else(|| match status {
            TaskStatus::Timeout => Some("it did not finish in time and was stopped".into()),
            TaskStatus::Cancelled => Some("it was cancelled".into()),
            _ => None,
        });
        Report {
            agent: agent.to_string(),
            task_id: task_id.to_string(),
            status,
            answer: self.last_text,
            steps: self.steps,
            tools_used: self.tools_used,
            session_id: self.session_id,
            reason,
            findings: self.notes.findings,
            learnings: self.notes.learnings,
            escalations: self.notes.escalations,
        }
    }
}
