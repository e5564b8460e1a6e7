//! Conversations exported from ChatGPT (`conversations.json`: each conversation a tree of
//! nodes in `mapping`, the shown branch ending at `current_node`) and from Claude
//! (`conversations.json`: each conversation a list of `chat_messages`), made into
//! sessions: the title, then the user's and the assistant's text messages of the shown
//! branch with their original times. Tool traffic, system prompts and attachments are left
//! out. The sessions are indexed like any other, so their text is searchable.

use std::collections::HashSet;

use cairn_protocol::{AssistantMessage, ContentBlock, EntryKind, Message, StopReason};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;

use super::store::SessionStore;
use crate::error::HarnessError;

/// Which service wrote the export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    ChatGpt,
    Claude,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::ChatGpt => "ChatGPT",
            Source::Claude => "Claude",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Source::ChatGpt => "chatgpt",
            Source::Claude => "claude",
        }
    }
}

/// One conversation read from an export.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// The service's id of the conversation, when the export has one.
    pub id: Option<String>,
    pub title: String,
    /// (from the user, text, when) in order.
    pub messages: Vec<(bool, String, Option<String>)>,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("not a ChatGPT or Claude export: {0}")]
    Format(String),
    #[error(transparent)]
    Session(#[from] HarnessError),
}

/// Reads an export (the `conversations.json` of either service).
pub fn parse(bytes: &[u8]) -> Result<(Source, Vec<Conversation>), ImportError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| ImportError::Format(format!("the file is not JSON ({e})")))?;
    let Some(items) = value.as_array() else {
        return Err(ImportError::Format(
            "expected a list of conversations".into(),
        ));
    };
    let source =
        match items.first() {
            None => Source::ChatGpt,
            Some(first) if first.get("mapping").is_some() => Source::ChatGpt,
            Some(first) if first.get("chat_messages").is_some() => Source::Claude,
            Some(_) => return Err(ImportError::Format(
                "its conversations have neither `mapping` (ChatGPT) nor `chat_messages` (Claude)"
                    .into(),
            )),
        };
    let conversations = items
        .iter()
        .map(|item| match source {
            Source::ChatGpt => chatgpt(item),
            Source::Claude => claude(item),
        })
        .filter(|c| !c.messages.is_empty())
        .collect();
    Ok((source, conversations))
}

fn text_of(value: Option<&Value>) -> String {
    value
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn seconds_to_ts(value: Option<&Value>) -> Option<String> {
    let seconds = value?.as_f64()?;
    let at = DateTime::<Utc>::from_timestamp_millis((seconds * 1000.0) as i64)?;
    Some(at.to_rfc3339_opts(SecondsFormat::Millis, true))
}

fn iso_to_ts(value: Option<&Value>) -> Option<String> {
    let at = DateTime::parse_from_rfc3339(value?.as_str()?).ok()?;
    Some(
        at.with_timezone(&Utc)
            .to_rfc3339_opts(SecondsFormat::Millis, true),
    )
}

fn chatgpt(item: &Value) -> Conversation {
    let empty = serde_json::Map::new();
    let mapping = item
        .get("mapping")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    // The shown branch: from `current_node` up to the root (a cycle stops the walk).
    let mut path = Vec::new();
    let mut seen = HashSet::new();
    let mut at = item
        .get("current_node")
        .and_then(Value::as_str)
        .map(str::to_string);
    while let Some(id) = at.take() {
        if !seen.insert(id.clone()) {
            break;
        }
        let Some(node) = mapping.get(&id) else { break };
        path.push(node);
        at = node
            .get("parent")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    path.reverse();
    let messages = path
        .into_iter()
        .filter_map(|node| {
            let message = node.get("message")?;
            let role = message.pointer("/author/role")?.as_str()?;
            if role != "user" && role != "assistant" {
                return None;
            }
            let content = message.get("content")?;
            let kind = content.get("content_type").and_then(Value::as_str);
            if !matches!(kind, Some("text" | "multimodal_text") | None) {
                return None;
            }
            let text = content
                .get("parts")?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n");
            let text = text.trim().to_string();
            (!text.is_empty()).then(|| {
                (
                    role == "user",
                    text,
                    seconds_to_ts(message.get("create_time")),
                )
            })
        })
        .collect();
    Conversation {
        id: item
            .get("conversation_id")
            .or_else(|| item.get("id"))
            .and_then(Value::as_str)
            .map(str::to_string),
        title: text_of(item.get("title")),
        messages,
    }
}

fn claude(item: &Value) -> Conversation {
    let messages = item
        .get("chat_messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|m| {
            let sender = m.get("sender")?.as_str()?;
            if sender != "human" && sender != "assistant" {
                return None;
            }
            let mut text = text_of(m.get("text"));
            if text.trim().is_empty() {
                text = m
                    .get("content")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                    .map(|b| text_of(b.get("text")))
                    .collect::<Vec<_>>()
                    .join("\n");
            }
            let text = text.trim().to_string();
            (!text.is_empty()).then(|| (sender == "human", text, iso_to_ts(m.get("created_at"))))
        })
        .collect();
    Conversation {
        id: item.get("uuid").and_then(Value::as_str).map(str::to_string),
        title: text_of(item.get("name")),
        messages,
    }
}

impl Conversation {
    /// Where it comes from: the service, its id there, and a digest of what was read, so
    /// the same export imported twice is recognised while a conversation continued since
    /// (more messages) comes in again.
    fn origin(&self, source: Source) -> String {
        let mut digest = blake3::Hasher::new();
        for part in std::iter::once(&self.title).chain(self.messages.iter().map(|m| &m.1)) {
            digest.update(&(part.len() as u64).to_le_bytes());
            digest.update(part.as_bytes());
        }
        for (from_user, _, at) in &self.messages {
            digest.update(&[u8::from(*from_user)]);
            digest.update(at.as_deref().unwrap_or("").as_bytes());
        }
        let hex = digest.finalize().to_hex();
        format!(
            "{}:{}#{}",
            source.key(),
            self.id.as_deref().unwrap_or("-"),
            &hex[..16]
        )
    }
}

/// What became of one conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Imported {
    /// Written as this new session.
    New(String),
    /// Imported before, unchanged: this session already holds it.
    Already(String),
}

impl Imported {
    pub fn id(&self) -> &str {
        match self {
            Imported::New(id) | Imported::Already(id) => id,
        }
    }
}

/// Writes each conversation not imported before as a new session; in order, what became of
/// each.
pub async fn import(
    store: &SessionStore,
    source: Source,
    conversations: &[Conversation],
) -> Result<Vec<Imported>, ImportError> {
    let mut known = store.origins()?;
    let mut done = Vec::new();
    for conversation in conversations {
        let origin = conversation.origin(source);
        // Only a whole earlier import counts: one cut short (a full disk, a crash) has the
        // origin in its header but not every message.
        if let Some(id) = known.get(&origin) {
            let whole = store
                .load(id)
                .is_ok_and(|l| l.tree.active_path().len() == conversation.messages.len());
            if whole {
                done.push(Imported::Already(id.clone()));
                continue;
            }
        }
        let mut session = store.create_imported(origin.clone())?;
        let title = match conversation.title.trim() {
            "" => format!("Imported from {}", source.name()),
            title => title.to_string(),
        };
        let mut kinds = vec![(EntryKind::SessionInfo { title }, None)];
        for (from_user, text, at) in &conversation.messages {
            let message = if *from_user {
                Message::user(text.clone())
            } else {
                Message::Assistant(AssistantMessage {
                    content: vec![ContentBlock::Text { text: text.clone() }],
                    stop_reason: StopReason::EndTurn,
                    usage: None,
                    model: None,
                })
            };
            kinds.push((EntryKind::Message { message }, at.clone()));
        }
        for (kind, at) in kinds {
            let mut entry = session.tree.draft(kind);
            if let Some(at) = at {
                entry.ts = at;
            }
            session.writer.append(&entry)?;
            session.tree.apply(entry);
        }
        session.writer.sync().await?;
        let id = session.tree.id().to_string();
        known.insert(origin, id.clone());
        done.push(Imported::New(id));
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of ChatGPT's export: a root node without a message, a system message,
    /// an edited user message (two branches) and a tool message, all in `mapping`.
    pub const CHATGPT: &str = r#"[{
      "title": "Vehicle choice",
      "create_time": 1730000000.0,
      "update_time": 1730000300.0,
      "current_node": "a2",
      "mapping": {
        "root": {"id": "root", "message": null, "parent": null, "children": ["sys"]},
        "sys": {"id": "sys", "parent": "root", "children": ["u1", "u1b"],
                "message": {"author": {"role": "system"}, "content": {"content_type": "text", "parts": [""]}}},
        "u1b": {"id": "u1b", "parent": "sys", "children": [],
                "message": {"author": {"role": "user"}, "create_time": 1730000050.0,
                            "content": {"content_type": "text", "parts": ["an abandoned draft"]}}},
        "u1": {"id": "u1", "parent": "sys", "children": ["t1"],
               "message": {"author": {"role": "user"}, "create_time": 1730000100.5,
                           "content": {"content_type": "text", "parts": ["Should I buy the estate or the hatchback?"]}}},
        "t1": {"id": "t1", "parent": "u1", "children": ["a2"],
               "message": {"author": {"role": "tool", "name": "browser"},
                           "content": {"content_type": "tether_quote", "text": "..."}}},
        "a2": {"id": "a2", "parent": "t1", "children": [],
               "message": {"author": {"role": "assistant"}, "create_time": 1730000200.0,
                           "content": {"content_type": "text", "parts": ["The estate: more room for the dog."]}}}
      }
    }, {"title": "Empty", "current_node": null, "mapping": {}}]"#;

    /// The shape of Claude's export.
    pub const CLAUDE: &str = r#"[{
      "uuid": "0b1c", "name": "Garden watering", "created_at": "2026-05-01T08:00:00.000000+00:00",
      "updated_at": "2026-05-01T08:05:00.000000+00:00",
      "chat_messages": [
        {"uuid": "m1", "sender": "human", "text": "How often should I water tomatoes?",
         "content": [{"type": "text", "text": "How often should I water tomatoes?"}],
         "created_at": "2026-05-01T08:00:10.000000+00:00", "attachments": [], "files": []},
        {"uuid": "m2", "sender": "assistant", "text": "",
         "content": [{"type": "text", "text": "Deeply, every other day in summer."}, {"type": "tool_use", "name": "x"}],
         "created_at": "2026-05-01T08:00:20.000000+00:00", "attachments": [], "files": []}
      ]
    }]"#;

    #[test]
    fn chatgpt_keeps_the_shown_branch_and_only_the_texts() {
        let (source, conversations) = parse(CHATGPT.as_bytes()).unwrap();
        assert_eq!(source, Source::ChatGpt);
        assert_eq!(conversations.len(), 1, "the empty one is left out");
        let c = &conversations[0];
        assert_eq!(c.title, "Vehicle choice");
        assert_eq!(
            c.messages,
            vec![
                (
                    true,
                    "Should I buy the estate or the hatchback?".to_string(),
                    Some("2024-10-27T03:35:00.500Z".to_string())
                ),
                (
                    false,
                    "The estate: more room for the dog.".to_string(),
                    Some("2024-10-27T03:36:40.000Z".to_string())
                ),
            ]
        );
    }

    #[test]
    fn claude_reads_the_text_or_the_text_blocks() {
        let (source, conversations) = parse(CLAUDE.as_bytes()).unwrap();
        assert_eq!(source, Source::Claude);
        let c = &conversations[0];
        assert_eq!(c.title, "Garden watering");
        assert_eq!(c.messages[1].1, "Deeply, every other day in summer.");
        assert_eq!(c.messages[0].2.as_deref(), Some("2026-05-01T08:00:10.000Z"));
    }

    #[test]
    fn other_files_are_refused_with_the_reason() {
        for (bytes, says) in [
            (&b"not json"[..], "not JSON"),
            (br#"{"a": 1}"#, "a list"),
            (br#"[{"messages": []}]"#, "neither"),
        ] {
            let err = parse(bytes).unwrap_err().to_string();
            assert!(err.contains(says), "{err}");
        }
        // A parent chain that loops ends instead of hanging.
        let looped = r#"[{"title": "t", "current_node": "a", "mapping": {
            "a": {"parent": "b", "message": {"author": {"role": "user"}, "content": {"parts": ["x"]}}},
            "b": {"parent": "a", "message": {"author": {"role": "assistant"}, "content": {"parts": ["y"]}}}}}]"#;
        let (_, c) = parse(looped.as_bytes()).unwrap();
        assert_eq!(c[0].messages.len(), 2);
    }

    #[tokio::test]
    async fn imported_conversations_become_sessions_with_their_times() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let (source, conversations) = parse(CLAUDE.as_bytes()).unwrap();
        let ids = import(&store, source, &conversations).await.unwrap();
        assert_eq!(ids.len(), 1);
        assert!(matches!(ids[0], Imported::New(_)), "{ids:?}");
        let loaded = store.load(ids[0].id()).unwrap();
        assert_eq!(loaded.tree.title(), Some("Garden watering"));
        let path = loaded.tree.active_path();
        // The title hangs off the tree; the branch is the two messages, at their times.
        assert_eq!(path.len(), 2);
        assert_eq!(path[0].ts, "2026-05-01T08:00:10.000Z");
        let listed = store.list().unwrap();
        assert_eq!(listed[0].messages, 2);
    }

    #[tokio::test]
    async fn the_same_export_imported_twice_adds_nothing_but_a_continued_one_comes_in() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let (source, conversations) = parse(CHATGPT.as_bytes()).unwrap();
        let first = import(&store, source, &conversations).await.unwrap();
        assert!(
            first.iter().all(|i| matches!(i, Imported::New(_))),
            "{first:?}"
        );
        let again = import(&store, source, &conversations).await.unwrap();
        let ids = |all: &[Imported]| all.iter().map(|i| i.id().to_string()).collect::<Vec<_>>();
        assert_eq!(ids(&again), ids(&first));
        assert!(
            again.iter().all(|i| matches!(i, Imported::Already(_))),
            "{again:?}"
        );
        assert_eq!(store.list().unwrap().len(), first.len());

        // The conversation went on in ChatGPT: the new export brings it in again, whole.
        let mut continued = conversations.clone();
        continued[0]
            .messages
            .push((true, "And for towing a caravan?".into(), None));
        let later = import(&store, source, &continued[..1]).await.unwrap();
        assert!(matches!(later[0], Imported::New(_)), "{later:?}");
        assert_ne!(later[0].id(), first[0].id());
        assert_eq!(store.list().unwrap().len(), first.len() + 1);

        // An import cut short (the last message never reached the disk) is not taken for
        // a whole one: importing again writes it whole.
        let path = store.path_of(later[0].id());
        let text = std::fs::read_to_string(&path).unwrap();
        let kept: Vec<&str> = text.lines().collect();
        std::fs::write(&path, format!("{}\n", kept[..kept.len() - 1].join("\n"))).unwrap();
        let redone = import(&store, source, &continued[..1]).await.unwrap();
        assert!(matches!(redone[0], Imported::New(_)), "{redone:?}");
        let whole = store.load(redone[0].id()).unwrap();
        assert_eq!(whole.tree.active_path().len(), continued[0].messages.len());

        // A deleted import comes back when imported again.
        std::fs::remove_file(store.path_of(first[0].id())).unwrap();
        let back = import(&store, source, &conversations).await.unwrap();
        assert!(matches!(back[0], Imported::New(_)), "{back:?}");
        assert_ne!(back[0].id(), first[0].id());
    }
}
