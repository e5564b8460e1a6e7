//! A session held in memory: entries in file order, indexed by id, with the active leaf.

use std::collections::{HashMap, HashSet};

use cairn_protocol::{EntryKind, Message, Outcome, SessionEntry, SessionHeader};

use super::context::ContextCache;
use super::{new_entry_id, timestamp};

/// The entries of one session and where the conversation currently is.
#[derive(Debug, Clone)]
pub struct SessionTree {
    header: SessionHeader,
    entries: Vec<SessionEntry>,
    index: HashMap<String, usize>,
    leaf: Option<String>,
    title: Option<String>,
    labels: HashMap<String, String>,
    /// Tool calls whose results the model sees pruned (head and tail).
    pruned: HashSet<String>,
    /// The ids of every tool call the session holds, on any branch.
    calls: HashSet<String>,
    /// The active path's context, kept current as entries arrive.
    pub(super) context: ContextCache,
}

impl SessionTree {
    pub fn new(header: SessionHeader) -> Self {
        Self {
            header,
            entries: Vec::new(),
            index: HashMap::new(),
            leaf: None,
            title: None,
            labels: HashMap::new(),
            pruned: HashSet::new(),
            calls: HashSet::new(),
            context: ContextCache::default(),
        }
    }

    pub fn id(&self) -> &str {
        &self.header.id
    }

    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    pub fn get(&self, id: &str) -> Option<&SessionEntry> {
        self.index.get(id).map(|&i| &self.entries[i])
    }

    /// The active leaf: where the next message attaches (`None`: the session is empty or the
    /// user went back to before the first message).
    pub fn leaf(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// How the run that ended at the active leaf went (`run_end`: outcome, model calls,
    /// milliseconds), when one did: what is shown under the last message on reopening.
    pub fn last_run(&self) -> Option<(&Outcome, u32, u64)> {
        let leaf = self.leaf()?;
        self.entries.iter().rev().find_map(|e| match &e.kind {
            EntryKind::RunEnd {
                outcome,
                steps,
                duration_ms,
            } if e.parent_id.as_deref() == Some(leaf) => Some((outcome, *steps, *duration_ms)),
            _ => None,
        })
    }

    /// The checkpoint of a run that was interrupted (a crash, a kill, a closed window):
    /// the latest checkpoint when no run ended after it.
    pub fn interrupted_run(&self) -> Option<&cairn_protocol::RunCheckpoint> {
        self.entries.iter().rev().find_map(|e| match &e.kind {
            EntryKind::Checkpoint { run } => Some(Some(run)),
            EntryKind::RunEnd { .. } => Some(None),
            _ => None,
        })?
    }

    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    pub fn label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(String::as_str)
    }

    /// Builds a new entry attached at the active leaf (not yet applied).
    pub fn draft(&self, kind: EntryKind) -> SessionEntry {
        SessionEntry {
            id: new_entry_id(|id| self.index.contains_key(id)),
            parent_id: self.leaf.clone(),
            ts: timestamp(),
            kind,
        }
    }

    /// Adds an entry (new or loaded from disk) and updates the leaf, title and labels.
    pub fn apply(&mut self, entry: SessionEntry) {
        match &entry.kind {
            EntryKind::Leaf { target_id } => self.leaf = target_id.clone(),
            EntryKind::SessionInfo { title } => self.title = Some(title.clone()),
            EntryKind::Label {
                target_id,
                label: Some(label),
            } => {
                self.labels.insert(target_id.clone(), label.clone());
            }
            EntryKind::Label {
                target_id,
                label: None,
            } => {
                self.labels.remove(target_id);
            }
            EntryKind::ToolOutputPruned { call_ids } => {
                self.pruned.extend(call_ids.iter().cloned());
            }
            kind if kind.advances_leaf() => self.leaf = Some(entry.id.clone()),
            _ => {}
        }
        if let EntryKind::Message {
            message: Message::Assistant(answer),
        } = &entry.kind
        {
            self.calls
                .extend(answer.tool_calls().map(|call| call.id.clone()));
        }
        self.context.observe(&entry, self.leaf.as_deref());
        self.index.insert(entry.id.clone(), self.entries.len());
        self.entries.push(entry);
    }

    /// Whether the session holds a tool call with this id.
    pub fn has_call(&self, id: &str) -> bool {
        self.calls.contains(id)
    }

    /// Whether the model sees this call's result pruned.
    pub fn is_pruned(&self, call_id: &str) -> bool {
        self.pruned.contains(call_id)
    }

    /// The entries from the root down to `id` (inclusive). Metadata entries are not on
    /// any path.
    pub fn path_to(&self, id: Option<&str>) -> Vec<&SessionEntry> {
        let mut path = Vec::new();
        let mut current = id.and_then(|id| self.get(id));
        while let Some(entry) = current {
            path.push(entry);
            // A cycle can only come from a hand-edited file; stop rather than loop.
            if path.len() > self.entries.len() {
                break;
            }
            current = entry.parent_id.as_deref().and_then(|p| self.get(p));
        }
        path.reverse();
        path
    }

    /// The path from the root to the active leaf.
    pub fn active_path(&self) -> Vec<&SessionEntry> {
        self.path_to(self.leaf.as_deref())
    }

    /// Entries whose parent is `id` and that are on some path (messages, compactions ...).
    pub fn children(&self, id: Option<&str>) -> Vec<&SessionEntry> {
        self.entries
            .iter()
            .filter(|e| e.parent_id.as_deref() == id && e.kind.advances_leaf())
            .collect()
    }

    /// The work items as they stand at the active leaf (the latest list on its path).
    pub fn work_items(&self) -> Vec<cairn_protocol::WorkItem> {
        self.active_path()
            .into_iter()
            .rev()
            .find_map(|e| match &e.kind {
                EntryKind::WorkItems { items } => Some(items.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The conversation's thinking level as last recorded on the active branch.
    pub fn thinking_level(&self) -> Option<cairn_protocol::ThinkingLevel> {
        self.active_path()
            .into_iter()
            .rev()
            .find_map(|e| match &e.kind {
                EntryKind::ThinkingLevel { level } => Some(*level),
                _ => None,
            })
    }

    /// Number of message entries.
    pub fn message_count(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::Message { .. }))
            .count()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
