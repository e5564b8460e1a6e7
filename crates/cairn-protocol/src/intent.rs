//! The intent step's reading of a user's message.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A short structured reading of what the user asked: what they want, the limits they
/// set, and what is worth looking up in memory for it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub struct Intent {
    pub goal: String,
    #[serde(default)]
    pub constraints: Vec<String>,
    /// Searches that recall runs besides the message itself.
    #[serde(default)]
    pub lookups: Vec<String>,
}
