//! Word-processor documents: DOCX (`word/document.xml`) and ODT (`content.xml`), their
//! paragraphs a line each, headings as markdown headings.

use roxmltree::Node;

use crate::xml::parse_xml;
use crate::zipped::Zipped;

const WORD: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
const TEXT: &str = "urn:oasis:names:tc:opendocument:xmlns:text:1.0";

/// A DOCX file's text.
pub fn docx(bytes: &[u8]) -> Result<String, String> {
    let mut zip = Zipped::open(bytes, "DOCX file")?;
    let xml = zip
        .text("word/document.xml")?
        .ok_or("not a DOCX file (it has no word/document.xml)")?;
    let doc = parse_xml(&xml, "XML")?;
    let mut lines = Vec::new();
    for p in doc.descendants().filter(|n| n.has_tag_name((WORD, "p"))) {
        let level = p
            .descendants()
            .find(|n| n.has_tag_name((WORD, "pStyle")))
            .and_then(|s| s.attribute((WORD, "val")))
            .and_then(heading_level);
        let mut text = String::new();
        for node in p.descendants() {
            if node.has_tag_name((WORD, "t")) {
                text.push_str(node.text().unwrap_or_default());
            } else if node.has_tag_name((WORD, "tab")) {
                text.push('\t');
            } else if node.has_tag_name((WORD, "br")) || node.has_tag_name((WORD, "cr")) {
                text.push(' ');
            }
        }
        push_line(&mut lines, level, &text);
    }
    Ok(lines.join("\n"))
}

/// The level of a paragraph style named `Heading1`…`Heading6` (or `Title`: 1).
fn heading_level(style: &str) -> Option<usize> {
    if style.eq_ignore_ascii_case("title") {
        return Some(1);
    }
    let digits = style
        .strip_prefix("Heading")
        .or_else(|| style.strip_prefix("heading"))?;
    digits.trim().parse().ok().filter(|l| (1..=6).contains(l))
}

/// An ODT file's text.
pub fn odt(bytes: &[u8]) -> Result<String, String> {
    let mut zip = Zipped::open(bytes, "ODT file")?;
    let xml = zip
        .text("content.xml")?
        .ok_or("not an ODT file (it has no content.xml)")?;
    let doc = parse_xml(&xml, "XML")?;
    let mut lines = Vec::new();
    for node in doc
        .descendants()
        .filter(|n| n.has_tag_name((TEXT, "p")) || n.has_tag_name((TEXT, "h")))
    {
        // A paragraph inside another (a note's) is read with the outer one.
        if node
            .ancestors()
            .skip(1)
            .any(|a| a.has_tag_name((TEXT, "p")) || a.has_tag_name((TEXT, "h")))
        {
            continue;
        }
        let level = node.has_tag_name((TEXT, "h")).then(|| {
            node.attribute((TEXT, "outline-level"))
                .and_then(|l| l.parse().ok())
                .unwrap_or(1usize)
                .clamp(1, 6)
        });
        let mut text = String::new();
        odt_text(node, &mut text);
        push_line(&mut lines, level, &text);
    }
    Ok(lines.join("\n"))
}

fn odt_text(node: Node<'_, '_>, out: &mut String) {
    for child in node.children() {
        if child.is_text() {
            out.push_str(child.text().unwrap_or_default());
        } else if child.has_tag_name((TEXT, "s")) {
            let count = child
                .attribute((TEXT, "c"))
                .and_then(|c| c.parse().ok())
                .unwrap_or(1usize)
                .min(64);
            out.extend(std::iter::repeat_n(' ', count));
        } else if child.has_tag_name((TEXT, "tab")) {
            out.push('\t');
        } else if child.has_tag_name((TEXT, "line-break")) {
            out.push(' ');
        } else {
            odt_text(child, out);
        }
    }
}

/// A paragraph as a line (blank ones once), a heading with its `#`s.
fn push_line(lines: &mut Vec<String>, level: Option<usize>, text: &str) {
    let text = text.trim();
    match level {
        Some(level) if !text.is_empty() => {
            if lines.last().is_some_and(|l| !l.is_empty()) {
                lines.push(String::new());
            }
            lines.push(format!("{} {text}", "#".repeat(level)));
        }
        _ if text.is_empty() => {
            if lines.last().is_some_and(|l| !l.is_empty()) {
                lines.push(String::new());
            }
        }
        _ => lines.push(text.to_string()),
    }
}
