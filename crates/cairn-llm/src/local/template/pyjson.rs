//! The `tojson` filter as Hugging Face's template engine defines it: Python's
//! `json.dumps(value, ensure_ascii=False, indent=indent, separators=separators,
//! sort_keys=sort_keys)`, so `{"a": 1, "b": [1, 2]}` with spaces, as models saw it in
//! training (MiniJinja's own filter writes compact, HTML-escaped JSON).

use std::io::{self, Write};

use minijinja::value::{Kwargs, Value, ValueKind};
use minijinja::{Error, ErrorKind};
use serde::Serialize;
use serde_json::ser::Formatter;

/// `value | tojson(indent=None, sort_keys=False, separators=None, ensure_ascii=False)`.
pub(super) fn tojson(value: &Value, kwargs: Kwargs) -> Result<Value, Error> {
    let indent = indent(kwargs.get::<Option<Value>>("indent")?)?;
    let sort_keys = kwargs.get::<Option<bool>>("sort_keys")?.unwrap_or(false);
    let separators = kwargs.get::<Option<Value>>("separators")?;
    // Output is never ASCII-escaped, as Hugging Face renders it.
    let _ = kwargs.get::<Option<Value>>("ensure_ascii")?;
    kwargs.assert_all_used()?;
    let (item, key) = match separators.filter(|s| !s.is_none() && !s.is_undefined()) {
        Some(pair) => separator_pair(&pair)?,
        None if indent.is_some() => (",".to_string(), ": ".to_string()),
        None => (", ".to_string(), ": ".to_string()),
    };
    let formatter = PyFormatter {
        item,
        key,
        indent,
        level: 0,
        has_value: false,
    };
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    let written = if sort_keys {
        serde_json::to_value(value).and_then(|v| v.serialize(&mut serializer))
    } else {
        value.serialize(&mut serializer)
    };
    written.map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("tojson: {e}")))?;
    let text = String::from_utf8(out)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("tojson: {e}")))?;
    Ok(Value::from_safe_string(text))
}

/// Python's `indent`: a number of spaces, a string, or none.
fn indent(value: Option<Value>) -> Result<Option<String>, Error> {
    let Some(value) = value.filter(|v| !v.is_none() && !v.is_undefined()) else {
        return Ok(None);
    };
    match value.kind() {
        ValueKind::Number => {
            let spaces = value.as_usize().ok_or_else(|| bad("indent", &value))?;
            Ok(Some(" ".repeat(spaces)))
        }
        ValueKind::String => Ok(Some(value.as_str().unwrap_or_default().to_string())),
        _ => Err(bad("indent", &value)),
    }
}

/// Python's `separators=(item_separator, key_separator)`.
fn separator_pair(value: &Value) -> Result<(String, String), Error> {
    let parts: Vec<Value> = value
        .try_iter()
        .map_err(|_| bad("separators", value))?
        .collect();
    match parts.as_slice() {
        [item, key] => match (item.as_str(), key.as_str()) {
            (Some(item), Some(key)) => Ok((item.to_string(), key.to_string())),
            _ => Err(bad("separators", value)),
        },
        _ => Err(bad("separators", value)),
    }
}

fn bad(what: &str, value: &Value) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("tojson: invalid {what} `{value}`"),
    )
}

/// Writes JSON as Python's `json.dumps` does.
struct PyFormatter {
    item: String,
    key: String,
    indent: Option<String>,
    level: usize,
    has_value: bool,
}

impl PyFormatter {
    fn newline<W: ?Sized + Write>(&self, writer: &mut W) -> io::Result<()> {
        if let Some(indent) = &self.indent {
            writer.write_all(b"\n")?;
            for _ in 0..self.level {
                writer.write_all(indent.as_bytes())?;
            }
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.newline(writer)?;
        }
        writer.write_all(bracket)
    }

    fn element<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if !first {
            writer.write_all(self.item.as_bytes())?;
        }
        self.newline(writer)
    }
}

impl Formatter for PyFormatter {
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.element(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.element(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(self.key.as_bytes())
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use minijinja::value::Serde;
    use minijinja::Environment;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn render(source: &str, value: serde_json::Value) -> String {
        let mut env = Environment::new();
        env.add_filter("tojson", tojson);
        env.render_str(
            source,
            minijinja::context! { v => Value::from(Serde(&value)) },
        )
        .unwrap()
    }

    #[test]
    fn writes_json_as_python_does() {
        let value = json!({"b": [1, 2.5, "<é>"], "a": {}, "c": null, "d": []});
        assert_eq!(
            render("{{ v | tojson }}", value.clone()),
            r#"{"a": {}, "b": [1, 2.5, "<é>"], "c": null, "d": []}"#
        );
        assert_eq!(
            render(
                "{{ v | tojson(indent=2) }}",
                json!({"a": [1, {"x": true}], "b": {}})
            ),
            "{\n  \"a\": [\n    1,\n    {\n      \"x\": true\n    }\n  ],\n  \"b\": {}\n}"
        );
        assert_eq!(
            render(
                "{{ v | tojson(separators=(',', ':')) }}",
                json!({"a": [1, 2]})
            ),
            r#"{"a":[1,2]}"#
        );
        assert_eq!(
            render(
                "{{ v | tojson(ensure_ascii=False, sort_keys=True) }}",
                json!("ü")
            ),
            r#""ü""#
        );
    }

    #[test]
    fn keeps_the_order_of_maps_built_in_the_template() {
        let out = render(
            "{{ {'type': 'function', 'function': {'name': v}} | tojson }}",
            json!("f"),
        );
        assert_eq!(out, r#"{"type": "function", "function": {"name": "f"}}"#);
    }

    #[test]
    fn unknown_arguments_are_errors() {
        let mut env = Environment::new();
        env.add_filter("tojson", tojson);
        let err = env
            .render_str("{{ 1 | tojson(colour=1) }}", ())
            .unwrap_err();
        assert!(err.to_string().contains("colour"), "{err}");
    }
}
