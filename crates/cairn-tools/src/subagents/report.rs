//! What a subagent reports back, and the progress it is built from.

use std::collections::HashMap;

use cairn_protocol::{AgentEvent, Message, Outcome};
use serde::{Deserialize, Serialize};

use crate::error::ToolError;

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

/// The name of the tool a subagent reports with.
pub const NAME: &str = "report";
/// The most of each kind one call may carry, and the longest text of one.
const MAX_ITEMS: usize = 20;
const MAX_CHARS: usize = 2_000;

/// A claim a subagent makes, and what shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub claim: String,
    #[serde(default)]
    pub evidence: String,
}

/// What a subagent cannot decide or do, and what it needs (from the user).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escalation {
    pub reason: String,
    #[serde(default)]
    pub needs: String,
}

/// What a subagent's `report` calls carry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerNotes {
    #[serde(default)]
    pub findings: Vec<Finding>,
    #[serde(default)]
    pub learnings: Vec<String>,
    #[serde(default)]
    pub escalations: Vec<Escalation>,
}

/// `notes` when within bounds and not empty; else a clear error for the model.
pub fn checked(notes: WorkerNotes) -> Result<WorkerNotes, ToolError> {
    let counts = [
        notes.findings.len(),
        notes.learnings.len(),
        notes.escalations.len(),
    ];
    if counts.iter().all(|n| *n == 0) {
        return Err(ToolError::InvalidArguments(
            "give at least one finding, learning or escalation".into(),
        ));
    }
    if counts.iter().any(|n| *n > MAX_ITEMS) {
        return Err(ToolError::InvalidArguments(format!(
            "at most {MAX_ITEMS} of each kind in one call"
        )));
    }
    let too_long = notes
        .findings
        .iter()
        .flat_map(|f| [&f.claim, &f.evidence])
        .chain(&notes.learnings)
        .chain(notes.escalations.iter().flat_map(|e| [&e.reason, &e.needs]))
        .any(|t| t.chars().count() > MAX_CHARS);
    if too_long {
        return Err(ToolError::InvalidArguments(format!(
            "each text at most {MAX_CHARS} characters"
        )));
    }
    let blank = notes.findings.iter().any(|f| f.claim.trim().is_empty())
        || notes.learnings.iter().any(|l| l.trim().is_empty())
        || notes.escalations.iter().any(|e| e.reason.trim().is_empty());
    if blank {
        return Err(ToolError::InvalidArguments(
            "a claim, a learning or a reason is empty".into(),
        ));
    }
    Ok(notes)
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
    /// `provider/model` it ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_used: Option<String>,
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
            model_used: None,
            reason,
            findings: self.notes.findings,
            learnings: self.notes.learnings,
            escalations: self.notes.escalations,
        }
    }
}
