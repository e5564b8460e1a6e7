//! Compaction: where to cut a conversation, and how to ask for the summary of the part
//! before the cut.

use cairn_protocol::{EntryKind, Message, SessionEntry};

use super::transcript::estimate_entry;

/// What the compaction model is told.
pub const SYSTEM: &str = "You write the working memory of an AI assistant in the middle of a \
task. The assistant will continue with only your summary and the most recent messages, so \
anything you leave out is lost to it. Write markdown with exactly these sections, in this \
order, each a short list of bullets (\"- none\" when empty):\n\
## Goal\n## Constraints and preferences\n## Progress\n## Decisions\n## Next steps\n\
## Critical context\n## Files touched\n\n\
Keep names, numbers, dates, paths, commands, identifiers and error messages exactly as \
written. Keep every instruction and preference the user stated, word for word when short. \
When a previous summary is given, update it: keep what still holds, add what is new, mark \
finished work as done, and drop only what the conversation shows is obsolete. Answer with the \
summary only.";

/// What the model summarising a branch left behind is told.
pub const BRANCH_SYSTEM: &str = "The user is leaving a branch of a conversation with an AI \
assistant to continue from an earlier point. Summarise the branch for the conversation that \
goes on without it: what was tried, what was found or decided, what failed and why, and \
anything the user said that still matters. Keep names, paths, commands and numbers exact. \
Answer with a few short markdown bullets only.";

/// The user message of a branch summary request.
pub fn branch_prompt(transcript: &str) -> String {
    format!(
        "The branch being left:\n<conversation>\n{}\n</conversation>\n",
        transcript.trim()
    )
}

/// Longest summary asked for, in tokens.
pub const SUMMARY_MAX_TOKENS: u32 = 4_096;

/// The user message of a compaction request.
pub fn prompt(previous: Option<&str>, transcript: &str, instructions: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(previous) = previous {
        out.push_str(&format!(
            "The previous summary (update it):\n<previous-summary>\n{}\n</previous-summary>\n\n",
            previous.trim()
        ));
    }
    out.push_str(&format!(
        "The conversation to fold into the summary:\n<conversation>\n{}\n</conversation>\n",
        transcript.trim()
    ));
    if let Some(instructions) = instructions.filter(|i| !i.trim().is_empty()) {
        out.push_str(&format!(
            "\nThe user asks the summary to focus on: {}\n",
            instructions.trim()
        ));
    }
    out
}

/// Where a compaction cuts the entries the model sees now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// The summary of the latest compaction, which the new summary updates.
    pub previous_summary: Option<String>,
    /// Indexes (into the visible entries) of what is summarised.
    pub summarised: std::ops::Range<usize>,
    /// Index of the first entry kept as it is.
    pub first_kept: usize,
}

/// Plans a compaction of `visible` (the entries the model sees now, as the session's
/// context lists them) keeping about `keep_tokens` of the most recent ones.
///
/// The cut lands before a user message when it can, else before an assistant message;
/// never before a tool result, so a call and its result stay together. The latest
/// compaction's summary is updated rather than summarised again. `None`: nothing can be
/// summarised.
pub fn plan(visible: &[&SessionEntry], keep_tokens: u64) -> Option<Cut> {
    let (previous_summary, start) = match visible.first().map(|e| &e.kind) {
        Some(EntryKind::Compaction { summary, .. }) => (Some(summary.clone()), 1),
        _ => (None, 0),
    };
    let boundary = |entry: &SessionEntry, users_only: bool| match &entry.kind {
        EntryKind::Message {
            message: Message::User { .. },
        } => true,
        EntryKind::Message {
            message: Message::Assistant(_),
        }
        | EntryKind::BranchSummary { .. } => !users_only,
        _ => false,
    };
    let mut tail = 0u64;
    let mut tails = vec![0u64; visible.len() + 1];
    for i in (0..visible.len()).rev() {
        tail += estimate_entry(visible[i]);
        tails[i] = tail;
    }
    // A cut must leave something before it to summarise.
    let first_candidate = start + 1;
    let pick = |users_only: bool| {
        (first_candidate..visible.len())
            .rev()
            .find(|&i| boundary(visible[i], users_only) && tails[i] >= keep_tokens)
    };
    let fallback = |users_only: bool| {
        (first_candidate..visible.len())
            .rev()
            .find(|&i| boundary(visible[i], users_only))
    };
    let first_kept = pick(true)
        .or_else(|| pick(false))
        .or_else(|| fallback(true))
        .or_else(|| fallback(false))?;
    let summarised = start..first_kept;
    let has_content = visible[summarised.clone()].iter().any(|e| {
        matches!(
            e.kind,
            EntryKind::Message { .. } | EntryKind::BranchSummary { .. }
        )
    });
    has_content.then_some(Cut {
        previous_summary,
        summarised,
        first_kept,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_protocol::{AssistantMessage, ContentBlock, StopReason, ToolCall, ToolResultMessage};

    fn entry(id: usize, message: Message) -> SessionEntry {
        SessionEntry {
            id: format!("{id:08x}"),
            parent_id: None,
            ts: String::new(),
            kind: EntryKind::Message { message },
        }
    }

    fn user(id: usize, words: usize) -> SessionEntry {
        entry(id, Message::user("word ".repeat(words)))
    }

    fn call(id: usize) -> SessionEntry {
        entry(
            id,
            Message::Assistant(AssistantMessage {
                content: vec![ContentBlock::ToolCall(ToolCall {
                    id: format!("c{id}"),
                    name: "bash".into(),
                    arguments: serde_json::json!({}),
                })],
                stop_reason: StopReason::ToolUse,
                usage: None,
                model: None,
            }),
        )
    }

    fn result(id: usize, words: usize) -> SessionEntry {
        entry(
            id,
            Message::ToolResult(ToolResultMessage {
                call_id: format!("c{}", id - 1),
                tool_name: "bash".into(),
                content: "word ".repeat(words),
                is_error: false,
                pictures: Vec::new(),
            }),
        )
    }

    #[test]
    fn cuts_before_the_user_message_that_keeps_enough() {
        // Each user message is about 1,254 tokens.
        let entries: Vec<SessionEntry> = (0..6).map(|i| user(i, 1_000)).collect();
        let visible: Vec<&SessionEntry> = entries.iter().collect();
        let cut = plan(&visible, 2_000).unwrap();
        assert_eq!(cut.first_kept, 4);
        assert_eq!(cut.summarised, 0..4);
        assert_eq!(cut.previous_summary, None);
    }

    #[test]
    fn never_cuts_between_a_call_and_its_result() {
        let entries = [
            user(0, 10),
            call(1),
            result(2, 5_000),
            call(3),
            result(4, 5_000),
        ];
        let visible: Vec<&SessionEntry> = entries.iter().collect();
        let cut = plan(&visible, 1_000).unwrap();
        // No user boundary after the first entry: the latest assistant message.
        assert_eq!(cut.first_kept, 3);
        assert!(!matches!(
            visible[cut.first_kept].kind,
            EntryKind::Message {
                message: Message::ToolResult(_)
            }
        ));
    }

    #[test]
    fn a_previous_summary_is_updated_not_summarised() {
        let mut entries = vec![SessionEntry {
            id: "s".into(),
            parent_id: None,
            ts: String::new(),
            kind: EntryKind::Compaction {
                summary: "## Goal\n- ship".into(),
                first_kept_id: "x".into(),
                tokens_before: 1,
            },
        }];
        entries.extend((0..4).map(|i| user(i, 1_000)));
        let visible: Vec<&SessionEntry> = entries.iter().collect();
        let cut = plan(&visible, 1_000).unwrap();
        assert_eq!(cut.previous_summary.as_deref(), Some("## Goal\n- ship"));
        assert_eq!(cut.summarised, 1..4);
        assert_eq!(cut.first_kept, 4);
    }

    #[test]
    fn nothing_to_summarise_is_none() {
        let entries = [user(0, 10)];
        let visible: Vec<&SessionEntry> = entries.iter().collect();
        assert_eq!(plan(&visible, 1_000), None);
        assert_eq!(plan(&[], 1_000), None);
    }
}
