//! Reasoning written inline as `<think>…</think>` at the start of an answer, the way
//! DeepSeek-R1, Qwen3, QwQ and other open reasoning models write it when the server has no
//! reasoning parser (and always, when Cairn runs the model itself).
//!
//! [`ThinkSplitter`] takes the answer's text as it streams and passes it on as reasoning
//! (`ThinkingDelta`, then one `ThinkingEnd`) and answer text (`TextDelta`). Only a `<think>`
//! that opens the answer (after blank space) counts: the same tag later in the text is a
//! model writing about the tag, and stays text. A tag split over two pieces is held back
//! until it is whole, never shown half.

use crate::provider::StreamEvent;

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing but blank space yet: the answer may still open with `<think>`.
    #[default]
    Start,
    Thinking,
    /// Just after `</think>`: blank space before the answer is dropped.
    AfterThinking,
    Answer,
}

/// Splits one answer's text into reasoning and answer.
#[derive(Debug, Default)]
pub(crate) struct ThinkSplitter {
    state: State,
    /// Text held back: the start of the answer while it may still be `<think>`, or the end of
    /// the reasoning while it may be the start of `</think>`.
    pending: String,
}

impl ThinkSplitter {
    /// The events for the next piece of the answer's text (once the answer is past any
    /// reasoning, the piece goes on as it is, without a copy).
    pub fn push(&mut self, piece: String) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        match self.state {
            State::Answer => text(&mut events, piece),
            State::AfterThinking => {
                let rest = piece.trim_start();
                if !rest.is_empty() {
                    self.state = State::Answer;
                    text(&mut events, rest.to_string());
                }
            }
            State::Start => {
                self.pending.push_str(&piece);
                let start = self.pending.trim_start();
                if let Some(rest) = start.strip_prefix(OPEN) {
                    let rest = rest.to_string();
                    self.pending.clear();
                    self.state = State::Thinking;
                    events.extend(self.push(rest));
                } else if !OPEN.starts_with(start) {
                    self.state = State::Answer;
                    text(&mut events, std::mem::take(&mut self.pending));
                }
            }
            State::Thinking => {
                self.pending.push_str(&piece);
                if let Some(at) = self.pending.find(CLOSE) {
                    let rest = self.pending.split_off(at);
                    thought(&mut events, std::mem::take(&mut self.pending));
                    events.push(StreamEvent::ThinkingEnd { signature: None });
                    self.state = State::AfterThinking;
                    events.extend(self.push(rest[CLOSE.len()..].to_string()));
                } else {
                    // Everything but a tail that may be the start of `</think>`. The tail
                    // starts at a `<`, so the cut is on a character boundary.
                    let keep = partial_tag_len(&self.pending);
                    let tail = self.pending.split_off(self.pending.len() - keep);
                    thought(&mut events, std::mem::replace(&mut self.pending, tail));
                }
            }
        }
        events
    }

    /// The end of the answer: whatever was held back. Reasoning that never closed (the
    /// answer was cut short) is still reasoning.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        let pending = std::mem::take(&mut self.pending);
        match self.state {
            State::Start => text(&mut events, pending),
            State::Thinking => {
                thought(&mut events, pending);
                events.push(StreamEvent::ThinkingEnd { signature: None });
            }
            State::AfterThinking | State::Answer => {}
        }
        self.state = State::Answer;
        events
    }
}

fn text(events: &mut Vec<StreamEvent>, text: String) {
    if !text.is_empty() {
        events.push(StreamEvent::TextDelta(text));
    }
}

fn thought(events: &mut Vec<StreamEvent>, text: String) {
    if !text.is_empty() {
        events.push(StreamEvent::ThinkingDelta(text));
    }
}

/// The length of the longest end of `text` that is a proper start of `</think>`.
fn partial_tag_len(text: &str) -> usize {
    (1..CLOSE.len())
        .rev()
        .find(|&n| text.ends_with(&CLOSE[..n]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// The reasoning and the answer that `pieces` split into, and how many times the
    /// reasoning ended.
    fn split(pieces: &[&str]) -> (String, String, usize) {
        let mut splitter = ThinkSplitter::default();
        let mut events: Vec<StreamEvent> = pieces
            .iter()
            .flat_map(|p| splitter.push(p.to_string()))
            .collect();
        events.extend(splitter.finish());
        let (mut thinking, mut answer, mut ends) = (String::new(), String::new(), 0);
        for event in events {
            match event {
                StreamEvent::ThinkingDelta(t) => thinking.push_str(&t),
                StreamEvent::TextDelta(t) => answer.push_str(&t),
                StreamEvent::ThinkingEnd { .. } => ends += 1,
                other => panic!("unexpected {other:?}"),
            }
        }
        (thinking, answer, ends)
    }

    #[test]
    fn reasoning_at_the_start_is_split_off_wherever_the_pieces_break() {
        let whole = "\n<think>Paris is the capital.\nSo: Paris.</think>\n\nParis.";
        let expected = (
            "Paris is the capital.\nSo: Paris.".to_string(),
            "Paris.".to_string(),
            1,
        );
        assert_eq!(split(&[whole]), expected);
        // Every way of cutting the text in two, and one character at a time.
        for cut in 0..=whole.len() {
            assert_eq!(
                split(&[&whole[..cut], &whole[cut..]]),
                expected,
                "cut at {cut}"
            );
        }
        let chars: Vec<String> = whole.chars().map(String::from).collect();
        let chars: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(split(&chars), expected);
    }

    #[test]
    fn a_tag_that_does_not_open_the_answer_is_text() {
        let text = "Use <think> tags like this: <think>x</think>.";
        assert_eq!(split(&[text]), (String::new(), text.to_string(), 0));
        assert_eq!(split(&["<thi", "s>"]), (String::new(), "<this>".into(), 0));
        assert_eq!(split(&["<th"]), (String::new(), "<th".into(), 0));
        assert_eq!(split(&["  "]), (String::new(), "  ".into(), 0));
    }

    #[test]
    fn reasoning_cut_short_is_still_reasoning_and_a_late_close_tag_is_text() {
        assert_eq!(
            split(&["<think>still going </thi"]),
            ("still going </thi".into(), String::new(), 1)
        );
        assert_eq!(
            split(&["<think>a</think>b</think>c"]),
            ("a".into(), "b</think>c".into(), 1)
        );
        // Text that is not ASCII right before a partial tag.
        assert_eq!(
            split(&["<think>é</", "think>ü"]),
            ("é".into(), "ü".into(), 1)
        );
    }
}
