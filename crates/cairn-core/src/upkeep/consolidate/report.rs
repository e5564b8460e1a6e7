//! What a consolidation run did, as front ends show it, and how it can fail.

use std::io;

use cairn_llm::LlmError;
use cairn_memory::catalog::CatalogError;
use cairn_memory::MemoryError;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ConsolidationStatus {
    /// MEMORY.md was rewritten (the old one is in `backup`).
    Written,
    /// The model gave back MEMORY.md as it was; the logs count as merged.
    Unchanged,
    /// No daily log changed since the last run: the model was not asked.
    NothingNew,
    /// The rewrite broke a guard (dropped too many bullets, over the budget, empty);
    /// MEMORY.md is untouched and the logs will be offered again.
    Rejected,
    /// MEMORY.md changed on disk while the model worked: the rewrite was discarded so the
    /// edit stays; the run is tried again later.
    Deferred,
    /// Another consolidation of this workspace is running (maybe in another process).
    Busy,
    /// Nothing was written: the report says what a run would have changed.
    DryRun,
}

impl ConsolidationStatus {
    /// Whether the run did what it should (a rejected, deferred or busy run did not).
    pub fn is_success(self) -> bool {
        match self {
            Self::Written | Self::Unchanged | Self::NothingNew | Self::DryRun => true,
            Self::Rejected | Self::Deferred | Self::Busy => false,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Written => "written",
            Self::Unchanged => "unchanged",
            Self::NothingNew => "nothing_new",
            Self::Rejected => "rejected",
            Self::Deferred => "deferred",
            Self::Busy => "busy",
            Self::DryRun => "dry_run",
        }
    }
}

/// One run, as `cairn consolidate --json` prints it. Paths are relative to the workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct ConsolidationReport {
    pub status: ConsolidationStatus,
    /// Bullets of the new file that hold no old bullet.
    pub added: usize,
    /// Old bullets the new file does not hold.
    pub removed: usize,
    /// Old bullets the new file holds (maybe merged or reworded).
    pub kept: usize,
    /// Where the previous MEMORY.md was copied (`memory/archive/MEMORY-<time>.md`).
    pub backup: Option<String>,
    /// The daily logs given to the model.
    pub merged_logs: Vec<String>,
    /// Daily logs moved to memory/archive/ (their old paths).
    pub archived_logs: Vec<String>,
    /// Why a run was rejected, deferred or busy.
    pub reason: Option<String>,
    /// Characters of the new MEMORY.md, when the model answered.
    pub chars: Option<usize>,
    pub added_bullets: Vec<String>,
    pub removed_bullets: Vec<String>,
    pub took_ms: u64,
}

impl ConsolidationReport {
    pub fn new(status: ConsolidationStatus) -> Self {
        Self {
            status,
            added: 0,
            removed: 0,
            kept: 0,
            backup: None,
            merged_logs: Vec::new(),
            archived_logs: Vec::new(),
            reason: None,
            chars: None,
            added_bullets: Vec::new(),
            removed_bullets: Vec::new(),
            took_ms: 0,
        }
    }

    pub(super) fn because(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}

/// A run that could not finish.
#[derive(Debug, thiserror::Error)]
pub enum ConsolidateError {
    #[error("{path}: {source}")]
    Io { path: String, source: io::Error },
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A workspace file refused (a link out of the workspace, not a regular file).
    #[error(transparent)]
    File(MemoryError),
    #[error("the consolidation model failed: {0}")]
    Model(#[from] LlmError),
    /// The model could not be built (a local file that does not load, a missing key).
    #[error("{0}")]
    NoModel(String),
    #[error("the consolidation scheduler has stopped")]
    Stopped,
    #[error("a consolidation task failed: {0}")]
    Task(String),
}

impl From<MemoryError> for ConsolidateError {
    fn from(error: MemoryError) -> Self {
        match error {
            MemoryError::Io { path, source } => Self::io(path.to_string_lossy(), source),
            refused => Self::File(refused),
        }
    }
}

impl ConsolidateError {
    pub(super) fn io(path: impl Into<String>, source: io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
