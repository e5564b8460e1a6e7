//! Shaping tool results for a model: middle cuts that keep head and tail, numbered lines,
//! readable counts and sizes.

use std::collections::VecDeque;

/// How far (as a share of each half) a cut may move to land on a line break.
const SNAP_DIVISOR: usize = 5;

/// Shortens `text` to about `max_chars` characters by cutting from the middle: the head and
/// the tail are kept and a line `[... 12,345 characters cut from the middle ...]` marks the
/// cut. Cuts land on line breaks when one is near, and never inside a character.
pub fn cap_middle(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_string();
    }
    let head = take_chars(text, max_chars / 2);
    let tail = last_chars(text, max_chars - max_chars / 2);
    let middle = total - head.chars().count() - tail.chars().count();
    join_cut(head, middle, tail)
}

/// Joins a head and a tail around a note saying how many characters were cut between them.
/// The cut is widened to the nearest line breaks when they are close.
fn join_cut(head: &str, cut_chars: usize, tail: &str) -> String {
    let snapped_head = snap_head(head);
    let snapped_tail = snap_tail(tail);
    let cut = cut_chars
        + (head.chars().count() - snapped_head.chars().count())
        + (tail.chars().count() - snapped_tail.chars().count());
    let mut out = String::with_capacity(snapped_head.len() + snapped_tail.len() + 64);
    out.push_str(snapped_head);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!(
        "[... {} characters cut from the middle ...]\n",
        thousands(cut)
    ));
    out.push_str(snapped_tail);
    out
}

/// `head` up to and including its last line break, if that break is near the end.
fn snap_head(head: &str) -> &str {
    let window = head.len() / SNAP_DIVISOR;
    match head.rfind('\n') {
        Some(i) if head.len() - i - 1 <= window => &head[..=i],
        _ => head,
    }
}

/// `tail` after its first line break, if that break is near the start.
fn snap_tail(tail: &str) -> &str {
    let window = tail.len() / SNAP_DIVISOR;
    match tail.find('\n') {
        Some(i) if i < window => &tail[i + 1..],
        _ => tail,
    }
}

/// The first `n` characters of `text`.
pub fn take_chars(text: &str, n: usize) -> &str {
    match text.char_indices().nth(n) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// The last `n` characters of `text`.
pub fn last_chars(text: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    match text.char_indices().rev().nth(n - 1) {
        Some((i, _)) => &text[i..],
        None => text,
    }
}

/// Collects a stream of bytes of unknown length in bounded memory: the first and the last
/// bytes are kept, the middle is only counted. [`HeadTail::finish`] gives the same result as
/// [`cap_middle`] on the whole stream.
#[derive(Debug)]
pub struct HeadTail {
    max_chars: usize,
    half_bytes: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    /// Characters (UTF-8 start bytes) dropped between head and tail.
    dropped_chars: usize,
}

impl HeadTail {
    /// A collector whose result holds about `max_chars` characters.
    pub fn new(max_chars: usize) -> Self {
        // A character takes at most 4 bytes, so this keeps enough for either half.
        let half_bytes = max_chars.div_ceil(2) * 4;
        Self {
            max_chars,
            half_bytes,
            head: Vec::new(),
            tail: VecDeque::new(),
            dropped_chars: 0,
        }
    }

    /// Adds bytes at the end.
    pub fn push(&mut self, mut bytes: &[u8]) {
        let room = self.half_bytes.saturating_sub(self.head.len());
        let into_head = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..into_head]);
        bytes = &bytes[into_head..];
        self.tail.extend(bytes);
        while self.tail.len() > self.half_bytes {
            if let Some(byte) = self.tail.pop_front() {
                self.dropped_chars += usize::from(!is_continuation(byte));
            }
        }
    }

    /// Whether the result will be cut: more characters were pushed than it holds.
    pub fn is_cut(&self) -> bool {
        let chars =
            |bytes: &mut dyn Iterator<Item = &u8>| bytes.filter(|b| !is_continuation(**b)).count();
        self.dropped_chars > 0
            || chars(&mut self.head.iter()) + chars(&mut self.tail.iter()) > self.max_chars
    }

    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }

    /// The collected text (invalid UTF-8 replaced), cut in the middle when too long.
    pub fn finish(self) -> String {
        let (tail_a, tail_b) = self.tail.as_slices();
        if self.dropped_chars == 0 {
            let mut all = self.head;
            all.extend_from_slice(tail_a);
            all.extend_from_slice(tail_b);
            return cap_middle(&String::from_utf8_lossy(&all), self.max_chars);
        }
        let tail_bytes = [tail_a, tail_b].concat();
        // The drop may have split a character on either side: leave its pieces out.
        let skip = tail_bytes
            .iter()
            .take_while(|b| is_continuation(**b))
            .count();
        let head = String::from_utf8_lossy(&self.head);
        let tail = String::from_utf8_lossy(&tail_bytes[skip..]);
        let head_kept = take_chars(&head, self.max_chars / 2);
        let tail_kept = last_chars(&tail, self.max_chars - self.max_chars / 2);
        let cut = self.dropped_chars
            + (head.chars().count() - head_kept.chars().count())
            + (tail.chars().count() - tail_kept.chars().count());
        join_cut(head_kept, cut, tail_kept)
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// Whether `bytes` look like a binary file: a NUL byte in the first 8 KiB.
pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8 * 1024).any(|b| *b == 0)
}

/// `line` prefixed by its right-aligned number and a tab, like `cat -n`.
pub fn numbered(number: usize, width: usize, line: &str) -> String {
    format!("{number:>width$}\t{line}")
}

/// How many digits `n` has (the column width for numbers up to `n`).
pub fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// `n` with thousands separators: `12,345`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let lead = (digits.len() - 1) % 3 + 1;
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    out.push_str(&digits[..lead]);
    let mut at = lead;
    while at < digits.len() {
        out.push(',');
        out.push_str(&digits[at..at + 3]);
        at += 3;
    }
    out
}

/// A byte count for people: `512 B`, `4.2 KiB`, `1.3 MiB`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// How many lines `text` has, counting a last line without a line break.
pub fn line_count(text: &str) -> usize {
    let breaks = text.matches('\n').count();
    breaks + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// `"s"` unless `n` is one.
pub fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// About how many tokens `text` costs: a token is about four characters of English.
pub fn estimate_text(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(cap_middle("hello", 5), "hello");
        assert_eq!(cap_middle("", 0), "");
    }

    #[test]
    fn long_text_keeps_head_and_tail() {
        let text = "a".repeat(10) + &"b".repeat(100) + &"c".repeat(10);
        let capped = cap_middle(&text, 20);
        assert_eq!(
            capped,
            "aaaaaaaaaa\n[... 100 characters cut from the middle ...]\ncccccccccc"
        );
    }

    #[test]
    fn cuts_land_on_line_breaks_and_char_boundaries() {
        let text = "xxxxxxxx\n".repeat(100);
        let five = "xxxxxxxx\n".repeat(5);
        let expected = format!("{five}[... 810 characters cut from the middle ...]\n{five}");
        assert_eq!(cap_middle(&text, 100), expected);
        assert_eq!(
            cap_middle("ééééé", 2),
            "é\n[... 3 characters cut from the middle ...]\né"
        );
    }

    #[test]
    fn head_tail_matches_cap_middle() {
        let text: String = (0..5000).map(|i| format!("{i}: ünïcode\n")).collect();
        for chunk in [1, 7, 4096] {
            let mut collector = HeadTail::new(300);
            for piece in text.as_bytes().chunks(chunk) {
                collector.push(piece);
            }
            assert_eq!(collector.finish(), cap_middle(&text, 300), "chunk {chunk}");
        }
        let mut small = HeadTail::new(300);
        small.push(b"short");
        assert_eq!(small.finish(), "short");
    }

    #[test]
    fn numbers_and_sizes_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(12345), "12,345");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(4300), "4.2 KiB");
        assert_eq!(human_size(3 * 1024 * 1024), "3.0 MiB");
        assert_eq!(
            (digits(0), digits(9), digits(10), digits(5400)),
            (1, 1, 2, 4)
        );
        assert_eq!(numbered(7, 3, "x"), "  7\tx");
        assert_eq!(
            (
                line_count(""),
                line_count("a"),
                line_count("a\n"),
                line_count("a\nb")
            ),
            (0, 1, 1, 2)
        );
        assert!(looks_binary(b"ab\0c"));
        assert!(!looks_binary("plain é".as_bytes()));
    }
}
