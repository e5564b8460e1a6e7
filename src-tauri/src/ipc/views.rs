//! The transcript of a session's active branch as the page shows it.

use std::collections::{HashMap, HashSet};

use cairn_app::cairn_core::session::SessionTree;
use cairn_protocol::{
    ContentBlock, EntryKind, Message, Outcome, Picture, SessionEntry, StopReason,
};
use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

/// A session as the page shows it: its active branch.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct SessionView {
    pub id: String,
    pub title: Option<String>,
    pub items: Vec<TranscriptItem>,
    /// Entry id of the active leaf (`None` for an empty session).
    pub leaf: Option<String>,
    /// Number of leaves (branches) in the session.
    pub branches: usize,
    /// Whether a run is going on in this session.
    pub running: bool,
    /// How the run that ended at the active leaf went, shown under the last message.
    pub last_run: Option<LastRun>,
    /// The conversation's thinking level (`None`: as the provider's settings say).
    pub thinking: Option<cairn_protocol::ThinkingLevel>,
    /// A run of this session was cut short (a crash, a kill, a closed window) and can go
    /// on from its last checkpoint.
    pub interrupted: Option<InterruptedRun>,
}

/// A run cut short, as the bar above the message box offers it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct InterruptedRun {
    /// The request it answers.
    pub message: String,
    /// Model calls it made.
    pub steps: u32,
    /// Follow-ups queued in it, delivered when it goes on.
    pub queued: Vec<String>,
}

/// How a session's last run ended, as kept in the session.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct LastRun {
    pub outcome: Outcome,
    /// Model calls made.
    pub steps: u32,
    pub duration_ms: u64,
    /// In a few words: "stopped by you after 7 steps", "failed after 1 step: …".
    pub said: String,
}

/// One row of the transcript on the active branch, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TranscriptItem {
    User {
        entry_id: String,
        text: String,
        /// The pictures sent with it, in order.
        pictures: Vec<Picture>,
        siblings: Option<BranchSiblings>,
    },
    Assistant {
        entry_id: String,
        text: String,
        /// The model's reasoning before the answer; empty when it showed none.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        thinking: String,
        tool_calls: Vec<ToolCallView>,
        stop: Option<String>,
    },
    Summary {
        entry_id: String,
        text: String,
        what: SummaryOf,
    },
}

/// What a summary in the transcript stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SummaryOf {
    /// Earlier messages, summarised to save room.
    Compaction,
    /// The branch left behind when the user switched.
    Branch,
}

/// The user messages with the same parent (edits), this one included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct BranchSiblings {
    /// Their entry ids, oldest first.
    pub ids: Vec<String>,
    /// This message's place among them (0-based).
    pub index: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ToolCallView {
    pub call_id: String,
    pub name: String,
    #[ts(type = "unknown")]
    pub arguments: Value,
    /// `None` while it has not finished (or never ran).
    pub result: Option<ToolResultView>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct ToolResultView {
    pub content: String,
    pub is_error: bool,
    /// Pictures the tool gave (`read_file` on a picture).
    pub pictures: Vec<Picture>,
}

impl SessionView {
    /// The active branch of `tree`, oldest first.
    pub fn of(tree: &SessionTree, running: bool) -> Self {
        Self::build(tree, running, tree.active_path())
    }

    /// The active branch of `tree` without its entries from the `known`th on: the
    /// transcript as it was before the run that wrote them (a run writes a suffix of the
    /// branch).
    pub fn before(tree: &SessionTree, running: bool, known: usize) -> Self {
        let later = tree.entries().get(known..).unwrap_or_default();
        let later: HashSet<&str> = later.iter().map(|entry| entry.id.as_str()).collect();
        let mut path = tree.active_path();
        path.retain(|entry| !later.contains(entry.id.as_str()));
        let leaf = path.last().map(|entry| entry.id.clone());
        Self {
            leaf,
            ..Self::build(tree, running, path)
        }
    }

    fn build(tree: &SessionTree, running: bool, path: Vec<&SessionEntry>) -> Self {
        let results = tool_results(&path);
        let items = path
            .iter()
            .filter_map(|entry| item(tree, entry, &results))
            .collect();
        Self {
            id: tree.id().to_string(),
            title: tree.title().map(str::to_string),
            items,
            leaf: tree.leaf().map(str::to_string),
            branches: tree.branch_count(),
            running,
            last_run: tree
                .last_run()
                .map(|(outcome, steps, duration_ms)| LastRun {
                    outcome: outcome.clone(),
                    steps,
                    duration_ms,
                    said: outcome.ended(steps),
                }),
            thinking: tree.thinking_level(),
            // A run going on has checkpoints and no end yet: it is not cut short.
            interrupted: tree
                .interrupted_run()
                .filter(|_| !running)
                .map(|run| InterruptedRun {
                    message: run.message.clone(),
                    steps: run.step,
                    queued: run.follow_ups.clone(),
                }),
        }
    }

    /// An empty session that has no file yet.
    pub fn empty(id: String) -> Self {
        Self {
            id,
            title: None,
            items: Vec::new(),
            leaf: None,
            branches: 0,
            running: false,
            last_run: None,
            thinking: None,
            interrupted: None,
        }
    }
}

fn tool_results<'a>(path: &[&'a SessionEntry]) -> HashMap<&'a str, ToolResultView> {
    path.iter()
        .filter_map(|entry| match &entry.kind {
            EntryKind::Message {
                message: Message::ToolResult(result),
            } => Some((
                result.call_id.as_str(),
                ToolResultView {
                    content: result.content.clone(),
                    is_error: result.is_error,
                    pictures: result.pictures.clone(),
                },
            )),
            _ => None,
        })
        .collect()
}

fn item(
    tree: &SessionTree,
    entry: &SessionEntry,
    results: &HashMap<&str, ToolResultView>,
) -> Option<TranscriptItem> {
    let entry_id = entry.id.clone();
    match &entry.kind {
        EntryKind::Message { message } => match message {
            Message::User { .. } => Some(TranscriptItem::User {
                entry_id,
                text: message.text(),
                pictures: super::pictures::of_message(message),
                siblings: siblings(tree, entry),
            }),
            Message::Assistant(answer) => Some(TranscriptItem::Assistant {
                entry_id,
                text: answer.text(),
                thinking: answer.thinking(),
                tool_calls: answer
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        ContentBlock::ToolCall(call) => Some(ToolCallView {
                            call_id: call.id.clone(),
                            name: call.name.clone(),
                            arguments: call.arguments.clone(),
                            result: results.get(call.id.as_str()).cloned(),
                        }),
                        ContentBlock::Text { .. }
                        | ContentBlock::Thinking { .. }
                        | ContentBlock::Image(_)
                        | ContentBlock::ServerTool { .. } => None,
                    })
                    .collect(),
                stop: stop_note(answer.stop_reason),
            }),
            Message::ToolResult(_) => None,
        },
        EntryKind::Compaction { summary, .. } => Some(TranscriptItem::Summary {
            entry_id,
            text: summary.clone(),
            what: SummaryOf::Compaction,
        }),
        EntryKind::BranchSummary { summary, .. } => Some(TranscriptItem::Summary {
            entry_id,
            text: summary.clone(),
            what: SummaryOf::Branch,
        }),
        _ => None,
    }
}

fn stop_note(reason: StopReason) -> Option<String> {
    let name = match reason {
        StopReason::EndTurn | StopReason::ToolUse => return None,
        StopReason::MaxTokens => "max_tokens",
        StopReason::Refusal => "refusal",
        StopReason::Aborted => "aborted",
        StopReason::Error => "error",
    };
    Some(name.to_string())
}

/// The versions of user message `entry` (edits of one another), when there are several.
fn siblings(tree: &SessionTree, entry: &SessionEntry) -> Option<BranchSiblings> {
    let ids = tree.versions_of(&entry.id);
    if ids.len() < 2 {
        return None;
    }
    let index = ids.iter().position(|id| *id == entry.id)?;
    Some(BranchSiblings { ids, index })
}
