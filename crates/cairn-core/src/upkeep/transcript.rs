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
        Message::ToolResult(r) => {
            estimate_text(&r.content)
                + estimate_text(&r.tool_name)
                + r.pictures.iter().map(estimate_picture).sum::<u64>()
        }
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
        ContentBlock::Image(picture) => estimate_picture(picture),
        // Sent back whole, search results included.
        ContentBlock::ServerTool { raw } => estimate_text(&raw.to_string()),
    }
}

/// A picture's tokens: as a model that sees counts it (about one per 750 pixels, scaled
/// to at most 1,568 a side), and its text, which goes beside it or in its place.
fn estimate_picture(picture: &cairn_protocol::Picture) -> u64 {
    let (w, h) = (u64::from(picture.width), u64::from(picture.height));
    let side = w.max(h).max(1);
    let scale = |n: u64| if side > 1568 { n * 1568 / side } else { n };
    let seen = (scale(w) * scale(h) / 750).max(85);
    seen + picture.text.as_deref().map_or(0, estimate_text) + 24
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
            Message::User { content } => {
                out.push_str(&format!("User: {}\n", message.text().trim()));
                for block in content {
                    if let ContentBlock::Image(picture) = block {
                        out.push_str(&picture_line(picture));
                    }
                }
                out.push('\n');
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
                for picture in &r.pictures {
                    out.push_str(&picture_line(picture));
                }
            }
        }
    }
    out
}

/// A picture in a transcript: the one line a summary keeps of it (the picture is never
/// sent again once summarised), and the head of the text read in it.
fn picture_line(picture: &cairn_protocol::Picture) -> String {
    match picture
        .text
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        Some(text) => format!(
            "{} (text in it: {})\n",
            picture.mention(),
            cap_middle(&text.replace('\n', " "), ARGUMENT_CHARS)
        ),
        None => format!("{}\n", picture.mention()),
    }
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
