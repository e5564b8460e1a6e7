//! The approval prompt: the whole call as it would run (every line of a bash command, every
//! argument whole, a diff for a file it changes), escaped so that nothing in it can drive
//! the terminal; why it asks; and the answers it takes, with what "always" would allow.

use cairn_protocol::{ApprovalDecision, FileChange};
use serde_json::Value;

use crate::diff::Diff;
use crate::escape;
use crate::terminal::Style;

/// Diff lines an approval prompt shows before it sums up the rest. A person approving a
/// change should see all of it; only a change too large to read in a terminal is cut, and
/// the prompt then says how much was left out.
pub const PROMPT_DIFF_LINES: usize = 2000;

/// An approval request, as the prompt shows it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The subagents the request came through, outermost first (empty: the agent's own).
    pub agents: &'a [&'a str],
    pub name: &'a str,
    pub arguments: &'a Value,
    pub change: Option<&'a FileChange>,
    pub reason: Option<&'a str>,
    pub always: Option<&'a str>,
}

/// What was typed at the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Decide(ApprovalDecision),
    /// "always" where the call can only be allowed once: ask again.
    NoAlways,
}

/// Everything the person needs to decide, ending with a line break: the call, a note when
/// it holds characters shown escaped, and why it asks.
pub fn describe(request: &Request<'_>, style: Style) -> String {
    let via = request
        .agents
        .iter()
        .map(|a| format!("[{}] ", escape::call_line(a)))
        .collect::<String>();
    let name = format!("{via}{}", style.bold(&escape::call_line(request.name)));
    let mut out = match (request.change, command(request)) {
        (Some(change), _) => {
            let path = escape::call_line(&change.path);
            let mut out = format!("? {name} {path}:\n");
            out.push_str(&Diff::new(change).render(style, PROMPT_DIFF_LINES));
            out
        }
        (None, Some(command)) => format!(
            "? {name}:\n{}{}",
            block(command),
            other_arguments(request.arguments)
        ),
        (None, None) => format!("? {name}:\n{}", block(&pretty(request.arguments))),
    };
    if holds_hidden(request) {
        let note = "  note: control and invisible characters are shown escaped \
                    (\\x1b is ESC, \\r a carriage return, \\u{…} a code point)";
        out.push_str(&style.highlight(note));
        out.push('\n');
    }
    if let Some(reason) = request.reason {
        out.push_str(&format!("  why it asks: {}\n", escape::call_line(reason)));
    }
    out
}

/// The answers the prompt takes, and the question itself (no line break after it).
pub fn choices(always: Option<&str>) -> String {
    let mut out = String::from("  y  allow once\n");
    if let Some(scope) = always {
        out.push_str(&format!("  a  always allow {}\n", escape::call_line(scope)));
    }
    out.push_str("  n  deny (the default)\n");
    let keys = if always.is_some() { "y/a/N" } else { "y/N" };
    out.push_str(&format!("Allow? [{keys}]: "));
    out
}

/// Reads a typed answer; anything but yes or always denies.
pub fn answer(line: &str, always_offered: bool) -> Answer {
    match line.trim().to_lowercase().as_str() {
        "y" | "yes" => Answer::Decide(ApprovalDecision::AllowOnce),
        "a" | "always" if always_offered => Answer::Decide(ApprovalDecision::AllowAlways),
        "a" | "always" => Answer::NoAlways,
        _ => Answer::Decide(ApprovalDecision::Deny),
    }
}

/// The bash command line, when the call is one.
fn command<'a>(request: &Request<'a>) -> Option<&'a str> {
    if request.name != "bash" {
        return None;
    }
    request.arguments.get("command")?.as_str()
}

/// Text shown in a gutter, one line per line, so every line (and an empty last one) shows.
fn block(text: &str) -> String {
    let escaped = escape::call_text(text);
    let mut out = String::new();
    for line in escaped.split('\n') {
        out.push_str("  │ ");
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The arguments of a bash call besides its command, one per line.
fn other_arguments(arguments: &Value) -> String {
    let Some(object) = arguments.as_object() else {
        return String::new();
    };
    object
        .iter()
        .filter(|(key, _)| key.as_str() != "command")
        .map(|(key, value)| {
            let value = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            format!(
                "  {}: {}\n",
                escape::call_line(key),
                escape::call_line(&value)
            )
        })
        .collect()
}

fn pretty(arguments: &Value) -> String {
    serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string())
}

/// Whether the prompt shows some character of the call escaped.
fn holds_hidden(request: &Request<'_>) -> bool {
    match request.change {
        Some(change) => {
            escape::hidden_in_file(&change.after)
                || change.before.as_deref().is_some_and(escape::hidden_in_file)
        }
        None => any_string(request.arguments, &escape::hidden_in_call),
    }
}

fn any_string(value: &Value, test: &dyn Fn(&str) -> bool) -> bool {
    match value {
        Value::String(text) => test(text),
        Value::Array(items) => items.iter().any(|v| any_string(v, test)),
        Value::Object(map) => map.iter().any(|(k, v)| test(k) || any_string(v, test)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn request<'a>(name: &'a str, arguments: &'a Value) -> Request<'a> {
        Request {
            agents: &[],
            name,
            arguments,
            change: None,
            reason: None,
            always: None,
        }
    }

    #[test]
    fn a_bash_command_shows_every_line_with_controls_escaped() {
        let arguments = json!({
            "command": "echo one\nprintf 'two \x1b[2J'\r\necho three\u{202e}",
            "timeout_s": 30
        });
        assert_eq!(
            describe(&request("bash", &arguments), Style::plain()),
            "? bash:\n\
             \x20 │ echo one\n\
             \x20 │ printf 'two \\x1b[2J'\\r\n\
             \x20 │ echo three\\u{202e}\n\
             \x20 timeout_s: 30\n\
             \x20 note: control and invisible characters are shown escaped \
             (\\x1b is ESC, \\r a carriage return, \\u{…} a code point)\n"
        );
    }

    #[test]
    fn a_long_command_is_shown_whole() {
        let long = "x".repeat(500);
        let arguments = json!({ "command": format!("echo {long}") });
        let shown = describe(&request("bash", &arguments), Style::plain());
        assert!(shown.contains(&format!("│ echo {long}\n")), "{shown}");
        assert!(!shown.contains("note:"), "{shown}");
    }

    #[test]
    fn other_tools_show_their_arguments_whole_as_json() {
        let text = "a".repeat(300);
        let arguments = json!({ "query": text, "limit": 5, "nested": { "x": "\u{9b}" } });
        let shown = describe(&request("memory_search", &arguments), Style::plain());
        assert!(shown.starts_with("? memory_search:\n  │ {\n"), "{shown}");
        assert!(
            shown.contains(&format!("│   \"query\": \"{text}\"")),
            "{shown}"
        );
        assert!(shown.contains("\"x\": \"\\u{9b}\""), "{shown}");
        assert!(shown.contains("note:"), "{shown}");
    }

    #[test]
    fn a_file_change_shows_its_diff_and_the_reason() {
        let arguments = json!({ "path": ".cairn/hooks.toml", "content": "b\n" });
        let change = FileChange {
            path: ".cairn/hooks.toml".into(),
            before: Some("a\n".into()),
            after: "b\n".into(),
        };
        let mut asked = request("write_file", &arguments);
        asked.change = Some(&change);
        asked.reason = Some("`.cairn/` is protected");
        assert_eq!(
            describe(&asked, Style::plain()),
            "? write_file .cairn/hooks.toml:\n\
             --- a/.cairn/hooks.toml\n+++ b/.cairn/hooks.toml\n@@ -1 +1 @@\n-a\n+b\n\
             \x20 why it asks: `.cairn/` is protected\n"
        );
    }

    #[test]
    fn always_is_offered_only_with_its_scope() {
        assert_eq!(
            choices(Some("bash commands starting with `git status`")),
            "  y  allow once\n  a  always allow bash commands starting with `git status`\n\
             \x20 n  deny (the default)\nAllow? [y/a/N]: "
        );
        assert_eq!(
            choices(None),
            "  y  allow once\n  n  deny (the default)\nAllow? [y/N]: "
        );
        assert_eq!(choices(Some("x\x1b[2J")).contains('\x1b'), false);
    }

    #[test]
    fn answers_keep_their_keys_and_always_needs_a_scope() {
        let allow = Answer::Decide(ApprovalDecision::AllowOnce);
        let always = Answer::Decide(ApprovalDecision::AllowAlways);
        let deny = Answer::Decide(ApprovalDecision::Deny);
        assert_eq!(answer(" Y ", true), allow);
        assert_eq!(answer("yes", false), allow);
        assert_eq!(answer("a", true), always);
        assert_eq!(answer("always", false), Answer::NoAlways);
        assert_eq!(answer("", true), deny);
        assert_eq!(answer("n", true), deny);
        assert_eq!(answer("what?", true), deny);
    }
}
