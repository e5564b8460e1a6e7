//! `report`: a subagent's findings (each with its evidence), learnings worth keeping and
//! escalations (what it needs from the user), carried with its final answer to the agent
//! that started it. Only subagents have it. It changes nothing; the parent's result holds
//! what was reported, an escalation is shown to the user, and learnings reach the daily log
//! when the parent's memory flush is on.

use async_trait::async_trait;
use cairn_protocol::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

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

pub struct Report;

#[async_trait]
impl Tool for Report {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Report to the agent that started you, with your final answer: \
                          findings (a claim and its evidence: a citation, a command's output), \
                          learnings worth keeping in memory, and escalations (what you cannot \
                          decide or do, and what you need from the user). Call it before your \
                          final answer; several calls add up."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "findings": {"type": "array", "items": {"type": "object",
                        "properties": {"claim": {"type": "string"}, "evidence": {"type": "string"}},
                        "required": ["claim"]}},
                    "learnings": {"type": "array", "items": {"type": "string"}},
                    "escalations": {"type": "array", "items": {"type": "object",
                        "properties": {"reason": {"type": "string"}, "needs": {"type": "string"}},
                        "required": ["reason"]}}
                }
            }),
        }
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    async fn call(&self, args: Value, _ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let notes = checked(parse_args(args)?)?;
        Ok(ToolOutput::ok(format!(
            "Noted: {} finding(s), {} learning(s), {} escalation(s). They go with your final \
             answer to the agent that started you.",
            notes.findings.len(),
            notes.learnings.len(),
            notes.escalations.len()
        )))
    }
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
