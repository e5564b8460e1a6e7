//! Writing config.toml back ([`Settings::save`](super::Settings::save)). The new settings are
//! laid over the file as it is, so the user's comments, key order and formatting stay wherever a value did not
//! change; only changed values are rewritten (keeping their trailing comments), added ones are
//! appended and removed ones dropped.

use toml_edit::{DocumentMut, Item, TableLike, Value};

/// The text of `settings_toml` (freshly serialized settings) laid over `old` (the file's text).
/// A file that does not parse is replaced by the new text.
pub(super) fn merge(old: &str, settings_toml: &str) -> Result<String, toml_edit::TomlError> {
    let new: DocumentMut = settings_toml.parse()?;
    let Ok(mut doc) = old.parse::<DocumentMut>() else {
        return Ok(new.to_string());
    };
    merge_table(doc.as_table_mut(), new.as_table());
    Ok(doc.to_string())
}

fn merge_table(old: &mut dyn TableLike, new: &dyn TableLike) {
    let gone: Vec<String> = old
        .iter()
        .filter(|(key, _)| !new.contains_key(key))
        .map(|(key, _)| key.to_string())
        .collect();
    for key in gone {
        old.remove(&key);
    }
    for (key, item) in new.iter() {
        match old.get_mut(key) {
            Some(existing) => merge_item(existing, item),
            // A section with nothing set is not added (an absent one reads the same).
            None if holds_nothing(item) => {}
            None => {
                old.insert(key, item.clone());
            }
        }
    }
}

fn merge_item(old: &mut Item, new: &Item) {
    if let Some(new_table) = new.as_table_like() {
        if let Some(old_table) = old.as_table_like_mut() {
            merge_table(old_table, new_table);
            return;
        }
    }
    match (old, new) {
        (Item::Value(old), Item::Value(new)) => {
            if !same(old, new) {
                let decor = old.decor().clone();
                *old = new.clone();
                *old.decor_mut() = decor;
            }
        }
        (old, new) => *old = new.clone(),
    }
}

/// A table whose tables hold no values either.
fn holds_nothing(item: &Item) -> bool {
    item.as_table_like()
        .is_some_and(|table| table.iter().all(|(_, item)| holds_nothing(item)))
}

/// Whether two values are equal, however they are written.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(a), Value::String(b)) => a.value() == b.value(),
        (Value::Integer(a), Value::Integer(b)) => a.value() == b.value(),
        (Value::Float(a), Value::Float(b)) => a.value() == b.value(),
        (Value::Boolean(a), Value::Boolean(b)) => a.value() == b.value(),
        (Value::Datetime(a), Value::Datetime(b)) => a.value() == b.value(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b.iter()).all(|(a, b)| same(a, b))
        }
        (Value::InlineTable(a), Value::InlineTable(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, value)| b.get(key).is_some_and(|other| same(value, other)))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const FILE: &str = r#"# My Cairn settings
default_provider = "ollama" # the one at home

[providers.ollama]
kind = "openai"
# local server
base_url = "http://localhost:11434/v1"
model = "llama3.2"   # fast enough
headers = { "X-Title" = "Cairn" }

[memory]
consolidation_interval_hours = 6.0
"#;

    #[test]
    fn unchanged_settings_leave_the_file_as_it_was() {
        let settings = r#"default_provider = "ollama"

[providers.ollama]
kind = "openai"
base_url = "http://localhost:11434/v1"
model = "llama3.2"

[providers.ollama.headers]
X-Title = "Cairn"

[memory]
consolidation_interval_hours = 6.0
"#;
        assert_eq!(merge(FILE, settings).unwrap(), FILE);
    }

    #[test]
    fn changed_added_and_removed_values_keep_the_comments_around_them() {
        let settings = r#"default_provider = "ollama"

[providers.ollama]
kind = "openai"
base_url = "http://localhost:11434/v1"
model = "qwen3"

[providers.work]
kind = "anthropic"
model = "claude"

[models]

[approval.tools]
"#;
        let merged = merge(FILE, settings).unwrap();
        assert_eq!(
            merged,
            r#"# My Cairn settings
default_provider = "ollama" # the one at home

[providers.ollama]
kind = "openai"
# local server
base_url = "http://localhost:11434/v1"
model = "qwen3"   # fast enough

[providers.work]
kind = "anthropic"
model = "claude"
"#
        );
    }

    #[test]
    fn a_file_that_does_not_parse_is_replaced() {
        let settings = "default_provider = \"x\"\n";
        assert_eq!(merge("this is [not toml", settings).unwrap(), settings);
        assert!(merge("", "not = = toml").is_err());
    }
}
