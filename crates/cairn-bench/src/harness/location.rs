//! One timed agent run beside its baseline, in one directory (tmpfs or disk).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use super::breakdown::SavePointCost;
use super::overhead::AgentRun;
use super::{per, GOAL_OVERHEAD_US};
use crate::report::{Row, Verdict};
use crate::stats::{ms, round3, us};

/// One agent run and its baseline, in one directory.
pub struct Location {
    pub label: &'static str,
    pub dir: PathBuf,
    pub fs_type: String,
    pub run: AgentRun,
    /// The provider alone answering as many calls.
    pub baseline: Duration,
    /// What a save point costs in this directory.
    pub save_point: SavePointCost,
}

impl Location {
    pub fn baseline_per_call(&self) -> f64 {
        per(self.baseline, self.run.calls)
    }

    pub fn overhead(&self) -> f64 {
        per(self.run.total.saturating_sub(self.baseline), self.run.calls)
    }

    /// Overhead per step over a window of steps (wall time per step minus the provider).
    fn window(&self, mean_step: Option<Duration>) -> Option<f64> {
        mean_step.map(|d| us(d) - self.baseline_per_call())
    }

    pub fn json(&self) -> Value {
        let round = |x: Option<f64>| x.map(round3);
        json!({
            "dir": self.dir,
            "fs": self.fs_type,
            "model_calls": self.run.calls,
            "total_ms": round3(ms(self.run.total)),
            "baseline_ms": round3(ms(self.baseline)),
            "overhead_us_per_step": round3(self.overhead()),
            "first_100_overhead_us_per_step": round(self.window(self.run.first_100)),
            "last_100_overhead_us_per_step": round(self.window(self.run.last_100)),
            "save_point_us": round3(us(self.save_point.checkpoint)),
            "full_sync_us": round3(us(self.save_point.sync)),
            "events": self.run.events,
        })
    }

    pub fn rows(&self) -> Vec<Row> {
        let baseline = format!("{:.2} µs/call", self.baseline_per_call());
        let mut rows = vec![Row {
            name: format!("overhead per step, {} ({})", self.label, self.fs_type),
            figure: format!("{:.1} µs", self.overhead()),
            baseline: baseline.clone(),
            goal: format!("< {GOAL_OVERHEAD_US} µs"),
            verdict: Verdict::of(self.overhead() < GOAL_OVERHEAD_US),
        }];
        let windows = [("first", self.run.first_100), ("last", self.run.last_100)];
        for (which, window) in windows {
            if let Some(x) = self.window(window) {
                rows.push(Row {
                    baseline: baseline.clone(),
                    ..Row::info(format!("  {which} 100 steps"), format!("{x:.1} µs"))
                });
            }
        }
        rows.push(Row {
            baseline: format!("{:.1} ms", ms(self.baseline)),
            ..Row::info(
                format!("  whole run ({} calls)", self.run.calls),
                format!("{:.1} ms", ms(self.run.total)),
            )
        });
        rows
    }
}
