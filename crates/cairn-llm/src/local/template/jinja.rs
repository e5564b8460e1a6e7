//! Chat templates rendered by a Jinja engine (MiniJinja), given the inputs Hugging Face's
//! `apply_chat_template` gives them, so that templates written for it work unchanged:
//!
//! - `messages`: `{role, content}`; an assistant message with calls also has
//!   `tool_calls: [{id, type: "function", function: {name, arguments}}]` (arguments as an
//!   object), and a tool result is `{role: "tool", tool_call_id, name, content}`;
//! - `tools`: `[{type: "function", function: {name, description, parameters}}]`, or none;
//! - `add_generation_prompt` (always true), `bos_token`, `eos_token`;
//! - `raise_exception(message)`, `strftime_now(format)`, the `tojson` filter as Python
//!   writes JSON, Python's string and dict methods (`.strip()`, `.startswith()`,
//!   `.items()` ...), and Jinja2's `trim_blocks` / `lstrip_blocks` whitespace rules.
//!
//! A template that teaches no call format gets the conversation flattened to role/content
//! turns (see `flat`), as llama.cpp's own engine would.

use std::borrow::Cow;

use cairn_protocol::{ContentBlock, Message, ToolCall, ToolSpec};
use minijinja::syntax::SyntaxConfig;
use minijinja::value::Serde;
use minijinja::{Environment, Error, ErrorKind, Value};
use serde::Serialize;

use super::flat::{mentions_tool_role, turns};
use super::pyjson::tojson;
use crate::local::calls::{short_id, CallFormat};

/// The name the template is stored under (it shows in error messages).
const NAME: &str = "chat_template";

/// The texts of the model's special tokens that templates use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SpecialTokens {
    pub bos: String,
    pub eos: String,
}

/// A compiled chat template.
pub(crate) struct JinjaTemplate {
    env: Environment<'static>,
    calls: Option<CallFormat>,
    /// The template reads `enable_thinking` (Qwen3 and its kin): reasoning can be turned
    /// off and on.
    thinking_switch: bool,
    tool_role: bool,
    special: SpecialTokens,
}

impl std::fmt::Debug for JinjaTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JinjaTemplate")
            .field("calls", &self.calls)
            .field("tool_role", &self.tool_role)
            .finish_non_exhaustive()
    }
}

impl JinjaTemplate {
    /// Compiles `source` and checks it by rendering a short conversation (with a tool when
    /// it teaches a call format). The error says what is wrong and where.
    pub(crate) fn new(source: &str, special: SpecialTokens) -> Result<Self, Error> {
        let mut env = environment()?;
        env.add_template_owned(NAME, source.to_string())?;
        let variables = env.get_template(NAME)?.undeclared_variables(false);
        let uses_tools = variables.contains("tools");
        let thinking_switch = variables.contains("enable_thinking");
        let template = Self {
            env,
            calls: CallFormat::detect(source).filter(|_| uses_tools),
            thinking_switch,
            tool_role: mentions_tool_role(source),
            special,
        };
        let sample = [Message::user("Hello")];
        template.render(Some("You are helpful."), &sample, &[], None)?;
        if template.calls.is_some() {
            let tool = ToolSpec {
                name: "read_file".into(),
                description: "Read a file".into(),
                parameters: serde_json::json!({"type": "object", "properties": {}}),
            };
            template.render(Some("You are helpful."), &sample, &[tool], None)?;
        }
        Ok(template)
    }

    /// The call format the template teaches, when it renders tools.
    pub(crate) fn calls(&self) -> Option<CallFormat> {
        self.calls
    }

    /// Whether the template has a switch for the model's reasoning (`enable_thinking`).
    pub(crate) fn thinking_switch(&self) -> bool {
        self.thinking_switch
    }

    /// The prompt for `system` + `messages` with `tools` offered, ending with the opening
    /// of the assistant's turn; `thinking` sets the template's reasoning switch (`None`:
    /// left to the template's default).
    pub(crate) fn render(
        &self,
        system: Option<&str>,
        messages: &[Message],
        tools: &[ToolSpec],
        thinking: Option<bool>,
    ) -> Result<String, Error> {
        let messages = match self.calls {
            Some(format) => structured(system, messages, format.short_ids()),
            None => turns(system, messages, self.tool_role)
                .into_iter()
                .map(|(role, text)| Turn::plain(role, Cow::Owned(text)))
                .collect(),
        };
        let tools = (self.calls.is_some() && !tools.is_empty())
            .then(|| tools.iter().map(ToolOut::new).collect());
        let inputs = Inputs {
            messages,
            tools,
            add_generation_prompt: true,
            bos_token: &self.special.bos,
            eos_token: &self.special.eos,
            enable_thinking: thinking.filter(|_| self.thinking_switch),
        };
        self.env
            .get_template(NAME)?
            .render(Value::from(Serde(&inputs)))
    }
}

/// The engine with what Hugging Face's template environment provides.
fn environment() -> Result<Environment<'static>, Error> {
    let mut env = Environment::new();
    env.set_syntax(
        SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()?,
    );
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_filter("tojson", tojson);
    env.add_function("raise_exception", raise_exception);
    env.add_function("strftime_now", strftime_now);
    Ok(env)
}

fn raise_exception(message: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

/// The local time written with a `strftime` format (Llama 3.2 templates print the date).
fn strftime_now(format: String) -> Result<String, Error> {
    use std::fmt::Write;
    let mut out = String::new();
    write!(out, "{}", chrono::Local::now().format(&format)).map_err(|_| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("strftime_now: invalid format `{format}`"),
        )
    })?;
    Ok(out)
}

/// Everything a template is given.
#[derive(Serialize)]
struct Inputs<'a> {
    messages: Vec<Turn<'a>>,
    tools: Option<Vec<ToolOut<'a>>>,
    add_generation_prompt: bool,
    bos_token: &'a str,
    eos_token: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    enable_thinking: Option<bool>,
}

/// One message as templates expect it. Keys that do not apply are left out, not null:
/// templates test `'tool_calls' in message` and `message.tool_calls is defined`.
#[derive(Serialize)]
struct Turn<'a> {
    role: &'static str,
    content: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Vec<CallOut<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

impl<'a> Turn<'a> {
    fn plain(role: &'static str, content: Cow<'a, str>) -> Self {
        Self {
            role,
            content,
            tool_calls: None,
            tool_call_id: None,
            name: None,
        }
    }
}

#[derive(Serialize)]
struct CallOut<'a> {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionCall<'a>,
}

#[derive(Serialize)]
struct FunctionCall<'a> {
    name: &'a str,
    arguments: Cow<'a, serde_json::Value>,
}

#[derive(Serialize)]
struct ToolOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a serde_json::Value,
}

impl<'a> ToolOut<'a> {
    fn new(spec: &'a ToolSpec) -> Self {
        Self {
            kind: "function",
            function: Function {
                name: &spec.name,
                description: &spec.description,
                parameters: &spec.parameters,
            },
        }
    }
}

/// The conversation with its calls and results as structured messages.
fn structured<'a>(
    system: Option<&'a str>,
    messages: &'a [Message],
    short_ids: bool,
) -> Vec<Turn<'a>> {
    let id = |id: &str| {
        if short_ids {
            short_id(id)
        } else {
            id.to_string()
        }
    };
    let mut out = Vec::with_capacity(messages.len() + 1);
    if let Some(system) = system.filter(|s| !s.trim().is_empty()) {
        out.push(Turn::plain("system", Cow::Borrowed(system)));
    }
    for message in messages {
        out.push(match message {
            Message::User { .. } => Turn::plain("user", Cow::Owned(message.text_for_model())),
            Message::Assistant(a) => {
                let calls: Vec<CallOut<'a>> = a
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        ContentBlock::ToolCall(call) => Some(call_out(call, id(&call.id))),
                        ContentBlock::Text { .. }
                        | ContentBlock::Thinking { .. }
                        | ContentBlock::Image(_)
                        | ContentBlock::ServerTool { .. } => None,
                    })
                    .collect();
                Turn {
                    tool_calls: (!calls.is_empty()).then_some(calls),
                    ..Turn::plain("assistant", Cow::Owned(a.text()))
                }
            }
            Message::ToolResult(r) => Turn {
                tool_call_id: Some(id(&r.call_id)),
                name: Some(&r.tool_name),
                ..Turn::plain("tool", Cow::Owned(r.content_for_model()))
            },
        });
    }
    out
}

/// A call as templates expect it; arguments kept as raw text (invalid JSON from another
/// provider) are parsed when they can be.
fn call_out(call: &ToolCall, id: String) -> CallOut<'_> {
    let arguments = match &call.arguments {
        serde_json::Value::String(raw) => serde_json::from_str(raw)
            .map(Cow::Owned)
            .unwrap_or(Cow::Borrowed(&call.arguments)),
        other => Cow::Borrowed(other),
    };
    CallOut {
        id,
        kind: "function",
        function: FunctionCall {
            name: &call.name,
            arguments,
        },
    }
}

#[cfg(test)]
#[path = "jinja_tests.rs"]
mod tests;
