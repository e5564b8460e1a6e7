//! `memory_get`: lines of a memory file, by the numbers a search hit gave.

use async_trait::async_trait;
use cairn_memory::Access;
use cairn_protocol::ToolSpec;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{binary_file, io_failure, not_utf8, resolve};
use crate::tools::output::looks_binary;
use crate::tools::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

/// Lines returned when the call does not say, and the most one call returns.
const DEFAULT_LINES: usize = 200;
const MAX_LINES: usize = 2000;

#[derive(Debug, Clone, Deserialize)]
pub struct MemoryGetArgs {
    pub path: String,
    #[serde(default)]
    pub from: Option<usize>,
    #[serde(default)]
    pub lines: Option<usize>,
}

pub struct MemoryGet;

#[async_trait]
impl Tool for MemoryGet {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "memory_get".into(),
            description: "Read lines of a workspace file such as MEMORY.md, a daily log or a \
                knowledge note, typically the lines of a memory_search citation \
                (`path#L12-L30` -> path, from 12, lines 19). A file that does not exist yet \
                gives empty text and says so."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path relative to the workspace root."},
                    "from": {"type": "integer", "minimum": 1, "description": "1-based first line (default 1)."},
                    "lines": {
                        "type": "integer", "minimum": 1, "maximum": MAX_LINES,
                        "description": "How many lines (default 200)."
                    }
                },
                "required": ["path"]
            }),
        }
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: MemoryGetArgs = parse_args(args)?;
        let path = resolve(&ctx, &args.path, Access::Read)?;
        let shown = args.path.as_str();
        let bytes = match tokio::fs::read(&path).await {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ToolOutput::ok(format!(
                    "`{shown}` does not exist (yet): no text."
                )));
            }
            Err(e) => return Err(io_failure(shown, &e)),
        };
        if looks_binary(&bytes) {
            return Err(binary_file(shown));
        }
        let text = String::from_utf8(bytes).map_err(|_| not_utf8(shown))?;
        let total = text.lines().count();
        let from = args.from.unwrap_or(1).max(1);
        let count = args.lines.unwrap_or(DEFAULT_LINES).clamp(1, MAX_LINES);
        if from > total.max(1) {
            return Ok(ToolOutput::ok(format!(
                "`{shown}` has {total} lines; nothing from line {from}."
            )));
        }
        let picked: Vec<&str> = text.lines().skip(from - 1).take(count).collect();
        let to = from + picked.len().saturating_sub(1);
        let mut out = format!("{shown}#L{from}-L{to} ({total} lines in the file)\n");
        out.push_str(&picked.join("\n"));
        if to < total {
            out.push_str(&format!(
                "\n[{} more lines; continue with from={}]",
                total - to,
                to + 1
            ));
        }
        Ok(ToolOutput::ok(out))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::handlers::test_support::{failed, ok, TestWs};

    #[tokio::test]
    async fn returns_the_cited_lines() {
        let ws = TestWs::new();
        ws.write("knowledge/n.md", "one\ntwo\nthree\nfour\n");
        let out = ok(ws
            .call(
                &MemoryGet,
                json!({"path": "knowledge/n.md", "from": 2, "lines": 2}),
            )
            .await);
        assert_eq!(
            out,
            "knowledge/n.md#L2-L3 (4 lines in the file)\ntwo\nthree\n[1 more lines; continue with from=4]"
        );
        let all = ok(ws.call(&MemoryGet, json!({"path": "knowledge/n.md"})).await);
        assert!(all.ends_with("one\ntwo\nthree\nfour"), "{all}");
        let past = ok(ws
            .call(&MemoryGet, json!({"path": "knowledge/n.md", "from": 9}))
            .await);
        assert!(past.contains("has 4 lines"), "{past}");
    }

    #[tokio::test]
    async fn a_missing_file_is_empty_and_says_so() {
        let ws = TestWs::new();
        let out = ok(ws
            .call(&MemoryGet, json!({"path": "memory/2020-01-01.md"}))
            .await);
        assert!(out.contains("does not exist"), "{out}");
    }

    #[tokio::test]
    async fn paths_outside_the_workspace_are_refused() {
        let ws = TestWs::new();
        let message = failed(
            ws.call(&MemoryGet, json!({"path": "../../etc/passwd"}))
                .await,
        );
        assert!(!message.contains("root:"), "{message}");
        ws.write("knowledge/blob.md", b"\x00\x01binary");
        let message = failed(
            ws.call(&MemoryGet, json!({"path": "knowledge/blob.md"}))
                .await,
        );
        assert!(message.contains("binary"), "{message}");
    }
}
