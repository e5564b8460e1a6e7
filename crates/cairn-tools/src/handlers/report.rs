//! `report`: a subagent's findings (each with its evidence), learnings worth keeping and
//! escalations (what it needs from the user), carried with its final answer to the agent
//! that started it. Only subagents have it. It changes nothing; the parent's result holds
//! what was reported, an escalation is shown to the user, and learnings reach the daily log
//! when the parent's memory flush is on.

use async_trait::async_trait;
use cairn_protocol::ToolSpec;
use serde_json::{json, Value};

use crate::subagents::report::{checked, NAME};
use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

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
