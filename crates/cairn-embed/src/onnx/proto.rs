//! The part of `onnx.proto` the graph needs, declared for prost with their field numbers
//! from the ONNX specification (no crate keeps current ONNX messages without a protobuf
//! compiler at build time), and helpers to fill them.

use prost::Message;

#[derive(Clone, PartialEq, Message)]
pub(super) struct ModelProto {
    #[prost(int64, tag = "1")]
    pub(super) ir_version: i64,
    #[prost(string, tag = "2")]
    pub(super) producer_name: String,
    #[prost(message, optional, tag = "7")]
    pub(super) graph: Option<GraphProto>,
    #[prost(message, repeated, tag = "8")]
    pub(super) opset_import: Vec<OperatorSetIdProto>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct OperatorSetIdProto {
    #[prost(string, tag = "1")]
    pub(super) domain: String,
    #[prost(int64, tag = "2")]
    pub(super) version: i64,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct GraphProto {
    #[prost(message, repeated, tag = "1")]
    pub(super) node: Vec<NodeProto>,
    #[prost(string, tag = "2")]
    pub(super) name: String,
    #[prost(message, repeated, tag = "5")]
    pub(super) initializer: Vec<TensorProto>,
    #[prost(message, repeated, tag = "11")]
    pub(super) input: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "12")]
    pub(super) output: Vec<ValueInfoProto>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct NodeProto {
    #[prost(string, repeated, tag = "1")]
    pub(super) input: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    pub(super) output: Vec<String>,
    #[prost(string, tag = "3")]
    pub(super) name: String,
    #[prost(string, tag = "4")]
    pub(super) op_type: String,
    #[prost(message, repeated, tag = "5")]
    pub(super) attribute: Vec<AttributeProto>,
    #[prost(string, tag = "7")]
    pub(super) domain: String,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct AttributeProto {
    #[prost(string, tag = "1")]
    pub(super) name: String,
    #[prost(float, optional, tag = "2")]
    pub(super) f: Option<f32>,
    #[prost(int64, optional, tag = "3")]
    pub(super) i: Option<i64>,
    #[prost(message, optional, boxed, tag = "6")]
    pub(super) g: Option<Box<GraphProto>>,
    #[prost(int64, repeated, packed = "false", tag = "8")]
    pub(super) ints: Vec<i64>,
    /// AttributeType: FLOAT 1, INT 2, GRAPH 5, INTS 7.
    #[prost(int32, tag = "20")]
    pub(super) r#type: i32,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct TensorProto {
    #[prost(int64, repeated, packed = "false", tag = "1")]
    pub(super) dims: Vec<i64>,
    /// DataType: FLOAT 1, UINT8 2, INT8 3, INT32 6, INT64 7, FLOAT16 10.
    #[prost(int32, tag = "2")]
    pub(super) data_type: i32,
    #[prost(string, tag = "8")]
    pub(super) name: String,
    #[prost(bytes = "vec", tag = "9")]
    pub(super) raw_data: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct ValueInfoProto {
    #[prost(string, tag = "1")]
    pub(super) name: String,
    #[prost(message, optional, tag = "2")]
    pub(super) r#type: Option<TypeProto>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct TypeProto {
    #[prost(message, optional, tag = "1")]
    pub(super) tensor_type: Option<TensorTypeProto>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct TensorTypeProto {
    #[prost(int32, tag = "1")]
    pub(super) elem_type: i32,
    #[prost(message, optional, tag = "2")]
    pub(super) shape: Option<TensorShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct TensorShapeProto {
    #[prost(message, repeated, tag = "1")]
    pub(super) dim: Vec<Dimension>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct Dimension {
    #[prost(int64, optional, tag = "1")]
    pub(super) dim_value: Option<i64>,
    #[prost(string, optional, tag = "2")]
    pub(super) dim_param: Option<String>,
}

pub(super) const FLOAT: i32 = 1;
pub(super) const UINT8: i32 = 2;
pub(super) const INT8: i32 = 3;
pub(super) const INT32: i32 = 6;
pub(super) const INT64: i32 = 7;

pub(super) enum Attr {
    Int(i64),
    Ints(Vec<i64>),
    Float(f32),
    Graph(GraphProto),
}

pub(super) fn attribute(name: &str, value: Attr) -> AttributeProto {
    let mut a = AttributeProto {
        name: name.to_string(),
        ..AttributeProto::default()
    };
    match value {
        Attr::Int(i) => (a.i, a.r#type) = (Some(i), 2),
        Attr::Ints(ints) => (a.ints, a.r#type) = (ints, 7),
        Attr::Float(f) => (a.f, a.r#type) = (Some(f), 1),
        Attr::Graph(g) => (a.g, a.r#type) = (Some(Box::new(g)), 5),
    }
    a
}

/// A float tensor of any shape: a branch's output, whose shape the runtime works out.
pub(super) fn any_floats(name: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: name.to_string(),
        r#type: Some(TypeProto {
            tensor_type: Some(TensorTypeProto {
                elem_type: FLOAT,
                shape: None,
            }),
        }),
    }
}

pub(super) fn input(name: &str, elem_type: i32, dims: &[Result<i64, &str>]) -> ValueInfoProto {
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
