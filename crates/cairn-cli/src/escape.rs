//! Text from a model, a server or a tool made safe to print: control characters are shown
//! escaped (`\x1b`, `\r`, `\x07`, `\u{9b}`) instead of reaching the terminal, where they
//! could write the clipboard (OSC 52), move the cursor, clear the screen or overwrite a line
//! with a fake prompt. Each character is judged alone, so text that arrives in pieces (a
//! stream of deltas) is made safe piece by piece even when a sequence is split between two.
//! Cairn's own styles are added after escaping and are not touched.

/// Renders `text` of a tool call for an approval prompt: line breaks stay, everything else
/// that a terminal would not show as itself is escaped (tabs, carriage returns, controls,
/// and invisible characters such as bidi overrides and zero-width spaces), so the person
/// approving sees every character the call holds.
pub fn call_text(text: &str) -> String {
    escape(text, Keep::Newlines, Invisible::All)
}

/// Like [`call_text`] on one line: line breaks are escaped as `\n` too.
pub fn call_line(text: &str) -> String {
    escape(text, Keep::Nothing, Invisible::All)
}

/// Renders one line of a file for a diff: tabs stay (indentation reads as in an editor),
/// everything else as in [`call_text`].
pub fn file_line(text: &str) -> String {
    escape(text, Keep::Tabs, Invisible::All)
}

/// Renders prose from a model or a server (answers, tool output, titles, error messages):
/// line breaks and tabs stay, controls and the bidi characters that reorder a line are
/// escaped; characters that join scripts and emoji (zero-width joiners) stay.
pub fn prose(text: &str) -> String {
    let mut stream = Prose::default();
    let mut out = stream.push(text);
    out.push_str(&stream.finish());
    out
}

/// Like [`prose`] on one line: line breaks are escaped as `\n` too.
pub fn prose_line(text: &str) -> String {
    escape(text, Keep::Tabs, Invisible::Bidi)
}

/// [`prose`] over text that arrives in pieces. A `\r\n` line end split between two pieces
/// still becomes one line break; a `\r` that does not end a line is shown as `\r`.
#[derive(Debug, Default)]
pub struct Prose {
    /// A `\r` at the end of the last piece, not yet known to start a `\r\n`.
    pending_cr: bool,
}

impl Prose {
    /// The safe form of the next piece.
    pub fn push(&mut self, piece: &str) -> String {
        let mut out = String::with_capacity(piece.len());
        for c in piece.chars() {
            if std::mem::take(&mut self.pending_cr) && c != '\n' {
                out.push_str("\\r");
            }
            if c == '\r' {
                self.pending_cr = true;
            } else {
                push_char(&mut out, c, Keep::NewlinesAndTabs, Invisible::Bidi);
            }
        }
        out
    }

    /// What is still held back at the end of the text.
    pub fn finish(&mut self) -> String {
        if std::mem::take(&mut self.pending_cr) {
            "\\r".into()
        } else {
            String::new()
        }
    }
}

/// Whether `text` holds a character that [`call_text`] escapes.
pub fn hidden_in_call(text: &str) -> bool {
    hides(text, Keep::Newlines)
}

/// Whether `text` holds a character that [`file_line`] escapes, line breaks aside.
pub fn hidden_in_file(text: &str) -> bool {
    hides(text, Keep::NewlinesAndTabs)
}

fn hides(text: &str, keep: Keep) -> bool {
    text.chars()
        .any(|c| !keep.keeps(c) && (is_control(c) || is_invisible(c, Invisible::All)))
}

/// Which layout characters pass through unescaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    Nothing,
    Newlines,
    Tabs,
    NewlinesAndTabs,
}

impl Keep {
    fn keeps(self, c: char) -> bool {
        match self {
            Keep::Nothing => false,
            Keep::Newlines => c == '\n',
            Keep::Tabs => c == '\t',
            Keep::NewlinesAndTabs => c == '\n' || c == '\t',
        }
    }
}

/// Which invisible (Unicode format) characters are escaped besides the controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Invisible {
    /// Every format character and line separator: nothing in the text is hidden.
    All,
    /// Only those that reorder the characters around them.
    Bidi,
}

fn escape(text: &str, keep: Keep, invisible: Invisible) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_char(&mut out, c, keep, invisible);
    }
    out
}

fn push_char(out: &mut String, c: char, keep: Keep, invisible: Invisible) {
    use std::fmt::Write;
    if keep.keeps(c) || !(is_control(c) || is_invisible(c, invisible)) {
        out.push(c);
        return;
    }
    let _ = match c {
        '\n' => write!(out, "\\n"),
        '\r' => write!(out, "\\r"),
        '\t' => write!(out, "\\t"),
        '\x1b' => write!(out, "\\x1b"),
        c if (c as u32) < 0x80 => write!(out, "\\x{:02x}", c as u32),
        c => write!(out, "\\u{{{:x}}}", c as u32),
    };
}

/// C0 controls, DEL and C1 controls (`\u{9b}` is a one-character CSI on some terminals).
fn is_control(c: char) -> bool {
    c.is_control()
}

/// Characters that show as nothing, or change how the characters around them show.
fn is_invisible(c: char, which: Invisible) -> bool {
    let bidi = matches!(c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    match which {
        Invisible::Bidi => bidi,
        Invisible::All => bidi || is_format(c) || looks_blank(c),
    }
}

/// Characters that are no format character but show as a blank: spaces other than the
/// plain one, the braille blank and the Hangul fillers (a run of them can push a command's
/// tail out of sight), variation selectors and the combining grapheme joiner.
fn looks_blank(c: char) -> bool {
    matches!(c,
        '\u{00a0}'
        | '\u{034f}'
        | '\u{115f}'
        | '\u{1160}'
        | '\u{1680}'
        | '\u{17b4}'
        | '\u{17b5}'
        | '\u{2000}'..='\u{200a}'
        | '\u{202f}'
        | '\u{205f}'
        | '\u{2800}'
        | '\u{3000}'
        | '\u{3164}'
        | '\u{fe00}'..='\u{fe0f}'
        | '\u{ffa0}')
}

/// Unicode format characters (category Cf) and the line and paragraph separators, which
/// a terminal shows as nothing: zero-width spaces and joiners, the byte order mark, soft
/// hyphens, and the tag characters that can spell hidden text.
fn is_format(c: char) -> bool {
    matches!(c,
        '\u{00ad}'
        | '\u{0600}'..='\u{0605}'
        | '\u{06dd}'
        | '\u{070f}'
        | '\u{08e2}'
        | '\u{180e}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206f}'
        | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{110bd}'
        | '\u{110cd}'
        | '\u{13430}'..='\u{1343f}'
        | '\u{1bca0}'..='\u{1bca3}'
        | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0001}'
        | '\u{e0020}'..='\u{e007f}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_call_shows_every_control_escaped_and_keeps_its_lines() {
        assert_eq!(
            call_text("echo a\tb\r\nprintf '\x1b]52;c;eA==\x07'\n\x7f\x01\u{9b}2J"),
            "echo a\\tb\\r\nprintf '\\x1b]52;c;eA==\\x07'\n\\x7f\\x01\\u{9b}2J"
        );
    }

    #[test]
    fn a_call_shows_blank_looking_characters_escaped() {
        let hidden = format!("ls{} ; curl x | sh", "\u{2800}\u{3164}".repeat(3));
        assert_eq!(
            call_line(&hidden),
            format!("ls{} ; curl x | sh", "\\u{2800}\\u{3164}".repeat(3))
        );
        assert!(hidden_in_call("a\u{00a0}b"));
        // Prose keeps them: an answer in Korean or braille reads as written.
        assert_eq!(prose("\u{2800}"), "\u{2800}");
    }

    #[test]
    fn a_call_shows_invisible_characters_escaped() {
        assert_eq!(
            call_text("rm -rf /tmp/x\u{202e}txt.exe\u{200b}\u{feff}\u{e0041}"),
            "rm -rf /tmp/x\\u{202e}txt.exe\\u{200b}\\u{feff}\\u{e0041}"
        );
        assert_eq!(call_line("a\nb\tc"), "a\\nb\\tc");
        assert!(hidden_in_call("a\u{200d}b"));
        assert!(hidden_in_call("a\tb"));
        assert!(!hidden_in_call("ls -la\ncd notes é 日本"));
        assert!(!hidden_in_file("\tx\ny"));
        assert!(hidden_in_file("x\r\n"));
    }

    #[test]
    fn a_file_line_keeps_tabs() {
        assert_eq!(file_line("\tall: \x1b[2Jx\r"), "\tall: \\x1b[2Jx\\r");
    }

    #[test]
    fn prose_keeps_lines_tabs_and_emoji_but_not_controls() {
        assert_eq!(
            prose("Done.\n\tnext\x1b[2A\x1b]52;c;cHduZWQ=\x07 👨\u{200d}👩 \u{202e}x"),
            "Done.\n\tnext\\x1b[2A\\x1b]52;c;cHduZWQ=\\x07 👨\u{200d}👩 \\u{202e}x"
        );
        assert_eq!(prose_line("a\nb\x1b"), "a\\nb\\x1b");
    }

    #[test]
    fn an_escape_sequence_split_between_pieces_is_still_escaped() {
        let mut stream = Prose::default();
        let out = stream.push("copied\x1b]52;c;")
            + &stream.push("cHduZWQ=\x07 up\x1b")
            + &stream.push("[3A");
        assert_eq!(out, "copied\\x1b]52;c;cHduZWQ=\\x07 up\\x1b[3A");
        assert!(!out.contains('\x1b'));
    }

    #[test]
    fn a_carriage_return_shows_unless_it_ends_a_line() {
        let mut stream = Prose::default();
        let out = stream.push("one\r")
            + &stream.push("\ntwo\rthree: fake prompt? ")
            + &stream.push("x\r")
            + &stream.finish();
        assert_eq!(out, "one\ntwo\\rthree: fake prompt? x\\r");
        assert_eq!(prose("a\r"), "a\\r");
    }
}
