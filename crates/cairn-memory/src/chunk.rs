//! Splitting an indexed file into chunks that follow its lines and headings.
//!
//! A file is first turned into units: one per line for markdown and text, one per message
//! for a session transcript. A chunk is a run of whole units of about [`TARGET_TOKENS`]; a
//! heading always starts a new chunk, and a chunk cut for size starts again with the last
//! units of the previous one (about [`OVERLAP_TOKENS`]) so that a passage split across the
//! cut is still found whole. Line numbers are 1-based and inclusive.

use serde_json::Value;

use crate::source::SourceKind;

/// About how many tokens a chunk holds.
pub const TARGET_TOKENS: usize = 400;
/// About how many tokens a chunk cut for size repeats from the previous one.
pub const OVERLAP_TOKENS: usize = 60;

/// A piece of an indexed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub start_line: usize,
    pub end_line: usize,
    /// The headings above the chunk, outermost first, joined by " > ".
    pub heading: String,
    pub text: String,
}

/// The smallest piece a chunk is made of.
#[derive(Debug, Clone)]
struct Unit {
    start_line: usize,
    end_line: usize,
    text: String,
    /// A markdown heading starts here: (level, title).
    heading: Option<(usize, String)>,
}

/// A rough token count: about four characters per token, at least one per unit.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count() / 4 + 1
}

/// Chunks a file of the given kind: session transcripts by message, everything else as
/// markdown.
pub fn chunk_source(kind: SourceKind, text: &str) -> Vec<Chunk> {
    match kind {
        SourceKind::Session => chunk_session(text),
        _ => chunk_markdown(text),
    }
}

/// Chunks a markdown (or plain text) file. Every line is in some chunk.
pub fn chunk_markdown(text: &str) -> Vec<Chunk> {
    let mut units = Vec::new();
    let mut fence: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let heading = match fence {
            None => heading_of(line),
            Some(_) => None,
        };
        for marker in ["```", "~~~"] {
            if trimmed.starts_with(marker) {
                fence = match fence {
                    None => Some(marker),
                    Some(open) if open == marker => None,
                    other => other,
                };
            }
        }
        units.push(Unit {
            start_line: i + 1,
            end_line: i + 1,
            text: line.to_string(),
            heading,
        });
    }
    chunk_units(units)
}

/// An ATX heading (`#` to `######` then a space): (level, title).
fn heading_of(line: &str) -> Option<(usize, String)> {
    if line.starts_with("    ") {
        return None;
    }
    let trimmed = line.trim_start();
    let level = trimmed.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let title = rest.trim().trim_end_matches('#').trim();
    Some((level, title.to_string()))
}

/// Chunks a session transcript (`sessions/<id>.jsonl`): what the user and the agent said,
/// one unit per message, numbered by the line of the file it is on. Lines that are not
/// messages with text (tool results, metadata, torn lines) are skipped; the session's
/// title, when it has one, is the heading of every chunk.
pub fn chunk_session(text: &str) -> Vec<Chunk> {
    let mut units = Vec::new();
    let mut title = None;
    for (i, line) in text.lines().enumerate() {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match value.get("type").and_then(Value::as_str) {
            Some("session_info") => {
                title = value
                    .get("title")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            Some("message") => {
                if let Some(said) = message_text(&value) {
                    units.push(Unit {
                        start_line: i + 1,
                        end_line: i + 1,
                        text: said,
                        heading: None,
                    });
                }
            }
            _ => {}
        }
    }
    let mut chunks = chunk_units(units);
    if let Some(title) = title {
        for chunk in &mut chunks {
            chunk.heading.clone_from(&title);
        }
    }
    chunks
}

/// "user: ..." or "assistant: ..." for a message entry with text.
fn message_text(entry: &Value) -> Option<String> {
    let message = entry.get("message")?;
    let role = message.get("role").and_then(Value::as_str)?;
    if role != "user" && role != "assistant" {
        return None;
    }
    let text: Vec<&str> = message
        .get("content")?
        .as_array()?
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let text = text.join("\n");
    (!text.trim().is_empty()).then(|| format!("{role}: {text}"))
}

fn chunk_units(units: Vec<Unit>) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut headings: Vec<(usize, String)> = Vec::new();
    // The units of the chunk being built, the heading path at its start, and its size.
    let mut current: Vec<&Unit> = Vec::new();
    let mut current_heading = String::new();
    let mut tokens = 0;
    for unit in &units {
        let size = estimate_tokens(&unit.text);
        if let Some((level, title)) = &unit.heading {
            flush(&mut chunks, &current, &current_heading);
            current.clear();
            tokens = 0;
            headings.retain(|(l, _)| l < level);
            headings.push((*level, title.clone()));
        } else if !current.is_empty() && tokens + size > TARGET_TOKENS {
            flush(&mut chunks, &current, &current_heading);
            let keep = overlap(&current, size);
            current.drain(..current.len() - keep);
            tokens = current.iter().map(|u| estimate_tokens(&u.text)).sum();
        }
        if current.is_empty() {
            current_heading = join_headings(&headings);
        }
        current.push(unit);
        tokens += size;
    }
    flush(&mut chunks, &current, &current_heading);
    chunks
}

/// How many trailing units of `units` to repeat in the next chunk: about
/// [`OVERLAP_TOKENS`], never all of them (the next chunk must move on), and none when the
/// unit that comes next would not fit beside them.
fn overlap(units: &[&Unit], next_size: usize) -> usize {
    let mut keep = 0;
    let mut tokens = 0;
    for unit in units.iter().rev() {
        let size = estimate_tokens(&unit.text);
        if keep + 1 >= units.len()
            || tokens + size > OVERLAP_TOKENS
            || tokens + size + next_size > TARGET_TOKENS
        {
            break;
        }
        keep += 1;
        tokens += size;
    }
    keep
}

fn join_headings(headings: &[(usize, String)]) -> String {
    headings
        .iter()
        .map(|(_, title)| title.as_str())
        .collect::<Vec<_>>()
        .join(" > ")
}

fn flush(chunks: &mut Vec<Chunk>, units: &[&Unit], heading: &str) {
    let (Some(first), Some(last)) = (units.first(), units.last()) else {
        return;
    };
    let text = units
        .iter()
        .map(|u| u.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    chunks.push(Chunk {
        start_line: first.start_line,
        end_line: last.end_line,
        heading: heading.to_string(),
        text,
    });
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn lines(text: &str) -> Vec<&str> {
        text.lines().collect()
    }

    /// Markdown-ish lines: headings, bullets, code fences, blanks, long prose.
    fn markdown_line() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => "[a-z ]{0,80}",
            1 => (1..7usize, "[A-Za-z ]{0,20}").prop_map(|(l, t)| format!("{} {t}", "#".repeat(l))),
            2 => "- [a-z ]{1,40}",
            1 => Just("```".to_string()),
            1 => Just(String::new()),
            1 => "[a-z]{200,2000}",
        ]
    }

    proptest! {
        #[test]
        fn every_line_is_in_a_chunk_and_ranges_are_exact(
            file in proptest::collection::vec(markdown_line(), 0..300)
        ) {
            let text = file.join("\n");
            let all = lines(&text);
            let chunks = chunk_markdown(&text);
            let mut covered = vec![false; all.len()];
            let mut previous_start = 0;
            for chunk in &chunks {
                prop_assert!(chunk.start_line >= 1 && chunk.start_line <= chunk.end_line);
                prop_assert!(chunk.end_line <= all.len());
                prop_assert!(chunk.start_line > previous_start, "chunks move forward");
                previous_start = chunk.start_line;
                let expected = all[chunk.start_line - 1..chunk.end_line].join("\n");
                prop_assert_eq!(&chunk.text, &expected);
                for line in chunk.start_line..=chunk.end_line {
                    covered[line - 1] = true;
                }
            }
            prop_assert!(covered.iter().all(|&c| c), "some line is in no chunk");
        }

        #[test]
        fn chunks_stay_near_the_target_unless_one_line_is_longer(
            file in proptest::collection::vec("[a-z ]{0,120}", 1..400)
        ) {
            let text = file.join("\n");
            for chunk in chunk_markdown(&text) {
                let single_line = chunk.start_line == chunk.end_line;
                prop_assert!(
                    single_line || estimate_tokens(&chunk.text) <= TARGET_TOKENS + 40,
                    "a chunk of {} tokens", estimate_tokens(&chunk.text)
                );
            }
        }
    }

    #[test]
    fn headings_start_chunks_and_give_their_path() {
        let text =
            "# Project\nintro\n## Decisions\n- use Rust\n### Later\n- maybe\n## People\n- Ana";
        let chunks = chunk_markdown(text);
        let got: Vec<(usize, usize, &str)> = chunks
            .iter()
            .map(|c| (c.start_line, c.end_line, c.heading.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 2, "Project"),
                (3, 4, "Project > Decisions"),
                (5, 6, "Project > Decisions > Later"),
                (7, 8, "Project > People"),
            ]
        );
    }

    #[test]
    fn a_hash_inside_a_code_fence_is_not_a_heading() {
        let text = "# Notes\n```sh\n# a comment\necho hi\n```\nafter";
        let chunks = chunk_markdown(text);
        assert_eq!(chunks.len(), 1);
        assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 6));
    }

    #[test]
    fn a_long_section_is_cut_with_overlap() {
        let text: String = (1..=200)
            .map(|i| format!("- fact number {i} about the project and its many details\n"))
            .collect();
        let chunks = chunk_markdown(&text);
        assert!(chunks.len() > 2);
        for pair in chunks.windows(2) {
            assert!(
                pair[1].start_line <= pair[0].end_line,
                "consecutive chunks overlap"
            );
            assert!(pair[1].start_line > pair[0].start_line);
        }
        assert_eq!(chunks.last().unwrap().end_line, 200);
    }

    #[test]
    fn sessions_index_what_was_said_with_file_line_numbers() {
        let text = [
            r#"{"type":"session","version":1,"id":"s","created_at":"2026-01-01T00:00:00Z"}"#,
            r#"{"type":"message","id":"a","parent_id":null,"ts":"t","message":{"role":"user","content":[{"type":"text","text":"Where is the invoice?"}]}}"#,
            r#"{"type":"message","id":"b","parent_id":"a","ts":"t","message":{"role":"assistant","content":[{"type":"tool_call","id":"c","name":"grep","arguments":{}}],"stop_reason":"tool_use"}}"#,
            r#"{"type":"message","id":"c","parent_id":"b","ts":"t","message":{"role":"tool_result","call_id":"c","tool_name":"grep","content":"secret tool output","is_error":false}}"#,
            r#"{"type":"message","id":"d","parent_id":"c","ts":"t","message":{"role":"assistant","content":[{"type":"text","text":"In knowledge/invoices.md."}],"stop_reason":"end_turn"}}"#,
            r#"{"type":"session_info","id":"e","parent_id":null,"ts":"t","title":"Invoices"}"#,
            "{torn",
        ]
        .join("\n");
        let chunks = chunk_session(&text);
        assert_eq!(chunks.len(), 1);
        let chunk = &chunks[0];
        assert_eq!((chunk.start_line, chunk.end_line), (2, 5));
        assert_eq!(chunk.heading, "Invoices");
        assert_eq!(
            chunk.text,
            "user: Where is the invoice?\nassistant: In knowledge/invoices.md."
        );
    }
}
