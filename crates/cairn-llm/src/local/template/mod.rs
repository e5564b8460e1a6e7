//! Turning a conversation into prompt text with the model's chat template.
//!
//! The template is the model's own (`tokenizer.chat_template` in the GGUF metadata) unless
//! the configuration gives one. Two engines render it:
//!
//! - `jinja`: a Jinja engine given what Hugging Face templates expect, tools included. It
//!   renders a template given in the configuration, and a model's own template when that
//!   teaches a call format Cairn can read (see `calls`): then the model is offered tools.
//! - llama.cpp's built-in engine for every other model template: it recognises the common
//!   formats (ChatML, Llama 3, Gemma, Mistral ...) from the template text and only takes
//!   `(role, text)` turns (see `flat`).
//!
//! A model without a usable template gets ChatML.

mod flat;
mod jinja;
mod pyjson;

use cairn_protocol::{Message, ToolSpec};
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;

use self::flat::{mentions_tool_role, turns};
use self::jinja::{JinjaTemplate, SpecialTokens};
use super::calls::CallFormat;
use crate::error::LlmError;

/// The template used when a model carries none, or one llama.cpp does not recognise.
const FALLBACK_TEMPLATE: &str = "chatml";

/// A model's chat format: how its prompt is written and how it writes tool calls.
#[derive(Debug)]
pub(crate) struct ChatFormat {
    renderer: Renderer,
    /// Tokens that spell a call marker as special tokens: written out as text while an
    /// answer may hold calls.
    preserved: Vec<LlamaToken>,
    bos: LlamaToken,
}

#[derive(Debug)]
enum Renderer {
    /// llama.cpp's engine: role/content turns only, no tools.
    Builtin {
        template: LlamaChatTemplate,
        tool_role: bool,
    },
    Jinja(Box<JinjaTemplate>),
}

impl ChatFormat {
    /// The format for `model`: `custom` (the text of a Jinja chat template) when given,
    /// which must compile and render; otherwise the model's own template, checked by
    /// rendering a sample conversation, or ChatML (logged as a warning).
    pub(crate) fn load(model: &LlamaModel, custom: Option<&str>) -> Result<Self, LlmError> {
        let renderer = match custom {
            Some(source) => {
                let template = JinjaTemplate::new(source, special_tokens(model)).map_err(|e| {
                    LlmError::Fatal(format!("the chat template override {}", unusable(&e)))
                })?;
                Renderer::Jinja(Box::new(template))
            }
            None => own_renderer(model)?,
        };
        let mut format = Self {
            renderer,
            preserved: Vec::new(),
            bos: model.vocab().bos(),
        };
        if let Some(calls) = format.calls() {
            format.preserved = calls
                .markers()
                .filter_map(|marker| single_token(model, marker))
                .collect();
        }
        tracing::debug!(
            engine = match format.renderer {
                Renderer::Builtin { .. } => "llama.cpp",
                Renderer::Jinja(_) => "jinja",
            },
            tool_calls = format.calls().map_or("none", CallFormat::name),
            "chat template ready"
        );
        Ok(format)
    }

    /// The call format the model is taught, when it is offered tools.
    pub(crate) fn calls(&self) -> Option<CallFormat> {
        match &self.renderer {
            Renderer::Jinja(template) => template.calls(),
            Renderer::Builtin { .. } => None,
        }
    }

    /// Whether the model's template has a switch for its reasoning.
    pub(crate) fn thinking_switch(&self) -> bool {
        match &self.renderer {
            Renderer::Jinja(template) => template.thinking_switch(),
            Renderer::Builtin { .. } => false,
        }
    }

    /// Whether `token` must be written out as text while calls are read.
    pub(crate) fn preserves(&self, token: LlamaToken) -> bool {
        self.preserved.contains(&token)
    }

    /// The prompt text for `system` + `messages` with `tools` offered (when the format
    /// has calls), ending with the opening of the assistant's turn.
    pub(crate) fn render(
        &self,
        model: &LlamaModel,
        system: Option<&str>,
        messages: &[Message],
        tools: &[ToolSpec],
        thinking: Option<bool>,
    ) -> Result<String, LlmError> {
        match &self.renderer {
            Renderer::Builtin {
                template,
                tool_role,
            } => builtin(model, template, system, messages, *tool_role),
            Renderer::Jinja(template) => template
                .render(system, messages, tools, thinking)
                .map_err(|e| {
                    LlmError::BadRequest(format!(
                        "the chat template cannot render this conversation: {}",
                        describe(&e)
                    ))
                }),
        }
    }

    /// The prompt's tokens. A Jinja template writes the BOS token itself when the model
    /// wants one, and so does the tokenizer: one is kept.
    pub(crate) fn tokenize(&self, model: &LlamaModel, text: &str) -> Vec<LlamaToken> {
        let mut tokens = model.vocab().tokenize(text.as_bytes(), true, true);
        let jinja = matches!(self.renderer, Renderer::Jinja(_));
        if jinja && tokens.len() >= 2 && tokens[0] == self.bos && tokens[1] == self.bos {
            tokens.remove(0);
        }
        tokens
    }
}

/// The model's own template: through the Jinja engine when it teaches tool calls,
/// otherwise through llama.cpp's, and ChatML when neither can render it.
fn own_renderer(model: &LlamaModel) -> Result<Renderer, LlmError> {
    let source = model
        .chat_template(None)
        .ok()
        .and_then(|t| t.to_string().ok());
    let Some(source) = source else {
        tracing::warn!("the model carries no chat template; using ChatML");
        return chatml();
    };
    if CallFormat::detect(&source).is_some() {
        match JinjaTemplate::new(&source, special_tokens(model)) {
            Ok(template) if template.calls().is_some() => {
                return Ok(Renderer::Jinja(Box::new(template)))
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(
                "the model's chat template {}; it is offered no tools",
                unusable(&e)
            ),
        }
    }
    let builtin = LlamaChatTemplate::new(&source)
        .map_err(|e| e.to_string())
        .and_then(|template| {
            builtin(model, &template, Some("s"), &[Message::user("u")], false)
                .map(|_| template)
                .map_err(|e| e.to_string())
        });
    match builtin {
        Ok(template) => Ok(Renderer::Builtin {
            template,
            tool_role: mentions_tool_role(&source),
        }),
        Err(e) => match JinjaTemplate::new(&source, special_tokens(model)) {
            Ok(template) => Ok(Renderer::Jinja(Box::new(template))),
            Err(jinja) => {
                tracing::warn!(
                    "the model's chat template is unusable ({e}; {}); using ChatML",
                    describe(&jinja)
                );
                chatml()
            }
        },
    }
}

fn chatml() -> Result<Renderer, LlmError> {
    let template = LlamaChatTemplate::new(FALLBACK_TEMPLATE)
        .map_err(|e| LlmError::Fatal(format!("invalid fallback chat template: {e}")))?;
    Ok(Renderer::Builtin {
        template,
        tool_role: false,
    })
}

/// Renders with llama.cpp's engine.
fn builtin(
    model: &LlamaModel,
    template: &LlamaChatTemplate,
    system: Option<&str>,
    messages: &[Message],
    tool_role: bool,
) -> Result<String, LlmError> {
    let chat = turns(system, messages, tool_role)
        .into_iter()
        .map(|(role, text)| LlamaChatMessage::new(role.into(), text))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| LlmError::BadRequest(format!("cannot build the chat prompt: {e}")))?;
    model
        .apply_chat_template(template, &chat, true)
        .map_err(|e| LlmError::Fatal(format!("cannot apply the model's chat template: {e}")))
}

/// The token spelling `text`, when the vocabulary has one (a special token).
fn single_token(model: &LlamaModel, text: &str) -> Option<LlamaToken> {
    match model.vocab().tokenize(text.as_bytes(), false, true)[..] {
        [token] => Some(token),
        _ => None,
    }
}

/// The texts of the model's BOS and EOS tokens (empty when it has none).
fn special_tokens(model: &LlamaModel) -> SpecialTokens {
    let vocab = model.vocab();
    let text = |token: LlamaToken| {
        if token.0 < 0 || token.0 >= vocab.n_tokens() {
            return String::new();
        }
        String::from_utf8_lossy(&vocab.token_to_piece(token, true, None)).into_owned()
    };
    SpecialTokens {
        bos: text(vocab.bos()),
        eos: text(vocab.eos()),
    }
}

/// Why a template cannot be used, as the end of a sentence starting with "the template".
fn unusable(error: &minijinja::Error) -> String {
    match error.kind() {
        minijinja::ErrorKind::SyntaxError => format!("does not compile: {}", describe(error)),
        _ => format!("fails on a sample conversation: {}", describe(error)),
    }
}

/// A template error with its cause and place.
fn describe(error: &minijinja::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// Checks a template given in the configuration (without a model: no BOS/EOS texts).
/// Returns whether it teaches a call format.
pub(crate) fn check(source: &str) -> Result<bool, LlmError> {
    JinjaTemplate::new(source, SpecialTokens::default())
        .map(|template| template.calls().is_some())
        .map_err(|e| LlmError::Fatal(format!("the chat template {}", unusable(&e))))
}
