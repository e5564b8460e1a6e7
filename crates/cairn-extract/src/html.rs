//! HTML as readable text: the main content (dom_smoothie, a port of Firefox's Readability)
//! turned into markdown with its links (htmd); HTML nested too deep for the converters is
//! read as plain text in one pass. `web_fetch` reads pages this way (in a reader child:
//! [`crate::guard::readable`]), and the index reads HTML files and EPUB chapters.

/// HTML nested deeper than this is read as plain text: the converters walk the tree
/// recursively and slow down badly on deep nesting (a hostile page can nest on purpose).
pub const MAX_DEPTH: usize = 256;

/// Elements that never hold others.
const VOID: [&str; 14] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// HTML read for people.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Readable {
    /// The title Readability found, when it found the main content.
    pub title: Option<String>,
    /// Markdown (or plain text, see `plain`).
    pub text: String,
    /// Nested deeper than [`MAX_DEPTH`]: read as plain text.
    pub plain: bool,
}

/// The main content of `html` as markdown, links resolved against `url` when given; the
/// whole page when no main content is found, and plain text when it nests too deep.
pub fn readable(html: &str, url: Option<&str>) -> Readable {
    if too_deep(html) {
        return Readable {
            title: None,
            text: plain_text(html),
            plain: true,
        };
    }
    let article = dom_smoothie::Readability::new(html, url, None)
        .ok()
        .and_then(|mut r| r.parse().ok());
    let (title, content) = match article {
        Some(article) if !article.text_content.trim().is_empty() => {
            (Some(article.title.to_string()), article.content.to_string())
        }
        _ => (None, html.to_string()),
    };
    Readable {
        title,
        text: markdown(&content),
        plain: false,
    }
}

/// All of `html` (no main-content guess) as markdown, or plain text when it nests too
/// deep: for a chapter of a book, where every paragraph is content.
pub fn whole(html: &str) -> String {
    if too_deep(html) {
        plain_text(html)
    } else {
        markdown(html)
    }
}

fn markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "iframe", "svg", "img", "head",
        ])
        .build();
    tidy(&converter.convert(html).unwrap_or_default())
}

/// Elements whose content is text, never tags (`<script>if (a<b)…`).
const RAW_TEXT: [&str; 7] = [
    "script", "style", "textarea", "title", "xmp", "noembed", "noframes",
];

/// Elements an element of the same name closes when it opens (`<p>a<p>b`, `<li>`).
const CLOSED_BY_SIBLING: [&str; 8] = ["p", "li", "dt", "dd", "option", "tr", "td", "th"];

/// Whether elements nest deeper than [`MAX_DEPTH`], by one pass over the tags that keeps
/// the open elements as a parser would: a closing tag closes the innermost open element of
/// its name and those inside it, and is ignored when none is open (`<div></x>` nests); a
/// `/>` closes nothing but in SVG and MathML (`<div/>` nests, as in every browser); the
/// text of scripts and styles and comments hold no tags.
pub fn too_deep(html: &str) -> bool {
    let mut open: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        if let Some(comment) = rest.strip_prefix("!--") {
            rest = comment.find("-->").map_or("", |end| &comment[end + 3..]);
            continue;
        }
        let closing = rest.starts_with('/');
        let name: String = rest
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if name.is_empty() {
            continue;
        }
        let end = rest.find('>').unwrap_or(rest.len());
        let self_closing = rest[..end].ends_with('/');
        rest = rest.get(end + 1..).unwrap_or("");
        if closing {
            if let Some(at) = open.iter().rposition(|n| *n == name) {
                open.truncate(at);
            }
            continue;
        }
        if VOID.contains(&name.as_str()) {
            continue;
        }
        if self_closing && open.iter().any(|n| n == "svg" || n == "math") {
            continue;
        }
        if RAW_TEXT.contains(&name.as_str()) {
            rest = find_ascii_ci(rest, &format!("</{name}")).map_or("", |at| &rest[at..]);
            continue;
        }
        if CLOSED_BY_SIBLING.contains(&name.as_str()) && open.last() == Some(&name) {
            open.pop();
        }
        open.push(name);
        if open.len() > MAX_DEPTH {
            return true;
        }
    }
    false
}

/// The text of HTML without its tags, scripts and styles, in one pass.
fn plain_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let lower: String = rest
            .chars()
            .take(8)
            .collect::<String>()
            .to_ascii_lowercase();
        let skip_to = ["script", "style"]
            .iter()
            .find(|t| lower[1..].starts_with(*t))
            .map(|t| format!("</{t}"));
        let end = match skip_to {
            Some(close) => find_ascii_ci(rest, &close).unwrap_or(rest.len()),
            None => 0,
        };
        rest = &rest[end..];
        match rest.find('>') {
            Some(close) => {
                out.push(' ');
                rest = &rest[close + 1..];
            }
            None => rest = "",
        }
    }
    out.push_str(rest);
    let decoded = out
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    let lines: Vec<String> = decoded
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    tidy(&lines.join("\n"))
}

/// Where `needle` (ASCII) starts in `haystack`, ignoring ASCII case.
fn find_ascii_ci(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .as_bytes()
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// At most one blank line in a row.
pub fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank = 0;
    for line in markdown.lines() {
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_content_becomes_markdown_with_links_and_without_scripts() {
        let body =
            "<!doctype html><html><head><title>Garden notes</title><script>steal()</script></head>\
            <body><nav><a href='/'>Home</a> | <a href='/about'>About</a></nav>\
            <article><h1>Garden notes</h1><p>Tomatoes need <strong>sun</strong> and water every \
            morning. See <a href='care.html'>the care guide</a> for the rest of the season, which \
            covers pruning, feeding and the harvest.</p><p>Basil grows well beside them and keeps \
            some pests away; plant it early in spring.</p></article></body></html>";
        let read = readable(body, Some("http://example.test/a/page.html"));
        assert!(read.text.contains("**sun**"), "{}", read.text);
        assert!(
            read.text
                .contains("[the care guide](http://example.test/a/care.html)"),
            "{}",
            read.text
        );
        assert!(!read.text.contains("steal()"));
        assert!(!read.plain);
    }

    #[test]
    fn a_deeply_nested_page_is_read_as_plain_text_at_once() {
        let depth = 100_000;
        let body = format!(
            "<html><body>{}<p>Deep &amp; hidden</p><script>steal()</script>{}</body></html>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let started = std::time::Instant::now();
        let read = readable(&body, None);
        assert!(read.plain);
        assert!(read.text.contains("Deep & hidden"), "{}", read.text);
        assert!(!read.text.contains("steal()"));
        assert_eq!(whole(&body), read.text);
        // Not a timing test: a quadratic walk of 100,000 levels takes minutes, not seconds.
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        let shallow = "<html><body><br><img src=x><p>a</p><p>b</p></body></html>";
        assert!(!too_deep(shallow));
    }

    #[test]
    fn depth_is_counted_as_a_browser_builds_the_tree() {
        // `/>` does not close a div, and a closing tag of nothing open closes nothing.
        for tag in ["<div/>", "<div></x>", "<span />", "<div><!-- </div> -->"] {
            let body = format!("<html><body>{}</body></html>", tag.repeat(100_000));
            assert!(too_deep(&body), "{tag}");
            assert!(readable(&body, None).plain, "{tag}");
        }
        // Wide pages are not deep: SVG's own `/>`, paragraphs and list items left open,
        // tags inside scripts, a closing tag that closes what it holds.
        for page in [
            format!("<svg>{}</svg>", "<path d='M0 0'/>".repeat(1_000)),
            "<p>a".repeat(1_000),
            format!("<ul>{}</ul>", "<li>x".repeat(1_000)),
            format!("<script>{}</script>", "if (a<b) {}".repeat(1_000)),
            "<section><div><span>a</section>".repeat(1_000),
        ] {
            assert!(
                !too_deep(&format!("<body>{page}<p>end</p></body>")),
                "{}",
                &page[..40]
            );
        }
    }
}
