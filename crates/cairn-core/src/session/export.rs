//! A session as Markdown: the active branch, each message under a heading, tool calls
//! with their arguments and results folded in `<details>`, summaries as quotes. What a
//! user pastes into a note or an issue; readable as plain text too.

use std::fmt::Write;

use cairn_protocol::{ContentBlock, EntryKind, Message, Picture};

use super::tree::SessionTree;

/// Longest tool result kept whole in the export; longer ones keep their head.
const RESULT_CHARS: usize = 4_000;

/// The folder beside an exported file that its pictures are copied into, and that its
/// links point to.
pub const PICTURES_FOLDER: &str = "attachments";

/// The pictures of the active branch of `tree`, each once, in the order they appear.
pub fn pictures(tree: &SessionTree) -> Vec<Picture> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for entry in tree.active_path() {
        let EntryKind::Message { message } = &entry.kind else {
            continue;
        };
        let found: Vec<&Picture> = match message {
            Message::User { content } => content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Image(p) => Some(p),
                    _ => None,
                })
                .collect(),
            Message::ToolResult(r) => r.pictures.iter().collect(),
            Message::Assistant(_) => Vec::new(),
        };
        for picture in found {
            if seen.insert(picture.sha256.clone()) {
                out.push(picture.clone());
            }
        }
    }
    out
}

/// A picture as a Markdown image linking to its copy beside the export.
fn picture_markdown(out: &mut String, picture: &Picture) {
    let name = picture.name.as_deref().unwrap_or("picture");
    let _ = writeln!(
        out,
        "![{}]({PICTURES_FOLDER}/{}) _{} × {} px_\n",
        one_line(name).replace(['[', ']'], ""),
        picture.file_name(),
        picture.width,
        picture.height
    );
}

/// The active branch of `tree` as Markdown.
pub fn to_markdown(tree: &SessionTree) -> String {
    let mut out = String::new();
    let title = tree.title().unwrap_or("Untitled conversation");
    let _ = writeln!(out, "# {}\n", one_line(title));
    let _ = writeln!(
        out,
        "_Session {} · started {}_\n",
        tree.id(),
        tree.header().created_at
    );
    for entry in tree.active_path() {
        match &entry.kind {
            EntryKind::Message { message } => message_markdown(&mut out, message, &entry.ts),
            EntryKind::Compaction { summary, .. } => {
                quote(&mut out, "Summary of earlier turns", summary);
            }
            EntryKind::BranchSummary { summary, .. } => {
                quote(&mut out, "Summary of a branch left", summary);
            }
            EntryKind::ModelChange { provider, model } => {
                let _ = writeln!(out, "_Model: {provider}/{model}_\n");
            }
            EntryKind::ThinkingLevel { level } => {
                let _ = writeln!(out, "_Thinking: {level}_\n");
            }
            _ => {}
        }
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

fn message_markdown(out: &mut String, message: &Message, ts: &str) {
    match message {
        Message::User { content } => {
            let _ = writeln!(
                out,
                "## You\n\n<!-- {ts} -->\n\n{}\n",
                message.text().trim()
            );
            for block in content {
                if let ContentBlock::Image(picture) = block {
                    picture_markdown(out, picture);
                }
            }
        }
        Message::Assistant(a) => {
            let _ = writeln!(out, "## Cairn\n\n<!-- {ts} -->\n");
            for block in &a.content {
                match block {
                    ContentBlock::Text { text } if !text.trim().is_empty() => {
                        let _ = writeln!(out, "{}\n", text.trim());
                    }
                    ContentBlock::ToolCall(call) => {
                        let args = serde_json::to_string_pretty(&call.arguments)
                            .unwrap_or_else(|_| call.arguments.to_string());
                        let _ = writeln!(out, "**Tool call** `{}`\n", one_line(&call.name));
                        fenced(out, "json", &args);
                    }
                    ContentBlock::Thinking { text, .. } if !text.trim().is_empty() => {
                        let _ = writeln!(
                            out,
                            "<details><summary>Thinking</summary>\n\n{}\n\n</details>\n",
                            text.trim()
                        );
                    }
                    // A provider's own tool block: what it found is in the answer's text.
                    ContentBlock::Text { .. }
                    | ContentBlock::Thinking { .. }
                    | ContentBlock::Image(_)
                    | ContentBlock::ServerTool { .. } => {}
                }
            }
        }
        Message::ToolResult(r) => {
            let mark = if r.is_error { "failed" } else { "result" };
            let _ = writeln!(
                out,
                "<details><summary>{} {mark}</summary>\n",
                html_text(&r.tool_name)
            );
            let content = match r.content.char_indices().nth(RESULT_CHARS) {
                Some((cut, _)) => format!("{}\n… (cut)", &r.content[..cut]),
                None => r.content.clone(),
            };
            fenced(out, "", &content);
            out.push_str("</details>\n\n");
            for picture in &r.pictures {
                picture_markdown(out, picture);
            }
        }
    }
}

fn quote(out: &mut String, what: &str, text: &str) {
    let _ = writeln!(out, "> **{what}**\n>");
    for line in text.trim().lines() {
        let _ = writeln!(out, "> {line}");
    }
    out.push('\n');
}

/// A code block whose fence is longer than any run of backticks inside.
fn fenced(out: &mut String, lang: &str, text: &str) {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let _ = writeln!(out, "{fence}{lang}\n{}\n{fence}\n", text.trim_end());
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn html_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_protocol::{
        AssistantMessage, SessionHeader, StopReason, ToolCall, ToolResultMessage,
    };
    use serde_json::json;

    fn tree() -> SessionTree {
        let mut tree = SessionTree::new(SessionHeader::new("s1", "2026-11-01T10:00:00.000Z"));
        let add = |tree: &mut SessionTree, kind| {
            let entry = tree.draft(kind);
            tree.apply(entry);
        };
        add(
            &mut tree,
            EntryKind::SessionInfo {
                title: "Car\nplans".into(),
            },
        );
        add(
            &mut tree,
            EntryKind::Message {
                message: Message::user("Which car did we pick?"),
            },
        );
        add(
            &mut tree,
            EntryKind::Message {
                message: Message::Assistant(AssistantMessage {
                    content: vec![
                        ContentBlock::Text {
                            text: "Let me look.".into(),
                        },
                        ContentBlock::ToolCall(ToolCall {
                            id: "c1".into(),
                            name: "memory_search".into(),
                            arguments: json!({"query": "car"}),
                        }),
                    ],
                    stop_reason: StopReason::ToolUse,
                    usage: None,
                    model: None,
                }),
            },
        );
        add(
            &mut tree,
            EntryKind::Message {
                message: Message::ToolResult(ToolResultMessage {
                    call_id: "c1".into(),
                    tool_name: "memory_search".into(),
                    content: "knowledge/car.md: the ```blue``` estate".into(),
                    is_error: false,
                    pictures: Vec::new(),
                }),
            },
        );
        tree
    }

    #[test]
    fn the_active_branch_reads_as_markdown() {
        let md = to_markdown(&tree());
        assert!(md.starts_with("# Car plans\n"), "{md}");
        assert!(md.contains("## You\n\n<!-- "), "{md}");
        assert!(md.contains("Which car did we pick?"), "{md}");
        assert!(md.contains("**Tool call** `memory_search`"), "{md}");
        assert!(md.contains("\"query\": \"car\""), "{md}");
        assert!(
            md.contains("<details><summary>memory_search result</summary>"),
            "{md}"
        );
        // The result's own backticks cannot close its block early.
        assert!(
            md.contains("````\nknowledge/car.md: the ```blue``` estate\n````"),
            "{md}"
        );
    }
}
