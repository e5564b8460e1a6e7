//! Sizing the prompt to the context window.
//!
//! The prompt must leave room for the answer. When the whole conversation does not fit,
//! the oldest messages after the system prompt are dropped (never the last one, and never
//! leaving a tool result without the call it answers) until it does; when even the system
//! prompt and the last message do not fit, the call fails with a context overflow, which
//! tells the harness to compact.

use cairn_protocol::{Message, ToolSpec};
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use super::template::ChatFormat;
use crate::error::LlmError;

/// The conversation to fit: the system prompt, the messages and the tools offered.
pub(crate) struct Conversation<'a> {
    pub system: Option<&'a str>,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    /// The template's reasoning switch, when it has one (`None`: its default).
    pub thinking: Option<bool>,
}

/// Renders and tokenizes the conversation in at most `budget` tokens, dropping the oldest
/// messages as needed (logged as a warning).
pub(crate) fn fit(
    model: &LlamaModel,
    format: &ChatFormat,
    conversation: Conversation<'_>,
    budget: usize,
) -> Result<Vec<LlamaToken>, LlmError> {
    let Conversation {
        system,
        messages,
        tools,
        thinking,
    } = conversation;
    let tokenize = |start: usize| -> Result<Vec<LlamaToken>, LlmError> {
        let text = format.render(model, system, &messages[start..], tools, thinking)?;
        Ok(format.tokenize(model, &text))
    };
    let starts = starts(messages);
    // The usual case: everything fits, one render.
    let whole = tokenize(0)?;
    if whole.len() <= budget {
        return Ok(whole);
    }
    // Fewer messages never need more tokens: find the first start that fits.
    let (mut lo, mut hi) = (1, starts.len());
    let mut best = None;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let tokens = tokenize(starts[mid])?;
        if tokens.len() <= budget {
            best = Some((mid, tokens));
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    match best {
        Some((index, tokens)) => {
            let dropped = starts[index];
            tracing::warn!(
                dropped,
                kept = messages.len() - dropped,
                "prompt trimmed to fit"
            );
            Ok(tokens)
        }
        None => {
            let last = starts.last().copied().unwrap_or(0);
            let needed = tokenize(last)?.len();
            let what = if tools.is_empty() {
                "the system prompt and the last message take"
            } else {
                "the system prompt, the tools and the last message take"
            };
            Err(LlmError::ContextOverflow(format!(
                "{what} {needed} tokens, more than the {budget} the local model's context \
                 window leaves for the prompt"
            )))
        }
    }
}

/// The indexes the kept part of the conversation may start at, in order: 0, then every
/// message that is not a tool result (a tool result needs its call before it).
fn starts(messages: &[Message]) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend((1..messages.len()).filter(|&i| !matches!(messages[i], Message::ToolResult(_))));
    starts
}

/// The number of tokens to keep free for the answer in a window of `n_ctx`: the
/// requested maximum, but at most half the window.
pub(crate) fn answer_reserve(n_ctx: usize, max_tokens: usize) -> usize {
    max_tokens.min(n_ctx / 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_protocol::ToolResultMessage;

    #[test]
    fn starts_skip_tool_results() {
        let result = Message::ToolResult(ToolResultMessage {
            call_id: "c".into(),
            tool_name: "t".into(),
            content: "r".into(),
            is_error: false,
            pictures: Vec::new(),
        });
        let messages = vec![
            Message::user("a"),
            Message::user("b"),
            result.clone(),
            result,
            Message::user("c"),
        ];
        assert_eq!(starts(&messages), vec![0, 1, 4]);
        assert_eq!(starts(&[]), vec![0]);
    }

    #[test]
    fn the_answer_gets_at_most_half_the_window() {
        assert_eq!(answer_reserve(8192, 512), 512);
        assert_eq!(answer_reserve(512, 4096), 256);
    }
}
