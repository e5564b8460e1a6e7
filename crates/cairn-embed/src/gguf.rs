//! The bundled model's weights as a GGUF file for llama.cpp, written from the fetched
//! `model.safetensors` and `tokenizer.json`, deterministically: the same inputs give the
//! same bytes. GGUF (version 3) is little-endian: a header, key–value metadata, tensor
//! descriptions, then the tensors' data, each at an offset aligned to 32 bytes.
//!
//! Written by hand: no kept crate writes GGUF, and the format is small. The large matrices
//! are stored as Q8_0 (blocks of 32 weights: one f16 scale, 32 signed bytes), as llama.cpp
//! quantises them; biases, norms and the position and token-type tables stay f32.

use std::collections::BTreeMap;
use std::io::Write;

use safetensors::{Dtype, SafeTensors};

/// How a tensor is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    F32,
    Q8_0,
}

impl Storage {
    /// ggml's type id.
    fn ggml_type(self) -> u32 {
        match self {
            Storage::F32 => 0,
            Storage::Q8_0 => 8,
        }
    }
}

/// The BERT model's sizes, from `config.json`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct BertConfig {
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
}

const ALIGNMENT: usize = 32;
const Q8_BLOCK: usize = 32;

enum Value {
    U32(u32),
    F32(f32),
    Bool(bool),
    Str(String),
    Strings(Vec<String>),
    I32s(Vec<i32>),
}

struct Tensor {
    name: String,
    /// ggml order: the fastest-varying dimension first.
    dims: Vec<u64>,
    storage: Storage,
    data: Vec<u8>,
}

/// The GGUF file of a BERT sentence model (`quantise`: the large matrices as Q8_0).
pub fn bert(
    config: &BertConfig,
    weights: &[u8],
    tokenizer_json: &[u8],
    quantise: bool,
) -> Result<Vec<u8>, String> {
    let tensors = SafeTensors::deserialize(weights).map_err(|e| e.to_string())?;
    let vocab = vocabulary(tokenizer_json)?;
    let special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
    let types: Vec<i32> = vocab
        .iter()
        .map(|t| if special.contains(&t.as_str()) { 3 } else { 1 })
        .collect();
    let tokens: Vec<String> = vocab.iter().map(|t| phantom(t, &special)).collect();
    let u32_of = |n: usize| u32::try_from(n).map_err(|_| format!("{n} is too large"));
    let metadata = vec![
        ("general.architecture", Value::Str("bert".into())),
        ("general.name", Value::Str("all-MiniLM-L6-v2".into())),
        (
            "bert.context_length",
            Value::U32(u32_of(config.max_position_embeddings)?),
        ),
        (
            "bert.embedding_length",
            Value::U32(u32_of(config.hidden_size)?),
        ),
        (
            "bert.feed_forward_length",
            Value::U32(u32_of(config.intermediate_size)?),
        ),
        (
            "bert.attention.head_count",
            Value::U32(u32_of(config.num_attention_heads)?),
        ),
        (
            "bert.attention.layer_norm_epsilon",
            Value::F32(config.layer_norm_eps as f32),
        ),
        (
            "bert.block_count",
            Value::U32(u32_of(config.num_hidden_layers)?),
        ),
        ("bert.attention.causal", Value::Bool(false)),
        ("bert.pooling_type", Value::U32(1)),
        ("tokenizer.ggml.model", Value::Str("bert".into())),
        ("tokenizer.ggml.tokens", Value::Strings(tokens)),
        ("tokenizer.ggml.token_type", Value::I32s(types)),
        (
            "tokenizer.ggml.token_type_count",
            Value::U32(u32_of(config.type_vocab_size)?),
        ),
    ];
    let mut out = Vec::new();
    for (from, to, matrix) in names(config.num_hidden_layers) {
        let view = tensors.tensor(&from).map_err(|e| format!("{from}: {e}"))?;
        if view.dtype() != Dtype::F32 {
            return Err(format!("{from} is {:?}, not f32", view.dtype()));
        }
        let values: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        // HF's [rows, columns] is ggml's [columns, rows]: the same bytes, dims reversed.
        let dims: Vec<u64> = view.shape().iter().rev().map(|&d| d as u64).collect();
        let row = view.shape().last().copied().unwrap_or(0);
        let storage = if quantise && matrix && row.is_multiple_of(Q8_BLOCK) {
            Storage::Q8_0
        } else {
            Storage::F32
        };
        let data = match storage {
            Storage::F32 => view.data().to_vec(),
            Storage::Q8_0 => q8_0(&values),
        };
        out.push(Tensor {
            name: to,
            dims,
            storage,
            data,
        });
    }
    Ok(write(&metadata, &out))
}

/// The vocabulary by id, from a WordPiece `tokenizer.json`.
fn vocabulary(tokenizer_json: &[u8]) -> Result<Vec<String>, String> {
    let json: serde_json::Value =
        serde_json::from_slice(tokenizer_json).map_err(|e| e.to_string())?;
    let map = json["model"]["vocab"]
        .as_object()
        .ok_or("tokenizer.json has no WordPiece vocabulary")?;
    let mut by_id: BTreeMap<u64, String> = BTreeMap::new();
    for (token, id) in map {
        let id = id.as_u64().ok_or("a vocabulary id is not a number")?;
        by_id.insert(id, token.clone());
    }
    let vocab: Vec<String> = by_id.values().cloned().collect();
    if by_id.keys().enumerate().any(|(i, &id)| i as u64 != id) {
        return Err("the vocabulary's ids are not 0..n".into());
    }
    Ok(vocab)
}

/// llama.cpp's WordPiece vocabulary marks word starts: `##piece` becomes `piece`, a whole
/// word gets `▁` before it, special tokens stay.
fn phantom(token: &str, special: &[&str]) -> String {
    if special.contains(&token) || (token.starts_with('[') && token.ends_with(']')) {
        token.to_string()
    } else if let Some(piece) = token.strip_prefix("##") {
        piece.to_string()
    } else {
        format!("\u{2581}{token}")
    }
}

/// (safetensors name, GGUF name, a matrix worth quantising) for every tensor llama.cpp
/// reads; the pooler and `position_ids` are left out, as llama.cpp wants.
fn names(layers: usize) -> Vec<(String, String, bool)> {
    let mut out = vec![
        (
            "embeddings.word_embeddings.weight",
            "token_embd.weight",
            true,
        ),
        (
            "embeddings.token_type_embeddings.weight",
            "token_types.weight",
            false,
        ),
        (
            "embeddings.position_embeddings.weight",
            "position_embd.weight",
            false,
        ),
        (
            "embeddings.LayerNorm.weight",
            "token_embd_norm.weight",
            false,
        ),
        ("embeddings.LayerNorm.bias", "token_embd_norm.bias", false),
    ]
    .into_iter()
    .map(|(a, b, m)| (a.to_string(), b.to_string(), m))
    .collect::<Vec<_>>();
    for n in 0..layers {
        let hf = format!("encoder.layer.{n}");
        let ours = format!("blk.{n}");
        for (from, to, matrix) in [
            ("attention.self.query.weight", "attn_q.weight", true),
            ("attention.self.query.bias", "attn_q.bias", false),
            ("attention.self.key.weight", "attn_k.weight", true),
            ("attention.self.key.bias", "attn_k.bias", false),
            ("attention.self.value.weight", "attn_v.weight", true),
            ("attention.self.value.bias", "attn_v.bias", false),
            ("attention.output.dense.weight", "attn_output.weight", true),
            ("attention.output.dense.bias", "attn_output.bias", false),
            (
                "attention.output.LayerNorm.weight",
                "attn_output_norm.weight",
                false,
            ),
            (
                "attention.output.LayerNorm.bias",
                "attn_output_norm.bias",
                false,
            ),
            ("intermediate.dense.weight", "ffn_up.weight", true),
            ("intermediate.dense.bias", "ffn_up.bias", false),
            ("output.dense.weight", "ffn_down.weight", true),
            ("output.dense.bias", "ffn_down.bias", false),
            ("output.LayerNorm.weight", "layer_output_norm.weight", false),
            ("output.LayerNorm.bias", "layer_output_norm.bias", false),
        ] {
            out.push((format!("{hf}.{from}"), format!("{ours}.{to}"), matrix));
        }
    }
    out
}

/// Q8_0 as ggml makes it: per block of 32, `d = max|x| / 127` (an f16) and
/// `q = round(x / d)`.
fn q8_0(values: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() / Q8_BLOCK * (2 + Q8_BLOCK));
    for block in values.chunks(Q8_BLOCK) {
        let amax = block.iter().fold(0f32, |m, x| m.max(x.abs()));
        let d = amax / 127.0;
        let inverse = if d == 0.0 { 0.0 } else { 1.0 / d };
        out.extend_from_slice(&half::f16::from_f32(d).to_le_bytes());
        for x in block {
            out.push((x * inverse).round() as i8 as u8);
        }
    }
    out
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn put_value(out: &mut Vec<u8>, value: &Value) {
    const U32: u32 = 4;
    const I32: u32 = 5;
    const F32: u32 = 6;
    const BOOL: u32 = 7;
    const STRING: u32 = 8;
    const ARRAY: u32 = 9;
    match value {
        Value::U32(v) => {
            out.extend_from_slice(&U32.to_le_bytes());
            out.extend_from_slice(&v.to_le_bytes());
        }
        Value::F32(v) => {
            out.extend_from_slice(&F32.to_le_bytes());
            out.extend_from_slice(&v.to_le_bytes());
        }
        Value::Bool(v) => {
            out.extend_from_slice(&BOOL.to_le_bytes());
            out.push(u8::from(*v));
        }
        Value::Str(s) => {
            out.extend_from_slice(&STRING.to_le_bytes());
            put_str(out, s);
        }
        Value::Strings(list) => {
            out.extend_from_slice(&ARRAY.to_le_bytes());
            out.extend_from_slice(&STRING.to_le_bytes());
            out.extend_from_slice(&(list.len() as u64).to_le_bytes());
            for s in list {
                put_str(out, s);
            }
        }
        Value::I32s(list) => {
            out.extend_from_slice(&ARRAY.to_le_bytes());
            out.extend_from_slice(&I32.to_le_bytes());
            out.extend_from_slice(&(list.len() as u64).to_le_bytes());
            for v in list {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
}

fn pad(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(ALIGNMENT) {
        out.push(0);
    }
}

fn write(metadata: &[(&str, Value)], tensors: &[Tensor]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"GGUF");
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
    out.extend_from_slice(&(metadata.len() as u64).to_le_bytes());
    for (key, value) in metadata {
        put_str(&mut out, key);
        put_value(&mut out, value);
    }
    let mut offset = 0usize;
    for tensor in tensors {
        put_str(&mut out, &tensor.name);
        out.extend_from_slice(&(tensor.dims.len() as u32).to_le_bytes());
        for d in &tensor.dims {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&tensor.storage.ggml_type().to_le_bytes());
        out.extend_from_slice(&(offset as u64).to_le_bytes());
        offset += tensor.data.len().div_ceil(ALIGNMENT) * ALIGNMENT;
    }
    pad(&mut out);
    for tensor in tensors {
        let _ = out.write_all(&tensor.data);
        pad(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q8_0_blocks_hold_a_scale_and_32_rounded_bytes() {
        let mut values = vec![0f32; 64];
        values[0] = 1.27;
        values[1] = -0.635;
        values[40] = 2.54;
        let q = q8_0(&values);
        assert_eq!(q.len(), 2 * 34);
        let d = half::f16::from_le_bytes([q[0], q[1]]).to_f32();
        assert!((d - 0.01).abs() < 1e-4, "{d}");
        assert_eq!(q[2] as i8, 127);
        assert_eq!(q[3] as i8, -64);
        assert_eq!(q[34 + 2 + 8] as i8, 127);
        // An all-zero block is zeros, not NaN.
        assert!(q8_0(&[0.0; 32]).iter().all(|&b| b == 0));
    }

    #[test]
    fn word_pieces_are_marked_as_llama_cpp_reads_them() {
        let special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
        assert_eq!(phantom("##ing", &special), "ing");
        assert_eq!(phantom("harbour", &special), "\u{2581}harbour");
        assert_eq!(phantom("[CLS]", &special), "[CLS]");
        assert_eq!(phantom("[unused3]", &special), "[unused3]");
    }
}
