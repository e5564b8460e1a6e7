//! How a run ended, and what it cost.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::ErrorInfo;

/// The end of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The model answered without asking for more tool calls.
    Completed,
    /// The model or a hook said the run cannot go on.
    Blocked { reason: String },
    /// The run used its step budget while the model still wanted tools.
    MaxSteps { steps: u32 },
    /// The run went round in circles: the same tool call with the same arguments too
    /// often in a row, a cycle of calls repeated (`detail` names it), or results that
    /// stopped changing.
    Stalled {
        tool: String,
        repeats: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// The user stopped the run.
    Aborted,
    /// An error the run could not recover from.
    Failed { error: ErrorInfo },
}

impl Outcome {
    /// How a run that made `steps` model calls ended, in a few words: "completed after 3
    /// steps", "stopped by you after 7 steps", "failed after 1 step: …".
    pub fn ended(&self, steps: u32) -> String {
        let after = match steps {
            1 => "after 1 step".to_string(),
            n => format!("after {n} steps"),
        };
        match self {
            Outcome::Completed => format!("completed {after}"),
            Outcome::Blocked { reason } => format!("blocked {after}: {reason}"),
            Outcome::MaxSteps { steps } => format!("stopped at its limit of {steps} steps"),
            Outcome::Stalled {
                tool,
                repeats,
                detail,
            } => match detail {
                Some(detail) => format!("stalled {after}: {detail}"),
                None => format!("stalled {after}: `{tool}` called {repeats} times in a row"),
            },
            Outcome::Aborted => format!("stopped by you {after}"),
            Outcome::Failed { error } => format!("failed {after}: {}", error.message),
        }
    }

    /// The CLI exit status for this outcome: 0 completed, 3 blocked / max_steps / stalled,
    /// 130 aborted, 1 failed.
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::Completed => 0,
            Outcome::Blocked { .. } | Outcome::MaxSteps { .. } | Outcome::Stalled { .. } => 3,
            Outcome::Aborted => 130,
            Outcome::Failed { .. } => 1,
        }
    }
}

/// Per-run figures carried by `agent_end`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub struct RunSummary {
    /// Model calls made.
    pub steps: u32,
    /// Tool calls answered (executed, denied or interrupted).
    pub tool_calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub duration_ms: u64,
}
