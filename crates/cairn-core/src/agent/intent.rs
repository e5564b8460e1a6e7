//! The intent step of Gather: a purpose model reads the user's message as goal,
//! constraints and lookups, beside the workspace context; the lookups drive recall
//! besides the message itself.

use cairn_protocol::Intent;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::upkeep::ModelChoice;

const PROMPT: &str = include_str!("prompts/intent.md");
/// The answer is short; a model that rambles is cut here.
const MAX_TOKENS: u32 = 300;
/// The most of each kind kept, and the longest text of one.
const MAX_LOOKUPS: usize = 3;
const MAX_CONSTRAINTS: usize = 8;
const MAX_CHARS: usize = 200;

/// Asks `model` for its reading of `message`.
pub(super) async fn read(
    model: &ModelChoice,
    message: &str,
    cancel: CancellationToken,
) -> Result<Intent, String> {
    let answer = model
        .complete(PROMPT, message.to_string(), MAX_TOKENS, cancel)
        .await
        .map_err(|e| e.to_string())?;
    parse(&answer.text)
}

/// The first JSON object in `text`, as an intent with its lists bounded.
pub(super) fn parse(text: &str) -> Result<Intent, String> {
    let start = text.find('{').ok_or("the answer holds no JSON object")?;
    let end = text.rfind('}').ok_or("the answer holds no JSON object")?;
    let value: Value = serde_json::from_str(text.get(start..=end).unwrap_or_default())
        .map_err(|e| format!("the answer is not valid JSON: {e}"))?;
    let goal = value["goal"]
        .as_str()
        .map(clip)
        .filter(|g| !g.is_empty())
        .ok_or("the answer has no goal")?;
    let list = |key: &str, max: usize| -> Vec<String> {
        value[key]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(clip)
                    .filter(|s| !s.is_empty())
                    .take(max)
                    .collect()
            })
            .unwrap_or_default()
    };
    Ok(Intent {
        goal,
        constraints: list("constraints", MAX_CONSTRAINTS),
        lookups: list("lookups", MAX_LOOKUPS),
    })
}

/// One line, control characters dropped, at most `MAX_CHARS` characters.
fn clip(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_reading_is_taken_from_the_answer_and_bounded() {
        let text = "Sure! {\"goal\": \"plan the trip\", \"constraints\": [\"under 500 EUR\", 3], \
                    \"lookups\": [\"Lisbon\", \"flights\", \"hotel\", \"too many\"]} hope it helps";
        assert_eq!(
            parse(text).unwrap(),
            Intent {
                goal: "plan the trip".into(),
                constraints: vec!["under 500 EUR".into()],
                lookups: vec!["Lisbon".into(), "flights".into(), "hotel".into()],
            }
        );
        assert!(parse("no json here").is_err());
        assert!(parse("{\"constraints\": []}").is_err());
        assert!(parse("{\"goal\": ").is_err());
    }
}
