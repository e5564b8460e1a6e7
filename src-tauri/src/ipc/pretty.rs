//! Lays out the TypeScript declarations ts-rs makes (each on one line) for people to
//! read: an object's members one per line when it does not fit on one, a long union's
//! alternatives one per line, doc comments indented with what they describe.

/// Width up to which an object or a union stays on one line.
const WIDTH: usize = 96;

/// `decl`, `type Name = …;`, laid out.
pub fn declaration(decl: &str) -> String {
    let decl = &one_line_docs(decl.trim());
    let Some((head, body)) = decl.split_once(" = ") else {
        return decl.to_string();
    };
    let body = body.strip_suffix(';').unwrap_or(body).trim();
    let alternatives = split_top(body, " | ");
    let one_line = format!("{head} = {};", value(body, 0));
    if alternatives.len() > 1 && (one_line.len() > WIDTH || one_line.contains('\n')) {
        let mut out = format!("{head} =");
        for alternative in alternatives {
            out.push_str("\n  | ");
            out.push_str(&value(alternative.trim(), 1));
        }
        out.push(';');
        return out;
    }
    one_line
}

/// `text` with each doc comment of one line as `/** … */` on that line.
pub fn one_line_docs(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/**\n * ") {
        let body = &rest[start + 7..];
        match body.find("\n */") {
            Some(end) if !body[..end].contains('\n') => {
                out.push_str(&rest[..start]);
                out.push_str(&format!("/** {} */", &body[..end]));
                rest = &body[end + 4..];
            }
            _ => {
                out.push_str(&rest[..start + 3]);
                rest = &rest[start + 3..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A type expression at `depth` (levels of two spaces), objects laid out.
fn value(text: &str, depth: usize) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = find_top_brace(rest) {
        out.push_str(&rest[..open]);
        let close = matching(rest, open);
        out.push_str(&object(&rest[open + 1..close], depth));
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The inside of `{ … }`: on one line when short and without doc comments, else one
/// member a line.
fn object(inner: &str, depth: usize) -> String {
    let members: Vec<&str> = split_top(inner, ",")
        .into_iter()
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .collect();
    if members.is_empty() {
        return "{}".into();
    }
    let flat: Vec<String> = members.iter().map(|m| value(m, depth + 1)).collect();
    let line = format!("{{ {} }}", flat.join("; "));
    if !line.contains('\n') && line.len() + 2 * depth <= WIDTH {
        return line;
    }
    let indent = "  ".repeat(depth + 1);
    let mut out = String::from("{\n");
    for member in flat {
        for line in member.lines().map(str::trim_end).filter(|l| !l.is_empty()) {
            let line = line.trim_start();
            // Doc comment lines other than the opening one are indented by one more space.
            let pad = if line.starts_with('*') { " " } else { "" };
            out.push_str(&format!("{indent}{pad}{line}\n"));
        }
        out.pop();
        out.push_str(";\n");
    }
    out.push_str(&"  ".repeat(depth));
    out.push('}');
    out
}

/// `text` cut at each `sep` outside brackets, braces, parentheses, angle brackets, string
/// literals and doc comments.
fn split_top<'t>(text: &'t str, sep: &str) -> Vec<&'t str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut depth = 0i32;
    let mut skip_to = 0;
    for (i, b) in code(text) {
        if i < skip_to {
            continue;
        }
        match b {
            b'{' | b'[' | b'(' | b'<' => depth += 1,
            b'}' | b']' | b')' | b'>' => depth -= 1,
            _ if depth == 0 && text[i..].starts_with(sep) => {
                parts.push(&text[start..i]);
                start = i + sep.len();
                skip_to = start;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// The bytes of `text` outside string literals and doc comments, with their offsets.
fn code(text: &str) -> impl Iterator<Item = (usize, u8)> + '_ {
    let bytes = text.as_bytes();
    let (mut in_string, mut in_comment, mut escaped) = (false, false, false);
    bytes.iter().enumerate().filter_map(move |(i, &b)| {
        if in_comment {
            in_comment = !(b == b'/' && i > 0 && bytes[i - 1] == b'*');
            return None;
        }
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            return None;
        }
        match b {
            b'"' => {
                in_string = true;
                None
            }
            b'/' if text[i..].starts_with("/**") => {
                in_comment = true;
                None
            }
            _ => Some((i, b)),
        }
    })
}

/// The first `{` outside string literals and doc comments.
fn find_top_brace(text: &str) -> Option<usize> {
    code(text).find(|&(_, b)| b == b'{').map(|(i, _)| i)
}

/// The `}` closing the `{` at `open`.
fn matching(text: &str, open: usize) -> usize {
    let mut depth = 0;
    for (i, b) in code(text).skip_while(|&(i, _)| i < open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    text.len() - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_objects_stay_on_a_line_and_long_ones_are_laid_out() {
        assert_eq!(
            declaration("type A = { ids: Array<string>, index: number, };"),
            "type A = { ids: Array<string>; index: number };"
        );
        let long = "type S = { \n/**\n * The id,\n * one.\n */\nid: string, title: string | null, \
                    items: Array<TranscriptItem>, leaf: string | null, branches: number, };";
        assert_eq!(
            declaration(long),
            "type S = {\n  /**\n   * The id,\n   * one.\n   */\n  id: string;\n  title: string | null;\n  \
             items: Array<TranscriptItem>;\n  leaf: string | null;\n  branches: number;\n};"
        );
    }

    #[test]
    fn a_long_union_has_an_alternative_a_line() {
        let union = "type E = { \"type\": \"start\", run_id: string, session_id: string, } | \
                     { \"type\": \"delta\", text: string, } | { \"type\": \"end\" };";
        assert_eq!(
            declaration(union),
            "type E =\n  | { \"type\": \"start\"; run_id: string; session_id: string }\n  \
             | { \"type\": \"delta\"; text: string }\n  | { \"type\": \"end\" };"
        );
        assert_eq!(
            declaration("type L = \"info\" | \"warning\";"),
            "type L = \"info\" | \"warning\";"
        );
    }

    #[test]
    fn separators_inside_strings_and_brackets_do_not_cut() {
        assert_eq!(
            split_top("a: Record<string, number>, b: \"x, y\"", ","),
            vec!["a: Record<string, number>", " b: \"x, y\""]
        );
        let documented = "\n/**\n * One, two {three}.\n * Four.\n */\na: string, b: number";
        assert_eq!(split_top(documented, ",").len(), 2);
        assert_eq!(
            declaration(&format!("type D = {{ {documented}, }};")),
            "type D = {\n  /**\n   * One, two {three}.\n   * Four.\n   */\n  a: string;\n  b: number;\n};"
        );
        assert_eq!(
            declaration("type O = { \n/**\n * The id.\n */\nid: string, };"),
            "type O = {\n  /** The id. */\n  id: string;\n};"
        );
    }
}
