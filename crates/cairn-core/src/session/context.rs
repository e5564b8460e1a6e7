//! The messages sent to the model for a turn: the active path, cut at the latest compaction,
//! with every tool call answered.

use std::collections::HashSet;

use cairn_protocol::{EntryKind, Message, SessionEntry, ToolCall, ToolResultMessage};

use super::tree::SessionTree;

/// What a tool call that never finished is answered with.
pub const INTERRUPTED: &str =
    "Interrupted: this tool call did not finish (the session was stopped while it ran).";

impl SessionTree {
    /// The conversation as the provider should see it.
    pub fn context_messages(&self) -> Vec<Message> {
        let path = self.active_path();
        let mut messages = Vec::new();
        let mut pending: Vec<ToolCall> = Vec::new();
        for entry in visible_entries(&path) {
            let message = match &entry.kind {
                EntryKind::Message { message } => message.clone(),
                EntryKind::Compaction { summary, .. } => Message::user(format!(
                    "The conversation so far was summarised to save space:\n\n{summary}"
                )),
                EntryKind::BranchSummary { summary, .. } => Message::user(format!(
                    "Summary of a branch of this conversation that was explored and left:\n\n{summary}"
                )),
                _ => continue,
            };
            push_answered(&mut messages, &mut pending, message);
        }
        answer_pending(&mut messages, &mut pending);
        messages
    }

    /// Tool calls at the end of the active path that have no result (the run stopped while
    /// they were pending). Loading appends "interrupted" results for them.
    pub fn trailing_orphan_calls(&self) -> Vec<ToolCall> {
        let path = self.active_path();
        let mut answered = HashSet::new();
        for entry in path.iter().rev() {
            match &entry.kind {
                EntryKind::Message {
                    message: Message::ToolResult(r),
                } => {
                    answered.insert(r.call_id.clone());
                }
                EntryKind::Message {
                    message: Message::Assistant(a),
                } => {
                    return a
                        .tool_calls()
                        .filter(|c| !answered.contains(&c.id))
                        .cloned()
                        .collect();
                }
                _ => return Vec::new(),
            }
        }
        Vec::new()
    }
}

/// The entries the model sees: after the latest compaction, its summary, then the kept
/// tail from `first_kept_id`, then what came after the compaction.
fn visible_entries<'a>(path: &[&'a SessionEntry]) -> Vec<&'a SessionEntry> {
    let Some(at) = path
        .iter()
        .rposition(|e| matches!(e.kind, EntryKind::Compaction { .. }))
    else {
        return path.to_vec();
    };
    let EntryKind::Compaction { first_kept_id, .. } = &path[at].kind else {
        return path.to_vec();
    };
    let kept_from = path[..at]
        .iter()
        .position(|e| &e.id == first_kept_id)
        .unwrap_or(at);
    let mut visible = vec![path[at]];
    visible.extend_from_slice(&path[kept_from..at]);
    visible.extend_from_slice(&path[at + 1..]);
    visible
}

/// Appends `message`, first answering calls still pending if the message is not one of
/// their results.
fn push_answered(messages: &mut Vec<Message>, pending: &mut Vec<ToolCall>, message: Message) {
    match &message {
        Message::ToolResult(result) => {
            if let Some(pos) = pending.iter().position(|c| c.id == result.call_id) {
                pending.remove(pos);
            } else {
                // A result whose call is not in context (cut by a compaction): drop it, a
                // provider would reject an unmatched result.
                return;
            }
        }
        Message::User { .. } | Message::Assistant(_) => answer_pending(messages, pending),
    }
    if let Message::Assistant(assistant) = &message {
        pending.extend(assistant.tool_calls().cloned());
    }
    messages.push(message);
}

fn answer_pending(messages: &mut Vec<Message>, pending: &mut Vec<ToolCall>) {
    for call in pending.drain(..) {
        messages.push(Message::ToolResult(ToolResultMessage {
            call_id: call.id,
            tool_name: call.name,
            content: INTERRUPTED.to_string(),
            is_error: true,
        }));
    }
}
