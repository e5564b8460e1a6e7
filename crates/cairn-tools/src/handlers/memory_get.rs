//! `memory_get`: lines of a memory file, by the numbers a search hit gave.

use std::io::BufRead;
use std::path::Path;

use async_trait::async_trait;
use cairn_memory::{beneath, MemoryError};
use cairn_protocol::ToolSpec;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::files::{blocking, io_failure, not_utf8, text_reader};
use crate::output::{take_chars, thousands};
use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

/// Lines returned when the call does not say, and the most one call returns.
const DEFAULT_LINES: usize = 200;
const MAX_LINES: usize = 2000;
/// Longer lines are cut to this many characters (as read_file cuts them).
const MAX_LINE_CHARS: usize = 2000;
/// The lines returned stop growing past this many characters (as read_file's answer does),
/// so a result is bounded and can stay exempt from eviction.
pub(crate) const MAX_OUTPUT_CHARS: usize = 100_000;

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
        let from = args.from.unwrap_or(1).max(1);
        let count = args.lines.unwrap_or(DEFAULT_LINES).clamp(1, MAX_LINES);
        // A folder searched in place is read beneath its own root.
        let (root, within) = ctx.workspace.locate(&args.path);
        let (root, within) = (root.to_path_buf(), within.to_string());
        let cancel = ctx.cancel.clone();
        let window = blocking(move || read_lines(&root, &within, from, count, &cancel)).await?;
        let shown = args.path.as_str();
        let Some(window) = window else {
            return Ok(ToolOutput::ok(format!(
                "`{shown}` does not exist (yet): no text."
            )));
        };
        let total = window.total;
        if window.lines.is_empty() {
            return Ok(ToolOutput::ok(format!(
                "`{shown}` has {total} lines; nothing from line {from}."
            )));
        }
        let to = from + window.lines.len() - 1;
        let mut out = format!("{shown}#L{from}-L{to} ({total} lines in the file)\n");
        out.push_str(&window.lines.join("\n"));
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

/// The lines of the asked window (long ones cut, within [`MAX_OUTPUT_CHARS`]) and how
/// many lines the file has.
#[derive(Debug, Default)]
struct Window {
    lines: Vec<String>,
    total: usize,
}

/// Reads the regular file `shown` beneath the workspace line by line (a huge file stays
/// cheap, a pipe is refused without blocking); `None` when it does not exist.
fn read_lines(
    root: &Path,
    shown: &str,
    from: usize,
    count: usize,
    cancel: &CancellationToken,
) -> Result<Option<Window>, ToolError> {
    let file = match beneath::open(root, shown) {
        Ok(file) => file,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(refused(shown, e)),
    };
    let mut reader = text_reader(file, shown)?;
    let mut window = Window::default();
    let mut budget = MAX_OUTPUT_CHARS;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let read = reader.read_until(b'\n', &mut buf);
        if read.map_err(|e| io_failure(shown, &e))? == 0 {
            return Ok(Some(window));
        }
        window.total += 1;
        let text = std::str::from_utf8(&buf).map_err(|_| not_utf8(shown))?;
        if window.total >= from && window.lines.len() < count && budget > 0 {
            let line = shorten(text.trim_end_matches(['\n', '\r']));
            budget = budget.saturating_sub(line.len() + 1);
            window.lines.push(line);
        }
        if window.total % 10_000 == 0 && cancel.is_cancelled() {
            return Err(ToolError::Aborted);
        }
    }
}

/// A file the workspace rules refuse, or one that failed, as a message for the model.
fn refused(shown: &str, error: MemoryError) -> ToolError {
    match error {
        MemoryError::Io { source, .. } => io_failure(shown, &source),
        refusal => ToolError::Failed(refusal.to_string()),
    }
}

/// Cuts an overlong line, saying so.
fn shorten(line: &str) -> String {
    let kept = take_chars(line, MAX_LINE_CHARS);
    if kept.len() == line.len() {
        return line.to_string();
    }
    let total = thousands(line.chars().count());
    format!("{kept} [... line cut: {total} characters in all]")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::handlers::test_support::{failed, ok, TestWs};

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

    #[cfg(unix)]
    #[tokio::test]
    async fn a_link_out_of_the_workspace_is_not_read() {
        let ws = TestWs::new();
        let _outside = ws.escaping_link();
        for path in ["secret-link.txt", "link/secret.txt"] {
            let message = failed(ws.call(&MemoryGet, json!({ "path": path })).await);
            assert!(!message.contains("top secret"), "{message}");
            assert!(message.contains("leads outside the workspace"), "{message}");
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_pipe_is_refused_without_waiting_for_a_writer() {
        let ws = TestWs::new();
        let made = std::process::Command::new("mkfifo")
            .arg(ws.root().join("memory/pipe.md"))
            .status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let call = ws.call(&MemoryGet, json!({"path": "memory/pipe.md"}));
        let result = tokio::time::timeout(std::time::Duration::from_secs(10), call)
            .await
            .expect("memory_get blocked on a pipe");
        let message = failed(result);
        assert!(message.contains("not a regular file"), "{message}");
    }

    #[tokio::test]
    async fn long_lines_are_cut_and_the_answer_is_bounded() {
        let ws = TestWs::new();
        let line = "é".repeat(3_000);
        ws.write("knowledge/wide.md", format!("{line}\n").repeat(1_000));
        let out = ok(ws
            .call(
                &MemoryGet,
                json!({"path": "knowledge/wide.md", "lines": 2000}),
            )
            .await);
        let first = out.lines().nth(1).unwrap();
        assert_eq!(
            first,
            format!(
                "{} [... line cut: 3,000 characters in all]",
                "é".repeat(2_000)
            )
        );
        // Bounded, so exempting memory_get from eviction is safe.
        assert!(out.len() < MAX_OUTPUT_CHARS + 5_000, "{}", out.len());
        assert!(crate::results::is_exempt("memory_get"));
        let footer = out.lines().last().unwrap();
        assert!(
            footer.starts_with('[') && footer.contains("continue with from="),
            "{footer}"
        );
    }
}
