//! The recall benchmark's report: a table per corpus (daily logs, sessions, the paraphrase
//! set, exact lines) by category, each engine side by side; how often a changed fact's
//! older value ranks above the newer; latencies; and the goals with their verdicts.

use serde_json::{json, Map, Value};

use super::facts::Category;
use super::measure::{Answered, CorpusRun, Engine};
use crate::report::{self, Report, Row, Section, Verdict};
use crate::stats::{ms, round3, Samples};

/// Hybrid recall@5 on the daily logs at least this, and this far above FTS5's.
pub const GOAL_RECALL: f64 = 0.90;
pub const GOAL_OVER_FTS5: f64 = 0.08;
/// Hybrid recall@5 on the paraphrase set this far above keyword's.
pub const GOAL_PARAPHRASE_OVER_KEYWORD: f64 = 0.20;
/// `cairn search`'s median wall time.
pub const GOAL_CLI_MS: f64 = 150.0;

pub struct Figures {
    pub seed: u64,
    pub people: usize,
    pub months: u32,
    pub days: usize,
    pub model: Result<String, String>,
    pub logs: CorpusRun,
    pub sessions: CorpusRun,
    pub paraphrase: Vec<Answered>,
    pub cli: Result<Samples, String>,
    pub cli_queries: usize,
    pub cpu: String,
    pub dir: String,
    pub fs_type: String,
    pub load: String,
    pub took: std::time::Duration,
}

#[derive(Clone, Copy)]
enum Metric {
    At5,
    At10,
    All10,
}

impl Metric {
    const ALL: [Metric; 3] = [Metric::At5, Metric::At10, Metric::All10];

    fn name(self) -> &'static str {
        match self {
            Metric::At5 => "recall@5",
            Metric::At10 => "recall@10",
            Metric::All10 => "all-evidence@10",
        }
    }
}

/// The share of `answered` that `engine` met `metric` for (`None`: it did not run).
fn rate(answered: &[&Answered], engine: usize, metric: Metric) -> Option<f64> {
    let ranks: Vec<_> = answered
        .iter()
        .filter_map(|a| a.ranks[engine].as_ref())
        .collect();
    if ranks.is_empty() {
        return None;
    }
    let met = ranks
        .iter()
        .filter(|r| match metric {
            Metric::At5 => r.recalled(5),
            Metric::At10 => r.recalled(10),
            Metric::All10 => r.all(10),
        })
        .count();
    Some(met as f64 / ranks.len() as f64)
}

fn cell(x: Option<f64>) -> String {
    x.map_or_else(|| "  -  ".to_string(), |x| format!("{x:.3}"))
}

/// (label, the questions) for each category present, then all of them.
fn groups(answered: &[&Answered]) -> Vec<(String, Vec<Answered>)> {
    let mut groups: Vec<(String, Vec<Answered>)> = Category::ALL
        .iter()
        .map(|c| {
            let of: Vec<Answered> = answered
                .iter()
                .filter(|a| a.category == *c)
                .map(|a| (*a).clone())
                .collect();
            (c.as_str().to_string(), of)
        })
        .filter(|(_, of)| !of.is_empty())
        .collect();
    if groups.len() > 1 {
        groups.push((
            "all".into(),
            answered.iter().map(|a| (*a).clone()).collect(),
        ));
    }
    groups
}

fn section(title: &str, answered: &[&Answered], json: &mut Map<String, Value>) -> Section {
    let mut rows = Vec::new();
    let mut figures = Map::new();
    for (label, of) in groups(answered) {
        let of: Vec<&Answered> = of.iter().collect();
        let mut by_engine = Map::new();
        for metric in Metric::ALL {
            let cells: Vec<Option<f64>> = (0..4).map(|e| rate(&of, e, metric)).collect();
            rows.push(Row::info(
                format!("{label} {} (n={})", metric.name(), of.len()),
                cells
                    .iter()
                    .map(|c| cell(*c))
                    .collect::<Vec<_>>()
                    .join(" | "),
            ));
            for (engine, value) in Engine::ALL.iter().zip(&cells) {
                let entry = by_engine
                    .entry(engine.as_str())
                    .or_insert_with(|| json!({}));
                entry[metric.name()] = json!(value.map(round3));
            }
        }
        if label == Category::Changed.as_str() {
            let counts: Vec<String> = (0..4)
                .map(|e| {
                    let ranks: Vec<_> = of.iter().filter_map(|a| a.ranks[e].as_ref()).collect();
                    if ranks.is_empty() {
                        return "  -  ".into();
                    }
                    let above = ranks.iter().filter(|r| r.older_above_newer()).count();
                    by_engine
                        .entry(Engine::ALL[e].as_str())
                        .or_insert_with(|| json!({}))["older_above_newer"] = json!(above);
                    format!("{above}/{}", ranks.len())
                })
                .collect();
            rows.push(Row::info("changed: older above newer", counts.join(" | ")));
        }
        figures.insert(label, json!({"questions": of.len(), "engines": by_engine}));
    }
    json.insert(title.to_string(), Value::Object(figures));
    Section {
        title: format!("{title}: keyword | semantic | hybrid | FTS5"),
        rows,
    }
}

fn at5(answered: &[&Answered], engine: Engine) -> Option<f64> {
    let slot = Engine::ALL.iter().position(|e| *e == engine).unwrap_or(0);
    rate(answered, slot, Metric::At5)
}

/// hybrid ≥ keyword and ≥ semantic at recall@5 on one corpus.
fn fusion_row(name: &str, answered: &[&Answered]) -> Row {
    let (k, s, h) = (
        at5(answered, Engine::Keyword),
        at5(answered, Engine::Semantic),
        at5(answered, Engine::Hybrid),
    );
    let (figure, verdict) = match (k, s, h) {
        (Some(k), Some(s), Some(h)) => (format!("hybrid {h:.3}"), Verdict::of(h >= k && h >= s)),
        _ => ("not measured (no model)".to_string(), Verdict::Info),
    };
    Row {
        name: format!("{name}: hybrid recall@5 vs keyword, semantic"),
        figure,
        baseline: format!("keyword {}, semantic {}", cell(k), cell(s)),
        goal: "≥ both".into(),
        verdict,
    }
}

impl Figures {
    pub fn report(&self) -> Report {
        let logs: Vec<&Answered> = self.logs.answered.iter().filter(|a| !a.exact).collect();
        let exact: Vec<&Answered> = self.logs.answered.iter().filter(|a| a.exact).collect();
        let sessions: Vec<&Answered> = self.sessions.answered.iter().filter(|a| !a.exact).collect();
        let paraphrase: Vec<&Answered> = self.paraphrase.iter().collect();
        let mut json = Map::new();
        let mut sections = vec![
            section("daily logs", &logs, &mut json),
            section("sessions", &sessions, &mut json),
            section("paraphrase set", &paraphrase, &mut json),
            section("exact lines", &exact, &mut json),
        ];
        let goals = self.goals(&logs, &sessions, &paraphrase, &exact);
        sections.push(Section {
            title: "goals".into(),
            rows: goals,
        });
        sections.push(Section {
            title: "latency".into(),
            rows: self.latency_rows(),
        });
        Report {
            title: format!(
                "cairn-bench recall ({} build)\nCPU: {}\n{} people, {} months, {} session days, {} questions on each form, {} exact lines, seed {}",
                report::build(),
                self.cpu,
                self.people,
                self.months,
                self.days,
                logs.len(),
                exact.len(),
                self.seed
            ),
            sections,
            notes: self.notes(),
            json: json!({
                "seed": self.seed, "people": self.people, "months": self.months,
                "session_days": self.days, "cpu": self.cpu,
                "model": self.model.as_ref().ok(), "corpora": json,
                "fts5_window_lines": {"daily_logs": self.logs.window, "sessions": self.sessions.window},
                "hybrid_search_ms": {"p50": round3(ms(Samples::new(self.logs.latency.clone()).p50())),
                                      "p90": round3(ms(Samples::new(self.logs.latency.clone()).percentile(90)))},
                "cairn_search_p50_ms": self.cli.as_ref().ok().map(|s| round3(ms(s.p50()))),
            }),
        }
    }

    fn goals(
        &self,
        logs: &[&Answered],
        sessions: &[&Answered],
        paraphrase: &[&Answered],
        exact: &[&Answered],
    ) -> Vec<Row> {
        let (h, f) = (at5(logs, Engine::Hybrid), at5(logs, Engine::Fts5));
        let mut rows = vec![Row {
            name: "daily logs: hybrid recall@5".into(),
            figure: h.map_or("not measured (no model)".into(), |h| format!("{h:.3}")),
            baseline: format!("FTS5 {}", cell(f)),
            goal: format!("≥ {GOAL_RECALL:.2} and ≥ FTS5 + {GOAL_OVER_FTS5:.2}"),
            verdict: match (h, f) {
                (Some(h), Some(f)) => Verdict::of(h >= GOAL_RECALL && h >= f + GOAL_OVER_FTS5),
                _ => Verdict::Info,
            },
        }];
        for (name, answered) in [
            ("daily logs", logs),
            ("sessions", sessions),
            ("paraphrase set", paraphrase),
            ("exact lines", exact),
        ] {
            rows.push(fusion_row(name, answered));
        }
        let (h, k) = (
            at5(paraphrase, Engine::Hybrid),
            at5(paraphrase, Engine::Keyword),
        );
        rows.push(Row {
            name: "paraphrase set: hybrid recall@5".into(),
            figure: h.map_or("not measured (no model)".into(), |h| format!("{h:.3}")),
            baseline: format!("keyword {}", cell(k)),
            goal: format!("≥ keyword + {GOAL_PARAPHRASE_OVER_KEYWORD:.2}"),
            verdict: match (h, k) {
                (Some(h), Some(k)) => Verdict::of(h >= k + GOAL_PARAPHRASE_OVER_KEYWORD),
                _ => Verdict::Info,
            },
        });
        rows.push(match &self.cli {
            Ok(samples) => Row {
                name: format!("`cairn search` wall time, p50 of {}", self.cli_queries),
                figure: format!("{:.0} ms", ms(samples.p50())),
                baseline: format!("p90 {:.0} ms", ms(samples.percentile(90))),
                goal: format!("≤ {GOAL_CLI_MS:.0} ms"),
                verdict: Verdict::of(ms(samples.p50()) <= GOAL_CLI_MS),
            },
            Err(why) => Row::info("cairn search latency", format!("not measured ({why})")),
        });
        rows
    }

    fn latency_rows(&self) -> Vec<Row> {
        let mode = if self.model.is_ok() {
            "hybrid"
        } else {
            "keyword"
        };
        let mut rows = Vec::new();
        for (name, run) in [("daily logs", &self.logs), ("sessions", &self.sessions)] {
            let samples = Samples::new(run.latency.clone());
            rows.push(Row::info(
                format!("{name}: MemoryIndex::search ({mode}) p50 / p90"),
                format!(
                    "{:.1} / {:.1} ms",
                    ms(samples.p50()),
                    ms(samples.percentile(90))
                ),
            ));
            rows.push(Row::info(
                format!("{name}: chunks, sync + embedding, FTS5 window"),
                format!(
                    "{} chunks, {:.1} s, {} lines",
                    run.chunks,
                    run.indexing.as_secs_f64(),
                    run.window
                ),
            ));
        }
        rows
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = vec![
            "Each person is a separate workspace (one user's memory); the daily logs are searched with corpus memory, the session copy with corpus sessions, today = the day after the last log.".to_string(),
            "recall@k: a hit among the first k of the evidence's file whose lines cover an evidence line; all-evidence@10: every evidence line covered in the top ten.".to_string(),
            "FTS5: SQLite FTS5 (porter unicode61), bm25 over non-overlapping windows as long as Cairn's median hybrid hit, the question's words each double-quoted and OR-ed.".to_string(),
            "paraphrase set: the 40 known answers of `cairn-bench search`, each a note among generated chunks; exact lines: questions that are a fact line's own words, on the daily logs.".to_string(),
        ];
        match &self.model {
            Ok(model) => notes.push(format!("embedding model: {model}")),
            Err(why) => notes.push(format!(
                "semantic and hybrid not measured: {why}; keyword and FTS5 only"
            )),
        }
        if let Err(why) = &self.cli {
            notes.push(format!("cairn search latency: not measured ({why})"));
        }
        notes.push(format!(
            "written in {} ({}); load {}; {:.0} s in all",
            self.dir,
            self.fs_type,
            self.load,
            self.took.as_secs_f64()
        ));
        notes
    }
}
