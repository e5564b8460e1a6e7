//! The harness benchmark's measured values, turned into the table and the JSON object.

use std::time::Duration;

use cairn_llm::ChatRequest;
use serde_json::{json, Value};

use super::breakdown::Replay;
use super::location::Location;
use super::session_list::ListTimes;
use super::session_open::{OpenTimes, SessionFile};
use super::spawn::SpawnTimes;
use super::{per, GOAL_OPEN_MS, GOAL_OVERHEAD_US, GOAL_SPAWN_MS};
use crate::report::{build, Report, Row, Section, Verdict};

/// The session list at the start of the app, at any number of sessions (the goal is set
/// for 5,000).
const LIST_GOAL: Duration = Duration::from_millis(100);
use crate::stats::{ms, round3, us};

pub struct Figures {
    pub spawn: SpawnTimes,
    pub steps: u32,
    pub locations: Vec<Location>,
    pub replay: Replay,
    pub plumbing: super::breakdown::Plumbing,
    pub file: SessionFile,
    pub open: OpenTimes,
    pub list: ListTimes,
    pub runs: usize,
    pub baseline_request: ChatRequest,
    /// `/proc/loadavg` before and after: other work on the machine skews every figure.
    pub load: String,
}

impl Figures {
    pub fn report(&self) -> Report {
        Report {
            title: format!(
                "cairn-bench harness ({} build, {} steps, {} entries)",
                build(),
                self.steps,
                self.file.entries
            ),
            sections: vec![
                self.overhead_section(),
                self.breakdown_section(),
                self.open_section(),
                self.list_section(),
                self.spawn_section(),
            ],
            notes: self.notes(),
            json: self.json(),
        }
    }

    fn location(&self, label: &str) -> Option<&Location> {
        self.locations.iter().find(|l| l.label == label)
    }

    fn overhead_section(&self) -> Section {
        Section {
            title: "Harness overhead (zero-latency scripted provider)".into(),
            rows: self.locations.iter().flat_map(Location::rows).collect(),
        }
    }

    /// Mean microseconds per step of each part, with its share of the tmpfs overhead.
    fn parts(&self) -> Vec<(&'static str, f64)> {
        let r = &self.replay;
        let calls = r.model_calls;
        let mut parts = vec![
            ("context", per(r.context, calls)),
            ("tool specs", per(r.specs, calls)),
            ("entry serialization", per(r.serialize, calls)),
        ];
        if let Some(tmpfs) = self.location("tmpfs") {
            parts.push(("save point (tmpfs)", us(tmpfs.save_point.checkpoint)));
            parts.push(("events to one listener", us(self.plumbing.events)));
            parts.push(("a task per tool call", us(self.plumbing.task)));
            let known: f64 = parts.iter().map(|(_, x)| x).sum();
            parts.push((
                "rest (hooks, tools, stall and checkpoint state, allocation)",
                tmpfs.overhead() - known,
            ));
        }
        parts
    }

    fn breakdown_section(&self) -> Section {
        let total = self.location("tmpfs").map(Location::overhead);
        let mut rows: Vec<Row> = self
            .parts()
            .into_iter()
            .map(|(name, x)| {
                let share = total.map(|t| format!(" ({:.0}%)", 100.0 * x / t));
                Row::info(name, format!("{x:.1} µs{}", share.unwrap_or_default()))
            })
            .collect();
        rows.push(Row {
            baseline: format!("{:.1} µs full rebuild", us(self.replay.rebuild_last)),
            ..Row::info(
                "context at the last step",
                format!("{:.1} µs", us(self.replay.context_last)),
            )
        });
        for location in &self.locations {
            let fs = &location.fs_type;
            let place = if location.label == fs.as_str() {
                fs.clone()
            } else {
                format!("{}, {fs}", location.label)
            };
            if location.label == "disk" {
                rows.push(Row::info(
                    format!("save point ({place})"),
                    format!("{:.1} µs", us(location.save_point.checkpoint)),
                ));
            }
            rows.push(Row::info(
                format!("full sync, off the step path ({place})"),
                format!("{:.1} µs", us(location.save_point.sync)),
            ));
        }
        Section {
            title: "Where a step's time goes (mean per step over the tmpfs run)".into(),
            rows,
        }
    }

    fn spawn_section(&self) -> Section {
        let spawn = &self.spawn;
        let row = |name: &str, figure: Duration, baseline: Duration| Row {
            name: name.into(),
            figure: format!("{:.2} ms", ms(figure)),
            baseline: format!("{:.2} ms plain step", ms(baseline)),
            goal: format!("< {GOAL_SPAWN_MS} ms"),
            verdict: Verdict::of(ms(figure) < GOAL_SPAWN_MS),
        };
        Section {
            title: format!(
                "Subagent spawn ({} spawns; agent_spawn to the subagent's first model request)",
                spawn.spawns
            ),
            rows: vec![
                row("spawn p50", spawn.spawn.p50(), spawn.step.p50()),
                row("spawn p99", spawn.spawn.p99(), spawn.step.p99()),
            ],
        }
    }

    fn open_section(&self) -> Section {
        let open = &self.open;
        let row = |name: &str, figure: Duration, baseline: Duration| Row {
            name: name.into(),
            figure: format!("{:.2} ms", ms(figure)),
            baseline: format!("{:.2} ms raw parse", ms(baseline)),
            goal: format!("< {GOAL_OPEN_MS} ms"),
            verdict: Verdict::of(ms(figure) < GOAL_OPEN_MS),
        };
        Section {
            title: format!(
                "Session open ({} entries, {:.1} MiB, {} runs)",
                self.file.entries,
                self.file.bytes as f64 / (1024.0 * 1024.0),
                self.runs
            ),
            rows: vec![
                row(
                    "SessionStore::open p50",
                    open.open.p50(),
                    open.raw_parse.p50(),
                ),
                row(
                    "SessionStore::open p95",
                    open.open.p95(),
                    open.raw_parse.p95(),
                ),
            ],
        }
    }

    fn list_section(&self) -> Section {
        let list = &self.list;
        let first = list.first.p50();
        let row = |name: &str, figure: Duration| Row {
            name: name.into(),
            figure: format!("{:.2} ms", ms(figure)),
            baseline: format!("{:.2} ms every file read", ms(first)),
            goal: "-".into(),
            verdict: Verdict::Info,
        };
        let opened = Row {
            goal: format!("< {} ms", LIST_GOAL.as_millis()),
            verdict: Verdict::of(list.opened.p50() < LIST_GOAL),
            ..row("start of the app (catalog) p50", list.opened.p50())
        };
        Section {
            title: format!(
                "Session list ({} sessions of {} entries, {:.1} MiB, {} runs)",
                list.sessions,
                list.entries,
                list.bytes as f64 / (1024.0 * 1024.0),
                self.runs
            ),
            rows: vec![
                opened,
                row("  p95", list.opened.p95()),
                row("filling an empty catalog p50", list.filled.p50()),
                row("nothing changed p50", list.unchanged.p50()),
                row("one session grew p50", list.one_grew.p50()),
            ],
        }
    }

    fn notes(&self) -> Vec<String> {
        let request = &self.baseline_request;
        let mut notes = vec![
            format!(
                "A step is one model call: {} noop tool steps plus the final answer. Overhead = \
                 (agent.prompt wall time - provider-alone time) / model calls.",
                self.steps
            ),
            format!(
                "Provider-alone baseline: the same scripted answers, each call given a clone of \
                 one fixed request ({} message, {} tool specs, {}-char system prompt) and the \
                 stream drained; the agent's request instead holds the whole session.",
                request.messages.len(),
                request.tools.len(),
                request.system.as_deref().map_or(0, str::len)
            ),
            "first/last 100 steps: wall time between model calls minus the provider-alone \
             time per call; the context is kept as the session grows (one append per message), \
             so a long session should cost no more per step than a short one."
                .into(),
            "Session open: the file is generated through the session writer; times are warm \
             (page cache). Raw parse = read the file + serde_json::Value per line."
                .into(),
            "Session list: start of the app = a new store reading the summaries kept in the \
             catalog (.cairn/state.db) and checking each file's length and modification time; \
             baseline = a new store without the catalog, reading every file (as before the \
             catalog). The same store then reads only files whose length or modification \
             time changed (a run appends one message)."
                .into(),
        ];
        notes.push(
            "Breakdown: each part timed outside the agent with the same calls (context and \
             specs replayed at every model call of the tmpfs run, best of 3 tries each); \
             events = as many events per step as the run emitted, sent to a bus with one \
             listener on another task; a task per tool call = one tokio task spawned and \
             joined; rest = tmpfs overhead minus the parts, so it carries the noise of all of \
             them. \
             A mid-run save point hands the fsync to the writer thread (group commit); only \
             the end of a run waits for a full sync."
                .into(),
        );
        notes.push(format!("load average {}", self.load));
        for location in &self.locations {
            notes.push(format!(
                "{} run in {} ({})",
                location.label,
                location.dir.display(),
                location.fs_type
            ));
        }
        if self.location("disk").is_some_and(|l| l.fs_type == "tmpfs") {
            notes.push("the disk directory is on tmpfs: pass --disk-dir for a real disk".into());
        }
        notes
    }

    fn json(&self) -> Value {
        let location = |label| self.location(label).map(Location::json);
        let overhead_pass = |label| {
            self.location(label)
                .map(|l| l.overhead() < GOAL_OVERHEAD_US)
        };
        let (open, raw) = (&self.open.open, &self.open.raw_parse);
        let parts: serde_json::Map<String, Value> = self
            .parts()
            .into_iter()
            .map(|(name, x)| (json_key(name), json!(round3(x))))
            .collect();
        json!({
            "benchmark": "harness",
            "build": build(),
            "load_average": self.load,
            "harness": {
                "steps": self.steps,
                "tmpfs": location("tmpfs"),
                "disk": location("disk"),
            },
            "breakdown_us_per_step": parts,
            "context_last_step_us": round3(us(self.replay.context_last)),
            "context_full_rebuild_last_step_us": round3(us(self.replay.rebuild_last)),
            "subagent_spawn": {
                "spawns": self.spawn.spawns,
                "p50_ms": round3(ms(self.spawn.spawn.p50())),
                "p99_ms": round3(ms(self.spawn.spawn.p99())),
                "plain_step_p50_ms": round3(ms(self.spawn.step.p50())),
                "plain_step_p99_ms": round3(ms(self.spawn.step.p99())),
                "goal_ms": GOAL_SPAWN_MS,
                "pass": ms(self.spawn.spawn.p50()) < GOAL_SPAWN_MS,
            },
            "session_open": {
                "entries": self.file.entries,
                "bytes": self.file.bytes,
                "runs": self.runs,
                "p50_ms": round3(ms(open.p50())),
                "p95_ms": round3(ms(open.p95())),
                "baseline_p50_ms": round3(ms(raw.p50())),
                "baseline_p95_ms": round3(ms(raw.p95())),
            },
            "session_list": {
                "sessions": self.list.sessions,
                "entries_each": self.list.entries,
                "bytes": self.list.bytes,
                "first_p50_ms": round3(ms(self.list.first.p50())),
                "opened_p50_ms": round3(ms(self.list.opened.p50())),
                "opened_p95_ms": round3(ms(self.list.opened.p95())),
                "filled_p50_ms": round3(ms(self.list.filled.p50())),
                "unchanged_p50_ms": round3(ms(self.list.unchanged.p50())),
                "one_grew_p50_ms": round3(ms(self.list.one_grew.p50())),
            },
            "goals": {
                "overhead_us_per_step": GOAL_OVERHEAD_US,
                "session_open_ms": GOAL_OPEN_MS,
                "session_list_at_start_ms": LIST_GOAL.as_millis() as u64,
            },
            "pass": {
                "overhead_tmpfs": overhead_pass("tmpfs"),
                "overhead_disk": overhead_pass("disk"),
                "session_open_p50": ms(open.p50()) < GOAL_OPEN_MS,
                "session_open_p95": ms(open.p95()) < GOAL_OPEN_MS,
                "session_list_at_start": self.list.opened.p50() < LIST_GOAL,
            },
        })
    }
}

/// "save point (tmpfs)" -> "save_point_tmpfs".
fn json_key(name: &str) -> String {
    let name = name.split(" (hooks").next().unwrap_or(name);
    let key: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    key.split('_')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}
