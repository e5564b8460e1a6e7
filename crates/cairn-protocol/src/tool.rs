//! Tool descriptions offered to a model and the calls it makes.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// A tool as the model sees it: name, description and a JSON-schema for its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    #[ts(type = "unknown")]
    pub parameters: Value,
}

/// One call the model asked for. `arguments` is the parsed JSON object the model produced
/// (or a string holding the raw text when the model produced invalid JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    #[ts(type = "unknown")]
    pub arguments: Value,
}

impl ToolCall {
    /// A stable key for "the same call with the same arguments" (used by stall detection).
    pub fn signature(&self) -> String {
        format!("{}\u{0}{}", self.name, self.arguments)
    }
}
