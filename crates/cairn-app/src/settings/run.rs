//! `[run]` and `[compaction]`: the limits of a run, how queued messages are delivered,
//! whether it may complete with open work, and when its conversation is compacted.

use serde::{Deserialize, Serialize};

/// `[run]`: the limits of a run. Unset fields take the defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct RunSettings {
    /// Model calls allowed per run (default 50).
    pub max_steps: Option<u32>,
    /// Longest a run may take in all, in seconds (default: no limit).
    pub deadline_s: Option<u64>,
    /// `lenient` (default) or `strict`.
    pub completion: Option<CompletionMode>,
    /// Continue prompts a strict run gets for open work items before it ends blocked
    /// (default 2).
    pub nudges: Option<u32>,
    /// The same call, or cycle of calls, this many times in a row stalls the run
    /// (default 3).
    pub stall_repeats: Option<u32>,
    /// The same failure of a tool this many times in a row stalls the run (default 6;
    /// 0 turns it off).
    pub stall_same_results: Option<u32>,
    /// How queued follow-ups are delivered where a run would end: `all` (default) or
    /// `one-at-a-time`.
    pub follow_up_mode: Option<cairn_protocol::QueueMode>,
    /// How steering messages are delivered at a save point: `all` (default) or
    /// `one-at-a-time`.
    pub steering_mode: Option<cairn_protocol::QueueMode>,
}

/// `[compaction]`: compaction as the window fills (`enabled`, default on), and whether its
/// summary is written while the run goes on (`mode`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct CompactionSettings {
    pub enabled: Option<bool>,
    /// `background` (default): the summary is asked for once the conversation passes
    /// `start_percent` of the room, and swapped in when ready; `inline`: at the limit, the
    /// run waiting for it.
    pub mode: Option<CompactionMode>,
    /// Where a background summary starts, in percent of the room before the window
    /// (default 75; 10 to 99).
    pub start_percent: Option<u8>,
}

impl CompactionSettings {
    /// Whether it is on: unless `enabled = false`.
    pub fn on(&self) -> bool {
        self.enabled.unwrap_or(true)
    }
}

/// When a compaction's summary is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionMode {
    Background,
    Inline,
}

/// Whether a run may end with open work items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionMode {
    /// The run completes when the model stops asking for tools.
    Lenient,
    /// Open work items get continue prompts, then end the run blocked.
    Strict,
}
