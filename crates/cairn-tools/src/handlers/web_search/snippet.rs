//! A title or snippet from a search service as one line of plain text: tags stripped
//! (Brave marks the query's words with `<strong>`), entities decoded, whitespace and
//! control characters collapsed, cut to a length.

/// Most characters of a title.
pub(super) const TITLE_CHARS: usize = 200;
/// Most characters of a snippet.
pub(super) const SNIPPET_CHARS: usize = 400;

/// `text` as one line of at most `max_chars` characters (an ellipsis ends a cut one).
pub(super) fn clean(text: &str, max_chars: usize) -> String {
    let decoded = html_escape::decode_html_entities(&strip_tags(text)).into_owned();
    let line = decoded
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if line.chars().count() <= max_chars {
        return line;
    }
    let mut cut: String = line.chars().take(max_chars.saturating_sub(1)).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

/// `text` without its HTML tags: a `<` opens a tag only when a letter, `/` or `!` follows,
/// so "a < b" stays as it is.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let opens = after
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '/' || c == '!');
        match after.find('>') {
            Some(end) if opens => rest = &after[end + 1..],
            _ => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_go_entities_are_decoded_and_long_text_is_cut() {
        assert_eq!(
            clean(
                "The <strong>Rust</strong> book&#x27;s &quot;async&quot;\n chapter &amp; more",
                100
            ),
            "The Rust book's \"async\" chapter & more"
        );
        assert_eq!(clean("a < b and c > d", 100), "a < b and c > d");
        assert_eq!(clean("&lt;script&gt; is text", 100), "<script> is text");
        assert_eq!(clean("one two three four", 9), "one two…");
        assert_eq!(clean("héllo wörld", 6), "héllo…");
        assert_eq!(clean("  \u{7}  ", 10), "");
    }
}
