//! The intent step of Gather: a purpose model reads the user's message, in the light of
//! the last turns of the conversation, as goal, constraints and lookups, beside the
//! workspace context. It may iterate: shown what its lookups found in the notes, it
//! refines the reading or says it is done (at most [`MAX_ITERATIONS`] readings). The
//! lookups drive recall besides the message itself, and the reading goes into the
//! answering model's context.

use std::future::Future;

use cairn_protocol::{Intent, Message};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::upkeep::ModelChoice;

const PROMPT: &str = include_str!("prompts/intent.md");
/// The answer is short; a model that rambles is cut here.
const MAX_TOKENS: u32 = 300;
/// The most of each kind kept, and the longest text of one.
const MAX_LOOKUPS: usize = 3;
const MAX_CONSTRAINTS: usize = 8;
const MAX_CHARS: usize = 200;
/// Turns of the conversation shown besides the message.
pub(super) const RECENT_TURNS: usize = 6;
/// The most readings asked for in one gather.
pub(super) const MAX_ITERATIONS: usize = 4;
/// How much of each earlier turn is shown.
const TURN_CHARS: usize = 1_000;

/// Asks `model` for its reading of `message`, after `conversation` (its last turns; the
/// message itself, when last, is left out of them). While a reading is not done, its
/// lookups are run through `found` (lines naming what they found) and the model is asked
/// again. A failing or blank answer after a first reading keeps that reading.
pub(super) async fn read<F, Fut>(
    model: &ModelChoice,
    conversation: &[Message],
    message: &str,
    found: F,
    cancel: CancellationToken,
) -> Result<Intent, String>
where
    F: Fn(Vec<String>) -> Fut,
    Fut: Future<Output = Vec<String>>,
{
    let asked = shown(conversation, message);
    let mut reading: Option<Intent> = None;
    let mut seen = Vec::new();
    for _ in 0..MAX_ITERATIONS {
        let user =
            match &reading {
                None => asked.clone(),
                Some(was) => {
                    format!(
                "{asked}\n\n# Your reading so far\n\n{}\n\n# What its lookups found in the \
                 user's notes\n\n{}",
                json!({"goal": was.goal, "constraints": was.constraints, "lookups": was.lookups}),
                if seen.is_empty() { "(nothing)".to_string() } else { seen.join("\n") }
            )
                }
            };
        let answer = model
            .complete_at(PROMPT, user, MAX_TOKENS, 0.0, cancel.clone())
            .await
            .map_err(|e| e.to_string())
            .and_then(|answer| parse_step(&answer.text));
        let (next, done) = match (answer, &reading) {
            (Ok(step), _) => step,
            (Err(e), None) => return Err(e),
            (Err(e), Some(_)) => {
                tracing::debug!("the intent step keeps its reading: {e}");
                break;
            }
        };
        let unchanged = next.is_none() || next == reading;
        if let Some(next) = next {
            reading = Some(next);
        }
        if done || unchanged {
            break;
        }
        let lookups = reading
            .as_ref()
            .map(|r| r.lookups.clone())
            .unwrap_or_default();
        if lookups.is_empty() {
            break;
        }
        seen = found(lookups).await;
    }
    reading.ok_or_else(|| "the answer holds no reading".to_string())
}

/// The request's text: the earlier turns, then the message.
fn shown(conversation: &[Message], message: &str) -> String {
    let earlier = match conversation.split_last() {
        Some((Message::User { .. }, before))
            if conversation.last().map(Message::text).as_deref() == Some(message) =>
        {
            before
        }
        _ => conversation,
    };
    let earlier = &earlier[earlier.len().saturating_sub(RECENT_TURNS)..];
    let mut text = String::new();
    if !earlier.is_empty() {
        text.push_str("# The conversation so far (its last turns)\n\n");
        for turn in earlier {
            let who = match turn {
                Message::User { .. } => "User",
                _ => "Assistant",
            };
            let said = crate::tools::output::cap_middle(turn.text().trim(), TURN_CHARS);
            text.push_str(&format!("{who}: {said}\n\n"));
        }
    }
    text.push_str("# The user's latest message\n\n");
    text.push_str(message);
    text
}

/// One answer: its reading (none for `{"done": true}` alone) and whether it is done.
fn parse_step(text: &str) -> Result<(Option<Intent>, bool), String> {
    if text.trim().is_empty() {
        return Err("the answer is blank".into());
    }
    let value = first_object(text)?;
    let done = value["done"].as_bool().unwrap_or(false);
    if value.get("goal").is_none() && done {
        return Ok((None, true));
    }
    Ok((Some(parse(text)?), done))
}

fn first_object(text: &str) -> Result<Value, String> {
    let start = text.find('{').ok_or("the answer holds no JSON object")?;
    let end = text.rfind('}').ok_or("the answer holds no JSON object")?;
    serde_json::from_str(text.get(start..=end).unwrap_or_default())
        .map_err(|e| format!("the answer is not valid JSON: {e}"))
}

/// The first JSON object in `text`, as an intent with its lists bounded.
pub(super) fn parse(text: &str) -> Result<Intent, String> {
    let value = first_object(text)?;
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

    #[test]
    fn a_step_is_a_reading_or_done() {
        assert_eq!(parse_step("{\"done\": true}").unwrap(), (None, true));
        let (reading, done) = parse_step("{\"goal\": \"g\", \"done\": true}").unwrap();
        assert_eq!((reading.unwrap().goal, done), ("g".to_string(), true));
        let (_, done) = parse_step("{\"goal\": \"g\"}").unwrap();
        assert!(!done, "a reading that does not say done is not");
        assert!(parse_step("  ").is_err());
        assert!(parse_step("{\"done\": false}").is_err());
    }

    #[test]
    fn the_message_is_not_shown_twice_and_old_turns_are_left_out() {
        let turns: Vec<Message> = (0..9).map(|n| Message::user(format!("turn {n}"))).collect();
        let text = shown(&turns, "turn 8");
        assert!(
            !text.contains("turn 1\n") && text.contains("User: turn 2"),
            "{text}"
        );
        assert_eq!(text.matches("turn 8").count(), 1, "{text}");
    }
}
