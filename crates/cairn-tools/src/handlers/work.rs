//! Work items and outcomes: `todo_write` (the whole list, kept in the session),
//! `todo_list`, `work_complete` (end the run as completed, with a summary and what it
//! delivered, checked to exist) and `block` (end the run as blocked, with the reason).

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;
use cairn_protocol::{EntryKind, ToolSpec, WorkItem, WorkPriority, WorkStatus};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

/// Items a list may hold.
const MAX_ITEMS: usize = 100;
/// Characters an item's text or note may have.
const MAX_TEXT: usize = 500;

/// Paths `work_complete` may name.
const MAX_DELIVERABLES: usize = 50;

/// todo_write, todo_list, work_complete, block.
pub fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(TodoWrite),
        Arc::new(TodoList),
        Arc::new(WorkComplete),
        Arc::new(Block),
    ]
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
            let priority = item
                .priority
                .map(|p| format!(" ({} priority)", p.name()))
                .unwrap_or_default();
            let artifact = item
                .artifact
                .as_deref()
                .map(|a| format!(" → {a}"))
                .unwrap_or_default();
            format!(
                "{mark} {}. {}{priority}{artifact}{note}",
                item.id, item.text
            )
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
    #[serde(default)]
    priority: Option<WorkPriority>,
    #[serde(default)]
    artifact: Option<String>,
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
        let artifact = match item.artifact.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(path) => Some(workspace_path(path)?),
        };
        items.push(WorkItem {
            id,
            text,
            status: item.status,
            note,
            priority: item.priority,
            artifact,
        });
    }
    Ok(items)
}

/// `path` as a path inside the workspace (relative, no `..`), or why it is not one.
fn workspace_path(path: &str) -> Result<String, ToolError> {
    let path = path.trim().trim_start_matches("./");
    let inside = !path.is_empty()
        && !path.starts_with('/')
        && !path.starts_with('~')
        && path.chars().count() <= MAX_TEXT
        && !path.chars().any(char::is_control)
        && std::path::Path::new(path)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    match inside {
        true => Ok(path.trim_end_matches('/').to_string()),
        false => Err(ToolError::InvalidArguments(format!(
            "`{}` is not a path in the workspace (relative, without `..`)",
            path.escape_debug()
        ))),
    }
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
                                "note": {"type": "string"},
                                "priority": {"type": "string", "enum": ["high", "medium", "low"]},
                                "artifact": {"type": "string", "description": "The workspace path this item produces; it must exist when you call work_complete."}
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
struct CompleteArgs {
    summary: String,
    #[serde(default)]
    deliverables: Vec<String>,
}

/// Ends the run as completed, once the work is checked: no item still open, and every
/// deliverable and done item's artifact present in the workspace.
pub struct WorkComplete;

#[async_trait]
impl Tool for WorkComplete {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "work_complete".into(),
            description: "Finish the task: call it once everything asked is done, with a \
                summary for the user and the workspace paths of what you produced \
                (deliverables). It is refused while work items are open or a deliverable or \
                an item's artifact does not exist; fix that, or call block."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "summary": {"type": "string", "description": "What was done, for the user."},
                    "deliverables": {"type": "array", "items": {"type": "string"}, "description": "Workspace paths of the files or folders produced."}
                },
                "required": ["summary"]
            }),
        }
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: CompleteArgs = parse_args(args)?;
        let summary = args.summary.trim().to_string();
        if summary.is_empty() {
            return Err(ToolError::InvalidArguments(
                "say what was done in `summary`".into(),
            ));
        }
        if args.deliverables.len() > MAX_DELIVERABLES {
            return Err(ToolError::InvalidArguments(format!(
                "name at most {MAX_DELIVERABLES} deliverables"
            )));
        }
        let deliverables = args
            .deliverables
            .iter()
            .map(|d| workspace_path(d))
            .collect::<Result<Vec<_>, _>>()?;
        let items = ctx
            .agent
            .as_ref()
            .map(|a| a.work_items())
            .unwrap_or_default();
        let open: Vec<String> = items
            .iter()
            .filter(|i| i.status.is_open())
            .map(|i| format!("{}. {}", i.id, i.text))
            .collect();
        if !open.is_empty() {
            return Err(ToolError::Failed(format!(
                "work items are still open: {}. Finish them and mark them done with \
                 todo_write, mark one blocked with a note, or call block",
                open.join("; ")
            )));
        }
        let artifacts = items
            .iter()
            .filter(|i| i.status == WorkStatus::Done)
            .filter_map(|i| i.artifact.clone());
        let wanted: Vec<String> = deliverables.iter().cloned().chain(artifacts).collect();
        let root = ctx.workspace.root().to_path_buf();
        let missing = tokio::task::spawn_blocking(move || {
            wanted
                .into_iter()
                .filter(|path| !cairn_memory::beneath::exists(&root, path).unwrap_or(false))
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| ToolError::Failed(e.to_string()))?;
        if !missing.is_empty() {
            return Err(ToolError::Failed(format!(
                "not in the workspace: {}. Produce them, or name what you did produce",
                missing.join(", ")
            )));
        }
        let mut answer = summary;
        if !deliverables.is_empty() {
            answer.push_str("\n\nDeliverables:");
            for path in &deliverables {
                answer.push_str(&format!("\n- {path}"));
            }
        }
        let mut output = ToolOutput::ok(format!("The run ends as completed.\n\n{answer}"));
        output.completes = Some(answer);
        Ok(output)
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
