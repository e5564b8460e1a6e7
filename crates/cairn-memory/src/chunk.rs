//! Splitting an indexed file into chunks that follow its lines and headings.
//!
//! A file is first turned into units: one per line for markdown and text, one per message
//! for a session transcript; a unit too long for a chunk (a paragraph on one line) is cut
//! at spaces into pieces. A chunk is a run of whole units that fits its budget ([`Sizing`]:
//! the embedding model's window counted with its own tokenizer, heading included, so the
//! whole chunk reaches its vector; about [`TARGET_TOKENS`] estimated without one). A
//! heading or a new page always starts a new chunk, and a chunk cut for size starts again
//! with the last units of the previous one (about [`OVERLAP_TOKENS`]) so that a passage
//! split across the cut is still found whole. Line numbers are 1-based and inclusive.

use std::sync::Arc;

use serde_json::Value;

use crate::source::SourceKind;

/// About how many tokens a chunk holds when no tokenizer measures it.
pub const TARGET_TOKENS: usize = 400;
/// About how many tokens a chunk cut for size repeats from the previous one.
pub const OVERLAP_TOKENS: usize = 60;
/// Tokens an embedding model adds around every text (BERT's `[CLS]` and `[SEP]`), and
/// the newline between heading and text.
const AROUND: usize = 3;

/// A piece of an indexed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub start_line: usize,
    pub end_line: usize,
    /// The headings above the chunk, outermost first, joined by " > ".
    pub heading: String,
    pub text: String,
    /// The page it is on (1-based), in a paged document.
    pub page: Option<u32>,
}

/// An embedding model's tokenizer, as chunking needs it.
pub trait Tokens: Send + Sync {
    /// How many tokens `text` is (without the model's special tokens).
    fn count(&self, text: &str) -> usize;
    /// The most tokens the model reads of one text, special tokens included.
    fn window(&self) -> usize;
    /// Names the tokenizer and window: chunks cut for another are cut again.
    fn name(&self) -> String;
}

/// How chunks are measured: by an embedding model's tokenizer, or estimated.
#[derive(Clone, Default)]
pub struct Sizing {
    tokens: Option<Arc<dyn Tokens>>,
}

impl std::fmt::Debug for Sizing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.key())
    }
}

impl Sizing {
    /// Chunks of about [`TARGET_TOKENS`] estimated tokens.
    pub fn estimate() -> Self {
        Self::default()
    }

    /// Chunks that fit the window of the model `tokens` counts for.
    pub fn model(tokens: Arc<dyn Tokens>) -> Self {
        Self {
            tokens: Some(tokens),
        }
    }

    /// Names how chunks are cut: an index cut another way is cut again.
    pub fn key(&self) -> String {
        match &self.tokens {
            Some(tokens) => format!("{}/{}", tokens.name(), tokens.window()),
            None => format!("estimate/{TARGET_TOKENS}"),
        }
    }

    fn count(&self, text: &str) -> usize {
        match &self.tokens {
            Some(tokens) => tokens.count(text),
            None => estimate_tokens(text),
        }
    }

    /// The most tokens of text a chunk under `heading` may hold. A heading that would
    /// leave less than half the window is left to the model to cut.
    fn budget(&self, heading: &str) -> usize {
        match &self.tokens {
            Some(tokens) => {
                let window = tokens.window().max(16);
                let heading = if heading.is_empty() {
                    0
                } else {
                    self.count(heading)
                };
                window
                    .saturating_sub(AROUND + heading)
                    .max(window / 2)
                    .min(TARGET_TOKENS)
            }
            None => TARGET_TOKENS,
        }
    }

    /// About how much a chunk cut for size repeats of the one before.
    fn overlap(&self, budget: usize) -> usize {
        OVERLAP_TOKENS.min(budget / 6)
    }
}

/// The smallest piece a chunk is made of.
#[derive(Debug, Clone)]
struct Unit {
    start_line: usize,
    end_line: usize,
    text: String,
    /// A markdown heading starts here: (level, title).
    heading: Option<(usize, String)>,
    /// The rest of the line the unit before began (a long line cut in pieces).
    continues: bool,
    page: Option<u32>,
}

impl Unit {
    fn line(number: usize, text: String) -> Self {
        Self {
            start_line: number,
            end_line: number,
            text,
            heading: None,
            continues: false,
            page: None,
        }
    }
}

/// A rough token count: about four characters per token, at least one per unit.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count() / 4 + 1
}

/// Chunks a file of the given kind with estimated sizes (see [`chunk_source_sized`]).
pub fn chunk_source(kind: SourceKind, text: &str) -> Vec<Chunk> {
    chunk_source_sized(kind, text, &Sizing::estimate())
}

/// Chunks a file of the given kind: session transcripts by message, everything else as
/// markdown.
pub fn chunk_source_sized(kind: SourceKind, text: &str, sizing: &Sizing) -> Vec<Chunk> {
    match kind {
        SourceKind::Session => chunk_session(text, sizing),
        _ => chunk_markdown_sized(text, sizing),
    }
}

/// Chunks a markdown (or plain text) file with estimated sizes.
pub fn chunk_markdown(text: &str) -> Vec<Chunk> {
    chunk_markdown_sized(text, &Sizing::estimate())
}

/// Chunks a markdown (or plain text) file. Every line is in some chunk.
pub fn chunk_markdown_sized(text: &str, sizing: &Sizing) -> Vec<Chunk> {
    chunk_pages(&[(None, text)], sizing)
}

/// Chunks the pages of a document (or one text, its page `None`): a chunk never spans
/// two pages, and line numbers run on through the pages (each page starts on a line of
/// its own).
pub fn chunk_pages(pages: &[(Option<u32>, &str)], sizing: &Sizing) -> Vec<Chunk> {
    let mut units = Vec::new();
    let mut fence: Option<&str> = None;
    let mut number = 0;
    for (page, text) in pages {
        for line in text.lines() {
            number += 1;
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
                heading,
                page: *page,
                ..Unit::line(number, line.to_string())
            });
        }
    }
    chunk_units(units, "", sizing)
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
pub fn chunk_session(text: &str, sizing: &Sizing) -> Vec<Chunk> {
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
                    units.push(Unit::line(i + 1, said));
                }
            }
            _ => {}
        }
    }
    chunk_units(units, title.as_deref().unwrap_or_default(), sizing)
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

fn chunk_units(units: Vec<Unit>, base_heading: &str, sizing: &Sizing) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut headings: Vec<(usize, String)> = Vec::new();
    if !base_heading.is_empty() {
        headings.push((0, base_heading.to_string()));
    }
    // The units of the chunk being built, the heading path at its start, its budget and
    // its size.
    let mut current: Vec<Sized> = Vec::new();
    let mut current_heading = join_headings(&headings);
    let mut budget = sizing.budget(&current_heading);
    let mut tokens = 0;
    let mut page = units.first().and_then(|u| u.page);
    for unit in units {
        let new_page = unit.page != page;
        if let Some((level, title)) = &unit.heading {
            headings.retain(|(l, _)| l < level);
            headings.push((*level, title.clone()));
        }
        if unit.heading.is_some() || new_page {
            flush(&mut chunks, &current, &current_heading);
            current.clear();
            tokens = 0;
            page = unit.page;
            current_heading = join_headings(&headings);
            budget = sizing.budget(&current_heading);
        }
        for piece in pieces(unit, budget, sizing) {
            if !current.is_empty() && tokens + piece.tokens > budget {
                flush(&mut chunks, &current, &current_heading);
                let keep = overlap(&current, piece.tokens, budget, sizing.overlap(budget));
                current.drain(..current.len() - keep);
                tokens = current.iter().map(|u| u.tokens).sum();
            }
            tokens += piece.tokens;
            current.push(piece);
        }
    }
    flush(&mut chunks, &current, &current_heading);
    chunks
}

/// A unit with its size in tokens.
struct Sized {
    unit: Unit,
    tokens: usize,
}

/// `unit` measured, cut at spaces into pieces of at most half the budget when it is
/// longer than the budget (at any character when a stretch has no space).
fn pieces(unit: Unit, budget: usize, sizing: &Sizing) -> Vec<Sized> {
    let tokens = sizing.count(&unit.text);
    if tokens <= budget {
        return vec![Sized { unit, tokens }];
    }
    let most = (budget / 2).max(1);
    let mut out = Vec::new();
    cut(&unit.text, tokens, most, sizing, &mut |text, tokens| {
        out.push(Sized {
            unit: Unit {
                text: text.to_string(),
                heading: None,
                continues: true,
                ..unit.clone()
            },
            tokens,
        });
    });
    if let Some(first) = out.first_mut() {
        first.unit.heading = unit.heading;
        first.unit.continues = unit.continues;
    }
    out
}

/// Cuts `text` (`tokens` long) into consecutive parts of at most `most` tokens that
/// together are `text` again, halving near a space until each part fits.
fn cut(text: &str, tokens: usize, most: usize, sizing: &Sizing, emit: &mut dyn FnMut(&str, usize)) {
    if tokens <= most || text.chars().nth(1).is_none() {
        emit(text, tokens);
        return;
    }
    let middle = text.floor_char_boundary(text.len() / 2);
    // The end of a sentence nearest the middle (within its middle half), else the space
    // nearest it, kept at the end of the left part.
    let (low, high) = (
        text.floor_char_boundary(text.len() / 4),
        text.floor_char_boundary(text.len() * 3 / 4),
    );
    let sentence_end = |at: usize| {
        text[..at].ends_with(['.', '!', '?', ';']) && text[at..].starts_with(char::is_whitespace)
    };
    let nearest = (0..=(high - low) / 2).find_map(|d| {
        [middle.checked_sub(d), Some(middle + d)]
            .into_iter()
            .flatten()
            .find(|&at| at > low && at < high && text.is_char_boundary(at) && sentence_end(at))
    });
    if let Some(at) = nearest {
        let at = at + text[at..].chars().next().map_or(1, char::len_utf8);
        let (left, right) = text.split_at(at);
        cut(left, sizing.count(left), most, sizing, emit);
        cut(right, sizing.count(right), most, sizing, emit);
        return;
    }
    let before = text[..middle].rfind(char::is_whitespace);
    let after = text[middle..].find(char::is_whitespace).map(|i| middle + i);
    let at = match (before, after) {
        (Some(b), Some(a)) if middle - b <= a - middle => Some(b),
        (Some(b), None) => Some(b),
        (_, Some(a)) => Some(a),
        (None, None) => None,
    };
    let at = at
        .map(|i| i + text[i..].chars().next().map_or(1, char::len_utf8))
        .filter(|&i| i > 0 && i < text.len())
        .unwrap_or(middle.max(text.ceil_char_boundary(1)));
    let (left, right) = text.split_at(at);
    cut(left, sizing.count(left), most, sizing, emit);
    cut(right, sizing.count(right), most, sizing, emit);
}

/// How many trailing units of `units` to repeat in the next chunk: about `most` tokens,
/// never all of them (the next chunk must move on), and none when the unit that comes
/// next would not fit beside them.
fn overlap(units: &[Sized], next_size: usize, budget: usize, most: usize) -> usize {
    let mut keep = 0;
    let mut tokens = 0;
    for unit in units.iter().rev() {
        let size = unit.tokens;
        if keep + 1 >= units.len() || tokens + size > most || tokens + size + next_size > budget {
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

fn flush(chunks: &mut Vec<Chunk>, units: &[Sized], heading: &str) {
    let (Some(first), Some(last)) = (units.first(), units.last()) else {
        return;
    };
    let mut text = String::new();
    for (i, sized) in units.iter().enumerate() {
        if i > 0 && !sized.unit.continues {
            text.push('\n');
        }
        text.push_str(&sized.unit.text);
    }
    chunks.push(Chunk {
        start_line: first.unit.start_line,
        end_line: last.unit.end_line,
        heading: heading.to_string(),
        text,
        page: first.unit.page,
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
                prop_assert!(chunk.start_line >= previous_start, "chunks move forward");
                previous_start = chunk.start_line;
                let lines = all[chunk.start_line - 1..chunk.end_line].join("\n");
                prop_assert!(lines.contains(&chunk.text), "a chunk's text is its lines'");
                if chunk.start_line < chunk.end_line {
                    // Whole lines in between.
                    let inner = &all[chunk.start_line..chunk.end_line - 1];
                    prop_assert!(chunk.text.contains(&inner.join("\n")));
                }
                for line in chunk.start_line..=chunk.end_line {
                    covered[line - 1] = true;
                }
            }
            prop_assert!(covered.iter().all(|&c| c), "some line is in no chunk");
        }

        #[test]
        fn chunks_stay_within_the_target(
            file in proptest::collection::vec(markdown_line(), 1..400)
        ) {
            let text = file.join("\n");
            for chunk in chunk_markdown(&text) {
                prop_assert!(
                    estimate_tokens(&chunk.text) <= TARGET_TOKENS + 2,
                    "a chunk of {} tokens", estimate_tokens(&chunk.text)
                );
            }
        }

        #[test]
        fn with_a_tokenizer_every_chunk_and_its_heading_fit_the_window(
            file in proptest::collection::vec(prose_line(), 1..300)
        ) {
            let text = file.join("\n");
            let words = Arc::new(Words);
            let sizing = Sizing::model(words.clone());
            for chunk in chunk_markdown_sized(&text, &sizing) {
                let embedded = crate::index::embedding_text(&chunk.heading, &chunk.text);
                prop_assert!(
                    words.count(&embedded) + 2 <= words.window(),
                    "{} tokens in a window of {}", words.count(&embedded), words.window()
                );
            }
        }
    }

    /// Lines of prose, some one long paragraph, some headings.
    fn prose_line() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "[a-z]{1,8}( [a-z]{1,8}){0,15}",
            1 => (1..4usize, "[A-Za-z]{1,8}( [A-Za-z]{1,8}){0,5}").prop_map(|(l, t)| format!("{} {t}", "#".repeat(l))),
            1 => "[a-z]{1,12}( [a-z]{1,12}){100,400}",
            1 => Just(String::new()),
        ]
    }

    /// A tokenizer of words: every run of letters is a token, and every other character
    /// but a space.
    struct Words;

    impl Tokens for Words {
        fn count(&self, text: &str) -> usize {
            let mut count = 0;
            let mut in_word = false;
            for c in text.chars() {
                if c.is_alphanumeric() {
                    count += usize::from(!in_word);
                    in_word = true;
                } else {
                    in_word = false;
                    count += usize::from(!c.is_whitespace());
                }
            }
            count
        }

        fn window(&self) -> usize {
            64
        }

        fn name(&self) -> String {
            "words".into()
        }
    }

    #[test]
    fn a_paragraph_on_one_line_is_cut_at_spaces_into_fitting_chunks() {
        let sentence = "the quiet harbour wakes before the fishing boats return ";
        let paragraph = sentence.repeat(60);
        let text = format!("# Harbour\n{paragraph}\nlast line");
        let sizing = Sizing::model(Arc::new(Words));
        let chunks = chunk_markdown_sized(&text, &sizing);
        assert!(chunks.len() > 5, "{}", chunks.len());
        for chunk in &chunks {
            assert_eq!(chunk.heading, "Harbour");
            assert!(Words.count(&chunk.text) + Words.count("Harbour") + 3 <= 64);
            // Cut between words, never inside one.
            assert!(!chunk.text.starts_with("arbour") && !chunk.text.contains("harbourwakes"));
        }
        assert_eq!(chunks.last().unwrap().end_line, 3);
        assert!(chunks.last().unwrap().text.ends_with("\nlast line"));
        // Estimated, the same paragraph is also cut (it is over 400 estimated tokens).
        assert!(chunk_markdown(&text).len() > 1);
    }

    #[test]
    fn a_long_line_is_cut_between_sentences_when_it_can_be() {
        let sentence = "The ferry to the island leaves at nine and returns at six. ";
        let text = sentence.repeat(40);
        let sizing = Sizing::model(Arc::new(Words));
        for chunk in chunk_markdown_sized(&text, &sizing) {
            let trimmed = chunk.text.trim();
            assert!(trimmed.starts_with("The ferry"), "{trimmed:?}");
            assert!(trimmed.ends_with("six."), "{trimmed:?}");
        }
    }

    #[test]
    fn a_chunk_never_spans_pages() {
        let pages = [
            (Some(1), "one\ntwo"),
            (Some(2), "three"),
            (Some(3), "four\nfive"),
        ];
        let chunks = chunk_pages(&pages, &Sizing::estimate());
        let got: Vec<_> = chunks
            .iter()
            .map(|c| (c.page, c.start_line, c.end_line, c.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (Some(1), 1, 2, "one\ntwo"),
                (Some(2), 3, 3, "three"),
                (Some(3), 4, 5, "four\nfive")
            ]
        );
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
        let chunks = chunk_session(&text, &Sizing::estimate());
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
