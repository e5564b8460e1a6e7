//! Session files: a header line, then one entry per line.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::intent::Intent;
use crate::message::Message;
use crate::outcome::Outcome;
use crate::work::WorkItem;

/// Version written in every session header. Readers accept this version and older ones.
pub const SESSION_FORMAT_VERSION: u32 = 1;

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct SessionHeader {
    /// Always `"session"`.
    #[serde(rename = "type")]
    pub kind: String,
    pub version: u32,
    pub id: String,
    pub created_at: String,
    /// For a subagent's session: the session and entry that started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ParentLink>,
    /// For an imported conversation: where it came from (`chatgpt:<id>#<digest>`), so the
    /// same conversation imported again is recognised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

/// Where a child session (a subagent's run) comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct ParentLink {
    pub session_id: String,
    /// The parent's assistant message whose tool call started the child.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
    pub call_id: String,
    /// The subagent's name.
    pub agent: String,
    pub task_id: String,
}

impl SessionHeader {
    pub fn new(id: impl Into<String>, created_at: impl Into<String>) -> Self {
        Self {
            kind: "session".into(),
            version: SESSION_FORMAT_VERSION,
            id: id.into(),
            created_at: created_at.into(),
            parent: None,
            origin: None,
        }
    }
}

/// One line of a session file after the header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct SessionEntry {
    pub id: String,
    #[serde(default)]
    pub parent_id: Option<String>,
    pub ts: String,
    #[serde(flatten)]
    pub kind: EntryKind,
}

/// What an entry records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EntryKind {
    /// A user, assistant or tool-result message.
    Message { message: Message },
    /// Older context replaced by a summary; entries from `first_kept_id` on are kept.
    Compaction {
        summary: String,
        first_kept_id: String,
        tokens_before: u64,
    },
    /// A summary of a branch the user navigated away from.
    BranchSummary { from_id: String, summary: String },
    /// A durable move of the active leaf (`None`: back to before the first entry).
    Leaf { target_id: Option<String> },
    /// The model used from here on.
    ModelChange { provider: String, model: String },
    /// How much the model reasons from here on (the conversation's thinking level).
    ThinkingLevel { level: crate::modes::ThinkingLevel },
    /// A label on an entry (`None` removes it).
    Label {
        target_id: String,
        label: Option<String>,
    },
    /// The session's title.
    SessionInfo { title: String },
    /// A tool call began executing; a call with this marker and no result was interrupted.
    ToolStarted { call_id: String, tool_name: String },
    /// Memory has been extracted up to and including this entry.
    MemoryFlush { up_to_id: String },
    /// These tool calls' results are shown to the model as head and tail only; the whole
    /// results are in `.cairn/tool-results/<call id>.txt`. The entries are unchanged.
    ToolOutputPruned { call_ids: Vec<String> },
    /// The work items (todo list) as they stand from here on this branch.
    WorkItems { items: Vec<WorkItem> },
    /// The intent step's reading of the message the run answers.
    Intent { intent: Intent },
    /// What the run under way needs to go on after an interruption (a crash, a kill, a
    /// closed window), written at each save point; a run with a checkpoint and no
    /// `run_end` after it was interrupted.
    Checkpoint { run: RunCheckpoint },
    /// How the run that ended here went: its outcome, its model calls and its time.
    RunEnd {
        outcome: Outcome,
        steps: u32,
        duration_ms: u64,
    },
    /// An entry type this version does not know (written by a newer Cairn). Kept, skipped.
    #[serde(skip)]
    Unknown { raw: Value },
}

/// A run's own state at a save point (see [`EntryKind::Checkpoint`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct RunCheckpoint {
    pub run_id: String,
    /// The request the run answers.
    pub message: String,
    /// Model calls made so far.
    pub step: u32,
    /// Continue prompts already sent (strict completion, stop hooks).
    #[serde(default)]
    pub nudges: u32,
    /// A stop hook kept the run going already.
    #[serde(default)]
    pub stop_blocked: bool,
    /// What stall detection remembers (its own format).
    #[serde(default)]
    pub stall: Value,
    /// Follow-ups queued and not yet delivered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<String>,
    /// Messages kept for the next prompt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub next_turn: Vec<String>,
    /// The run's figures so far.
    #[serde(default)]
    pub summary: crate::outcome::RunSummary,
}

impl EntryKind {
    /// The `type` names this version understands.
    pub const KNOWN_TYPES: &'static [&'static str] = &[
        "message",
        "compaction",
        "branch_summary",
        "leaf",
        "model_change",
        "thinking_level",
        "label",
        "session_info",
        "tool_started",
        "memory_flush",
        "tool_output_pruned",
        "work_items",
        "intent",
        "checkpoint",
        "run_end",
    ];

    /// Whether this entry becomes the new active leaf when appended. Metadata entries
    /// (labels, titles, leaf moves, markers) hang off the tree without moving along it.
    pub fn advances_leaf(&self) -> bool {
        matches!(
            self,
            EntryKind::Message { .. }
                | EntryKind::Compaction { .. }
                | EntryKind::BranchSummary { .. }
                | EntryKind::ModelChange { .. }
                | EntryKind::ThinkingLevel { .. }
                | EntryKind::WorkItems { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn entries_are_flat_json_lines() {
        let entry = SessionEntry {
            id: "a1b2c3d4".into(),
            parent_id: None,
            ts: "2026-01-01T00:00:00.000Z".into(),
            kind: EntryKind::Message {
                message: Message::user("hi"),
            },
        };
        let value = serde_json::to_value(&entry).unwrap();
        assert_eq!(
            value,
            json!({"type": "message", "id": "a1b2c3d4", "parent_id": null,
                   "ts": "2026-01-01T00:00:00.000Z",
                   "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}})
        );
        assert_eq!(
            serde_json::from_value::<SessionEntry>(value).unwrap(),
            entry
        );
    }

    #[test]
    fn every_known_type_is_listed() {
        let samples = [
            json!({"type": "leaf", "target_id": null}),
            json!({"type": "label", "target_id": "x", "label": "v1"}),
            json!({"type": "session_info", "title": "t"}),
            json!({"type": "tool_started", "call_id": "c", "tool_name": "bash"}),
            json!({"type": "memory_flush", "up_to_id": "x"}),
            json!({"type": "model_change", "provider": "openai", "model": "m"}),
            json!({"type": "thinking_level", "level": "high"}),
            json!({"type": "checkpoint", "run": {"run_id": "r", "message": "m", "step": 2}}),
            json!({"type": "branch_summary", "from_id": "x", "summary": "s"}),
            json!({"type": "compaction", "summary": "s", "first_kept_id": "x", "tokens_before": 3}),
            json!({"type": "work_items", "items": [{"id": "1", "text": "t", "status": "in_progress"}]}),
            json!({"type": "intent", "intent": {"goal": "g", "constraints": [], "lookups": ["x"]}}),
        ];
        for mut sample in samples {
            let ty = sample["type"].as_str().unwrap().to_string();
            assert!(EntryKind::KNOWN_TYPES.contains(&ty.as_str()), "{ty}");
            sample["id"] = json!("e");
            sample["ts"] = json!("t");
            serde_json::from_value::<SessionEntry>(sample).unwrap();
        }
    }
}
