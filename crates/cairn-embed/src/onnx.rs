//! Writes the bundled model as an ONNX graph for ONNX Runtime, from the fetched
//! safetensors: the BERT encoder, mean pooling over real tokens and L2 normalisation,
//! so the runtime hands back finished unit vectors.
//!
//! The messages below are the part of `onnx.proto` the graph needs, declared for prost
//! with their field numbers from the ONNX specification (no crate keeps current ONNX
//! messages without a protobuf compiler at build time).
//!
//! With `Precision::Int8` the encoder's matrix products take int8 weights, one scale per
//! output column (symmetric, per channel), through ONNX Runtime's `DynamicQuantizeMatMul`,
//! which quantises the activations on the fly and uses the CPU's int8 dot products
//! (VNNI where there is one). Measured on the reference texts and on 256-token chunks of
//! prose, quantising every product costs too much (lowest cosine 0.986 to the f32
//! vectors); the feed-forward output products (inputs after GELU, with the widest range)
//! stay f32, which keeps the lowest cosine at 0.994. The word embeddings are stored as
//! f16 (half the size; a gather then a cast), which moves vectors by less than 1e-5.

use std::collections::HashMap;

use half::f16;
use prost::Message;
use safetensors::{Dtype, SafeTensors};

/// How the encoder's weights are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    F32,
    Int8,
}

#[derive(Clone, PartialEq, Message)]
struct ModelProto {
    #[prost(int64, tag = "1")]
    ir_version: i64,
    #[prost(string, tag = "2")]
    producer_name: String,
    #[prost(message, optional, tag = "7")]
    graph: Option<GraphProto>,
    #[prost(message, repeated, tag = "8")]
    opset_import: Vec<OperatorSetIdProto>,
}

#[derive(Clone, PartialEq, Message)]
struct OperatorSetIdProto {
    #[prost(string, tag = "1")]
    domain: String,
    #[prost(int64, tag = "2")]
    version: i64,
}

#[derive(Clone, PartialEq, Message)]
struct GraphProto {
    #[prost(message, repeated, tag = "1")]
    node: Vec<NodeProto>,
    #[prost(string, tag = "2")]
    name: String,
    #[prost(message, repeated, tag = "5")]
    initializer: Vec<TensorProto>,
    #[prost(message, repeated, tag = "11")]
    input: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "12")]
    output: Vec<ValueInfoProto>,
}

#[derive(Clone, PartialEq, Message)]
struct NodeProto {
    #[prost(string, repeated, tag = "1")]
    input: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    output: Vec<String>,
    #[prost(string, tag = "3")]
    name: String,
    #[prost(string, tag = "4")]
    op_type: String,
    #[prost(message, repeated, tag = "5")]
    attribute: Vec<AttributeProto>,
    #[prost(string, tag = "7")]
    domain: String,
}

#[derive(Clone, PartialEq, Message)]
struct AttributeProto {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(float, optional, tag = "2")]
    f: Option<f32>,
    #[prost(int64, optional, tag = "3")]
    i: Option<i64>,
    #[prost(int64, repeated, packed = "false", tag = "8")]
    ints: Vec<i64>,
    /// AttributeType: FLOAT 1, INT 2, INTS 7.
    #[prost(int32, tag = "20")]
    r#type: i32,
}

#[derive(Clone, PartialEq, Message)]
struct TensorProto {
    #[prost(int64, repeated, packed = "false", tag = "1")]
    dims: Vec<i64>,
    /// DataType: FLOAT 1, INT8 3, INT64 7, FLOAT16 10.
    #[prost(int32, tag = "2")]
    data_type: i32,
    #[prost(string, tag = "8")]
    name: String,
    #[prost(bytes = "vec", tag = "9")]
    raw_data: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
struct ValueInfoProto {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(message, optional, tag = "2")]
    r#type: Option<TypeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct TypeProto {
    #[prost(message, optional, tag = "1")]
    tensor_type: Option<TensorTypeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct TensorTypeProto {
    #[prost(int32, tag = "1")]
    elem_type: i32,
    #[prost(message, optional, tag = "2")]
    shape: Option<TensorShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct TensorShapeProto {
    #[prost(message, repeated, tag = "1")]
    dim: Vec<Dimension>,
}

#[derive(Clone, PartialEq, Message)]
struct Dimension {
    #[prost(int64, optional, tag = "1")]
    dim_value: Option<i64>,
    #[prost(string, optional, tag = "2")]
    dim_param: Option<String>,
}

const FLOAT: i32 = 1;
const INT8: i32 = 3;
const INT64: i32 = 7;
const FLOAT16: i32 = 10;

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

enum Attr {
    Int(i64),
    Ints(Vec<i64>),
    Float(f32),
}

fn attribute(name: &str, value: Attr) -> AttributeProto {
    let mut a = AttributeProto {
        name: name.to_string(),
        ..AttributeProto::default()
    };
    match value {
        Attr::Int(i) => (a.i, a.r#type) = (Some(i), 2),
        Attr::Ints(ints) => (a.ints, a.r#type) = (ints, 7),
        Attr::Float(f) => (a.f, a.r#type) = (Some(f), 1),
    }
    a
}

struct Graph<'a> {
    weights: &'a SafeTensors<'a>,
    nodes: Vec<NodeProto>,
    initializers: Vec<TensorProto>,
    constants: HashMap<String, String>,
}

impl<'a> Graph<'a> {
    fn node(
        &mut self,
        domain: &str,
        op: &str,
        inputs: &[&str],
        attrs: Vec<(&str, Attr)>,
    ) -> String {
        let name = format!("{}_{}", op.to_ascii_lowercase(), self.nodes.len());
        self.nodes.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![name.clone()],
            name: name.clone(),
            op_type: op.to_string(),
            attribute: attrs.into_iter().map(|(n, v)| attribute(n, v)).collect(),
            domain: domain.to_string(),
        });
        name
    }

    fn op(&mut self, op: &str, inputs: &[&str]) -> String {
        self.node("", op, inputs, Vec::new())
    }

    fn tensor(&mut self, name: &str, dims: &[usize], data_type: i32, raw: Vec<u8>) -> String {
        self.initializers.push(TensorProto {
            dims: dims.iter().map(|&d| d as i64).collect(),
            data_type,
            name: name.to_string(),
            raw_data: raw,
        });
        name.to_string()
    }

    fn floats(&mut self, name: &str, dims: &[usize], data: &[f32]) -> String {
        let raw = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.tensor(name, dims, FLOAT, raw)
    }

    /// A small constant, written once however often it is used.
    fn constant(&mut self, data_type: i32, dims: &[usize], raw: Vec<u8>) -> String {
        let key = format!("{data_type}:{dims:?}:{raw:?}");
        if let Some(name) = self.constants.get(&key) {
            return name.clone();
        }
        let name = format!("const_{}", self.constants.len());
        self.tensor(&name, dims, data_type, raw);
        self.constants.insert(key, name.clone());
        name
    }

    fn scalar(&mut self, value: f32) -> String {
        self.constant(FLOAT, &[], value.to_le_bytes().to_vec())
    }

    fn longs(&mut self, values: &[i64]) -> String {
        let raw = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.constant(INT64, &[values.len()], raw)
    }

    /// A weight of the safetensors file as f32, with its shape.
    fn weight(&self, key: &str) -> Result<(Vec<usize>, Vec<f32>), String> {
        let view = self
            .weights
            .tensor(key)
            .map_err(|e| format!("{key}: {e}"))?;
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

    fn vector(&mut self, key: &str) -> Result<String, String> {
        let (shape, data) = self.weight(key)?;
        Ok(self.floats(key, &shape, &data))
    }

    /// `x · Wᵀ + b` for the linear layer `prefix` (weights stored `[out, in]`).
    fn linear(&mut self, x: &str, prefix: &str, int8: bool) -> Result<String, String> {
        let (shape, w) = self.weight(&format!("{prefix}.weight"))?;
        let [outs, ins] = shape[..] else {
            return Err(format!("{prefix}.weight is not a matrix"));
        };
        let bias = self.vector(&format!("{prefix}.bias"))?;
        if !int8 {
            let mut t = vec![0f32; w.len()];
            for o in 0..outs {
                for i in 0..ins {
                    t[i * outs + o] = w[o * ins + i];
                }
            }
            let wt = self.floats(&format!("{prefix}.weight_t"), &[ins, outs], &t);
            let y = self.op("MatMul", &[x, &wt]);
            return Ok(self.op("Add", &[&y, &bias]));
        }
        let scales: Vec<f32> = (0..outs)
            .map(|o| {
                let max = w[o * ins..(o + 1) * ins]
                    .iter()
                    .fold(0f32, |m, v| m.max(v.abs()));
                if max > 0.0 {
                    max / 127.0
                } else {
                    1.0
                }
            })
            .collect();
        let mut q = vec![0u8; w.len()];
        for o in 0..outs {
            for i in 0..ins {
                let v = (w[o * ins + i] / scales[o]).round().clamp(-127.0, 127.0) as i8;
                q[i * outs + o] = v as u8;
            }
        }
        let wq = self.tensor(&format!("{prefix}.weight_q"), &[ins, outs], INT8, q);
        let scale = self.floats(&format!("{prefix}.weight_scale"), &[outs], &scales);
        let zero = self.tensor(
            &format!("{prefix}.weight_zero"),
            &[outs],
            INT8,
            vec![0; outs],
        );
        Ok(self.node(
            "com.microsoft",
            "DynamicQuantizeMatMul",
            &[x, &wq, &scale, &zero, &bias],
            Vec::new(),
        ))
    }

    fn layer_norm(&mut self, x: &str, prefix: &str, eps: f32) -> Result<String, String> {
        let gamma = self.vector(&format!("{prefix}.weight"))?;
        let beta = self.vector(&format!("{prefix}.bias"))?;
        Ok(self.node(
            "",
            "LayerNormalization",
            &[x, &gamma, &beta],
            vec![("axis", Attr::Int(-1)), ("epsilon", Attr::Float(eps))],
        ))
    }
}

fn input(name: &str, elem_type: i32, dims: &[Result<i64, &str>]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| match d {
            Ok(v) => Dimension {
                dim_value: Some(*v),
                dim_param: None,
            },
            Err(p) => Dimension {
                dim_value: None,
                dim_param: Some(p.to_string()),
            },
        })
        .collect();
    ValueInfoProto {
        name: name.to_string(),
        r#type: Some(TypeProto {
            tensor_type: Some(TensorTypeProto {
                elem_type,
                shape: Some(TensorShapeProto { dim }),
            }),
        }),
    }
}

/// The serialised ONNX model: inputs `input_ids` and `attention_mask` (int64, batch ×
/// sequence), output `sentence_embedding` (float, batch × hidden), each row a unit vector.
/// The same weights and precision give the same bytes.
pub fn bert(config: &Config, weights: &[u8], precision: Precision) -> Result<Vec<u8>, String> {
    let weights = SafeTensors::deserialize(weights).map_err(|e| e.to_string())?;
    let mut g = Graph {
        weights: &weights,
        nodes: Vec::new(),
        initializers: Vec::new(),
        constants: HashMap::new(),
    };
    let hidden = config.hidden_size;
    let heads = config.num_attention_heads;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(format!(
            "{hidden} hidden units do not split into {heads} heads"
        ));
    }
    let head = hidden / heads;
    let eps = config.layer_norm_eps;
    let int8 = precision == Precision::Int8;

    // Embeddings: words (f16 when quantised) + positions + the one token type (0).
    let (shape, words) = g.weight("embeddings.word_embeddings.weight")?;
    let words = if int8 {
        let raw = words
            .iter()
            .flat_map(|v| f16::from_f32(*v).to_le_bytes())
            .collect();
        let table = g.tensor("word_embeddings", &shape, FLOAT16, raw);
        let picked = g.node(
            "",
            "Gather",
            &[&table, "input_ids"],
            vec![("axis", Attr::Int(0))],
        );
        g.node(
            "",
            "Cast",
            &[&picked],
            vec![("to", Attr::Int(FLOAT as i64))],
        )
    } else {
        let table = g.floats("word_embeddings", &shape, &words);
        g.node(
            "",
            "Gather",
            &[&table, "input_ids"],
            vec![("axis", Attr::Int(0))],
        )
    };
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
        &["input_ids"],
        vec![("start", Attr::Int(1)), ("end", Attr::Int(2))],
    );
    let zero = g.longs(&[0]);
    let used = g.op("Slice", &[&positions, &zero, &length, &zero]);
    let mut x = g.op("Add", &[&words, &used]);
    x = g.layer_norm(&x, "embeddings.LayerNorm", eps)?;

    // Padding is masked out of attention with the lowest float added to its scores.
    let mask = g.node(
        "",
        "Cast",
        &["attention_mask"],
        vec![("to", Attr::Int(FLOAT as i64))],
    );
    let one = g.scalar(1.0);
    let lowest = g.scalar(f32::MIN);
    let padding = g.op("Sub", &[&one, &mask]);
    let bias = g.op("Mul", &[&padding, &lowest]);
    let axes = g.longs(&[1, 2]);
    let bias = g.op("Unsqueeze", &[&bias, &axes]);
    let split = g.longs(&[0, 0, heads as i64, head as i64]);
    let joined = g.longs(&[0, 0, hidden as i64]);
    let scale = g.scalar(1.0 / (head as f32).sqrt());
    let half = g.scalar(0.5);
    let root2 = g.scalar(std::f32::consts::SQRT_2);
    for layer in 0..config.num_hidden_layers {
        let p = format!("encoder.layer.{layer}");
        let project = |g: &mut Graph, name: &str, perm: Vec<i64>| -> Result<String, String> {
            let y = g.linear(&x, &format!("{p}.attention.self.{name}"), int8)?;
            let y = g.op("Reshape", &[&y, &split]);
            Ok(g.node("", "Transpose", &[&y], vec![("perm", Attr::Ints(perm))]))
        };
        let q = project(&mut g, "query", vec![0, 2, 1, 3])?;
        let k = project(&mut g, "key", vec![0, 2, 3, 1])?;
        let v = project(&mut g, "value", vec![0, 2, 1, 3])?;
        let q = g.op("Mul", &[&q, &scale]);
        let scores = g.op("MatMul", &[&q, &k]);
        let scores = g.op("Add", &[&scores, &bias]);
        let weights = g.node("", "Softmax", &[&scores], vec![("axis", Attr::Int(-1))]);
        let context = g.op("MatMul", &[&weights, &v]);
        let context = g.node(
            "",
            "Transpose",
            &[&context],
            vec![("perm", Attr::Ints(vec![0, 2, 1, 3]))],
        );
        let context = g.op("Reshape", &[&context, &joined]);
        let out = g.linear(&context, &format!("{p}.attention.output.dense"), int8)?;
        let sum = g.op("Add", &[&out, &x]);
        x = g.layer_norm(&sum, &format!("{p}.attention.output.LayerNorm"), eps)?;
        // GELU, the exact form: x/2 · (1 + erf(x/√2)).
        let f = g.linear(&x, &format!("{p}.intermediate.dense"), int8)?;
        let scaled = g.op("Div", &[&f, &root2]);
        let erf = g.op("Erf", &[&scaled]);
        let erf = g.op("Add", &[&erf, &one]);
        let halved = g.op("Mul", &[&f, &half]);
        let gelu = g.op("Mul", &[&halved, &erf]);
        let out = g.linear(&gelu, &format!("{p}.output.dense"), false)?;
        let sum = g.op("Add", &[&out, &x]);
        x = g.layer_norm(&sum, &format!("{p}.output.LayerNorm"), eps)?;
    }

    // Mean over the real tokens, then unit length.
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
                input("input_ids", INT64, &[batch, Err("sequence")]),
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
