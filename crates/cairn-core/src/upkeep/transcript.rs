//! Conversations as plain text for the models that read them back (flush, compaction),
//! and token estimates.

use cairn_protocol::{ContentBlock, EntryKind, Message, SessionEntry};

use crate::tools::output::cap_middle;
pub use crate::tools::output::estimate_text;

/// Longest tool result shown in a transcript, in characters.
const TOOL_RESULT_CHARS: usize = 1_500;
/// Longest tool-call argument text shown, in characters.
const ARGUMENT_CHARS: usize = 400;

/// About how many tokens a message costs in a request, framing included.
pub fn estimate_message(message: &Message) -> u64 {
    let body: u64 = match message {
        Message::User { content } => content.iter().map(estimate_block).sum(),
        Message::Assistant(a) => a.content.iter().map(estimate_block).sum(),
        Message::ToolResult(r) => estimate_text(&r.content) + estimate_text(&r.tool_name),
    };
    body + 4
}

fn estimate_block(block: &ContentBlock) -> u64 {
    match block {
        ContentBlock::Text { text } => estimate_text(text),
        ContentBlock::ToolCall(call) => {
            estimate_text(&call.name) + estimate_text(&call.arguments.to_string()) + 8
        }
        // Counted although most providers are not sent it: an estimate may be high, not low.
        ContentBlock::Thinking { text, redacted, .. } => {
            estimate_text(text) + redacted.as_deref().map_or(0, estimate_text)
        }
    }
}

/// The message an entry puts in front of the model, if any.
pub fn entry_message(entry: &SessionEntry) -> Option<Message> {
    match &entry.kind {
        EntryKind::Message { message } => Some(message.clone()),
        EntryKind::Compaction { summary, .. } | EntryKind::BranchSummary { summary, .. } => {
            Some(Message::user(summary.clone()))
        }
        _ => None,
    }
}

/// Estimated tokens of an entry as the model sees it.
pub fn estimate_entry(entry: &SessionEntry) -> u64 {
    entry_message(entry).map_or(0, |m| estimate_message(&m))
}

/// `entries` as a transcript: `User:` / `Assistant:` turns, tool calls on one line, tool
/// results cut to their head and tail.
pub fn render(entries: &[&SessionEntry]) -> String {
    let mut out = String::new();
    for entry in entries {
        let message = match &entry.kind {
            EntryKind::Message { message } => message,
            EntryKind::Compaction { summary, .. } => {
                out.push_str(&format!(
                    "[Summary of the conversation before]\n{summary}\n\n"
                ));
                continue;
            }
            EntryKind::BranchSummary { summary, .. } => {
                out.push_str(&format!("[Summary of a branch left]\n{summary}\n\n"));
                continue;
            }
            _ => continue,
        };
        match message {
            Message::User { .. } => {
                out.push_str(&format!("User: {}\n\n", message.text().trim()));
            }
            Message::Assistant(a) => {
                let text = a.text();
                if !text.trim().is_empty() {
                    out.push_str(&format!("Assistant: {}\n\n", text.trim()));
                }
                for call in a.tool_calls() {
                    let arguments = cap_middle(&call.arguments.to_string(), ARGUMENT_CHARS);
                    out.push_str(&format!("Assistant called {}({arguments})\n\n", call.name));
                }
            }
            Message::ToolResult(r) => {
                let status = if r.is_error { " (error)" } else { "" };
                out.push_str(&format!(
                    "Result of {}{status}:\n{}\n\n",
                    r.tool_name,
                    cap_middle(r.content.trim(), TOOL_RESULT_CHARS)
                ));
            }
        }
    }
    out
}

/// Whether the entries hold anything a person said or the model answered in words.
pub fn has_conversation(entries: &[&SessionEntry]) -> bool {
    entries.iter().any(|e| match &e.kind {
        EntryKind::Message {
            message: m @ (Message::User { .. } | Message::Assistant(_)),
        } => !m.text().trim().is_empty(),
        _ => false,
    })
}
