//! The compact context, for a model that cannot use tools (the bundled 135M model, whose
//! window is small too): Cairn's guidance about tools and memory tools it cannot
//! call is left out, and so is the workspace template's own text, which such a model tends
//! to echo back; what the user wrote in AGENTS.md (their house rules) and in MEMORY.md, and
//! the recent daily log, go in within a small share of the window.

use std::path::Path;

use cairn_memory::{beneath, Workspace};
use chrono::{Duration, NaiveDate};

use super::context::{fit, Section, WorkspaceContext, MAX_FILE_BYTES};

/// The built-in prompt of the compact context.
pub(super) const COMPACT_PROMPT: &str = include_str!("prompts/compact.md");

/// The share of the model's window the workspace context may take in the compact context.
const SHARE_PERCENT: u64 = 15;

/// The workspace context's share of the window, in characters: for a model that cannot use
/// tools the compact context's budget (first), else the full context's (second), which cuts
/// it down only in a small window. Both `None` when `[context] compact` is off.
pub(super) fn shares(
    info: &cairn_llm::ProviderInfo,
    context: &crate::ContextBudget,
) -> (Option<usize>, Option<usize>) {
    let (window, _, _) = context.resolve(info.context_window);
    let share = context.compact.then(|| budget(window));
    match info.supports_tools {
        true => (None, share),
        false => (share, None),
    }
}

/// The characters the compact context's workspace part may take in a window of `window`
/// tokens (about four characters a token).
pub(super) fn budget(window: u64) -> usize {
    (window.saturating_mul(4) * SHARE_PERCENT / 100) as usize
}

/// The parts of a markdown file: the text before the first `## ` heading, then each `## `
/// section (heading line first).
fn sections(text: &str) -> Vec<Vec<&str>> {
    let mut parts: Vec<Vec<&str>> = vec![Vec::new()];
    for line in text.lines() {
        if line.starts_with("## ") {
            parts.push(Vec::new());
        }
        if let Some(last) = parts.last_mut() {
            last.push(line);
        }
    }
    parts
}

/// `text` without what it has of `template`: in each section (matched by heading; the
/// part before the first heading with the template's), the lines the template has are
/// dropped, and a section left with nothing of its own goes whole. What the user wrote
/// stays, in order.
pub(super) fn own_text(text: &str, template: &str) -> String {
    let theirs = sections(template);
    let mut kept = Vec::new();
    for part in sections(text) {
        let matching = theirs.iter().find(|t| match heading(&part) {
            Some(h) => heading(t) == Some(h),
            None => heading(t).is_none(),
        });
        let own: Vec<&str> = part
            .iter()
            .copied()
            .filter(|line| {
                let line_trimmed = line.trim();
                !line_trimmed.is_empty()
                    && !line.starts_with("# ")
                    && heading(&part) != Some(*line)
                    && !matching.is_some_and(|t| t.iter().any(|l| l.trim() == line_trimmed))
            })
            .collect();
        if own.is_empty() {
            continue;
        }
        if let Some(h) = heading(&part) {
            kept.push(h);
        }
        kept.extend(own);
    }
    kept.join("\n")
}

/// The `## ` heading a part starts with, if any.
fn heading<'t>(part: &[&'t str]) -> Option<&'t str> {
    part.first().filter(|l| l.starts_with("## ")).copied()
}

/// The template's text of `relative`, if the workspace template has that file.
fn template_of(relative: &str) -> &'static str {
    Workspace::template_files()
        .iter()
        .find(|(path, _)| *path == relative)
        .map_or("", |(_, text)| *text)
}

/// Whether `snippet` (a recalled hit of `path`) is the workspace template's own text:
/// every line of it is in the template's file of that path.
pub(super) fn is_template_text(path: &str, snippet: &str) -> bool {
    let template = template_of(path);
    if template.is_empty() {
        return false;
    }
    snippet
        .lines()
        .map(|line| line.trim().trim_matches('…').trim())
        .filter(|line| !line.is_empty())
        .all(|line| template.contains(line))
}

/// Reads the compact context's files (blocking): AGENTS.md and MEMORY.md without the
/// template's text, then yesterday's and today's logs, all within `budget` characters.
pub(super) fn compact_context(root: &Path, today: NaiveDate, budget: usize) -> WorkspaceContext {
    let mut context = WorkspaceContext::default();
    let mut left = budget;
    let yesterday = today - Duration::days(1);
    let files = [
        (
            "AGENTS.md".to_string(),
            "The user's instructions",
            true,
            false,
        ),
        ("MEMORY.md".to_string(), "What you remember", true, false),
        (
            cairn_memory::daily_log::path(today),
            "Today's notes",
            false,
            true,
        ),
        (
            cairn_memory::daily_log::path(yesterday),
            "Yesterday's notes",
            false,
            true,
        ),
    ];
    for (relative, title, strip_template, keep_end) in files {
        if left < 200 {
            break;
        }
        let text = match beneath::read_to_string(root, &relative, MAX_FILE_BYTES) {
            Ok(text) => text,
            Err(e) if e.is_not_found() => continue,
            Err(e) => {
                context.warnings.push(format!(
                    "{relative} could not be read and was left out: {e}"
                ));
                continue;
            }
        };
        let text = if strip_template {
            own_text(&text, template_of(&relative))
        } else {
            text
        };
        if text.trim().is_empty() {
            continue;
        }
        let (body, cut) = fit(&text, left, keep_end);
        left = left.saturating_sub(body.len());
        context
            .sections
            .push(Section::of(&relative, &body, cut, format!("# {title}")));
    }
    context
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_templates_own_text_goes_and_the_users_stays() {
        let template = template_of("AGENTS.md");
        assert!(!template.is_empty());
        // The template as it comes: nothing of the user's.
        assert_eq!(own_text(template, template), "");
        // Rules added under House rules, and a section of the user's own.
        let edited =
            format!("{template}- Always answer in French.\n\n## Projects\n- The garden.\n");
        assert_eq!(
            own_text(&edited, template),
            "## House rules\n- Always answer in French.\n## Projects\n- The garden."
        );
        // A line of the template's changed by the user counts as theirs.
        let changed = template.replace("Answer plainly and briefly.", "Answer at length.");
        let own = own_text(&changed, template);
        assert!(own.contains("Answer at length."), "{own}");
        assert!(!own.contains("Look before you change"), "{own}");
    }

    #[test]
    fn a_hit_of_the_templates_text_is_known_and_the_users_is_not() {
        assert!(is_template_text(
            "MEMORY.md",
            "…short, durable facts about you and your work (preferences,…"
        ));
        assert!(!is_template_text("MEMORY.md", "- Ana is the project lead."));
        assert!(!is_template_text("knowledge/own.md", "anything"));
    }

    #[test]
    fn the_context_keeps_within_its_budget_and_the_logs_end() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open_or_create(dir.path()).unwrap();
        let today = NaiveDate::from_ymd_opt(2026, 11, 26).unwrap();
        let log = cairn_memory::daily_log::path(today);
        std::fs::create_dir_all(ws.root().join("memory")).unwrap();
        let lines: String = (0..400).map(|i| format!("- note {i}\n")).collect();
        std::fs::write(ws.root().join(&log), &lines).unwrap();
        let context = compact_context(ws.root(), today, 1_000);
        // The template's AGENTS.md and MEMORY.md add nothing; the log's end fits.
        let names: Vec<&str> = context
            .sections
            .iter()
            .map(|s| s.part.name.as_str())
            .collect();
        assert_eq!(names, [log.as_str()]);
        let text = &context.sections[0].text;
        assert!(text.len() <= 1_100, "{}", text.len());
        assert!(
            text.contains("- note 399") && !text.contains("- note 1\n"),
            "{text}"
        );
    }
}
