//! Work items and outcomes: `todo_write` (the whole list, kept in the session),
//! `todo_list`, and `block` (end the run as blocked, with the reason).

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;
use cairn_protocol::{EntryKind, ToolSpec, WorkItem, WorkStatus};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

/// Items a list may hold.
const MAX_ITEMS: usize = 100;
/// Characters an item's text or note may have.
const MAX_TEXT: usize = 500;

/// todo_write, todo_list, block.
pub fn tools() -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(TodoWrite), Arc::new(TodoList), Arc::new(Block)]
}

/// The list as lines: `[x] 2. text — note`.
pub fn render(items: &[WorkItem]) -> String {
    if items.is_empty() {
        return "The work list is empty.".to_string();
    }
    items
        .iter()
        .map(|item| {
            let mark = match item.status {
                WorkStatus::Pending => "[ ]",
                WorkStatus::InProgress => "[~]",
                WorkStatus::Done => "[x]",
                WorkStatus::Blocked => "[!]",
            };
            let note = item
                .note
                .as_deref()
                .map(|n| format!(" — {n}"))
                .unwrap_or_default();
            format!("{mark} {}. {}{note}", item.id, item.text)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ItemArgs {
    #[serde(default)]
    id: Option<String>,
    text: String,
    status: WorkStatus,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    items: Vec<ItemArgs>,
}

/// Checks the list and gives items without an id the next free number.
fn items_of(args: WriteArgs) -> Result<Vec<WorkItem>, ToolError> {
    if args.items.len() > MAX_ITEMS {
        return Err(ToolError::InvalidArguments(format!(
            "a list holds at most {MAX_ITEMS} items"
        )));
    }
    let mut taken: HashSet<String> = HashSet::new();
    for id in args.items.iter().filter_map(|i| i.id.as_deref()) {
        let id = id.trim();
        if id.is_empty() || id.chars().count() > 40 || !taken.insert(id.to_string()) {
            return Err(ToolError::InvalidArguments(format!(
                "item ids must be unique, non-empty and short; `{id}` is not"
            )));
        }
    }
    let mut next = 1u32;
    let mut items = Vec::with_capacity(args.items.len());
    for item in args.items {
        let text = clean(&item.text);
        if text.is_empty() {
            return Err(ToolError::InvalidArguments(
                "an item's text is empty".into(),
            ));
        }
        let id = match item.id {
            Some(id) => id.trim().to_string(),
            None => {
                while taken.contains(&next.to_string()) {
                    next += 1;
                }
                taken.insert(next.to_string());
                next.to_string()
            }
        };
        let note = item.note.map(|n| clean(&n)).filter(|n| !n.is_empty());
        items.push(WorkItem {
            id,
            text,
            status: item.status,
            note,
        });
    }
    Ok(items)
}

/// One line of at most `MAX_TEXT` characters, control characters dropped.
fn clean(text: &str) -> String {
    let line: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    match line.char_indices().nth(MAX_TEXT) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line,
    }
}

/// Replaces the work list.
pub struct TodoWrite;

#[async_trait]
impl Tool for TodoWrite {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "todo_write".into(),
            description: "Write the work list for this task: the whole list every time (it \
                replaces the last one). Use it for work of several steps: add the items, mark \
                one in_progress while you work on it, done when finished, blocked (with a \
                note) when it cannot be done. The user sees the list live."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "id": {"type": "string", "description": "Keep an item's id when you update it; new items may leave it out."},
                                "text": {"type": "string"},
                                "status": {"type": "string", "enum": ["pending", "in_progress", "done", "blocked"]},
                                "note": {"type": "string"}
                            },
                            "required": ["text", "status"]
                        }
                    }
                },
                "required": ["items"]
            }),
        }
    }

    async fn call(&self, args: Value, _ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let items = items_of(parse_args(args)?)?;
        let mut output = ToolOutput::ok(format!("The work list is now:\n{}", render(&items)));
        output.entry = Some(EntryKind::WorkItems { items });
        Ok(output)
    }
}

/// Shows the work list.
pub struct TodoList;

#[async_trait]
impl Tool for TodoList {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "todo_list".into(),
            description: "Show the current work list with each item's id and status.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let _: serde_json::Map<String, Value> = parse_args(args)?;
        let items = match &ctx.agent {
            Some(agent) => agent.work_items(),
            None => Vec::new(),
        };
        Ok(ToolOutput::ok(render(&items)))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BlockArgs {
    reason: String,
}

/// Ends the run as blocked.
pub struct Block;

#[async_trait]
impl Tool for Block {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "block".into(),
            description: "End this run as blocked because the task cannot be done now (missing \
                access, information only the user has, a decision that is theirs). Say exactly \
                what is needed in the reason; the user sees it."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {"reason": {"type": "string"}},
                "required": ["reason"]
            }),
        }
    }

    async fn call(&self, args: Value, _ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: BlockArgs = parse_args(args)?;
        let reason = clean(&args.reason);
        if reason.is_empty() {
            return Err(ToolError::InvalidArguments("say why in `reason`".into()));
        }
        Err(ToolError::Block(reason))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn write(items: Value) -> Result<Vec<WorkItem>, ToolError> {
        items_of(parse_args(json!({ "items": items }))?)
    }

    #[test]
    fn items_without_ids_get_free_numbers() {
        let items = write(json!([
            {"text": "a", "status": "done"},
            {"id": "1", "text": "b", "status": "in_progress"},
            {"text": "  c\u{1b}[2J\n more ", "status": "pending", "note": ""}
        ]))
        .unwrap();
        let ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, vec!["2", "1", "3"]);
        assert_eq!(items[2].text, "c[2J more");
        assert_eq!(items[2].note, None);
        assert_eq!(render(&items), "[x] 2. a\n[~] 1. b\n[ ] 3. c[2J more");
    }

    #[test]
    fn bad_lists_are_refused_with_the_reason() {
        assert!(write(json!([{"id": "a", "text": "x", "status": "done"}, {"id": "a", "text": "y", "status": "done"}])).is_err());
        assert!(write(json!([{"text": " ", "status": "done"}])).is_err());
        assert!(write(json!([{"text": "x", "status": "finished"}])).is_err());
        let many: Vec<Value> = (0..101)
            .map(|_| json!({"text": "x", "status": "pending"}))
            .collect();
        assert!(write(Value::Array(many)).is_err());
    }
}
