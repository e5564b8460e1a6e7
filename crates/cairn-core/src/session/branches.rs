//! The branches of a session tree: the versions of a user message (edits and retries make
//! siblings), how many branches there are, and where a branch's conversation got to.

use std::collections::HashSet;

use cairn_protocol::{EntryKind, Message, SessionEntry};

use super::SessionTree;

impl SessionTree {
    /// The user messages sharing the parent of user message `id` (the versions an edit or
    /// a retry made), oldest first, `id` among them. Empty for an unknown id or an entry
    /// that is no user message.
    pub fn versions_of(&self, id: &str) -> Vec<String> {
        let Some(entry) = self.get(id).filter(|e| is_user_message(e)) else {
            return Vec::new();
        };
        self.children(entry.parent_id.as_deref())
            .into_iter()
            .filter(|e| is_user_message(e))
            .map(|e| e.id.clone())
            .collect()
    }

    /// How many branches the session has: entries on some path that nothing continues.
    pub fn branch_count(&self) -> usize {
        let on_path = || self.entries().iter().filter(|e| e.kind.advances_leaf());
        let parents: HashSet<&str> = on_path().filter_map(|e| e.parent_id.as_deref()).collect();
        on_path()
            .filter(|e| !parents.contains(e.id.as_str()))
            .count()
    }

    /// The newest entry in the subtree under `id` (itself when nothing continues it):
    /// where switching to that branch takes the conversation. `None` for an unknown id.
    pub fn newest_under(&self, id: &str) -> Option<String> {
        let mut best: &SessionEntry = self.get(id)?;
        let mut stack = vec![id];
        while let Some(current) = stack.pop() {
            for child in self.children(Some(current)) {
                if child.ts >= best.ts {
                    best = child;
                }
                stack.push(&child.id);
            }
        }
        Some(best.id.clone())
    }
}

fn is_user_message(entry: &SessionEntry) -> bool {
    matches!(
        &entry.kind,
        EntryKind::Message {
            message: Message::User { .. }
        }
    )
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{AssistantMessage, SessionHeader, StopReason};
    use pretty_assertions::assert_eq;

    use super::*;

    fn add(tree: &mut SessionTree, id: &str, parent: Option<&str>, ts: &str, message: Message) {
        tree.apply(SessionEntry {
            id: id.into(),
            parent_id: parent.map(str::to_string),
            ts: format!("2026-01-01T00:00:{ts}.000Z"),
            kind: EntryKind::Message { message },
        });
    }

    fn answer(text: &str) -> Message {
        Message::Assistant(AssistantMessage {
            content: vec![cairn_protocol::ContentBlock::Text { text: text.into() }],
            stop_reason: StopReason::EndTurn,
            usage: None,
            model: None,
        })
    }

    /// u1 → a1 → u2 → a2, and u2 edited as u2b → a2b, then u2 retried as u2c (no answer).
    fn tree() -> SessionTree {
        let mut tree = SessionTree::new(SessionHeader::new("s", "2026-01-01T00:00:00.000Z"));
        add(&mut tree, "u1", None, "01", Message::user("hi"));
        add(&mut tree, "a1", Some("u1"), "02", answer("hello"));
        add(&mut tree, "u2", Some("a1"), "03", Message::user("first"));
        add(&mut tree, "a2", Some("u2"), "04", answer("one"));
        add(&mut tree, "u2b", Some("a1"), "05", Message::user("second"));
        add(&mut tree, "a2b", Some("u2b"), "06", answer("two"));
        add(&mut tree, "u2c", Some("a1"), "07", Message::user("third"));
        tree
    }

    #[test]
    fn the_versions_of_a_message_are_its_user_siblings_in_order() {
        let tree = tree();
        assert_eq!(tree.versions_of("u2b"), ["u2", "u2b", "u2c"]);
        assert_eq!(tree.versions_of("u1"), ["u1"]);
        assert_eq!(tree.versions_of("a1"), Vec::<String>::new());
        assert_eq!(tree.versions_of("nope"), Vec::<String>::new());
    }

    #[test]
    fn branches_are_counted_and_a_switch_goes_to_the_newest_entry_under_a_version() {
        let tree = tree();
        assert_eq!(tree.branch_count(), 3);
        assert_eq!(tree.newest_under("u2").as_deref(), Some("a2"));
        assert_eq!(tree.newest_under("u2b").as_deref(), Some("a2b"));
        assert_eq!(tree.newest_under("u2c").as_deref(), Some("u2c"));
        assert_eq!(tree.newest_under("u1").as_deref(), Some("u2c"));
        assert_eq!(tree.newest_under("nope"), None);
    }
}
