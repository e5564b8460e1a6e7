//! What the consolidation model is asked (`prompt.md` holds the rules), and reading the
//! file out of its answer.

use chrono::NaiveDate;

const RULES: &str = include_str!("prompt.md");

/// New text of one daily log, as offered to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LogPart<'a> {
    pub relative: &'a str,
    pub text: &'a str,
    /// Only the lines added since the last run (the start was merged before).
    pub tail: bool,
}

/// The system prompt: the rules, with the size budget filled in.
pub(super) fn system(budget_chars: usize) -> String {
    RULES.replace("{budget}", &budget_chars.to_string())
}

/// The user message: today's date, the current file and the new log text, oldest first.
pub(super) fn user(today: NaiveDate, memory: &str, logs: &[LogPart<'_>]) -> String {
    let mut out = format!("Today is {}.\n\n", today.format("%Y-%m-%d"));
    out.push_str("<current_memory_md>\n");
    out.push_str(memory.trim_end());
    out.push_str("\n</current_memory_md>\n\nNew daily log entries, oldest first:\n");
    for log in logs {
        let note = if log.tail {
            " (lines added since the last consolidation)"
        } else {
            ""
        };
        out.push_str(&format!("\n### {}{note}\n\n", log.relative));
        out.push_str(log.text.trim_end());
        out.push('\n');
    }
    out.push_str("\nWrite the new MEMORY.md now.\n");
    out
}

/// The file in the model's answer: without a code fence around it (and a one-line
/// preamble before such a fence), trimmed, ending in one newline. Empty when the answer
/// holds no text.
pub(super) fn file_from_answer(answer: &str) -> String {
    let trimmed = answer.trim();
    let body = unfence(trimmed).unwrap_or(trimmed).trim();
    if body.is_empty() || body.chars().all(|c| c == '`' || c == '~') {
        String::new()
    } else {
        format!("{body}\n")
    }
}

/// The inside of a ```markdown (or ```md, or bare ```) fence around the whole answer,
/// maybe after one line ending in `:` ("Here is the new file:").
fn unfence(text: &str) -> Option<&str> {
    let (first, rest) = text.split_once('\n')?;
    if !is_opener(first) {
        if !first.trim_end().ends_with(':') {
            return None;
        }
        return unfence(rest.trim_start());
    }
    let rest = rest.trim_end();
    Some(rest.strip_suffix("```").unwrap_or(rest))
}

fn is_opener(line: &str) -> bool {
    let line = line.trim();
    line.strip_prefix("```")
        .is_some_and(|info| matches!(info.trim(), "" | "markdown" | "md"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_fence_around_the_file_is_removed() {
        let file = "# Memory\n\n- a\n";
        assert_eq!(file_from_answer(file), file);
        assert_eq!(
            file_from_answer("```markdown\n# Memory\n\n- a\n```\n"),
            file
        );
        assert_eq!(file_from_answer("\n```md\n# Memory\n\n- a\n```"), file);
        assert_eq!(
            file_from_answer("Here is the new MEMORY.md:\n\n```\n# Memory\n\n- a\n```"),
            file
        );
        // A code block inside the file stays.
        let with_code = "# Memory\n\n- a\n\n```sh\nmake run\n```\n";
        assert_eq!(file_from_answer(with_code), with_code);
    }

    #[test]
    fn an_empty_or_fence_only_answer_is_empty() {
        assert_eq!(file_from_answer(""), "");
        assert_eq!(file_from_answer("  \n"), "");
        assert_eq!(file_from_answer("```markdown\n```"), "");
        assert_eq!(file_from_answer("```"), "");
    }

    #[test]
    fn the_request_holds_the_budget_the_file_and_the_new_lines() {
        assert!(system(16_000).contains("under 16000 characters"));
        let today = NaiveDate::from_ymd_opt(2026, 3, 2).unwrap_or_default();
        let logs = [
            LogPart {
                relative: "memory/2026-03-01.md",
                text: "# 2026-03-01\n\n- 09:00 — a\n",
                tail: false,
            },
            LogPart {
                relative: "memory/2026-03-02.md",
                text: "- 10:00 — b\n",
                tail: true,
            },
        ];
        assert_eq!(
            user(today, "# Memory\n- x\n", &logs),
            "Today is 2026-03-02.\n\n<current_memory_md>\n# Memory\n- x\n</current_memory_md>\
             \n\nNew daily log entries, oldest first:\n\n### memory/2026-03-01.md\n\n\
             # 2026-03-01\n\n- 09:00 — a\n\n### memory/2026-03-02.md (lines added since the \
             last consolidation)\n\n- 10:00 — b\n\nWrite the new MEMORY.md now.\n"
        );
    }
}
