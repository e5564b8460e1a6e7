//! The pictures in the context and the copies a model that sees is sent. A session
//! records a picture by its hash; before a request to such a model, the harness attaches
//! each picture's scaled copy to the context kept in memory (never to the session file),
//! once: the context counts the pictures still without one, so a step with none costs
//! nothing.

use std::collections::HashMap;
use std::sync::Arc;

use cairn_protocol::{ContentBlock, Message, Picture, SentPicture};

use super::tree::SessionTree;

/// The pictures of a message.
pub(super) fn pictures_of(message: &Message) -> Vec<&Picture> {
    match message {
        Message::User { content } => content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Image(picture) => Some(picture),
                _ => None,
            })
            .collect(),
        Message::ToolResult(result) => result.pictures.iter().collect(),
        Message::Assistant(_) => Vec::new(),
    }
}

/// How many of a message's pictures have no copy attached.
pub(super) fn unsent_in(message: &Message) -> usize {
    pictures_of(message)
        .iter()
        .filter(|p| p.sent.is_none())
        .count()
}

impl SessionTree {
    /// The pictures in the context that have no copy attached, each once.
    pub fn unsent_pictures(&mut self) -> Vec<Picture> {
        if self.context_unsent() == 0 {
            return Vec::new();
        }
        let messages = self.context_messages();
        let mut seen = std::collections::HashSet::new();
        messages
            .iter()
            .flat_map(pictures_of)
            .filter(|p| p.sent.is_none() && seen.insert(p.sha256.clone()))
            .cloned()
            .collect()
    }

    /// Attaches `copies` (by picture hash) to the pictures in the context. A picture with
    /// no copy (its file lost, or not a picture any more) stays without one: the model is
    /// told of it as text, and it is not tried again until the context is rebuilt.
    pub fn attach_sent(&mut self, copies: &HashMap<String, Arc<SentPicture>>) {
        self.with_context_messages(|messages| {
            for message in messages.iter_mut() {
                let pictures: Vec<&mut Picture> = match message {
                    Message::User { content } => content
                        .iter_mut()
                        .filter_map(|block| match block {
                            ContentBlock::Image(picture) => Some(picture),
                            _ => None,
                        })
                        .collect(),
                    Message::ToolResult(result) => result.pictures.iter_mut().collect(),
                    Message::Assistant(_) => Vec::new(),
                };
                for picture in pictures.into_iter().filter(|p| p.sent.is_none()) {
                    picture.sent = copies.get(&picture.sha256).cloned();
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{EntryKind, SessionHeader, ToolResultMessage};

    use super::*;

    fn picture() -> Picture {
        Picture {
            sha256: "0123456789ab".repeat(5) + "cdef",
            media_type: "image/png".into(),
            bytes: 10,
            width: 640,
            height: 480,
            name: Some("chart.png".into()),
            text: Some("Q3 revenue up".into()),
            sent: Some(Arc::new(SentPicture {
                media_type: "image/png".into(),
                base64: "iVBORw0KGgo".into(),
                width: 640,
                height: 480,
            })),
        }
    }

    #[test]
    fn a_pruned_result_keeps_one_line_of_its_picture_and_never_sends_it_again() {
        let result = ToolResultMessage {
            call_id: "c1".into(),
            tool_name: "read_file".into(),
            content: "`chart.png`: a PNG picture".into(),
            is_error: false,
            pictures: vec![picture()],
        };
        let pruned = super::super::context::pruned(&result);
        assert!(pruned.pictures.is_empty());
        assert!(pruned
            .content
            .contains("[picture chart.png, 640 × 480 px, sha256:0123456789ab]"));
    }

    #[test]
    fn a_summary_reads_a_mention_and_the_text_never_the_bytes() {
        let mut tree = SessionTree::new(SessionHeader::new("s1", "2026-01-01T00:00:00Z"));
        let entry = tree.draft(EntryKind::Message {
            message: Message::User {
                content: vec![
                    ContentBlock::Text {
                        text: "Look".into(),
                    },
                    ContentBlock::Image(picture()),
                ],
            },
        });
        tree.apply(entry.clone());
        let transcript = crate::upkeep::transcript::render(&[&entry]);
        assert!(
            transcript.contains("[picture chart.png, 640 × 480 px"),
            "{transcript}"
        );
        assert!(transcript.contains("Q3 revenue up"), "{transcript}");
        assert!(!transcript.contains("iVBOR"), "{transcript}");
    }

    #[test]
    fn copies_are_attached_once_and_counted() {
        let mut tree = SessionTree::new(SessionHeader::new("s1", "2026-01-01T00:00:00Z"));
        let mut unsent = picture();
        unsent.sent = None;
        let entry = tree.draft(EntryKind::Message {
            message: Message::User {
                content: vec![ContentBlock::Image(unsent.clone())],
            },
        });
        tree.apply(entry);
        let waiting = tree.unsent_pictures();
        assert_eq!(waiting.len(), 1);
        let copies = HashMap::from([(unsent.sha256.clone(), picture().sent.unwrap())]);
        tree.attach_sent(&copies);
        assert!(tree.unsent_pictures().is_empty());
        let messages = tree.context_messages();
        assert!(pictures_of(&messages[0])[0].sent.is_some());
    }
}
