//! A file change shown as a unified diff: hunks from the `similar` crate, each line escaped
//! (a file written by a model may hold escape sequences), coloured when styles are on, and
//! cut after a number of lines with a note saying how many were left out.

use std::time::Duration;

use cairn_protocol::FileChange;
use similar::{ChangeTag, TextDiff};

use crate::escape;
use crate::terminal::Style;

/// Unchanged lines shown around each change.
const CONTEXT: usize = 3;
/// How long the diff may search for the smallest one before it settles for a larger but
/// still correct one (a huge file rewritten).
const SEARCH_TIME: Duration = Duration::from_millis(500);

/// The lines of a unified diff of one file, ready to show.
#[derive(Debug)]
pub struct Diff {
    /// `--- a/…` and `+++ b/…`.
    header: [String; 2],
    body: Vec<Line>,
    added: usize,
    removed: usize,
}

#[derive(Debug)]
enum Line {
    Hunk(String),
    Same(String),
    Added(String),
    Removed(String),
    /// `\ No newline at end of file`.
    Note(String),
}

impl Diff {
    pub fn new(change: &FileChange) -> Self {
        let path = escape::file_line(&change.path);
        let old_name = match change.before {
            Some(_) => format!("--- a/{path}"),
            None => "--- /dev/null".to_string(),
        };
        let before = change.before.as_deref().unwrap_or("");
        let diff = TextDiff::configure()
            .timeout(SEARCH_TIME)
            .diff_lines(before, change.after.as_str());
        let mut this = Self {
            header: [old_name, format!("+++ b/{path}")],
            body: Vec::new(),
            added: 0,
            removed: 0,
        };
        for hunk in diff.unified_diff().context_radius(CONTEXT).iter_hunks() {
            this.body.push(Line::Hunk(hunk.header().to_string()));
            for change in hunk.iter_changes() {
                this.push(change.tag(), change.value(), change.missing_newline());
            }
        }
        this
    }

    fn push(&mut self, tag: ChangeTag, value: &str, missing_newline: bool) {
        let text = escape::file_line(value.strip_suffix('\n').unwrap_or(value));
        self.body.push(match tag {
            ChangeTag::Equal => Line::Same(format!(" {text}")),
            ChangeTag::Insert => {
                self.added += 1;
                Line::Added(format!("+{text}"))
            }
            ChangeTag::Delete => {
                self.removed += 1;
                Line::Removed(format!("-{text}"))
            }
        });
        if missing_newline {
            self.body
                .push(Line::Note("\\ No newline at end of file".into()));
        }
    }

    /// The diff as text, one line per line, showing at most `max_lines` lines below the
    /// header; the rest is summed up in a last line.
    pub fn render(&self, style: Style, max_lines: usize) -> String {
        if self.body.is_empty() {
            return style.dim("(the file would stay as it is)\n");
        }
        let mut out = String::new();
        for name in &self.header {
            out.push_str(&style.bold(name));
            out.push('\n');
        }
        for line in self.body.iter().take(max_lines) {
            out.push_str(&match line {
                Line::Hunk(text) => style.hunk(text),
                Line::Same(text) => text.clone(),
                Line::Added(text) => style.added(text),
                Line::Removed(text) => style.removed(text),
                Line::Note(text) => style.dim(text),
            });
            out.push('\n');
        }
        let left_out = self.body.len().saturating_sub(max_lines);
        if left_out > 0 {
            let note = format!(
                "… {left_out} more diff lines not shown (+{} -{} lines in all)",
                self.added, self.removed
            );
            out.push_str(&style.dim(&note));
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn change(before: Option<&str>, after: &str) -> FileChange {
        FileChange {
            path: "notes/plan.md".into(),
            before: before.map(str::to_string),
            after: after.into(),
        }
    }

    #[test]
    fn an_edit_shows_as_a_unified_diff_with_context() {
        let diff = Diff::new(&change(
            Some("# Plan\n- draft\n- test\n"),
            "# Plan\n- ship it\n- test\n",
        ));
        assert_eq!(
            diff.render(Style::plain(), 100),
            "--- a/notes/plan.md\n+++ b/notes/plan.md\n@@ -1,3 +1,3 @@\n # Plan\n-- draft\n\
             +- ship it\n - test\n"
        );
    }

    #[test]
    fn a_new_file_is_all_added() {
        let diff = Diff::new(&change(None, "one\ntwo"));
        assert_eq!(
            diff.render(Style::plain(), 100),
            "--- /dev/null\n+++ b/notes/plan.md\n@@ -0,0 +1,2 @@\n+one\n+two\n\
             \\ No newline at end of file\n"
        );
    }

    #[test]
    fn escape_sequences_in_the_file_are_shown_escaped() {
        let out =
            Diff::new(&change(None, "\tok\n\x1b]52;c;eA==\x07\r\n")).render(Style::plain(), 9);
        assert!(out.contains("+\tok\n+\\x1b]52;c;eA==\\x07\\r\n"), "{out}");
        assert!(!out.contains('\x1b'));
    }

    #[test]
    fn colours_only_when_styles_are_on() {
        let diff = Diff::new(&change(Some("a\n"), "b\n"));
        assert!(!diff.render(Style::plain(), 9).contains('\x1b'));
        let colored = diff.render(Style::colored(), 9);
        assert!(
            colored.contains("\x1b[31m-a\x1b[0m\n\x1b[32m+b\x1b[0m"),
            "{colored:?}"
        );
    }

    #[test]
    fn a_long_diff_is_cut_and_says_how_much_was_left_out() {
        let after: String = (1..=50).map(|n| format!("line {n}\n")).collect();
        let out = Diff::new(&change(None, &after)).render(Style::plain(), 10);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2 + 10 + 1, "{out}");
        assert_eq!(lines[3], "+line 1");
        assert_eq!(
            lines.last().copied(),
            Some("… 41 more diff lines not shown (+50 -0 lines in all)")
        );
    }

    #[test]
    fn no_change_says_so() {
        let out = Diff::new(&change(Some("same\n"), "same\n")).render(Style::plain(), 9);
        assert_eq!(out, "(the file would stay as it is)\n");
    }
}
