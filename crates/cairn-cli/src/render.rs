//! Showing agent events in a terminal: answer text on stdout, the model's reasoning (dim),
//! tool activity and notices on stderr, every piece of model or server text escaped so it cannot drive the terminal
//! (stdout gets the same when piped: a pipe often ends in a terminal, and `--json` is the
//! exact text); or one JSON object per event on stdout.

use std::io::Write;

use cairn_protocol::{AgentEvent, FileChange, Outcome};
use serde_json::Value;

use crate::diff::Diff;
use crate::escape;
use crate::terminal::Style;

/// Diff lines shown under a tool line for a file change that ran without asking; the
/// approval prompt shows more (see [`crate::approval::PROMPT_DIFF_LINES`]).
pub const TOOL_DIFF_LINES: usize = 24;

/// Where the renderer writes: stdout for the answer, stderr for the rest.
type Sink = Box<dyn Write + Send>;

pub struct Renderer {
    json: bool,
    out: Sink,
    err: Sink,
    /// Styles for what goes to stderr.
    style: Style,
    /// Whether stdout is at the start of a line.
    at_line_start: bool,
    /// The answer as it streams, made safe piece by piece.
    prose: escape::Prose,
    /// The model's reasoning while it streams (to stderr).
    thinking: Option<escape::Prose>,
    /// The file change of the last tool call started, until it is known whether an
    /// approval prompt shows it; otherwise it is shown under the tool line.
    unshown: Option<(String, FileChange)>,
}

impl Renderer {
    pub fn new(json: bool) -> Self {
        Self::with_sinks(
            json,
            Box::new(std::io::stdout()),
            Box::new(std::io::stderr()),
            Style::detect_stderr(),
        )
    }

    fn with_sinks(json: bool, out: Sink, err: Sink, style: Style) -> Self {
        Self {
            json,
            out,
            err,
            style,
            at_line_start: true,
            prose: escape::Prose::default(),
            thinking: None,
            unshown: None,
        }
    }

    pub fn event(&mut self, event: &AgentEvent) {
        if self.json {
            if let Ok(line) = serde_json::to_string(event) {
                let _ = writeln!(self.out, "{line}");
                let _ = self.out.flush();
            }
            return;
        }
        self.show_unasked_change(event);
        if !matches!(event, AgentEvent::ThinkingDelta { .. }) {
            self.end_thought();
        }
        let (agents, inner) = event.innermost();
        if !agents.is_empty() {
            self.subagent_event(&agents, inner, model_used(event));
            return;
        }
        match event {
            AgentEvent::MessageDelta { text } => self.text(text),
            AgentEvent::ThinkingDelta { text } => self.thought(text),
            AgentEvent::MessageEnd { .. } => {
                let rest = self.prose.finish();
                self.text(&rest);
                self.end_line();
            }
            AgentEvent::ToolStart {
                call_id,
                name,
                arguments,
                change,
            } => {
                self.end_line();
                let name = escape::call_line(name);
                self.note(&format!("⏺ {name}({})", brief_arguments(arguments)));
                self.unshown = change.clone().map(|c| (call_id.clone(), c));
            }
            AgentEvent::ToolEnd {
                content, is_error, ..
            } => {
                let mark = if *is_error { "✗" } else { "⎿" };
                self.note(&format!("  {mark} {}", brief_result(content)));
            }
            AgentEvent::Notice { level, message } => {
                self.end_line();
                let level = format!("{level:?}").to_lowercase();
                self.note(&format!("cairn: {level}: {}", escape::prose(message)));
            }
            AgentEvent::WorkItems { items } => {
                self.end_line();
                self.note("cairn: work items:");
                for line in work_lines(items) {
                    self.note(&format!("  {line}"));
                }
            }
            AgentEvent::Retry {
                attempt,
                delay_ms,
                reason,
            } => {
                self.end_line();
                self.note(&format!(
                    "cairn: retrying in {} s (attempt {attempt}): {}",
                    delay_ms.div_ceil(1000),
                    escape::prose_line(&clip(reason, 160))
                ));
            }
            AgentEvent::AgentEnd { outcome, .. } => {
                self.end_line();
                if let Some(text) = describe(outcome) {
                    self.note(&format!("cairn: {}", escape::prose(&text)));
                }
            }
            _ => {}
        }
    }

    /// A subagent's event, one line on stderr prefixed with the subagents it came
    /// through; its answer is not streamed into the parent's.
    fn subagent_event(&mut self, agents: &[&str], event: &AgentEvent, model: Option<&str>) {
        let prefix = agents
            .iter()
            .map(|a| format!("[{}]", escape::call_line(a)))
            .collect::<Vec<_>>()
            .join("");
        let line = match event {
            AgentEvent::AgentStart { session_id, .. } => match model {
                Some(model) => format!(
                    "started on {} (session {})",
                    escape::call_line(model),
                    escape::call_line(session_id)
                ),
                None => format!("started (session {})", escape::call_line(session_id)),
            },
            AgentEvent::ToolStart {
                name, arguments, ..
            } => format!(
                "⏺ {}({})",
                escape::call_line(name),
                brief_arguments(arguments)
            ),
            AgentEvent::ToolEnd {
                content, is_error, ..
            } => {
                let mark = if *is_error { "✗" } else { "⎿" };
                format!("  {mark} {}", brief_result(content))
            }
            AgentEvent::MessageEnd {
                message: message @ cairn_protocol::Message::Assistant(_),
                ..
            } if !message.text().trim().is_empty() => {
                format!("says: {}", brief_result(message.text().trim()))
            }
            AgentEvent::Notice { message, .. } => format!("note: {}", escape::prose_line(message)),
            AgentEvent::AgentEnd { outcome, .. } => match describe(outcome) {
                Some(text) => format!("ended: {}", escape::prose_line(&text)),
                None => "done".to_string(),
            },
            _ => return,
        };
        self.end_line();
        self.note(&format!("{prefix} {line}"));
    }

    /// Shows the diff of a call that started without an approval prompt to show it.
    fn show_unasked_change(&mut self, event: &AgentEvent) {
        let Some((call_id, change)) = self.unshown.take() else {
            return;
        };
        if let AgentEvent::ApprovalRequested { call_id: asked, .. } = event {
            if *asked == call_id {
                return;
            }
        }
        let diff = Diff::new(&change).render(self.style, TOOL_DIFF_LINES);
        let _ = self.err.write_all(diff.as_bytes());
        let _ = self.err.flush();
    }

    fn text(&mut self, text: &str) {
        let text = self.prose.push(text);
        if text.is_empty() {
            return;
        }
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
        self.at_line_start = text.ends_with('\n');
    }

    /// A piece of reasoning, dim on stderr after a `thinking:` label.
    fn thought(&mut self, text: &str) {
        let style = self.style;
        if self.thinking.is_none() {
            self.end_line();
            let _ = write!(self.err, "{}", style.dim("thinking: "));
        }
        let safe = self
            .thinking
            .get_or_insert_with(Default::default)
            .push(text);
        let _ = write!(self.err, "{}", style.dim(&safe));
        let _ = self.err.flush();
    }

    /// Ends the reasoning's line, if reasoning was streaming.
    fn end_thought(&mut self) {
        if let Some(mut prose) = self.thinking.take() {
            let rest = prose.finish();
            let _ = writeln!(self.err, "{}", self.style.dim(&rest));
            let _ = self.err.flush();
        }
    }

    /// Writes one line to stderr.
    fn note(&mut self, line: &str) {
        let _ = writeln!(self.err, "{line}");
        let _ = self.err.flush();
    }

    /// Ends the current stdout line, if one is open.
    pub fn end_line(&mut self) {
        if !self.at_line_start {
            let _ = writeln!(self.out);
            let _ = self.out.flush();
            self.at_line_start = true;
        }
    }
}

/// What a person should be told about how a run ended (nothing when it completed).
pub fn describe(outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Completed => None,
        Outcome::Blocked { reason } => Some(format!("blocked: {reason}")),
        Outcome::MaxSteps { steps } => Some(format!(
            "stopped after {steps} steps (raise --max-steps to allow more)"
        )),
        Outcome::Stalled {
            detail: Some(detail),
            ..
        } => Some(format!("stopped going round in circles: {detail}")),
        Outcome::Stalled { tool, repeats, .. } => Some(format!(
            "stopped: the model called {tool} with the same arguments {repeats} times in a row"
        )),
        Outcome::Aborted => Some("stopped by the user".into()),
        Outcome::Failed { error } => Some(format!("failed: {}", error.message)),
    }
}

/// The work items as checklist lines, escaped.
pub fn work_lines(items: &[cairn_protocol::WorkItem]) -> Vec<String> {
    use cairn_protocol::WorkStatus;
    items
        .iter()
        .map(|item| {
            let mark = match item.status {
                WorkStatus::Pending => "☐",
                WorkStatus::InProgress => "▶",
                WorkStatus::Done => "☑",
                WorkStatus::Blocked => "⚠",
            };
            let note = item
                .note
                .as_deref()
                .map(|n| format!(" — {}", escape::prose_line(n)))
                .unwrap_or_default();
            format!(
                "{mark} {}. {}{note}",
                escape::call_line(&item.id),
                escape::prose_line(&item.text)
            )
        })
        .collect()
}

/// A one-line view of tool arguments: the command or path when there is one, escaped.
pub fn brief_arguments(arguments: &Value) -> String {
    for key in ["command", "path", "pattern"] {
        if let Some(text) = arguments.get(key).and_then(Value::as_str) {
            return escape::call_line(&clip(text, 120));
        }
    }
    escape::call_line(&clip(&arguments.to_string(), 120))
}

fn brief_result(content: &str) -> String {
    let lines = content.lines().count();
    let first = escape::prose_line(&clip(content.lines().next().unwrap_or(""), 100));
    if lines > 1 {
        format!("{first} (+{} lines)", lines - 1)
    } else {
        first
    }
}

fn clip(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() <= max && !text.contains('\n') {
        return line.to_string();
    }
    let mut out: String = line.chars().take(max).collect();
    out.push('…');
    out
}

/// The model the innermost subagent of a wrapped event runs on.
fn model_used(mut event: &AgentEvent) -> Option<&str> {
    let mut model = None;
    while let AgentEvent::Subagent {
        model_used,
        event: inner,
        ..
    } = event
    {
        model = model_used.as_deref();
        event = inner;
    }
    model
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use cairn_protocol::NoticeLevel;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    /// What a renderer wrote to one of its sinks.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn renderer(json: bool) -> (Renderer, Captured, Captured) {
        let (out, err) = (Captured::default(), Captured::default());
        let renderer = Renderer::with_sinks(
            json,
            Box::new(out.clone()),
            Box::new(err.clone()),
            Style::plain(),
        );
        (renderer, out, err)
    }

    fn delta(text: &str) -> AgentEvent {
        AgentEvent::MessageDelta { text: text.into() }
    }

    fn write_file_start(call_id: &str, after: &str) -> AgentEvent {
        AgentEvent::ToolStart {
            call_id: call_id.into(),
            name: "write_file".into(),
            arguments: json!({"path": "notes/a.md", "content": after}),
            change: Some(FileChange {
                path: "notes/a.md".into(),
                before: Some("old\n".into()),
                after: after.into(),
            }),
        }
    }

    fn tool_end(call_id: &str, content: &str) -> AgentEvent {
        AgentEvent::ToolEnd {
            call_id: call_id.into(),
            name: "write_file".into(),
            content: content.into(),
            is_error: false,
            pictures: Vec::new(),
        }
    }

    #[test]
    fn streamed_escape_sequences_are_escaped_even_when_split() {
        let (mut renderer, out, _) = renderer(false);
        for piece in [
            "Copied\x1b]52;c;cHduZWQ=",
            "\x07 and up\x1b",
            "[2A\rdone\r",
            "\n",
        ] {
            renderer.event(&delta(piece));
        }
        assert_eq!(
            out.text(),
            "Copied\\x1b]52;c;cHduZWQ=\\x07 and up\\x1b[2A\\rdone\n"
        );
    }

    #[test]
    fn reasoning_goes_to_stderr_escaped_and_the_answer_alone_to_stdout() {
        let (mut renderer, out, err) = renderer(false);
        for text in ["Hm, \x1b[2J", "the sum."] {
            renderer.event(&AgentEvent::ThinkingDelta { text: text.into() });
        }
        renderer.event(&delta("4"));
        assert_eq!(err.text(), "thinking: Hm, \\x1b[2Jthe sum.\n");
        assert_eq!(out.text(), "4");
    }

    #[test]
    fn json_output_keeps_the_exact_text_json_escaped() {
        let (mut renderer, out, _) = renderer(true);
        renderer.event(&delta("a\x1b[2Jb"));
        let line = out.text();
        assert!(!line.contains('\x1b'), "{line:?}");
        let event: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(event["text"], "a\x1b[2Jb");
    }

    #[test]
    fn a_file_change_that_runs_without_asking_shows_its_diff_under_the_tool_line() {
        let (mut renderer, _, err) = renderer(false);
        renderer.event(&write_file_start("c1", "new\n"));
        renderer.event(&tool_end("c1", "wrote notes/a.md"));
        assert_eq!(
            err.text(),
            "⏺ write_file(notes/a.md)\n--- a/notes/a.md\n+++ b/notes/a.md\n@@ -1 +1 @@\n\
             -old\n+new\n  ⎿ wrote notes/a.md\n"
        );
    }

    #[test]
    fn a_long_diff_under_the_tool_line_is_cut() {
        let (mut renderer, _, err) = renderer(false);
        let after: String = (0..100).map(|n| format!("{n}\n")).collect();
        renderer.event(&write_file_start("c1", &after));
        renderer.event(&tool_end("c1", "ok"));
        let text = err.text();
        assert!(
            text.contains("… 78 more diff lines not shown (+100 -1 lines in all)"),
            "{text}"
        );
        assert_eq!(
            text.lines().count(),
            1 + 2 + TOOL_DIFF_LINES + 1 + 1,
            "{text}"
        );
    }

    #[test]
    fn a_file_change_that_asks_leaves_its_diff_to_the_prompt() {
        let (mut renderer, _, err) = renderer(false);
        renderer.event(&write_file_start("c1", "new\n"));
        renderer.event(&AgentEvent::ApprovalRequested {
            request_id: "r1".into(),
            call_id: "c1".into(),
            name: "write_file".into(),
            arguments: json!({}),
            change: None,
            reason: None,
            always: None,
        });
        renderer.event(&tool_end("c1", "ok"));
        assert_eq!(err.text(), "⏺ write_file(notes/a.md)\n  ⎿ ok\n");
    }

    #[test]
    fn tool_lines_results_and_notices_are_escaped() {
        let (mut renderer, _, err) = renderer(false);
        renderer.event(&AgentEvent::ToolStart {
            call_id: "c1".into(),
            name: "bash".into(),
            arguments: json!({"command": "printf '\x1b]0;title\x07'"}),
            change: None,
        });
        renderer.event(&tool_end("c1", "\x1b[31mred\x1b[0m\nmore"));
        renderer.event(&AgentEvent::ToolStart {
            call_id: "c2".into(),
            name: "no\x1b[2Jsuch".into(),
            arguments: json!({}),
            change: None,
        });
        renderer.event(&AgentEvent::Notice {
            level: NoticeLevel::Warning,
            message: "server said: \x1b[2J".into(),
        });
        assert_eq!(
            err.text(),
            "⏺ bash(printf '\\x1b]0;title\\x07')\n  ⎿ \\x1b[31mred\\x1b[0m (+1 lines)\n\
             ⏺ no\\x1b[2Jsuch({})\n\
             cairn: warning: server said: \\x1b[2J\n"
        );
    }
}
