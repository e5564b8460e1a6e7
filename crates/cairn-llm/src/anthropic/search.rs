//! Anthropic's web search as Cairn shows it: results as a numbered list of titles and
//! addresses, errors in words, and the sources the answer cites as numbered marks after
//! the cited words with a "Sources:" list at the end of the answer.

use std::collections::BTreeMap;

use super::wire::{WebSearchContent, WebSearchHit, WireCitation};

/// What a web search gave, as the user sees it, and whether it failed.
pub(crate) fn shown_result(content: &WebSearchContent) -> (String, bool) {
    match content {
        WebSearchContent::Results(hits) if hits.is_empty() => ("No results.".into(), false),
        WebSearchContent::Results(hits) => (numbered(hits), false),
        WebSearchContent::Error(error) => (search_error(&error.error_code), true),
        WebSearchContent::Unknown(_) => (
            "The web search answered in a form Cairn does not know.".into(),
            true,
        ),
    }
}

/// `1. Title` and the address under it, for each result.
fn numbered(hits: &[WebSearchHit]) -> String {
    let lines: Vec<String> = hits
        .iter()
        .enumerate()
        .map(|(n, hit)| {
            let title = one_line(&hit.title);
            let title = if title.is_empty() {
                "(no title)"
            } else {
                &title
            };
            format!("{}. {title}\n   {}", n + 1, hit.url)
        })
        .collect();
    lines.join("\n")
}

/// A `web_search_tool_result_error` in words, its code kept.
pub(crate) fn search_error(code: &str) -> String {
    let what = match code {
        "max_uses_exceeded" => "this answer used all the searches it may make (max_uses)",
        "too_many_requests" => "Anthropic's search is rate limited; try again later",
        "query_too_long" => "the query is too long",
        "invalid_tool_input" | "invalid_input" => "the query was not valid",
        "unavailable" => "Anthropic's search is unavailable right now",
        "request_too_large" => "the request is too large",
        _ => "the search failed",
    };
    format!("Web search failed: {what} ({code}).")
}

/// The sources an answer cites: numbered in the order they are first cited, one number
/// per address; each cited text block gets its numbers after its text.
#[derive(Debug, Default)]
pub(crate) struct Citations {
    /// Address and title, by number (from 1).
    sources: Vec<(String, String)>,
    /// Cited text blocks still coming in, by block index.
    blocks: BTreeMap<u32, CitedBlock>,
}

/// A text block with citations.
#[derive(Debug, Default)]
struct CitedBlock {
    /// The numbers of its sources, in order.
    marks: Vec<usize>,
    /// Whitespace at the end of its text so far, held back so that the marks follow the
    /// cited words rather than a line break.
    held: String,
}

impl Citations {
    /// Notes that the text block at `index` cites `citation` (citations without an
    /// address are not shown).
    pub fn cite(&mut self, index: u32, citation: &WireCitation) {
        let Some(url) = citation.url.as_deref().filter(|u| !u.trim().is_empty()) else {
            return;
        };
        let number = match self.sources.iter().position(|(known, _)| known == url) {
            Some(at) => at + 1,
            None => {
                let title = one_line(citation.title.as_deref().unwrap_or_default());
                self.sources.push((url.to_string(), title));
                self.sources.len()
            }
        };
        let block = self.blocks.entry(index).or_default();
        if !block.marks.contains(&number) {
            block.marks.push(number);
        }
    }

    /// The text to show for a piece of the block at `index`: as it came, except that a
    /// cited block's trailing whitespace waits for its marks. `None`: nothing to show yet.
    pub fn text(&mut self, index: u32, text: String) -> Option<String> {
        let Some(block) = self.blocks.get_mut(&index) else {
            return (!text.is_empty()).then_some(text);
        };
        let body = text.trim_end();
        if body.is_empty() {
            block.held.push_str(&text);
            return None;
        }
        let mut out = std::mem::take(&mut block.held);
        out.push_str(body);
        block.held = text[body.len()..].to_string();
        Some(out)
    }

    /// The marks closing the cited block at `index` (` [1][2]` and the held whitespace),
    /// `None` when it cited nothing.
    pub fn close(&mut self, index: u32) -> Option<String> {
        let block = self.blocks.remove(&index)?;
        let marks: String = block.marks.iter().map(|n| format!("[{n}]")).collect();
        Some(format!(" {marks}{}", block.held))
    }

    /// The marks of every cited block still open, in block order.
    pub fn close_all(&mut self) -> Vec<String> {
        let open: Vec<u32> = self.blocks.keys().copied().collect();
        open.into_iter().filter_map(|i| self.close(i)).collect()
    }

    /// The "Sources:" list closing the answer, as markdown links; `None` when nothing was
    /// cited.
    pub fn sources(&self) -> Option<String> {
        if self.sources.is_empty() {
            return None;
        }
        let mut out = String::from("\n\nSources:");
        for (n, (url, title)) in self.sources.iter().enumerate() {
            let text = if title.is_empty() { url } else { title };
            out.push_str(&format!(
                "\n{}. [{}]({})",
                n + 1,
                link_text(text),
                link_target(url)
            ));
        }
        Some(out)
    }
}

/// Whitespace (line breaks included) collapsed to single spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text that cannot end a markdown link's text early.
fn link_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// An address that cannot end a markdown link's target early.
fn link_target(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.trim().chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::anthropic::wire::WebSearchError;

    fn citation(url: &str, title: &str) -> WireCitation {
        WireCitation {
            url: Some(url.into()),
            title: Some(title.into()),
        }
    }

    #[test]
    fn cited_blocks_get_their_numbers_after_the_cited_words() {
        let mut citations = Citations::default();
        assert_eq!(citations.text(0, "Plain. ".into()), Some("Plain. ".into()));
        assert_eq!(citations.close(0), None);
        citations.cite(1, &citation("https://a.example/x", "A [draft]"));
        citations.cite(1, &citation("https://b.example/(y)", ""));
        citations.cite(1, &citation("https://a.example/x", "A again"));
        citations.cite(
            2,
            &WireCitation {
                url: None,
                title: Some("a document".into()),
            },
        );
        assert_eq!(
            citations.text(1, "Paris is the capital".into()),
            Some("Paris is the capital".into())
        );
        assert_eq!(citations.text(1, "\n".into()), None);
        assert_eq!(citations.close(1), Some(" [1][2]\n".into()));
        citations.cite(3, &citation("https://b.example/(y)", ""));
        assert_eq!(
            citations.text(3, "It is big.".into()),
            Some("It is big.".into())
        );
        assert_eq!(citations.close_all(), vec![" [2]".to_string()]);
        assert_eq!(
            citations.sources().unwrap(),
            "\n\nSources:\n1. [A \\[draft\\]](https://a.example/x)\n\
             2. [https://b.example/(y)](https://b.example/%28y%29)"
        );
    }

    #[test]
    fn results_and_errors_read_as_words() {
        let hits = WebSearchContent::Results(vec![
            WebSearchHit {
                url: "https://a.example".into(),
                title: "A\n title".into(),
            },
            WebSearchHit {
                url: "https://b.example".into(),
                title: String::new(),
            },
        ]);
        assert_eq!(
            shown_result(&hits),
            (
                "1. A title\n   https://a.example\n2. (no title)\n   https://b.example".into(),
                false
            )
        );
        let error = WebSearchContent::Error(WebSearchError {
            error_code: "too_many_requests".into(),
        });
        assert_eq!(
            shown_result(&error),
            (
                "Web search failed: Anthropic's search is rate limited; try again later \
                 (too_many_requests)."
                    .into(),
                true
            )
        );
        assert_eq!(
            search_error("brand_new"),
            "Web search failed: the search failed (brand_new)."
        );
    }
}
