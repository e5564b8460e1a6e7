//! Memory flush: the durable facts of a stretch of conversation, appended to today's log
//! under a heading that links back to the session entry they came from.
//!
//! The link doubles as the flush's receipt: if Cairn stops after writing the bullets but
//! before the session records how far it flushed, the next flush finds the link in the
//! log and takes it as the watermark, so nothing is written twice.

use std::sync::LazyLock;

use chrono::{DateTime, Local, NaiveDate};
use regex::Regex;

use cairn_memory::{beneath, daily_log, MemoryError, Workspace};

/// What the flush model is told.
pub const SYSTEM: &str = "You keep the long-term memory of a personal assistant. From the \
conversation excerpt, write down only the durable facts worth remembering in later \
conversations: the user's preferences, decisions made, commitments and deadlines, people and \
their roles, corrections the user made, and lasting facts about their projects. Skip small \
talk, one-off requests, what the assistant did step by step, and anything already in the \
memory or today's log shown to you.\n\nAnswer with one fact per line, each line starting with \
\"- \", each fact short and standing on its own (name who and what; give dates as YYYY-MM-DD). \
If there is nothing new worth keeping, answer exactly NOTHING. Write nothing else.";

/// The most transcript one flush request carries, in characters; longer stretches are
/// flushed in several requests.
pub const MAX_TRANSCRIPT_CHARS: usize = 24_000;
/// The most of MEMORY.md and of today's log shown as context, in characters (their ends).
const CONTEXT_CHARS: usize = 8_000;
/// The longest bullet kept, in characters.
const MAX_BULLET_CHARS: usize = 400;
/// The largest daily log or MEMORY.md read, in bytes (far past any budget they are shown in).
pub const MAX_READ_BYTES: u64 = 8 << 20;

/// The user message of a flush request.
pub fn prompt(memory_md: &str, today_log: &str, transcript: &str) -> String {
    let tail = |text: &str| {
        let text = text.trim();
        if text.is_empty() {
            "(empty)".to_string()
        } else {
            crate::tools::output::last_chars(text, CONTEXT_CHARS).to_string()
        }
    };
    format!(
        "MEMORY.md (already remembered; read-only):\n<memory>\n{}\n</memory>\n\n\
         Today's log (already remembered; read-only):\n<log>\n{}\n</log>\n\n\
         Conversation excerpt:\n<conversation>\n{}\n</conversation>\n\n\
         The new durable facts, one \"- \" line each, or NOTHING:",
        tail(memory_md),
        tail(today_log),
        transcript.trim()
    )
}

/// What the flush model answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extracted {
    Nothing,
    Bullets(Vec<String>),
}

/// Reads the model's answer. An answer that is neither NOTHING nor bullets is an error
/// (the stretch stays unflushed and is tried again).
pub fn parse(answer: &str) -> Result<Extracted, String> {
    let trimmed = answer.trim();
    let bare = trimmed
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_ascii_lowercase();
    if bare == "nothing" || bare == "none" || bare.starts_with("nothing new") {
        return Ok(Extracted::Nothing);
    }
    let bullets: Vec<String> = trimmed.lines().filter_map(bullet_text).collect();
    if bullets.is_empty() {
        let quoted = crate::tools::output::take_chars(trimmed, 200);
        return Err(format!(
            "the flush model answered neither facts nor NOTHING: \"{quoted}\""
        ));
    }
    Ok(Extracted::Bullets(bullets))
}

/// The text of a `- `, `* `, `• ` or `1. ` line, cleaned to one safe line.
fn bullet_text(line: &str) -> Option<String> {
    let line = line.trim();
    let rest = ["- ", "* ", "• "]
        .iter()
        .find_map(|marker| line.strip_prefix(marker))
        .or_else(|| {
            let digits = line.chars().take_while(char::is_ascii_digit).count();
            (digits > 0)
                .then(|| line[digits..].strip_prefix(". "))
                .flatten()
        })?;
    let text: String = rest
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_BULLET_CHARS)
        .collect();
    let text = text
        .trim_start_matches(['#', '>', '-', '*'])
        .trim()
        .to_string();
    (text.chars().filter(|c| c.is_alphanumeric()).count() >= 3).then_some(text)
}

/// `bullets` without those already written in `known` (MEMORY.md, today's log) or
/// repeated among themselves, comparing letters and digits only.
pub fn new_bullets(bullets: Vec<String>, known: &[&str]) -> Vec<String> {
    let mut seen: Vec<String> = known
        .iter()
        .flat_map(|text| text.lines())
        .filter_map(bullet_text)
        .map(|b| normalize(&b))
        .collect();
    let mut out = Vec::new();
    for bullet in bullets {
        let key = normalize(&bullet);
        if !key.is_empty() && !seen.contains(&key) {
            seen.push(key);
            out.push(bullet);
        }
    }
    out
}

fn normalize(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Where a flush came from.
#[derive(Debug, Clone)]
pub struct Origin<'a> {
    pub session_id: &'a str,
    pub title: &'a str,
    /// The last entry the flushed stretch covers.
    pub entry_id: &'a str,
}

/// Appends `bullets` to the daily log of `now` under a heading with the time and a link
/// to the session entry, creating the log if needed; synced before returning. Returns
/// the log's workspace-relative path.
pub fn append(
    workspace: &Workspace,
    now: DateTime<Local>,
    origin: &Origin,
    bullets: &[String],
) -> Result<String, MemoryError> {
    let appended = daily_log::append(workspace, now.date_naive(), |_| {
        let mut block = format!(
            "\n## {} · [{}]({})\n\n",
            now.format("%H:%M"),
            link_text(origin.title),
            link_target(origin.session_id, origin.entry_id)
        );
        for bullet in bullets {
            block.push_str(&format!("- {bullet}\n"));
        }
        (block, ())
    })?;
    Ok(appended.path)
}

/// `../sessions/<id>.jsonl#<entry>`: relative to memory/, so it opens from the log.
pub fn link_target(session_id: &str, entry_id: &str) -> String {
    format!("../sessions/{session_id}.jsonl#{entry_id}")
}

/// A session title as link text: one line, no brackets, not too long.
fn link_text(title: &str) -> String {
    let clean: String = title
        .chars()
        .map(|c| match c {
            '[' | '(' => '(',
            ']' | ')' => ')',
            c if c.is_control() => ' ',
            c => c,
        })
        .take(60)
        .collect();
    let clean = clean.trim();
    if clean.is_empty() {
        "session".to_string()
    } else {
        clean.to_string()
    }
}

static LINK: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\(\.\./sessions/([A-Za-z0-9_.-]+)\.jsonl#([A-Za-z0-9]+)\)").ok());

/// The entry ids of `session_id` that the daily logs of `dates` link to: the receipts
/// of flushes already written.
pub fn receipts(workspace: &Workspace, session_id: &str, dates: &[NaiveDate]) -> Vec<String> {
    let Some(link) = LINK.as_ref() else {
        return Vec::new();
    };
    let mut ids = Vec::new();
    for date in dates {
        let Ok(text) = daily_log::read(workspace, *date) else {
            continue;
        };
        for line in text.lines().filter(|l| l.starts_with("## ")) {
            for found in link.captures_iter(line) {
                if &found[1] == session_id {
                    ids.push(found[2].to_string());
                }
            }
        }
    }
    ids
}

/// A workspace file's text, or empty when it does not exist (not UTF-8: read lossily,
/// since it is only context). Read beneath the workspace: a link out of it is an error.
pub fn read_or_empty(workspace: &Workspace, relative: &str) -> Result<String, MemoryError> {
    match beneath::read(workspace.root(), relative, MAX_READ_BYTES) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.is_not_found() => Ok(String::new()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_bullets_nothing_or_an_error() {
        assert_eq!(parse("NOTHING"), Ok(Extracted::Nothing));
        assert_eq!(parse(" nothing. "), Ok(Extracted::Nothing));
        assert_eq!(
            parse("Here you go:\n- Ana prefers tea.\n* Deadline: 2026-03-14\n2. Bob leads QA\n-\n"),
            Ok(Extracted::Bullets(vec![
                "Ana prefers tea.".into(),
                "Deadline: 2026-03-14".into(),
                "Bob leads QA".into()
            ]))
        );
        let err = parse("I could not find anything of note.").unwrap_err();
        assert!(err.contains("neither facts nor NOTHING"), "{err}");
    }

    #[test]
    fn bullets_are_one_clean_line() {
        let Ok(Extracted::Bullets(b)) = parse("- ## A  fact\twith\u{7} tabs") else {
            panic!()
        };
        assert_eq!(b, ["A fact with tabs"]);
    }

    #[test]
    fn known_and_repeated_bullets_are_dropped() {
        let kept = new_bullets(
            vec![
                "Ana prefers tea.".into(),
                "ana prefers TEA".into(),
                "Bob leads QA.".into(),
                "Dentist on 2026-03-14.".into(),
            ],
            &[
                "# Memory\n- Bob leads QA\n",
                "## 09:00\n- dentist on 2026-03-14\n",
            ],
        );
        assert_eq!(kept, ["Ana prefers tea."]);
    }

    #[test]
    fn titles_cannot_break_the_link() {
        assert_eq!(link_text("a [b](c)\nd"), "a (b)(c) d");
        assert_eq!(link_text("  "), "session");
    }
}
