//! Splitting a streamed answer into text and tool calls.
//!
//! Text goes out as it comes, except what may be the start of a call marker (`<tool`
//! might become `<tool_call>`), which waits until the next delta decides it, and whitespace
//! at the end of what arrived, which waits for what follows: whitespace right before or
//! after a call is dropped. Inside a call the text is kept until its end marker, or the
//! end of the answer for formats without one, then read as JSON: a complete call is
//! passed on at once, and one that cannot be read is an error quoting it.

use cairn_protocol::ToolCall;

use super::{body, new_call_id, CallFormat};
use crate::error::LlmError;

/// What a piece of the answer turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece {
    Text(String),
    Call(ToolCall),
}

/// Where a call starts in the text held back.
enum Start {
    /// Nowhere: all of it is text.
    None,
    /// Maybe at this byte, depending on what comes next.
    Partial(usize),
    /// At byte `at`; the call's own text starts at byte `body`.
    Found { at: usize, body: usize },
}

/// The keys a bare JSON call starts with (`{"name": ...` or `{"type": "function", ...`).
const BARE_KEYS: [&str; 2] = ["\"name\"", "\"type\""];

/// The parser of one answer.
pub(crate) struct CallStream {
    format: CallFormat,
    ids: Box<dyn FnMut() -> String>,
    /// Inside a call: `held` is its text so far. Otherwise `held` is text held back.
    in_call: bool,
    held: String,
    /// Text other than whitespace went out (a bare JSON call can no longer start).
    wrote_text: bool,
    /// The last piece was a call: whitespace after it is dropped.
    after_call: bool,
    calls: usize,
}

impl CallStream {
    /// A parser for answers in `format`, giving calls fresh random ids.
    pub(crate) fn new(format: CallFormat) -> Self {
        Self::with_ids(format, Box::new(new_call_id))
    }

    /// A parser whose call ids come from `ids`.
    pub(crate) fn with_ids(format: CallFormat, ids: Box<dyn FnMut() -> String>) -> Self {
        Self {
            format,
            ids,
            in_call: false,
            held: String::new(),
            wrote_text: false,
            after_call: false,
            calls: 0,
        }
    }

    /// The number of calls passed on so far.
    pub(crate) fn calls(&self) -> usize {
        self.calls
    }

    /// Takes the next piece of generated text; returns what is decided.
    pub(crate) fn push(&mut self, delta: &str) -> Result<Vec<Piece>, LlmError> {
        self.held.push_str(delta);
        let mut out = Vec::new();
        loop {
            if self.in_call {
                let Some(end) = self.format.end_marker() else {
                    break;
                };
                let Some(at) = self.held.find(end) else {
                    break;
                };
                let body = self.held[..at].to_string();
                self.held.drain(..at + end.len());
                self.emit_calls(&body, &mut out)?;
                continue;
            }
            match self.find_start() {
                Start::Found { at, body } => {
                    let text = self.held[..at].trim_end().to_string();
                    self.emit_text(text, &mut out);
                    self.held.drain(..body);
                    self.in_call = true;
                }
                Start::Partial(at) => {
                    self.emit_decided(at, &mut out);
                    break;
                }
                Start::None => {
                    self.emit_decided(self.held.len(), &mut out);
                    break;
                }
            }
        }
        Ok(out)
    }

    /// The end of the answer: whatever is held back is decided now.
    pub(crate) fn finish(&mut self) -> Result<Vec<Piece>, LlmError> {
        let rest = std::mem::take(&mut self.held);
        let mut out = Vec::new();
        if self.in_call {
            self.emit_calls(&rest, &mut out)?;
        } else {
            self.emit_text(rest, &mut out);
        }
        Ok(out)
    }

    /// Passes on the text before byte `upto`, except its trailing whitespace.
    fn emit_decided(&mut self, upto: usize, out: &mut Vec<Piece>) {
        let keep = self.held[..upto].trim_end().len();
        let text: String = self.held.drain(..keep).collect();
        self.emit_text(text, out);
    }

    fn emit_text(&mut self, text: String, out: &mut Vec<Piece>) {
        let text = if self.after_call {
            text.trim_start().to_string()
        } else {
            text
        };
        if !text.is_empty() {
            self.wrote_text |= !text.trim().is_empty();
            self.after_call = false;
            out.push(Piece::Text(text));
        }
    }

    fn emit_calls(&mut self, body: &str, out: &mut Vec<Piece>) -> Result<(), LlmError> {
        let calls = body::parse(body, &mut *self.ids)?;
        self.calls += calls.len();
        out.extend(calls.into_iter().map(Piece::Call));
        self.in_call = false;
        self.after_call = true;
        Ok(())
    }

    fn find_start(&self) -> Start {
        if self.format.bare_json_at_start() && !self.wrote_text && self.calls == 0 {
            if let Some(start) = bare_start(&self.held) {
                return start;
            }
        }
        marker_start(&self.held, self.format.start_markers())
    }
}

/// A bare JSON call at the start of `text` (after whitespace), if it is or may be one.
fn bare_start(text: &str) -> Option<Start> {
    let trimmed = text.trim_start();
    let at = text.len() - trimmed.len();
    if trimmed.is_empty() {
        return Some(Start::Partial(at));
    }
    let after = trimmed.strip_prefix('{')?.trim_start();
    if BARE_KEYS.iter().any(|key| after.starts_with(key)) {
        Some(Start::Found { at, body: at })
    } else if BARE_KEYS.iter().any(|key| key.starts_with(after)) {
        Some(Start::Partial(at))
    } else {
        None
    }
}

/// The first of `markers` in `text`, else the start of a tail of `text` that begins one.
fn marker_start(text: &str, markers: &[&str]) -> Start {
    let found = markers
        .iter()
        .filter_map(|m| text.find(m).map(|at| (at, at + m.len())))
        .min();
    if let Some((at, body)) = found {
        return Start::Found { at, body };
    }
    let longest = markers.iter().map(|m| m.len()).max().unwrap_or(0);
    let from = text.len().saturating_sub(longest);
    let partial = text
        .char_indices()
        .map(|(i, _)| i)
        .filter(|&i| i >= from)
        .find(|&i| markers.iter().any(|m| m.starts_with(&text[i..])));
    partial.map_or(Start::None, Start::Partial)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    fn parser(format: CallFormat) -> CallStream {
        let mut n = 0;
        CallStream::with_ids(
            format,
            Box::new(move || {
                n += 1;
                format!("call_{n}")
            }),
        )
    }

    /// Feeds `deltas` one by one, then ends the answer; adjacent text pieces are joined.
    fn feed(format: CallFormat, deltas: &[&str]) -> Result<Vec<Piece>, LlmError> {
        let mut stream = parser(format);
        let mut pieces = Vec::new();
        for delta in deltas {
            pieces.extend(stream.push(delta)?);
        }
        pieces.extend(stream.finish()?);
        let mut joined: Vec<Piece> = Vec::new();
        for piece in pieces {
            match (joined.last_mut(), piece) {
                (Some(Piece::Text(text)), Piece::Text(more)) => text.push_str(&more),
                (_, piece) => joined.push(piece),
            }
        }
        Ok(joined)
    }

    fn text(t: &str) -> Piece {
        Piece::Text(t.into())
    }

    fn call(n: usize, name: &str, arguments: Value) -> Piece {
        Piece::Call(ToolCall {
            id: format!("call_{n}"),
            name: name.into(),
            arguments,
        })
    }

    /// `text` cut at the given byte offsets (moved back to character boundaries).
    fn split(text: &str, mut cuts: Vec<usize>) -> Vec<&str> {
        for cut in &mut cuts {
            *cut = (*cut).min(text.len());
            while !text.is_char_boundary(*cut) {
                *cut -= 1;
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        let mut parts = Vec::new();
        let mut from = 0;
        for cut in cuts {
            parts.push(&text[from..cut]);
            from = cut;
        }
        parts.push(&text[from..]);
        parts
    }

    /// Answers and what they must come out as, however they are cut into deltas.
    fn cases() -> Vec<(CallFormat, &'static str, Vec<Piece>)> {
        use CallFormat::{Hermes, Llama3, Mistral};
        vec![
            (
                Hermes,
                "Let me look. 🦀\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": \
                 {\"path\": \"a.md\"}}\n</tool_call>",
                vec![
                    text("Let me look. 🦀"),
                    call(1, "read_file", json!({"path": "a.md"})),
                ],
            ),
            (
                Hermes,
                "<tool_call>\n{\"name\": \"ls\", \"arguments\": {}}\n</tool_call>\n\
                 <tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"<b>\"}}\n\
                 </tool_call>\nDone < soon.\n",
                vec![
                    call(1, "ls", json!({})),
                    call(2, "read_file", json!({"path": "<b>"})),
                    text("Done < soon.\n"),
                ],
            ),
            (
                Hermes,
                "a <tool and <tool_cal but no call <",
                vec![text("a <tool and <tool_cal but no call <")],
            ),
            (
                Hermes,
                "<tool_call>{\"name\": \"ls\", \"arguments\": {\"all\": true}}",
                vec![call(1, "ls", json!({"all": true}))],
            ),
            (
                Llama3,
                " {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
                vec![call(1, "get_weather", json!({"city": "Paris"}))],
            ),
            (
                Llama3,
                "<|python_tag|>{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \
                 \"parameters\": {\"x\": 1}}",
                vec![call(1, "a", json!({})), call(2, "b", json!({"x": 1}))],
            ),
            (
                Llama3,
                "The set {\"name\"} is not a call, nor is {\"a\": 1}.",
                vec![text("The set {\"name\"} is not a call, nor is {\"a\": 1}.")],
            ),
            (Llama3, "{\"answer\": 42}", vec![text("{\"answer\": 42}")]),
            (
                Mistral,
                "Sure.[TOOL_CALLS][{\"name\": \"ls\", \"arguments\": {\"path\": \".\"}}, \
                 {\"name\": \"pwd\", \"arguments\": {}}]",
                vec![
                    text("Sure."),
                    call(1, "ls", json!({"path": "."})),
                    call(2, "pwd", json!({})),
                ],
            ),
        ]
    }

    #[test]
    fn whole_answers_split_into_text_and_calls() {
        for (format, answer, want) in cases() {
            assert_eq!(feed(format, &[answer]).unwrap(), want, "{answer:?}");
        }
    }

    #[test]
    fn a_character_at_a_time() {
        for (format, answer, want) in cases() {
            let chars: Vec<String> = answer.chars().map(String::from).collect();
            let deltas: Vec<&str> = chars.iter().map(String::as_str).collect();
            assert_eq!(feed(format, &deltas).unwrap(), want, "{answer:?}");
        }
    }

    proptest! {
        #[test]
        fn markers_split_anywhere_change_nothing(
            case in 0..cases().len(),
            cuts in prop::collection::vec(0..200usize, 0..12),
        ) {
            let (format, answer, want) = cases().swap_remove(case);
            let deltas = split(answer, cuts);
            prop_assert_eq!(feed(format, &deltas).unwrap(), want);
        }

        #[test]
        fn a_malformed_call_is_an_error_wherever_it_is_cut(
            cuts in prop::collection::vec(0..120usize, 0..8),
        ) {
            let answer = "Hi.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \
                          }\n</tool_call>";
            let err = feed(CallFormat::Hermes, &split(answer, cuts)).unwrap_err();
            let LlmError::Fatal(message) = &err else { panic!("{err:?}") };
            prop_assert!(message.contains("not valid JSON"), "{}", message);
            let quoted = r#"{"name": "read_file", "arguments": {"path": }"#;
            prop_assert!(message.contains(quoted), "{}", message);
        }
    }

    #[test]
    fn text_streams_while_it_cannot_be_a_marker() {
        let mut stream = parser(CallFormat::Hermes);
        assert_eq!(stream.push("Hello").unwrap(), vec![text("Hello")]);
        assert_eq!(stream.push(" wor").unwrap(), vec![text(" wor")]);
        assert_eq!(stream.push("ld <to").unwrap(), vec![text("ld")]);
        assert_eq!(stream.push("ol>").unwrap(), vec![text(" <tool>")]);
        assert_eq!(stream.push("<tool_call>{\"na").unwrap(), vec![]);
        let done = stream.push("me\": \"ls\"}</tool_call>").unwrap();
        assert_eq!(done, vec![call(1, "ls", json!({}))]);
        assert_eq!(stream.calls(), 1);
        assert_eq!(stream.finish().unwrap(), vec![]);
    }

    #[test]
    fn a_call_cut_by_the_end_of_the_answer_is_an_error() {
        let err = feed(
            CallFormat::Llama3,
            &["<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"ci"],
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains(r#"`{"name": "get_weather", "parameters": {"ci`"#),
            "{err}"
        );
    }

    #[test]
    fn without_calls_the_text_is_unchanged() {
        let answer = "  Two lines,\n\nand trailing space.  \n";
        let pieces = feed(CallFormat::Hermes, &split(answer, vec![3, 9, 30])).unwrap();
        assert_eq!(pieces, vec![text(answer)]);
    }
}
