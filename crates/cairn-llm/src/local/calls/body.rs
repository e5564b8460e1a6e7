//! The JSON inside a call block, turned into tool calls.
//!
//! A block holds one or more JSON values, separated by whitespace, `;` or `,`: objects
//! `{"name": ..., "arguments" | "parameters": {...}}` (or the OpenAI shape
//! `{"type": "function", "function": {...}}`), or arrays of them. Arguments written as a
//! string holding JSON are parsed. Anything else is an error quoting the text.

use cairn_protocol::ToolCall;
use serde_json::{Map, Value};

use crate::error::LlmError;
use crate::http::truncate;

/// How much of an unreadable call an error quotes.
const QUOTED_CHARS: usize = 500;

/// The calls written in `body`, each given an id from `ids`.
pub(super) fn parse(
    body: &str,
    ids: &mut dyn FnMut() -> String,
) -> Result<Vec<ToolCall>, LlmError> {
    let values = values(body).map_err(|why| unreadable(&why, body))?;
    if values.is_empty() {
        return Err(unreadable("it is empty", body));
    }
    let mut calls = Vec::new();
    for value in values {
        match value {
            Value::Array(items) => {
                for item in items {
                    calls.push(call(item, ids).map_err(|why| unreadable(&why, body))?);
                }
            }
            other => calls.push(call(other, ids).map_err(|why| unreadable(&why, body))?),
        }
    }
    Ok(calls)
}

/// The JSON values in `text`, in order.
fn values(text: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ';' || c == ',');
        if rest.is_empty() {
            return Ok(out);
        }
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => out.push(value),
            Some(Err(e)) => return Err(format!("it is not valid JSON: {e}")),
            None => return Ok(out),
        }
        rest = &rest[stream.byte_offset()..];
    }
}

/// One call from its JSON object.
fn call(value: Value, ids: &mut dyn FnMut() -> String) -> Result<ToolCall, String> {
    let Value::Object(mut object) = value else {
        return Err(format!("a call must be a JSON object, not `{value}`"));
    };
    if !object.contains_key("name") {
        if let Some(Value::Object(function)) = object.remove("function") {
            object = function;
        }
    }
    let name = match object.remove("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name,
        Some(other) => return Err(format!("its name is not a tool name: `{other}`")),
        None => return Err("it has no `name`".into()),
    };
    let arguments = object
        .remove("arguments")
        .or_else(|| object.remove("parameters"));
    Ok(ToolCall {
        id: ids(),
        arguments: arguments_object(arguments, &name)?,
        name,
    })
}

/// The arguments as a JSON object (missing ones are `{}`).
fn arguments_object(arguments: Option<Value>, name: &str) -> Result<Value, String> {
    match arguments {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(Value::Object(object)) => Ok(Value::Object(object)),
        Some(Value::String(raw)) if raw.trim().is_empty() => Ok(Value::Object(Map::new())),
        Some(Value::String(raw)) => match serde_json::from_str::<Value>(&raw) {
            Ok(Value::Object(object)) => Ok(Value::Object(object)),
            _ => Err(format!(
                "the arguments of `{name}` are not a JSON object: `{raw}`"
            )),
        },
        Some(other) => Err(format!(
            "the arguments of `{name}` are not a JSON object: `{other}`"
        )),
    }
}

fn unreadable(why: &str, body: &str) -> LlmError {
    LlmError::Fatal(format!(
        "the local model wrote a tool call Cairn cannot read ({why}): `{}`",
        truncate(body.trim(), QUOTED_CHARS)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn numbered() -> impl FnMut() -> String {
        let mut n = 0;
        move || {
            n += 1;
            format!("call_{n}")
        }
    }

    fn read(body: &str) -> Result<Vec<ToolCall>, LlmError> {
        parse(body, &mut numbered())
    }

    fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }

    #[test]
    fn reads_each_shape_of_call() {
        let hermes = "\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.md\"}}\n";
        assert_eq!(
            read(hermes).unwrap(),
            vec![call("call_1", "read_file", json!({"path": "a.md"}))]
        );
        let llama = r#"{"name": "ls", "parameters": {}}; {"type": "function", "name": "pwd"}"#;
        assert_eq!(
            read(llama).unwrap(),
            vec![
                call("call_1", "ls", json!({})),
                call("call_2", "pwd", json!({}))
            ]
        );
        let mistral = r#"[{"name": "a", "arguments": "{\"x\": 1}"}, {"name": "b", "id": "q"}]"#;
        assert_eq!(
            read(mistral).unwrap(),
            vec![
                call("call_1", "a", json!({"x": 1})),
                call("call_2", "b", json!({}))
            ]
        );
        let openai = r#"{"type": "function", "function": {"name": "f", "arguments": {"k": true}}}"#;
        assert_eq!(
            read(openai).unwrap(),
            vec![call("call_1", "f", json!({"k": true}))]
        );
    }

    #[test]
    fn unreadable_calls_are_errors_that_quote_the_text() {
        for (body, why) in [
            (
                "{\"name\": \"read_file\", \"arguments\": {\"path\": ",
                "not valid JSON",
            ),
            ("  ", "it is empty"),
            ("{\"arguments\": {}}", "no `name`"),
            ("{\"name\": 3}", "not a tool name"),
            ("[1]", "must be a JSON object"),
            ("{\"name\": \"f\", \"arguments\": [1]}", "not a JSON object"),
            (
                "{\"name\": \"f\", \"arguments\": \"x\"}",
                "not a JSON object",
            ),
            ("{\"name\": \"f\"} trailing words", "not valid JSON"),
        ] {
            let err = read(body).unwrap_err();
            let LlmError::Fatal(message) = &err else {
                panic!("{err:?}")
            };
            assert!(message.contains(why), "{body:?}: {message}");
            assert!(message.contains(body.trim()), "{body:?}: {message}");
        }
    }
}
