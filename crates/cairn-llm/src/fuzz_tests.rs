//! Fuzz targets (see `cairn_testkit::fuzz`): the SSE decoders of both wire formats, their
//! whole-answer decoders, and the tool-call parsers of the local model. None may panic or
//! hang on any input, and a stream ends at its first error.

use cairn_testkit::fuzz;
use futures::StreamExt;

use crate::error::LlmError;
use crate::http::{decode_sse, SseDecoder};
use crate::local::{CallFormat, CallStream};
use crate::{anthropic, openai};

const URL: &str = "http://127.0.0.1:1/v1";

const SSE_WORDS: &[&[u8]] = &[
    b"data: ",
    b"event: ",
    b"\n\n",
    b"\r\n",
    b"\n",
    b": ping\n",
    b"[DONE]",
    b"{",
    b"}",
    b"\"",
    b"\\u00e9",
    b"\xe2\x82",
    b"null",
    b"\"tool_calls\"",
    b"\"arguments\"",
    b"\"index\": 7",
    b"\"finish_reason\": \"stop\"",
    b"\"type\": \"content_block_delta\"",
    b"\"partial_json\"",
    b"\"error\"",
];

/// Cuts `bytes` into network chunks of sizes taken from the bytes themselves.
fn chunks(bytes: &[u8]) -> Vec<Vec<u8>> {
    let size = 1 + bytes.first().map_or(0, |b| usize::from(*b) % 97);
    bytes.chunks(size).map(<[u8]>::to_vec).collect()
}

fn decode(bytes: &[u8], decoder: impl SseDecoder) -> Result<(), String> {
    let body = futures::stream::iter(chunks(bytes).into_iter().map(Ok::<_, LlmError>)).boxed();
    let items: Vec<_> = futures::executor::block_on(decode_sse(body, URL, decoder).collect());
    match items.iter().position(Result::is_err) {
        Some(at) if at + 1 != items.len() => Err(format!(
            "{} items followed the error {:?}",
            items.len() - at - 1,
            items[at]
        )),
        _ => Ok(()),
    }
}

#[test]
fn fuzz_sse_openai() {
    fuzz::run("sse_openai", SSE_WORDS, |bytes| {
        decode(bytes, openai::ChunkDecoder::new(URL, "m"))
    });
}

#[test]
fn fuzz_sse_anthropic() {
    fuzz::run("sse_anthropic", SSE_WORDS, |bytes| {
        decode(bytes, anthropic::EventDecoder::new(URL))
    });
}

#[test]
fn fuzz_whole_answers() {
    fuzz::run("whole_answer", SSE_WORDS, |bytes| {
        let text = String::from_utf8_lossy(bytes);
        let _ = openai::completion_events(&text, URL, "m");
        let _ = anthropic::message_events(&text, URL);
        Ok(())
    });
}

#[test]
fn fuzz_local_tool_calls() {
    let words: &[&[u8]] = &[
        b"<tool_call>",
        b"</tool_call>",
        b"<|python_tag|>",
        b"[TOOL_CALLS]",
        b"{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.md\"}}",
        b"{\"name\": ",
        b"\"parameters\"",
        b"[",
        b"]",
        b"{",
        b"}",
        b"\n",
        b"<|eom_id|>",
    ];
    fuzz::run("local_tool_calls", words, |bytes| {
        let text = String::from_utf8_lossy(bytes);
        let size = 1 + bytes.first().map_or(0, |b| usize::from(*b) % 23);
        for format in [CallFormat::Hermes, CallFormat::Llama3, CallFormat::Mistral] {
            let mut n = 0;
            let mut stream = CallStream::with_ids(
                format,
                Box::new(move || {
                    n += 1;
                    format!("call_{n}")
                }),
            );
            let chars: Vec<char> = text.chars().collect();
            for piece in chars.chunks(size) {
                let delta: String = piece.iter().collect();
                if stream.push(&delta).is_err() {
                    break;
                }
            }
            let _ = stream.finish();
        }
        Ok(())
    });
}
