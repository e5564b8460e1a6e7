//! Counting a request's tokens with the tokenizer of OpenAI's own models (tiktoken's
//! encodings, bundled with the `tiktoken-rs` crate): `o200k_base` for GPT-4o, GPT-4.1,
//! GPT-5 and the o-series, `cl100k_base` for GPT-4 and GPT-3.5. Other servers'
//! models (Ollama, llama.cpp, vLLM ...) have tokenizers of their own: none is guessed.

use tiktoken_rs::CoreBPE;

use crate::provider::{ChatRequest, TokenCount};

/// Tokens each message costs beyond its text (role and separators), and the reply's
/// priming, as OpenAI documents for its chat models.
const PER_MESSAGE: u64 = 3;
const REPLY_PRIMING: u64 = 3;

/// The encoding of `model` and its name, when it is one of OpenAI's own.
pub(crate) fn encoding(model: &str) -> Option<(&'static CoreBPE, &'static str)> {
    let model = model
        .strip_prefix("openai/")
        .unwrap_or(model)
        .to_ascii_lowercase();
    let o200k = [
        "gpt-4o",
        "chatgpt-4o",
        "gpt-4.1",
        "gpt-4.5",
        "gpt-5",
        "o1",
        "o3",
        "o4",
    ];
    if o200k.iter().any(|p| model.starts_with(p)) {
        return Some((tiktoken_rs::o200k_base_singleton(), "o200k_base"));
    }
    if model.starts_with("gpt-4") || model.starts_with("gpt-3.5") {
        return Some((tiktoken_rs::cl100k_base_singleton(), "cl100k_base"));
    }
    None
}

/// The input tokens of `request` for `model`, or `None` for a model of another family.
pub(crate) fn count(model: &str, request: &ChatRequest) -> Option<TokenCount> {
    let (bpe, name) = encoding(model)?;
    let tokens = |text: &str| bpe.encode_ordinary(text).len() as u64;
    let mut total = REPLY_PRIMING;
    if let Some(system) = &request.system {
        total += PER_MESSAGE + tokens(system);
    }
    for message in request.messages.iter() {
        total += PER_MESSAGE + tokens(&message.text());
        if let cairn_protocol::Message::Assistant(answer) = message {
            for call in answer.tool_calls() {
                total += tokens(&call.name) + tokens(&call.arguments.to_string());
            }
        }
    }
    for tool in request.tools.iter() {
        let spec = serde_json::json!({"name": tool.name, "description": tool.description,
                                      "parameters": tool.parameters});
        total += tokens(&spec.to_string());
    }
    Some(TokenCount {
        tokens: total,
        by: format!("the {name} tokenizer"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_protocol::Message;

    #[test]
    fn openai_models_are_counted_with_their_encoding_and_others_are_not() {
        let request = ChatRequest {
            system: Some("You are Cairn.".into()),
            messages: vec![Message::user("hello world")].into(),
            ..ChatRequest::default()
        };
        let counted = count("gpt-4o-mini", &request).unwrap();
        assert_eq!(counted.by, "the o200k_base tokenizer");
        // "You are Cairn." and "hello world" are 5 and 2 tokens in o200k_base.
        assert_eq!(counted.tokens, REPLY_PRIMING + 2 * PER_MESSAGE + 5 + 2);
        assert_eq!(
            count("gpt-4-turbo", &request).unwrap().by,
            "the cl100k_base tokenizer"
        );
        assert_eq!(
            count("openai/o3-mini", &request).unwrap().by,
            "the o200k_base tokenizer"
        );
        assert!(count("llama3.2:latest", &request).is_none());
        assert!(count("qwen2.5-coder", &request).is_none());
    }
}
