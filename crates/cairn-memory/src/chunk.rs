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
#[path = "chunk_tests.rs"]
pub(crate) mod tests;
