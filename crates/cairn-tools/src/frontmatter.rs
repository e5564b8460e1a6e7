//! YAML front matter, as skills and subagent definitions carry it: a leading `---` line,
//! YAML, a closing `---` (or `...`) line, then the body. Parsed with a YAML library, so
//! block scalars, quoting and lists work; errors name the line in the file.

use serde::de::DeserializeOwned;

/// The front matter parsed as `T`, and the body after it. The error says the line.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<(T, &str), String> {
    let (yaml, body) = split(text)
        .ok_or("line 1: no front matter (the file must start with a `---` line)".to_string())?;
    let value = serde_yaml_ng::from_str(yaml).map_err(|e| match e.location() {
        // The YAML starts on the file's second line.
        Some(at) => format!("line {}: {}", at.line() + 1, first_line(&e.to_string())),
        None => first_line(&e.to_string()),
    })?;
    Ok((value, body))
}

/// The YAML between the leading `---` line and the next `---` (or `...`) line, and the
/// body after it.
fn split(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first_end = text.find('\n')?;
    if text[..first_end].trim_end() != "---" {
        return None;
    }
    let rest = &text[first_end + 1..];
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end();
        if bare == "---" || bare == "..." {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// A list given as YAML (`[a, b]`) or as text (`a, b` or `a b`), as names.
#[derive(serde::Deserialize)]
#[serde(untagged)]
pub enum NameList {
    List(Vec<String>),
    Text(String),
}

impl NameList {
    pub fn names(self) -> Vec<String> {
        let names = match self {
            NameList::List(names) => names,
            NameList::Text(text) => text.split([',', ' ']).map(str::to_string).collect(),
        };
        names
            .into_iter()
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect()
    }
}

/// `name` when it is a valid name, else the error saying what a name must be.
pub fn checked_name(name: String) -> Result<String, String> {
    if valid_name(&name) {
        return Ok(name);
    }
    Err(format!(
        "the name `{}` must be 1 to 64 lowercase letters, digits, `-` or `_`",
        name.escape_debug()
    ))
}

/// The description on one line; its absence is an error saying what it is `for_what`.
pub fn description(text: Option<String>, for_what: &str) -> Result<String, String> {
    text.map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|d| !d.is_empty())
        .ok_or_else(|| format!("the front matter needs a `description` ({for_what})"))
}

/// Whether `name` is 1 to 64 lowercase letters, digits, `-` or `_`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Front {
        description: String,
    }

    #[test]
    fn block_scalars_and_quotes_are_read_as_yaml() {
        let text = "---\ndescription: >-\n  Summarise notes\n  with citations.\n---\n# Body\n";
        let (front, body): (Front, &str) = parse(text).unwrap();
        assert_eq!(front.description, "Summarise notes with citations.");
        assert_eq!(body, "# Body\n");
        let (front, _): (Front, &str) = parse("---\ndescription: \"a: b\"\n...\n").unwrap();
        assert_eq!(front.description, "a: b");
    }

    #[test]
    fn errors_name_the_line_in_the_file() {
        let err = parse::<Front>("---\nname: x\ndescription: [open\n---\n").unwrap_err();
        assert!(err.starts_with("line "), "{err}");
        assert!(parse::<Front>("# no front matter")
            .unwrap_err()
            .starts_with("line 1:"));
        assert!(parse::<Front>("---\ndescription: x\n").is_err(), "unclosed");
    }
}
