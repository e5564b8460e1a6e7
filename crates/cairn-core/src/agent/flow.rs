//! The state of one run, which its steps (the model call, tool execution, upkeep,
//! completion) share: they take a `Run` and give back a [`Flow`], never reaching back into
//! the run loop.

use std::sync::Arc;
use std::time::Instant;

use cairn_protocol::{Outcome, RunSummary};
use tokio_util::sync::CancellationToken;

use super::inner::Inner;
use super::state::Settings;

/// Ends the run early with this outcome.
pub(super) type Flow<T = ()> = Result<T, Outcome>;

/// The text a panic was raised with.
pub(super) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// The state of one run.
pub(super) struct Run {
    pub inner: Arc<Inner>,
    pub cancel: CancellationToken,
    pub session_id: String,
    pub run_id: String,
    pub step: u32,
    pub summary: RunSummary,
    pub settings: Settings,
    pub system_prompt: String,
    /// The user's message this run answers (what recall searches for).
    pub message: String,
    pub stall: super::stall::StallTracker,
    /// The model's latest text answer.
    pub answer: Option<String>,
    /// The intent step's reading of the message, once read.
    pub intent: Option<cairn_protocol::Intent>,
    /// The skill the user invoked with `/name args`, if the message is such a call.
    pub invoked: Option<crate::skills::Skill>,
    /// What the user's hooks added to the context for this run.
    pub hook_context: Vec<String>,
    /// Continue prompts sent for open work items (strict completion) or by a stop hook.
    pub nudges: u32,
    /// Whether a stop hook has kept this run going.
    pub stop_blocked: bool,
    /// Its save points checkpoint it: a run between its start and its recover (not an
    /// operation outside a run, such as a compaction asked for by hand).
    pub checkpointing: bool,
    /// The workspace files the context was built from, as they were.
    pub context_stamp: Option<super::context::ContextStamp>,
    /// A tool that may write ran since the stamp was last looked at.
    pub context_touched: bool,
    /// A count of the tokens of a request beside our estimate of it: what corrects the
    /// estimates until the conversation changes shape (a compaction).
    pub calibration: Option<Calibration>,
    /// The model's tokenizer was asked in this run and had no count.
    pub count_tried: bool,
    pub started: Instant,
}

/// A request's tokens as counted, beside the estimate of them, and who counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Calibration {
    pub counted: u64,
    pub estimated: u64,
    /// "the o200k_base tokenizer", "Anthropic's token count", "the provider's count of the
    /// last request".
    pub by: String,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    pub outcome: Outcome,
    pub summary: RunSummary,
    pub session_id: String,
    /// The model's last answer in the run.
    pub answer: Option<String>,
}
