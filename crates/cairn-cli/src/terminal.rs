//! Writing text meant for a person: ANSI styles only on a terminal that wants them, text
//! from files made safe to print, and stdout that may be closed early (`| head`).

use std::io::{self, IsTerminal, Write};

/// Whether to style stdout: it is a terminal, `NO_COLOR` is unset or empty, and `TERM` is
/// not `dumb`.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    color: bool,
}

impl Style {
    pub fn detect() -> Self {
        Self::wanted(io::stdout().is_terminal())
    }

    /// The same choice for stderr, where tool activity and approval prompts go.
    pub fn detect_stderr() -> Self {
        Self::wanted(io::stderr().is_terminal())
    }

    fn wanted(terminal: bool) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        Self {
            color: terminal && !no_color && !dumb,
        }
    }

    /// No styles, whatever stdout is.
    pub fn plain() -> Self {
        Self { color: false }
    }

    /// Styles, whatever stdout is.
    #[cfg(test)]
    pub fn colored() -> Self {
        Self { color: true }
    }

    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    /// A matched word: bold yellow.
    pub fn highlight(self, text: &str) -> String {
        self.paint("1;33", text)
    }

    /// A line a diff adds: green.
    pub fn added(self, text: &str) -> String {
        self.paint("32", text)
    }

    /// A line a diff removes: red.
    pub fn removed(self, text: &str) -> String {
        self.paint("31", text)
    }

    /// A diff's hunk header: cyan.
    pub fn hunk(self, text: &str) -> String {
        self.paint("36", text)
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

/// `text` without control characters (a file could hold escape sequences that would
/// drive the terminal): tabs become spaces, line breaks stay, the rest become `�`.
pub fn clean(text: &str) -> String {
    text.chars()
        .filter(|&c| c != '\r')
        .map(|c| match c {
            '\n' => '\n',
            '\t' => ' ',
            c if c.is_control() => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// Like [`clean`], on one line.
pub fn clean_line(text: &str) -> String {
    clean(text).replace('\n', " ")
}

/// Writes `text` to stdout; a reader that went away (`cairn search x | head -1`) is not
/// an error.
pub fn print(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_removes_escape_sequences_but_keeps_lines() {
        assert_eq!(
            clean("a\x1b[31mred\x07\r\nb\tc"),
            "a\u{fffd}[31mred\u{fffd}\nb c"
        );
        assert_eq!(clean_line("a\nb"), "a b");
    }

    #[test]
    fn no_styles_without_color() {
        let plain = Style { color: false };
        assert_eq!(plain.bold("x"), "x");
        let color = Style { color: true };
        assert_eq!(color.highlight("x"), "\x1b[1;33mx\x1b[0m");
        assert_eq!(color.bold(""), "");
    }
}
