//! Stall detection across a run: the same call again and again, a cycle of calls
//! (A, B, A, B ...), or results that stopped changing.

use std::collections::{HashMap, VecDeque};

use cairn_protocol::{Outcome, ToolCall};

use crate::config::StallLimits;

/// The longest cycle looked for (A, B, C, D, A, B, C, D ...).
const MAX_CYCLE: usize = 4;
/// After this many failures of one tool in a run, the model is told so with the errors.
pub(super) const FAILURES_TOLD_AFTER: usize = 3;
/// How much of each error the telling quotes.
const ERROR_QUOTED_CHARS: usize = 200;

pub(super) struct StallTracker {
    /// The latest calls (name and a hash of the arguments), oldest first.
    calls: VecDeque<String>,
    /// The latest failed result (tool and a hash of its text) and how many results in a
    /// row were the same.
    result: Option<(String, String)>,
    same_results: u32,
    limits: StallLimits,
    /// Each tool's errors in this run (the first few), and whether the model was told.
    failures: HashMap<String, (Vec<String>, bool)>,
}

/// What a tracker remembers, as a run's checkpoint keeps it.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Memory {
    calls: VecDeque<String>,
    result: Option<(String, String)>,
    same_results: u32,
    failures: HashMap<String, (Vec<String>, bool)>,
}

impl StallTracker {
    /// What it remembers, for a checkpoint.
    pub fn snapshot(&self) -> serde_json::Value {
        let memory = Memory {
            calls: self.calls.clone(),
            result: self.result.clone(),
            same_results: self.same_results,
            failures: self.failures.clone(),
        };
        serde_json::to_value(memory).unwrap_or_default()
    }

    /// Takes up what a checkpoint kept; anything unreadable starts afresh.
    pub fn restore(&mut self, kept: &serde_json::Value) {
        let memory: Memory = serde_json::from_value(kept.clone()).unwrap_or_default();
        self.calls = memory.calls;
        self.result = memory.result;
        self.same_results = memory.same_results;
        self.failures = memory.failures;
    }

    pub fn new(limits: StallLimits) -> Self {
        Self {
            calls: VecDeque::new(),
            result: None,
            same_results: 0,
            limits: limits.sane(),
            failures: HashMap::new(),
        }
    }

    /// Records a result of `tool`; on its third failure in the run (whatever the calls
    /// and errors), the words telling the model so, with the errors, once per tool: a
    /// model retrying a failing tool hears it before the stall limit ends the run.
    pub fn failure_told(&mut self, tool: &str, content: &str, is_error: bool) -> Option<String> {
        if !is_error {
            return None;
        }
        let (errors, told) = self.failures.entry(tool.to_string()).or_default();
        if *told {
            return None;
        }
        let first_line = content.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        errors.push(crate::tools::output::cap_middle(
            first_line.trim(),
            ERROR_QUOTED_CHARS,
        ));
        if errors.len() < FAILURES_TOLD_AFTER {
            return None;
        }
        *told = true;
        let list: Vec<String> = errors
            .iter()
            .enumerate()
            .map(|(n, e)| format!("{}. {e}", n + 1))
            .collect();
        Some(format!(
            "[Cairn] `{tool}` has now failed {} times in this run:\n{}\nDo not try it the same \
             way again: change the approach, check your assumptions (paths, names, \
             arguments), or, if this cannot be done, say so or call `block` with the reason.",
            errors.len(),
            list.join("\n")
        ))
    }

    pub fn set_limits(&mut self, limits: StallLimits) {
        self.limits = limits.sane();
    }

    /// Records `call` before it runs; the stall it completes, if any.
    pub fn observe_call(&mut self, call: &ToolCall) -> Option<Outcome> {
        let repeats = self.limits.repeats as usize;
        // The name and a hash of the arguments: as good for telling repeats, and small in a
        // checkpoint whatever the arguments hold.
        let arguments = blake3::hash(call.arguments.to_string().as_bytes());
        self.calls
            .push_back(format!("{}\u{0}{}", call.name, arguments.to_hex()));
        while self.calls.len() > MAX_CYCLE * repeats {
            self.calls.pop_front();
        }
        let period = (1..=MAX_CYCLE).find(|&p| self.repeats_with_period(p, repeats))?;
        let names: Vec<String> = self
            .calls
            .iter()
            .skip(self.calls.len() - period)
            .map(|s| s.split('\0').next().unwrap_or_default().to_string())
            .collect();
        let detail = (period > 1).then(|| {
            format!(
                "the cycle of calls {} came back {repeats} times",
                names.join(" → ")
            )
        });
        Some(Outcome::Stalled {
            tool: names.join(", "),
            repeats: repeats as u32,
            detail,
        })
    }

    /// Whether the last `period * repeats` calls are one block of `period` calls repeated
    /// (a block of one call repeated counts only as period 1).
    fn repeats_with_period(&self, period: usize, repeats: usize) -> bool {
        let span = period * repeats;
        let n = self.calls.len();
        if n < span {
            return false;
        }
        let tail: Vec<&String> = self.calls.iter().skip(n - span).collect();
        let repeated = (period..span).all(|i| tail[i] == tail[i - period]);
        let one_call = tail[..period].iter().all(|c| *c == tail[0]);
        repeated && (period == 1 || !one_call)
    }

    /// Records the result of a call of `tool`; the stall when as many failures in a row
    /// were the same as the limit allows (calls that differ but fail alike, e.g. guessing
    /// paths that do not exist). Identical successes are not counted: a tool may answer
    /// "ok" to every different call.
    pub fn observe_result(&mut self, tool: &str, content: &str, is_error: bool) -> Option<Outcome> {
        if !is_error {
            self.result = None;
            self.same_results = 0;
            return None;
        }
        let current = (
            tool.to_string(),
            blake3::hash(content.as_bytes()).to_hex().to_string(),
        );
        if self.result.as_ref() == Some(&current) {
            self.same_results += 1;
        } else {
            self.result = Some(current);
            self.same_results = 1;
        }
        let limit = self.limits.same_results;
        (limit > 0 && self.same_results >= limit).then(|| Outcome::Stalled {
            tool: tool.to_string(),
            repeats: self.same_results,
            detail: Some(format!(
                "`{tool}` failed the same way {} times in a row",
                self.same_results
            )),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, arg: u32) -> ToolCall {
        ToolCall {
            id: format!("c{arg}"),
            name: name.into(),
            arguments: json!({"n": arg}),
        }
    }

    fn limits() -> StallLimits {
        StallLimits {
            repeats: 3,
            same_results: 4,
        }
    }

    #[test]
    fn the_third_failure_of_a_tool_is_told_once_with_the_errors() {
        let mut t = StallTracker::new(limits());
        assert_eq!(t.failure_told("bash", "no such file: a", true), None);
        assert_eq!(t.failure_told("grep", "bad pattern", true), None);
        assert_eq!(t.failure_told("bash", "fine", false), None);
        assert_eq!(
            t.failure_told("bash", "\nno such file: b\nmore", true),
            None
        );
        let told = t.failure_told("bash", "permission denied", true).unwrap();
        assert!(told.contains("`bash` has now failed 3 times"), "{told}");
        assert!(told.contains("1. no such file: a\n2. no such file: b\n3. permission denied"));
        assert_eq!(t.failure_told("bash", "again", true), None);
        assert_eq!(t.failure_told("grep", "bad", true), None);
        assert!(t.failure_told("grep", "bad", true).is_some());
    }

    #[test]
    fn one_call_repeated_stalls_at_the_limit() {
        let mut t = StallTracker::new(limits());
        assert!(t.observe_call(&call("a", 1)).is_none());
        assert!(t.observe_call(&call("a", 1)).is_none());
        let stall = t.observe_call(&call("a", 1)).unwrap();
        assert!(matches!(
            stall,
            Outcome::Stalled {
                detail: None,
                repeats: 3,
                ..
            }
        ));
    }

    /// What a checkpoint keeps carries the count on after a restart; a checkpoint whose
    /// memory is not ours (edited, planted) starts afresh instead of failing.
    #[test]
    fn the_memory_survives_a_checkpoint_and_garbage_starts_afresh() {
        let mut t = StallTracker::new(limits());
        t.observe_call(&call("a", 1));
        t.observe_call(&call("a", 1));
        let kept = t.snapshot();
        let mut again = StallTracker::new(limits());
        again.restore(&kept);
        assert!(again.observe_call(&call("a", 1)).is_some());
        let mut planted = StallTracker::new(limits());
        planted.restore(&serde_json::json!({"calls": 7, "failures": "x"}));
        assert!(planted.observe_call(&call("a", 1)).is_none());
        assert!(planted.observe_call(&call("a", 1)).is_none());
    }

    #[test]
    fn a_cycle_of_two_or_three_calls_stalls() {
        for period in [2u32, 3] {
            let mut t = StallTracker::new(limits());
            let mut stall = None;
            for i in 0..(period * 3) {
                assert!(stall.is_none(), "stalled early at {i}");
                stall = t.observe_call(&call("read_file", i % period));
            }
            let Some(Outcome::Stalled { detail, .. }) = stall else {
                panic!("period {period} not caught");
            };
            assert!(detail.unwrap().contains("read_file → read_file"));
        }
    }

    #[test]
    fn calls_that_move_on_never_stall() {
        let mut t = StallTracker::new(limits());
        for i in 0..40 {
            assert!(t.observe_call(&call("read_file", i)).is_none());
            // Back and forth between two, but with a new one between the rounds.
            assert!(t.observe_call(&call("grep", i % 2)).is_none());
        }
    }

    #[test]
    fn the_same_failure_again_and_again_stalls() {
        let mut t = StallTracker::new(limits());
        for _ in 0..3 {
            assert!(t
                .observe_result("read_file", "Error: no such file", true)
                .is_none());
        }
        assert!(t
            .observe_result("read_file", "Error: no such file", true)
            .is_some());
        let mut t = StallTracker::new(limits());
        for i in 0..10 {
            assert!(t
                .observe_result("grep", &format!("Error {i}"), true)
                .is_none());
        }
        // The same success to different calls is not a stall.
        let mut t = StallTracker::new(limits());
        for _ in 0..10 {
            assert!(t.observe_result("noop", "ok", false).is_none());
        }
    }
}
