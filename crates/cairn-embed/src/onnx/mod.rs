//! Writes the bundled model as an ONNX graph for ONNX Runtime, from the fetched
//! safetensors: the BERT encoder, mean pooling over real tokens and L2 normalisation,
//! so the runtime hands back finished unit vectors.
//!
//! With `Precision::Int8` the encoder's matrix products take int8 weights, one scale per
//! output column (symmetric, per channel), and use the CPU's int8 dot products (VNNI
//! where there is one). The activations are quantised on the fly, two ways:
//! - the attention products use ONNX Runtime's `DynamicQuantizeMatMul`, one scale for the
//!   whole input;
//! - the feed-forward products, whose inputs have the widest range (GELU's outputs above
//!   all), get one scale per token, so a wide token does not coarsen the others of the
//!   run. Measured on the reference texts, the lowest cosine is 0.9917 with every product
//!   per tensor and 0.9968 this way; 256-token chunks of prose come within 0.984 of the
//!   f32 vectors, as they did when the feed-forward output products stayed f32, at 1.3
//!   times the speed.
//!
//! Attention is ONNX Runtime's fused `MultiHeadAttention`. Given no mask it runs in the
//! flash form, a block of scores at a time kept in cache, about 7% faster on full chunks
//! than the plain products and softmax; so the graph masks only a run that has padding
//! (an `If` on the mask), and a run of one text, as every full chunk and query is, takes
//! the unmasked branch.
//!
//! The word embeddings are looked up outside the graph (`WordTable`), as f16 for int8
//! (half the size), which moves vectors by less than 1e-5.

use std::path::Path;

use half::f16;
use prost::Message;
use safetensors::{Dtype, SafeTensors};

use graph::{Graph, Product, GELU_FLOOR};
use proto::*;

mod graph;
mod proto;

/// How the encoder's weights are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    F32,
    Int8,
}

/// The engine a graph is written for: each fuses and quantises its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// ONNX Runtime: its own int8 products and fused attention (`com.microsoft` operators).
    OnnxRuntime,
    /// OpenVINO: standard operators only; it keeps int8 weights int8 and fuses attention.
    OpenVino,
}

impl Precision {
    /// Its name in a model's name and a kept graph's.
    pub fn label(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::Int8 => "int8",
        }
    }
}

/// The BERT shape read from `config.json`.
#[derive(Debug, serde::Deserialize)]
pub struct Config {
    pub hidden_size: usize,
    pub num_attention_heads: usize,
    pub num_hidden_layers: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f32,
}

fn default_eps() -> f32 {
    1e-12
}

/// The serialised ONNX model: inputs `words` (float, batch × sequence × hidden: each
/// token's row of [`WordTable`]) and `attention_mask` (int64, batch × sequence), output
/// `sentence_embedding` (float, batch × hidden), each row a unit vector. The same weights
/// and precision give the same bytes.
pub fn bert(
    config: &Config,
    weights: &[u8],
    precision: Precision,
    runtime: Runtime,
) -> Result<Vec<u8>, String> {
    let weights = SafeTensors::deserialize(weights).map_err(|e| e.to_string())?;
    let mut g = Graph::new(&weights);
    let hidden = config.hidden_size;
    let heads = config.num_attention_heads;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(format!(
            "{hidden} hidden units do not split into {heads} heads"
        ));
    }
    let eps = config.layer_norm_eps;
    let (attention, feed_in, feed_out) = match (precision, runtime) {
        (Precision::F32, _) => (Product::F32, Product::F32, Product::F32),
        (Precision::Int8, Runtime::OnnxRuntime) => (
            Product::PerTensor,
            Product::PerToken { floor: None },
            Product::PerToken {
                floor: Some(GELU_FLOOR),
            },
        ),
        (Precision::Int8, Runtime::OpenVino) => (
            Product::Dequantized,
            Product::Dequantized,
            Product::Dequantized,
        ),
    };

    // Embeddings: the words' rows (looked up outside the graph: `WordTable`) + positions +
    // the one token type (0).
    let words = "words".to_string();
    let (shape, mut positions) = g.weight("embeddings.position_embeddings.weight")?;
    let (_, types) = g.weight("embeddings.token_type_embeddings.weight")?;
    for row in positions.chunks_exact_mut(hidden) {
        for (p, t) in row.iter_mut().zip(&types[..hidden]) {
            *p += t;
        }
    }
    let positions = g.floats("position_embeddings", &shape, &positions);
    let length = g.node(
        "",
        "Shape",
        &["attention_mask"],
        vec![("start", Attr::Int(1)), ("end", Attr::Int(2))],
    );
    let zero = g.longs(&[0]);
    let used = g.op("Slice", &[&positions, &zero, &length, &zero]);
    let mut x = g.op("Add", &[&words, &used]);
    x = g.layer_norm(&x, "embeddings.LayerNorm", eps)?;

    let attend = match runtime {
        Runtime::OnnxRuntime => fused_attention(&mut g),
        Runtime::OpenVino => plain_attention(&mut g),
    };
    let one = g.scalar(1.0);
    let half = g.scalar(0.5);
    let root2 = g.scalar(std::f32::consts::SQRT_2);
    for layer in 0..config.num_hidden_layers {
        let p = format!("encoder.layer.{layer}");
        let mut project =
            |name: &str| g.linear(&x, &format!("{p}.attention.self.{name}"), attention);
        let qkv = [project("query")?, project("key")?, project("value")?];
        let context = match &attend {
            Attend::Fused { padded, mask } => g.attention(padded, &qkv, mask, heads),
            Attend::Plain { bias } => g.plain_attention(&qkv, bias, (heads, hidden)),
        };
        let out = g.linear(&context, &format!("{p}.attention.output.dense"), attention)?;
        let sum = g.op("Add", &[&out, &x]);
        x = g.layer_norm(&sum, &format!("{p}.attention.output.LayerNorm"), eps)?;
        // GELU, the exact form: x/2 · (1 + erf(x/√2)).
        let f = g.linear(&x, &format!("{p}.intermediate.dense"), feed_in)?;
        let scaled = g.op("Div", &[&f, &root2]);
        let erf = g.op("Erf", &[&scaled]);
        let erf = g.op("Add", &[&erf, &one]);
        let halved = g.op("Mul", &[&f, &half]);
        let gelu = g.op("Mul", &[&halved, &erf]);
        let out = g.linear(&gelu, &format!("{p}.output.dense"), feed_out)?;
        let sum = g.op("Add", &[&out, &x]);
        x = g.layer_norm(&sum, &format!("{p}.output.LayerNorm"), eps)?;
    }

    // Mean over the real tokens, then unit length.
    let mask = g.node(
        "",
        "Cast",
        &["attention_mask"],
        vec![("to", Attr::Int(FLOAT as i64))],
    );
    let axis2 = g.longs(&[2]);
    let axis1 = g.longs(&[1]);
    let weights3 = g.op("Unsqueeze", &[&mask, &axis2]);
    let masked = g.op("Mul", &[&x, &weights3]);
    let summed = g.node(
        "",
        "ReduceSum",
        &[&masked, &axis1],
        vec![("keepdims", Attr::Int(0))],
    );
    let count = g.node(
        "",
        "ReduceSum",
        &[&weights3, &axis1],
        vec![("keepdims", Attr::Int(0))],
    );
    let tiny = g.scalar(1e-9);
    let count = g.op("Max", &[&count, &tiny]);
    let mean = g.op("Div", &[&summed, &count]);
    let norm = g.node(
        "",
        "ReduceL2",
        &[&mean],
        vec![("axes", Attr::Ints(vec![-1])), ("keepdims", Attr::Int(1))],
    );
    let eps12 = g.scalar(1e-12);
    let norm = g.op("Max", &[&norm, &eps12]);
    g.op("Div", &[&mean, &norm]);
    if let Some(last) = g.nodes.last_mut() {
        last.output = vec!["sentence_embedding".into()];
    }

    let batch: Result<i64, &str> = Err("batch");
    let model = ModelProto {
        ir_version: 8,
        producer_name: "cairn-embed".into(),
        graph: Some(GraphProto {
            node: g.nodes,
            name: "all-MiniLM-L6-v2".into(),
            initializer: g.initializers,
            input: vec![
                input("words", FLOAT, &[batch, Err("sequence"), Ok(hidden as i64)]),
                input("attention_mask", INT64, &[batch, Err("sequence")]),
            ],
            output: vec![input(
                "sentence_embedding",
                FLOAT,
                &[batch, Ok(hidden as i64)],
            )],
        }),
        opset_import: vec![
            OperatorSetIdProto {
                domain: String::new(),
                version: 17,
            },
            OperatorSetIdProto {
                domain: "com.microsoft".into(),
                version: 1,
            },
        ],
    };
    Ok(model.encode_to_vec())
}

/// How attention masks padding out.
enum Attend {
    /// The runtime's fused kernel, given the mask only when a run has padding.
    Fused { padded: String, mask: String },
    /// Plain operators: `bias` is added to the scores.
    Plain { bias: String },
}

/// Attention takes ONNX Runtime's fused kernel. Without a mask it is the flash form
/// (scores kept in cache, never written out whole), so a run with no padding (one text,
/// or texts of one length) takes that branch; a run with padding masks it out.
fn fused_attention(g: &mut Graph) -> Attend {
    let mask = g.node(
        "",
        "Cast",
        &["attention_mask"],
        vec![("to", Attr::Int(INT32 as i64))],
    );
    let lowest = g.node("", "ReduceMin", &[&mask], vec![("keepdims", Attr::Int(0))]);
    let one32 = g.constant(INT32, &[], 1i32.to_le_bytes().to_vec());
    let padded = g.op("Less", &[&lowest, &one32]);
    Attend::Fused { padded, mask }
}

/// Attention in plain operators (OpenVINO fuses them itself): padding gets -10⁴ added to
/// its scores, which leaves it no weight (not the lowest float: rounded to bf16 that is
/// -∞, and a run's all-padding row would be NaN).
fn plain_attention(g: &mut Graph) -> Attend {
    let mask = g.node(
        "",
        "Cast",
        &["attention_mask"],
        vec![("to", Attr::Int(FLOAT as i64))],
    );
    let one = g.scalar(1.0);
    let lowest = g.scalar(-1e4);
    let padding = g.op("Sub", &[&one, &mask]);
    let bias = g.op("Mul", &[&padding, &lowest]);
    let axes = g.longs(&[1, 2]);
    let bias = g.op("Unsqueeze", &[&bias, &axes]);
    Attend::Plain { bias }
}

/// The f32 tensor `key` of `weights`, with its shape.
fn weight(weights: &SafeTensors, key: &str) -> Result<(Vec<usize>, Vec<f32>), String> {
    let view = weights.tensor(key).map_err(|e| format!("{key}: {e}"))?;
    if view.dtype() != Dtype::F32 {
        return Err(format!("{key} is {:?}, expected F32", view.dtype()));
    }
    let data = view
        .data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok((view.shape().to_vec(), data))
}

/// The model's word embeddings, looked up for the graph's `words` input: held once per
/// process however many sessions run the graph (a table in the graph is a copy in each
/// session, 23 MiB at f16). Rows are rounded to f16 for the int8 graph, as it was
/// measured with.
pub struct WordTable {
    hidden: usize,
    rows: Rows,
}

enum Rows {
    F16(Vec<f16>),
    F32(Vec<f32>),
    /// Kept on disk (see [`WordTable::to_bytes`]): a run reads only its tokens' rows, so a
    /// process that embeds a query holds none of the table.
    Kept {
        file: std::fs::File,
        f16: bool,
        count: usize,
    },
}

/// What a kept word table begins with: these bytes, then the row length and the number
/// of rows (u32, little-endian), then 0 for f16 rows or 1 for f32, then the rows.
const KEPT_MAGIC: &[u8; 8] = b"CAIRNWT1";
const KEPT_HEADER: usize = 8 + 4 + 4 + 1;

impl WordTable {
    /// The table of the safetensors `weights`, at `precision`.
    pub fn new(weights: &[u8], precision: Precision) -> Result<Self, String> {
        let weights = SafeTensors::deserialize(weights).map_err(|e| e.to_string())?;
        let (shape, words) = weight(&weights, "embeddings.word_embeddings.weight")?;
        let [_, hidden] = shape[..] else {
            return Err(format!("word embeddings of shape {shape:?}"));
        };
        let rows = match precision {
            Precision::Int8 => Rows::F16(words.iter().map(|v| f16::from_f32(*v)).collect()),
            Precision::F32 => Rows::F32(words),
        };
        Ok(Self { hidden, rows })
    }

    /// The table kept at `path` (as [`WordTable::to_bytes`] wrote it), at `precision`; an error when
    /// there is none or it is not whole.
    pub fn open(path: &Path, precision: Precision) -> Result<Self, String> {
        use std::os::unix::fs::FileExt;
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut header = [0u8; KEPT_HEADER];
        file.read_exact_at(&mut header, 0)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let number = |at: usize| {
            let mut bytes = [0u8; 4];
            bytes.copy_from_slice(&header[at..at + 4]);
            u32::from_le_bytes(bytes) as usize
        };
        let (hidden, count, f16) = (number(8), number(12), header[16] == 0);
        let size = if f16 { 2 } else { 4 };
        let whole = (KEPT_HEADER + hidden * count * size) as u64;
        let len = file.metadata().map_err(|e| e.to_string())?.len();
        let wanted = precision == Precision::Int8;
        if &header[..8] != KEPT_MAGIC || header[16] > 1 || f16 != wanted || len != whole {
            return Err(format!("{} is not a whole word table", path.display()));
        }
        Ok(Self {
            hidden,
            rows: Rows::Kept { file, f16, count },
        })
    }

    /// The table as [`WordTable::open`] reads it back (nothing for a table that is kept
    /// already).
    pub fn to_bytes(&self) -> Option<Vec<u8>> {
        let (count, f16, body): (usize, bool, Vec<u8>) = match &self.rows {
            Rows::F16(rows) => (
                rows.len(),
                true,
                rows.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ),
            Rows::F32(rows) => (
                rows.len(),
                false,
                rows.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ),
            Rows::Kept { .. } => return None,
        };
        let count = count / self.hidden.max(1);
        let mut bytes = Vec::with_capacity(KEPT_HEADER + body.len());
        bytes.extend_from_slice(KEPT_MAGIC);
        bytes.extend_from_slice(&(self.hidden as u32).to_le_bytes());
        bytes.extend_from_slice(&(count as u32).to_le_bytes());
        bytes.push(u8::from(!f16));
        bytes.extend_from_slice(&body);
        Some(bytes)
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// Appends the row of token `id` to `out`; an id past the table is an error.
    pub fn push_row(&self, id: u32, out: &mut Vec<f32>) -> Result<(), String> {
        let start = id as usize * self.hidden;
        let end = start + self.hidden;
        let missing = || format!("token {id} is not in the word table");
        match &self.rows {
            Rows::F16(rows) => out.extend(
                rows.get(start..end)
                    .ok_or_else(missing)?
                    .iter()
                    .map(|v| v.to_f32()),
            ),
            Rows::F32(rows) => out.extend_from_slice(rows.get(start..end).ok_or_else(missing)?),
            Rows::Kept { file, f16, count } => {
                use std::os::unix::fs::FileExt;
                if id as usize >= *count {
                    return Err(missing());
                }
                let size = if *f16 { 2 } else { 4 };
                let mut row = vec![0u8; self.hidden * size];
                file.read_exact_at(&mut row, (KEPT_HEADER + start * size) as u64)
                    .map_err(|e| format!("cannot read the word table: {e}"))?;
                if *f16 {
                    out.extend(
                        row.chunks_exact(2)
                            .map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32()),
                    );
                } else {
                    out.extend(
                        row.chunks_exact(4)
                            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                    );
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token id past the table (a tokenizer that does not match the weights) is an
    /// error, not a read past the rows; f16 rows come back as f32.
    #[test]
    fn a_row_past_the_table_is_an_error() {
        let table = WordTable {
            hidden: 2,
            rows: Rows::F16([1.0, 2.0, 3.0, 4.0].map(f16::from_f32).to_vec()),
        };
        let mut out = Vec::new();
        table.push_row(1, &mut out).unwrap();
        assert_eq!(out, [3.0, 4.0]);
        let error = table.push_row(2, &mut out).unwrap_err();
        assert!(error.contains("token 2"), "{error}");
        assert_eq!(out.len(), 2);
    }

    /// A kept table gives the rows the table had; one cut short, of the other precision
    /// or not a table at all is refused (the table is then made from the weights).
    #[test]
    fn a_kept_table_reads_its_rows_and_a_damaged_one_is_refused() {
        let cache = tempfile::tempdir().unwrap();
        let path = cache.path().join("graph.onnx.words");
        assert!(
            WordTable::open(&path, Precision::Int8).is_err(),
            "none kept"
        );
        let table = WordTable {
            hidden: 2,
            rows: Rows::F16([1.0, 2.0, 3.0, 4.0].map(f16::from_f32).to_vec()),
        };
        std::fs::write(&path, table.to_bytes().unwrap()).unwrap();
        let kept = WordTable::open(&path, Precision::Int8).unwrap();
        let mut out = Vec::new();
        kept.push_row(1, &mut out).unwrap();
        kept.push_row(0, &mut out).unwrap();
        assert_eq!(out, [3.0, 4.0, 1.0, 2.0]);
        assert!(kept.push_row(2, &mut out).unwrap_err().contains("token 2"));
        assert!(WordTable::open(&path, Precision::F32).is_err());
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert!(WordTable::open(&path, Precision::Int8).is_err());
        std::fs::write(&path, b"not a table at all, but long enough").unwrap();
        assert!(WordTable::open(&path, Precision::Int8).is_err());
    }
}
