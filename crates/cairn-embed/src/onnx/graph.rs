//! The graph builder `bert` writes with: nodes, weights and constants, and the layers
//! made of them (matrix products at each precision, attention, layer norms).

use std::collections::HashMap;

use safetensors::SafeTensors;

use super::proto::*;
use super::weight;

/// How one matrix product computes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Product {
    F32,
    /// Int8, the input quantised with one scale for the whole tensor.
    PerTensor,
    /// Int8, the input quantised with one scale per token; `floor` is a bound known in
    /// advance for the inputs' lowest value (so only their highest is looked for).
    PerToken {
        floor: Option<f32>,
    },
    /// Int8 weights turned back to f32 in the graph (`DequantizeLinear`), for an engine
    /// that sees the pattern, keeps the weights int8 and quantises the inputs itself.
    Dequantized,
}

/// The lowest value GELU gives (at x ≈ -0.75), rounded away from zero.
pub(super) const GELU_FLOOR: f32 = -0.17;

pub(super) struct Graph<'a> {
    pub(super) weights: &'a SafeTensors<'a>,
    pub(super) nodes: Vec<NodeProto>,
    pub(super) initializers: Vec<TensorProto>,
    constants: HashMap<String, String>,
}

impl<'a> Graph<'a> {
    pub(super) fn new(weights: &'a SafeTensors<'a>) -> Self {
        Self {
            weights,
            nodes: Vec::new(),
            initializers: Vec::new(),
            constants: HashMap::new(),
        }
    }

    pub(super) fn node(
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

    pub(super) fn op(&mut self, op: &str, inputs: &[&str]) -> String {
        self.node("", op, inputs, Vec::new())
    }

    pub(super) fn tensor(
        &mut self,
        name: &str,
        dims: &[usize],
        data_type: i32,
        raw: Vec<u8>,
    ) -> String {
        self.initializers.push(TensorProto {
            dims: dims.iter().map(|&d| d as i64).collect(),
            data_type,
            name: name.to_string(),
            raw_data: raw,
        });
        name.to_string()
    }

    pub(super) fn floats(&mut self, name: &str, dims: &[usize], data: &[f32]) -> String {
        let raw = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.tensor(name, dims, FLOAT, raw)
    }

    /// A small constant, written once however often it is used.
    pub(super) fn constant(&mut self, data_type: i32, dims: &[usize], raw: Vec<u8>) -> String {
        let key = format!("{data_type}:{dims:?}:{raw:?}");
        if let Some(name) = self.constants.get(&key) {
            return name.clone();
        }
        let name = format!("const_{}", self.constants.len());
        self.tensor(&name, dims, data_type, raw);
        self.constants.insert(key, name.clone());
        name
    }

    pub(super) fn scalar(&mut self, value: f32) -> String {
        self.constant(FLOAT, &[], value.to_le_bytes().to_vec())
    }

    pub(super) fn longs(&mut self, values: &[i64]) -> String {
        let raw = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.constant(INT64, &[values.len()], raw)
    }

    /// A weight of the safetensors file as f32, with its shape.
    pub(super) fn weight(&self, key: &str) -> Result<(Vec<usize>, Vec<f32>), String> {
        weight(self.weights, key)
    }

    pub(super) fn vector(&mut self, key: &str) -> Result<String, String> {
        let (shape, data) = self.weight(key)?;
        Ok(self.floats(key, &shape, &data))
    }

    fn reduce(&mut self, op: &str, x: &str) -> String {
        self.node(
            "",
            op,
            &[x],
            vec![("axes", Attr::Ints(vec![-1])), ("keepdims", Attr::Int(1))],
        )
    }

    /// `x · Wᵀ + b` for the linear layer `prefix` (weights stored `[out, in]`).
    pub(super) fn linear(
        &mut self,
        x: &str,
        prefix: &str,
        product: Product,
    ) -> Result<String, String> {
        let (shape, w) = self.weight(&format!("{prefix}.weight"))?;
        let [outs, ins] = shape[..] else {
            return Err(format!("{prefix}.weight is not a matrix"));
        };
        let bias = self.vector(&format!("{prefix}.bias"))?;
        if let Product::F32 = product {
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
        match product {
            Product::Dequantized => {
                let w = self.node(
                    "",
                    "DequantizeLinear",
                    &[&wq, &scale],
                    vec![("axis", Attr::Int(1))],
                );
                let y = self.op("MatMul", &[x, &w]);
                Ok(self.op("Add", &[&y, &bias]))
            }
            Product::PerToken { floor } => {
                Ok(self.per_token(x, (&wq, &scale, &bias), (ins, outs), floor))
            }
            _ => {
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
        }
    }

    /// The int8 product of `x` (batch × sequence × `ins`) with the weights, each token
    /// quantised with its own scale: its largest magnitude maps to 127, as unsigned bytes
    /// around 128 (the form the CPU's int8 dot products take). Flattened to one row per
    /// token, so `QuantizeLinear` applies the scales along the rows in one pass.
    fn per_token(
        &mut self,
        x: &str,
        (wq, w_scale, bias): (&str, &str, &str),
        (ins, outs): (usize, usize),
        floor: Option<f32>,
    ) -> String {
        let highest = self.reduce("ReduceMax", x);
        let magnitude = match floor {
            Some(floor) => {
                let floor = self.scalar(-floor);
                self.op("Max", &[&highest, &floor])
            }
            None => {
                let lowest = self.reduce("ReduceMin", x);
                let lowest = self.op("Neg", &[&lowest]);
                let magnitude = self.op("Max", &[&highest, &lowest]);
                let tiny = self.scalar(1e-12);
                self.op("Max", &[&magnitude, &tiny])
            }
        };
        let q127 = self.scalar(127.0);
        let token_scale = self.op("Div", &[&magnitude, &q127]);
        let flat = self.longs(&[-1]);
        let token_scale = self.op("Reshape", &[&token_scale, &flat]);
        // One zero point per row, as QuantizeLinear wants along an axis: 128 each.
        let zero = self.scalar(0.0);
        let middle = self.scalar(128.0);
        let zeros = self.op("Mul", &[&token_scale, &zero]);
        let zeros = self.op("Add", &[&zeros, &middle]);
        let zeros = self.node("", "Cast", &[&zeros], vec![("to", Attr::Int(UINT8 as i64))]);
        let rows = self.longs(&[-1, ins as i64]);
        let x2 = self.op("Reshape", &[x, &rows]);
        let xq = self.node(
            "",
            "QuantizeLinear",
            &[&x2, &token_scale, &zeros],
            vec![("axis", Attr::Int(0))],
        );
        let zero_point = self.constant(UINT8, &[], vec![128]);
        let y = self.op("MatMulInteger", &[&xq, wq, &zero_point]);
        let y = self.node("", "Cast", &[&y], vec![("to", Attr::Int(FLOAT as i64))]);
        let column = self.longs(&[-1, 1]);
        let token_scale = self.op("Reshape", &[&token_scale, &column]);
        let y = self.op("Mul", &[&y, &token_scale]);
        let y = self.op("Mul", &[&y, w_scale]);
        let y = self.op("Add", &[&y, bias]);
        // Back to batch × sequence × outs.
        let shape = self.op("Shape", &[x]);
        let (from, to) = (self.longs(&[0]), self.longs(&[2]));
        let lead = self.op("Slice", &[&shape, &from, &to, &from]);
        let outs = self.longs(&[outs as i64]);
        let shape = self.node("", "Concat", &[&lead, &outs], vec![("axis", Attr::Int(0))]);
        self.op("Reshape", &[&y, &shape])
    }

    /// Multi-head attention over the projections `[q, k, v]` (batch × sequence × hidden,
    /// scaled by 1/√head inside): masked by `mask` (int32, batch × sequence) when `padded`,
    /// unmasked otherwise.
    pub(super) fn attention(
        &mut self,
        padded: &str,
        qkv: &[String; 3],
        mask: &str,
        heads: usize,
    ) -> String {
        let name = format!("if_{}", self.nodes.len());
        let branch = |branch: &str, inputs: Vec<String>| {
            let out = format!("{name}_{branch}");
            let node = NodeProto {
                input: inputs,
                output: vec![out.clone()],
                name: out.clone(),
                op_type: "MultiHeadAttention".into(),
                attribute: vec![attribute("num_heads", Attr::Int(heads as i64))],
                domain: "com.microsoft".into(),
            };
            Attr::Graph(GraphProto {
                node: vec![node],
                name: out.clone(),
                output: vec![any_floats(&out)],
                ..GraphProto::default()
            })
        };
        let unmasked = qkv.to_vec();
        // Inputs after the three: the bias (none), then the keys' padding mask.
        let masked = [qkv.to_vec(), vec![String::new(), mask.to_string()]].concat();
        let (then, otherwise) = (branch("masked", masked), branch("unmasked", unmasked));
        self.node(
            "",
            "If",
            &[padded],
            vec![("then_branch", then), ("else_branch", otherwise)],
        )
    }

    /// Multi-head attention in plain operators, the form an engine that fuses attention
    /// itself recognises: `bias` (batch × 1 × 1 × sequence) is added to the scores, the
    /// lowest float where a token is padding.
    pub(super) fn plain_attention(
        &mut self,
        qkv: &[String; 3],
        bias: &str,
        (heads, hidden): (usize, usize),
    ) -> String {
        let [q, k, v] = qkv;
        let head = hidden / heads;
        let split = self.longs(&[0, 0, heads as i64, head as i64]);
        let joined = self.longs(&[0, 0, hidden as i64]);
        let mut heads_of = |x: &str, perm: Vec<i64>| {
            let y = self.op("Reshape", &[x, &split]);
            self.node("", "Transpose", &[&y], vec![("perm", Attr::Ints(perm))])
        };
        let (q, k, v) = (
            heads_of(q, vec![0, 2, 1, 3]),
            heads_of(k, vec![0, 2, 3, 1]),
            heads_of(v, vec![0, 2, 1, 3]),
        );
        let scale = self.scalar(1.0 / (head as f32).sqrt());
        let q = self.op("Mul", &[&q, &scale]);
        let scores = self.op("MatMul", &[&q, &k]);
        let scores = self.op("Add", &[&scores, bias]);
        let weights = self.node("", "Softmax", &[&scores], vec![("axis", Attr::Int(-1))]);
        let context = self.op("MatMul", &[&weights, &v]);
        let context = self.node(
            "",
            "Transpose",
            &[&context],
            vec![("perm", Attr::Ints(vec![0, 2, 1, 3]))],
        );
        self.op("Reshape", &[&context, &joined])
    }

    pub(super) fn layer_norm(&mut self, x: &str, prefix: &str, eps: f32) -> Result<String, String> {
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
