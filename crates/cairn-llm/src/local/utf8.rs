//! Turning token bytes into text as they come.
//!
//! A token is a byte string, not a string: one character (an emoji, a CJK ideogram) can be
//! split across two or three tokens. [`Utf8Stream`] holds back an incomplete trailing
//! sequence until the next token completes it, so every delta it returns is whole text.

/// Incremental UTF-8 decoding of a token stream.
#[derive(Debug, Default)]
pub(crate) struct Utf8Stream {
    /// Bytes of a character whose end has not arrived yet (at most 3).
    pending: Vec<u8>,
}

impl Utf8Stream {
    /// Adds the bytes of one token and returns the text they complete (possibly empty).
    /// Bytes that can never be valid UTF-8 become U+FFFD.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(text) => {
                    out.push_str(text);
                    self.pending.clear();
                    return out;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // The prefix is valid, so this borrows without replacing anything.
                    out.push_str(&String::from_utf8_lossy(&self.pending[..valid]));
                    match e.error_len() {
                        // An incomplete sequence at the end: wait for the next token.
                        None => {
                            self.pending.drain(..valid);
                            return out;
                        }
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            self.pending.drain(..valid + bad);
                        }
                    }
                }
            }
        }
    }

    /// Whatever is still held back, at the end of the stream (U+FFFD for a cut character).
    pub(crate) fn finish(&mut self) -> String {
        let rest = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_back_a_character_split_across_tokens() {
        let mut stream = Utf8Stream::default();
        let crab = "🦀".as_bytes();
        assert_eq!(stream.push(b"a "), "a ");
        assert_eq!(stream.push(&crab[..1]), "");
        assert_eq!(stream.push(&crab[1..3]), "");
        assert_eq!(stream.push(&[crab[3], b'!']), "🦀!");
        assert_eq!(stream.finish(), "");
    }

    #[test]
    fn replaces_invalid_bytes_and_a_cut_end() {
        let mut stream = Utf8Stream::default();
        assert_eq!(stream.push(b"x\xffy"), "x\u{fffd}y");
        assert_eq!(stream.push(&"é".as_bytes()[..1]), "");
        assert_eq!(stream.finish(), "\u{fffd}");
        assert_eq!(stream.push(b"ok"), "ok");
    }
}
