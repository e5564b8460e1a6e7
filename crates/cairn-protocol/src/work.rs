//! Work items: the run's todo list, kept in the session and shown live.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a work item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum WorkStatus {
    Pending,
    InProgress,
    Done,
    Blocked,
}

impl WorkStatus {
    /// Still to be worked on (pending or in progress).
    pub fn is_open(self) -> bool {
        matches!(self, WorkStatus::Pending | WorkStatus::InProgress)
    }
}

/// One item of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub struct WorkItem {
    pub id: String,
    pub text: String,
    pub status: WorkStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How much it matters, when the model said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<WorkPriority>,
    /// The workspace path the item produced; it must exist when the work is completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
}

/// How much a work item matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum WorkPriority {
    High,
    Medium,
    Low,
}

impl WorkPriority {
    pub fn name(self) -> &'static str {
        match self {
            WorkPriority::High => "high",
            WorkPriority::Medium => "medium",
            WorkPriority::Low => "low",
        }
    }
}
