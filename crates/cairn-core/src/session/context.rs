//! The messages sent to the model for a turn: the active path, cut at the latest compaction,
//! with every tool call answered.
//!
//! The context is kept up to date as entries are applied, so a step costs one message
//! append instead of a walk of the whole session: [`ContextCache`] holds the messages of
//! the path up to a tip entry in a shared vector. A new message whose parent is the tip is
//! appended; anything that reshapes the path (a branch, a leaf move, a compaction) drops
//! the cache and the next request rebuilds it from the tree. The vector is shared with the
//! request by reference count: when the provider has dropped the request by the next
//! append, the append happens in place.

use std::collections::HashSet;
use std::sync::Arc;

use cairn_protocol::{EntryKind, Message, SessionEntry, ToolCall, ToolResultMessage};

use super::pictures::unsent_in;
use super::tree::SessionTree;
use crate::upkeep::transcript::estimate_message;

/// What a tool call that never finished is answered with.
pub const INTERRUPTED: &str =
    "Interrupted: this tool call did not finish (the session was stopped while it ran).";
/// A repair's answer to a call that was running when the process stopped.
pub const INTERRUPTED_STARTED: &str = "Interrupted: this tool call was running when the session \
     stopped, and may have partly run (a file part written, a command part done). Check what \
     it changed before repeating it.";
/// A repair's answer to a call that never started (no start marker was saved for it).
pub const NOT_STARTED: &str =
    "Not run: the session stopped before this tool call started; nothing of it ran.";

/// The context of the active path, maintained incrementally (see the module docs).
#[derive(Debug, Clone, Default)]
pub(super) struct ContextCache {
    built: Option<Built>,
}

#[derive(Debug, Clone)]
struct Built {
    /// The entry whose path the messages reflect (`None`: the empty path).
    tip: Option<String>,
    messages: Arc<Vec<Message>>,
    /// Tool calls of the last assistant message still waiting for their results.
    pending: Vec<ToolCall>,
    /// Estimated tokens of `messages`.
    tokens: u64,
    /// Pictures in `messages` without the copy a model that sees is sent.
    unsent: usize,
}

impl ContextCache {
    /// Follows `entry`, just applied to the tree; `leaf` is the tree's leaf after it.
    pub fn observe(&mut self, entry: &SessionEntry, leaf: Option<&str>) {
        let Some(built) = &mut self.built else {
            return;
        };
        let extends_tip = entry.parent_id == built.tip && leaf == Some(entry.id.as_str());
        match &entry.kind {
            EntryKind::Message { message } if extends_tip => {
                built.tokens += estimate_message(message);
                built.unsent += unsent_in(message);
                push_answered(
                    Arc::make_mut(&mut built.messages),
                    &mut built.pending,
                    message.clone(),
                );
                built.tip = Some(entry.id.clone());
            }
            EntryKind::ModelChange { .. }
            | EntryKind::ThinkingLevel { .. }
            | EntryKind::WorkItems { .. }
                if extends_tip =>
            {
                built.tip = Some(entry.id.clone())
            }
            // Results already in the context change: rebuild.
            EntryKind::ToolOutputPruned { .. } => self.built = None,
            // A branch or a compaction. (A leaf move needs nothing: a request whose leaf
            // is not the tip rebuilds.)
            kind if kind.advances_leaf() => self.built = None,
            _ => {}
        }
    }
}

impl SessionTree {
    /// The last `n` turns of the conversation: the user's messages and the assistant's
    /// text answers, tool calls and results left out (a view for purpose models, such as
    /// the intent step, that read the conversation rather than continue it).
    pub fn recent(&mut self, n: usize) -> Vec<Message> {
        let messages = self.context_messages();
        let mut turns: Vec<Message> = messages
            .iter()
            .rev()
            .filter(|m| !matches!(m, Message::ToolResult(_)) && !m.text().trim().is_empty())
            .take(n)
            .cloned()
            .collect();
        turns.reverse();
        turns
    }

    /// The conversation as the provider should see it, shared rather than copied.
    pub fn context_messages(&mut self) -> Arc<Vec<Message>> {
        let built = self.current_context();
        let messages = if built.pending.is_empty() {
            built.messages.clone()
        } else {
            // Calls left without results (a stopped run): answered in the request only.
            let mut messages = Vec::clone(&built.messages);
            answer_pending(&mut messages, &mut built.pending.clone());
            Arc::new(messages)
        };
        self.context.built = Some(built);
        messages
    }

    /// How many pictures in the context have no copy for a model attached.
    pub(super) fn context_unsent(&mut self) -> usize {
        let built = self.current_context();
        let unsent = built.unsent;
        self.context.built = Some(built);
        unsent
    }

    /// Changes the kept context's messages in place (copied first if a request still
    /// holds them); its pictures then count as attached.
    pub(super) fn with_context_messages(&mut self, change: impl FnOnce(&mut Vec<Message>)) {
        let mut built = self.current_context();
        change(Arc::make_mut(&mut built.messages));
        built.unsent = 0;
        self.context.built = Some(built);
    }

    /// About how many tokens the conversation costs in a request (kept up to date like
    /// the messages, so asking is cheap).
    pub fn context_tokens(&mut self) -> u64 {
        let built = self.current_context();
        let tokens = built.tokens;
        self.context.built = Some(built);
        tokens
    }

    /// The kept context if it is current, else a rebuilt one (taken out of the cache).
    fn current_context(&mut self) -> Built {
        let leaf = self.leaf().map(str::to_string);
        match self.context.built.take() {
            Some(built) if built.tip == leaf => built,
            _ => self.build_context(),
        }
    }

    /// The entries the model sees: the active path cut at the latest compaction (see
    /// `visible_entries`).
    pub fn visible_path(&self) -> Vec<&SessionEntry> {
        visible_entries(&self.active_path())
    }

    /// The context rebuilt from the entries of the active path.
    fn build_context(&self) -> Built {
        let path = self.active_path();
        let mut messages = Vec::new();
        let mut pending: Vec<ToolCall> = Vec::new();
        for entry in visible_entries(&path) {
            let message = match &entry.kind {
                EntryKind::Message {
                    message: Message::ToolResult(result),
                } if self.is_pruned(&result.call_id) => Message::ToolResult(pruned(result)),
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
        Built {
            tip: self.leaf().map(str::to_string),
            tokens: messages.iter().map(estimate_message).sum(),
            unsent: messages.iter().map(unsent_in).sum(),
            messages: Arc::new(messages),
            pending,
        }
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
pub(crate) fn visible_entries<'a>(path: &[&'a SessionEntry]) -> Vec<&'a SessionEntry> {
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
    // An older compaction inside the kept part is superseded: the latest summary was
    // written from it.
    visible.extend(
        path[kept_from..at]
            .iter()
            .filter(|e| !matches!(e.kind, EntryKind::Compaction { .. })),
    );
    visible.extend_from_slice(&path[at + 1..]);
    visible
}

/// How much of a pruned result the model sees: about this many characters in all.
const PRUNED_VIEW_CHARS: usize = 2_000;

/// A pruned result as the model sees it: head, tail and where the whole of it is.
pub(super) fn pruned(result: &ToolResultMessage) -> ToolResultMessage {
    let path = crate::tools::results::result_file(&result.call_id);
    let mut content = crate::hooks::evicted_view(&result.content, PRUNED_VIEW_CHARS, &path);
    // A picture is never sent again once its result is pruned: one line names it.
    for picture in &result.pictures {
        content.push('\n');
        content.push_str(&picture.mention());
    }
    ToolResultMessage {
        content,
        pictures: Vec::new(),
        ..result.clone()
    }
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
            pictures: Vec::new(),
        }));
    }
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{AssistantMessage, ContentBlock, SessionHeader, StopReason};
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    /// One change to a session, with indices taken modulo what exists.
    #[derive(Debug, Clone)]
    enum Op {
        User,
        Assistant {
            calls: usize,
        },
        Result {
            pick: usize,
        },
        ModelChange,
        /// Attach the next message under an earlier entry (a branch).
        Branch {
            at: usize,
        },
        Leaf {
            at: Option<usize>,
        },
        Compaction {
            keep: usize,
        },
        BranchSummary,
        Title,
        ToolStarted,
        /// Ask for the context now (the cache then follows the following entries).
        Request,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => Just(Op::User),
            3 => (0..3usize).prop_map(|calls| Op::Assistant { calls }),
            4 => (0..4usize).prop_map(|pick| Op::Result { pick }),
            1 => Just(Op::ModelChange),
            1 => (0..64usize).prop_map(|at| Op::Branch { at }),
            1 => proptest::option::of(0..64usize).prop_map(|at| Op::Leaf { at }),
            1 => (0..64usize).prop_map(|keep| Op::Compaction { keep }),
            1 => Just(Op::BranchSummary),
            1 => Just(Op::Title),
            1 => Just(Op::ToolStarted),
            4 => Just(Op::Request),
        ]
    }

    struct Sim {
        tree: SessionTree,
        next: usize,
        /// Calls of the latest assistant message on the active path.
        open_calls: Vec<String>,
    }

    impl Sim {
        fn add(&mut self, kind: EntryKind, parent: Option<Option<String>>) {
            let mut entry = self.tree.draft(kind);
            if let Some(parent) = parent {
                entry.parent_id = parent;
            }
            self.tree.apply(entry);
        }

        fn message(&mut self, message: Message) {
            self.add(EntryKind::Message { message }, None);
        }

        fn nth_id(&self, at: usize) -> Option<String> {
            let entries = self.tree.entries();
            (!entries.is_empty()).then(|| entries[at % entries.len()].id.clone())
        }

        fn step(&mut self, op: Op) {
            self.next += 1;
            let n = self.next;
            match op {
                Op::User => self.message(Message::user(format!("u{n}"))),
                Op::Assistant { calls } => {
                    let mut content = vec![ContentBlock::Text {
                        text: format!("a{n}"),
                    }];
                    self.open_calls = (0..calls).map(|i| format!("c{n}-{i}")).collect();
                    content.extend(self.open_calls.iter().map(|id| {
                        ContentBlock::ToolCall(ToolCall {
                            id: id.clone(),
                            name: "t".into(),
                            arguments: json!({"n": n}),
                        })
                    }));
                    self.message(Message::Assistant(AssistantMessage {
                        content,
                        stop_reason: StopReason::ToolUse,
                        usage: None,
                        model: None,
                    }));
                }
                Op::Result { pick } => {
                    // Mostly a real open call, sometimes one that matches nothing.
                    let call_id = match self.open_calls.len() {
                        0 => format!("stray{n}"),
                        len => self.open_calls.remove(pick % len),
                    };
                    self.message(Message::ToolResult(ToolResultMessage {
                        call_id,
                        tool_name: "t".into(),
                        content: format!("r{n}"),
                        is_error: false,
                        pictures: Vec::new(),
                    }));
                }
                Op::ModelChange => self.add(
                    EntryKind::ModelChange {
                        provider: "p".into(),
                        model: format!("m{n}"),
                    },
                    None,
                ),
                Op::Branch { at } => {
                    let parent = self.nth_id(at);
                    let message = Message::user(format!("b{n}"));
                    self.add(EntryKind::Message { message }, Some(parent));
                }
                Op::Leaf { at } => {
                    let target_id = at.and_then(|at| self.nth_id(at));
                    self.add(EntryKind::Leaf { target_id }, None);
                }
                Op::Compaction { keep } => {
                    let path: Vec<String> = self
                        .tree
                        .active_path()
                        .iter()
                        .map(|e| e.id.clone())
                        .collect();
                    let Some(first_kept_id) =
                        (!path.is_empty()).then(|| path[keep % path.len()].clone())
                    else {
                        return;
                    };
                    let kind = EntryKind::Compaction {
                        summary: format!("s{n}"),
                        first_kept_id,
                        tokens_before: 1,
                    };
                    self.add(kind, None);
                }
                Op::BranchSummary => self.add(
                    EntryKind::BranchSummary {
                        from_id: "x".into(),
                        summary: format!("bs{n}"),
                    },
                    None,
                ),
                Op::Title => self.add(
                    EntryKind::SessionInfo {
                        title: format!("t{n}"),
                    },
                    None,
                ),
                Op::ToolStarted => self.add(
                    EntryKind::ToolStarted {
                        call_id: format!("c{n}"),
                        tool_name: "t".into(),
                    },
                    None,
                ),
                Op::Request => drop(self.tree.context_messages()),
            }
        }

        /// The context of a tree that never had a cache: built from the entries alone.
        fn rebuilt(&self) -> Vec<Message> {
            let mut fresh = SessionTree::new(self.tree.header().clone());
            for entry in self.tree.entries() {
                fresh.apply(entry.clone());
            }
            fresh.context_messages().to_vec()
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn the_kept_context_always_equals_a_rebuild(ops in proptest::collection::vec(op(), 0..80)) {
            let mut sim = Sim {
                tree: SessionTree::new(SessionHeader::new("s", "2026-01-01T00:00:00.000Z")),
                next: 0,
                open_calls: Vec::new(),
            };
            for op in ops {
                sim.step(op);
                let kept = sim.tree.context_messages().to_vec();
                prop_assert_eq!(kept, sim.rebuilt());
            }
        }
    }

    #[test]
    fn a_request_shares_the_kept_messages_instead_of_copying_them() {
        let mut tree = SessionTree::new(SessionHeader::new("s", "2026-01-01T00:00:00.000Z"));
        tree.apply(tree.draft(EntryKind::Message {
            message: Message::user("one"),
        }));
        let first = tree.context_messages();
        let again = tree.context_messages();
        assert!(Arc::ptr_eq(&first, &again));
        drop((first, again));
        let before = Arc::as_ptr(&tree.context_messages());
        tree.apply(tree.draft(EntryKind::Message {
            message: Message::user("two"),
        }));
        // Nobody else held the messages: the append went into the same vector.
        let after = tree.context_messages();
        assert_eq!(Arc::as_ptr(&after), before);
        assert_eq!(after.len(), 2);
    }
}
