//! Showing agent events in a terminal: answer text on stdout, tool activity and notices on
//! stderr; or one JSON object per event on stdout.

use std::io::Write;

use cairn_protocol::{AgentEvent, Outcome};
use serde_json::Value;

pub struct Renderer {
    json: bool,
    /// Whether stdout is at the start of a line.
    at_line_start: bool,
}

impl Renderer {
    pub fn new(json: bool) -> Self {
        Self {
            json,
            at_line_start: true,
        }
    }

    pub fn event(&mut self, event: &AgentEvent) {
        if self.json {
            if let Ok(line) = serde_json::to_string(event) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
            return;
        }
        match event {
            AgentEvent::MessageDelta { text } => self.text(text),
            AgentEvent::MessageEnd { .. } => self.end_line(),
            AgentEvent::ToolStart {
                name, arguments, ..
            } => {
                self.end_line();
                eprintln!("⏺ {name}({})", brief_arguments(arguments));
            }
            AgentEvent::ToolEnd {
                content, is_error, ..
            } => {
                let mark = if *is_error { "✗" } else { "⎿" };
                eprintln!("  {mark} {}", brief_result(content));
            }
            AgentEvent::Notice { level, message } => {
                self.end_line();
                eprintln!("cairn: {}: {message}", format!("{level:?}").to_lowercase());
            }
            AgentEvent::AgentEnd { outcome, .. } => {
                self.end_line();
                if let Some(text) = describe(outcome) {
                    eprintln!("cairn: {text}");
                }
            }
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        self.at_line_start = text.ends_with('\n');
    }

    /// Ends the current stdout line, if one is open.
    pub fn end_line(&mut self) {
        if !self.at_line_start {
            println!();
            self.at_line_start = true;
        }
    }
}

/// What a person should be told about how a run ended (nothing when it completed).
pub fn describe(outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Completed => None,
        Outcome::Blocked { reason } => Some(format!("stopped: {reason}")),
        Outcome::MaxSteps { steps } => Some(format!(
            "stopped after {steps} steps (raise --max-steps to allow more)"
        )),
        Outcome::Stalled { tool, repeats } => Some(format!(
            "stopped: the model called {tool} with the same arguments {repeats} times in a row"
        )),
        Outcome::Aborted => Some("stopped by the user".into()),
        Outcome::Failed { error } => Some(format!("failed: {}", error.message)),
    }
}

/// A one-line view of tool arguments: the command or path when there is one.
pub fn brief_arguments(arguments: &Value) -> String {
    for key in ["command", "path", "pattern"] {
        if let Some(text) = arguments.get(key).and_then(Value::as_str) {
            return clip(text, 120);
        }
    }
    clip(&arguments.to_string(), 120)
}

fn brief_result(content: &str) -> String {
    let lines = content.lines().count();
    let first = clip(content.lines().next().unwrap_or(""), 100);
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
