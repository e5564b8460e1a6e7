//! Tool calls written by a local model: which format a chat template teaches, and reading
//! the calls back out of the generated text.
//!
//! A template supports tools when it renders the `tools` variable and its call format is
//! one of these, recognised by markers in the template text:
//!
//! - [`CallFormat::Hermes`] (Hermes, Qwen 2.5/3 and other ChatML models):
//!   `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`, one block per call.
//! - [`CallFormat::Llama3`] (Llama 3.1/3.2/3.3): `{"name": ..., "parameters": {...}}` as the
//!   whole answer, optionally after `<|python_tag|>`.
//! - [`CallFormat::Mistral`]: `[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`.
//!
//! - `body`: the JSON of a call turned into [`ToolCall`](cairn_protocol::ToolCall)s.
//! - `stream`: the text of an answer split into text deltas and calls as it streams.

mod body;
mod stream;

pub(crate) use self::stream::{CallStream, Piece};

/// How a model writes a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallFormat {
    Hermes,
    Llama3,
    Mistral,
}

impl CallFormat {
    /// The call format a chat template teaches, from markers in its text. The caller checks
    /// that the template uses the `tools` variable at all.
    pub(crate) fn detect(template: &str) -> Option<Self> {
        if template.contains("<tool_call>") {
            Some(Self::Hermes)
        } else if template.contains("[TOOL_CALLS]") {
            Some(Self::Mistral)
        } else if template.contains("<|start_header_id|>")
            && (template.contains("<|python_tag|>") || template.contains("ipython"))
        {
            Some(Self::Llama3)
        } else {
            None
        }
    }

    /// The name shown in logs.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Hermes => "hermes",
            Self::Llama3 => "llama3-json",
            Self::Mistral => "mistral",
        }
    }

    /// Text that opens a call anywhere in an answer.
    pub(crate) fn start_markers(self) -> &'static [&'static str] {
        match self {
            Self::Hermes => &["<tool_call>"],
            Self::Llama3 => &["<|python_tag|>"],
            Self::Mistral => &["[TOOL_CALLS]"],
        }
    }

    /// Text that closes a call; without one, a call runs to the end of the answer.
    pub(crate) fn end_marker(self) -> Option<&'static str> {
        match self {
            Self::Hermes => Some("</tool_call>"),
            Self::Llama3 | Self::Mistral => None,
        }
    }

    /// Whether a bare JSON object at the very start of an answer is a call
    /// (`{"name": ...`), as Llama 3 writes them without `<|python_tag|>`.
    pub(crate) fn bare_json_at_start(self) -> bool {
        matches!(self, Self::Llama3)
    }

    /// The markers, which some vocabularies hold as special tokens: those must be written
    /// out as text while a call may come, or the parser would never see them.
    pub(crate) fn markers(self) -> impl Iterator<Item = &'static str> {
        self.start_markers()
            .iter()
            .copied()
            .chain(self.end_marker())
    }

    /// Whether tool call ids must be 9 letters or digits (Mistral's templates refuse
    /// others).
    pub(crate) fn short_ids(self) -> bool {
        matches!(self, Self::Mistral)
    }
}

/// A fresh id for a call a local model made: `call_` and 16 hex digits, random so that ids
/// stay unique across answers, sessions and processes.
pub(crate) fn new_call_id() -> String {
    format!("call_{:016x}", rand::random::<u64>())
}

/// `id` as 9 letters and digits: kept when it already is, otherwise derived from it
/// (FNV-1a), so the same call and its result get the same short id.
pub(crate) fn short_id(id: &str) -> String {
    if id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return id.to_string();
    }
    const ALPHABET: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in id.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (0..9)
        .map(|_| {
            let c = ALPHABET[(hash % 62) as usize];
            hash /= 62;
            char::from(c)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_comes_from_markers_in_the_template() {
        let hermes = "{%- if tools %}<tool_call>{{ tools | tojson }}{% endif %}";
        assert_eq!(CallFormat::detect(hermes), Some(CallFormat::Hermes));
        let llama = "<|start_header_id|>ipython<|end_header_id|>{{ tools }}";
        assert_eq!(CallFormat::detect(llama), Some(CallFormat::Llama3));
        let mistral = "[AVAILABLE_TOOLS]{{ tools }}[/AVAILABLE_TOOLS][TOOL_CALLS]";
        assert_eq!(CallFormat::detect(mistral), Some(CallFormat::Mistral));
        let chatml = "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>";
        assert_eq!(CallFormat::detect(chatml), None);
        let llama_without_tools = "<|start_header_id|>{{ message['role'] }}<|end_header_id|>";
        assert_eq!(CallFormat::detect(llama_without_tools), None);
    }

    #[test]
    fn short_ids_are_nine_alphanumerics_and_stable() {
        let id = short_id("call_00000000deadbeef");
        assert_eq!(id.len(), 9);
        assert!(id.bytes().all(|b| b.is_ascii_alphanumeric()), "{id}");
        assert_eq!(id, short_id("call_00000000deadbeef"));
        assert_ne!(id, short_id("call_00000000deadbeee"));
        assert_eq!(short_id("abcDEF123"), "abcDEF123");
    }

    #[test]
    fn generated_ids_differ() {
        assert_ne!(new_call_id(), new_call_id());
        assert!(new_call_id().starts_with("call_"));
    }
}
