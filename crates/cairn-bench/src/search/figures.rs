//! The search benchmark's measured values, turned into the table and the JSON object.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use super::bench::QueryTimes;
use super::corpus::{Corpus, TODAY};
use super::edit::EditTimes;
use super::{fts5, memory_index};
use crate::report::{self, Report, Row, Section, Verdict};
use crate::stats::{ms, round3};

pub const GOAL_SPEEDUP: f64 = 5.0;
pub const GOAL_P99_MS: f64 = 5.0;
pub const GOAL_EDIT_MS: f64 = 250.0;

pub struct Figures {
    pub meaning: super::meaning_figures::Meaning,
    pub corpus: Corpus,
    pub generated: Duration,
    pub built: memory_index::Built,
    /// Segments once the queries were timed (merges may have run since the sync).
    pub segments_after: usize,
    pub fts5: fts5::Built,
    pub queries: Vec<String>,
    pub times: QueryTimes,
    pub edits: EditTimes,
    pub dir: PathBuf,
    pub fs_type: String,
    /// `/proc/loadavg` before and after: other work on the machine skews every figure.
    pub load: String,
}

impl Figures {
    pub fn report(&self) -> Report {
        Report {
            title: format!(
                "cairn-bench search ({} build, {} chunks, {} queries)",
                report::build(),
                self.built.chunks,
                self.queries.len()
            ),
            sections: [
                self.build_section(),
                self.query_section(),
                self.edit_section(),
            ]
            .into_iter()
            .chain(super::meaning_figures::sections(&self.meaning))
            .collect(),
            notes: self
                .notes()
                .into_iter()
                .chain(super::meaning_figures::notes(&self.meaning))
                .collect(),
            json: self.json(),
        }
    }

    /// FTS5's median over Tantivy's.
    fn speedup(&self) -> f64 {
        ms(self.times.fts5.p50()) / ms(self.times.tantivy.p50()).max(1e-9)
    }

    fn pass(&self) -> [(&'static str, bool); 4] {
        [
            ("build_no_worse", self.built.no_worse_than(self.fts5.build)),
            ("speedup_p50", self.speedup() >= GOAL_SPEEDUP),
            ("tantivy_p99", ms(self.times.tantivy.p99()) < GOAL_P99_MS),
            (
                "edit_to_searchable",
                ms(self.edits.after_debounce.p50()) < GOAL_EDIT_MS,
            ),
        ]
    }

    fn build_section(&self) -> Section {
        let (built, fts5) = (&self.built, &self.fts5);
        Section {
            title: format!(
                "Index build ({} chunks of {} files, {:.1} MiB of markdown; figure: Tantivy, \
                 baseline: FTS5)",
                built.chunks,
                built.files,
                mib(self.corpus.bytes)
            ),
            rows: vec![
                Row {
                    name: format!("build (wall){}", super::sizes::runs(built)),
                    figure: format!("{:.2} s", built.build.as_secs_f64()),
                    baseline: format!("{:.2} s", fts5.build.as_secs_f64()),
                    goal: "<= FTS5".into(),
                    verdict: Verdict::of(built.no_worse_than(fts5.build)),
                },
                Row {
                    baseline: format!("{:.1} MiB", mib(fts5.bytes)),
                    ..Row::info("size on disk", format!("{:.1} MiB", mib(built.bytes)))
                },
                Row::info(
                    "segments (after sync, after queries)",
                    format!("{}, {}", built.segments, self.segments_after),
                ),
                Row::info(
                    "sync with nothing changed",
                    format!("{:.1} ms", ms(built.resync)),
                ),
            ],
        }
    }

    fn query_section(&self) -> Section {
        let t = &self.times;
        let speedup = self.speedup();
        let n = self.queries.len();
        Section {
            title: format!(
                "Queries ({n}, top 10 with snippets; figure: Tantivy search_now, baseline: FTS5)"
            ),
            rows: vec![
                Row {
                    name: "query p50".into(),
                    figure: format!("{:.3} ms ({speedup:.1}x faster)", ms(t.tantivy.p50())),
                    baseline: format!("{:.3} ms", ms(t.fts5.p50())),
                    goal: format!(">= {GOAL_SPEEDUP}x faster"),
                    verdict: Verdict::of(speedup >= GOAL_SPEEDUP),
                },
                Row {
                    baseline: format!("{:.3} ms", ms(t.fts5.p95())),
                    ..Row::info("query p95", format!("{:.3} ms", ms(t.tantivy.p95())))
                },
                Row {
                    name: "query p99".into(),
                    figure: format!("{:.3} ms", ms(t.tantivy.p99())),
                    baseline: format!("{:.3} ms", ms(t.fts5.p99())),
                    goal: format!("< {GOAL_P99_MS} ms"),
                    verdict: Verdict::of(ms(t.tantivy.p99()) < GOAL_P99_MS),
                },
                Row {
                    baseline: format!("{:.3} ms", ms(t.fts5.percentile(100))),
                    ..Row::info(
                        "slowest query",
                        format!("{:.3} ms", ms(t.tantivy.percentile(100))),
                    )
                },
                Row {
                    baseline: format!("{}/{n}", t.fts5_hits),
                    ..Row::info("queries with hits", format!("{}/{n}", t.tantivy_hits))
                },
                Row::info(
                    "top-10 results in common",
                    format!("{:.0}%", t.overlap * 100.0),
                ),
            ],
        }
    }

    fn edit_section(&self) -> Section {
        let e = &self.edits;
        let p50 = ms(e.after_debounce.p50());
        Section {
            title: format!(
                "Edit to searchable ({} saves of a knowledge note each way)",
                e.edits
            ),
            rows: vec![
                Row {
                    name: "watcher on: save to found minus the debounce, p50".into(),
                    figure: format!("{p50:.1} ms"),
                    baseline: format!("debounce {:.0} ms", ms(e.debounce)),
                    goal: format!("< {GOAL_EDIT_MS} ms"),
                    verdict: Verdict::of(p50 < GOAL_EDIT_MS),
                },
                Row::info(
                    "  slowest",
                    format!("{:.1} ms", ms(e.after_debounce.percentile(100))),
                ),
                Row::info(
                    "  save to found p50 (slowest)",
                    format!(
                        "{:.1} ms ({:.1} ms)",
                        ms(e.found.p50()),
                        ms(e.found.percentile(100))
                    ),
                ),
                Row::info(
                    "  found before the debounce was over",
                    format!("{}/{}", e.early, e.edits),
                ),
                Row::info(
                    "watcher off, index told: save to found p50 (slowest)",
                    format!(
                        "{:.1} ms ({:.1} ms)",
                        ms(e.direct.p50()),
                        ms(e.direct.percentile(100))
                    ),
                ),
                Row {
                    baseline: format!("{} without the watcher", share(e.idle_cpu)),
                    ..Row::info(
                        "CPU while watching, nothing edited",
                        format!("{} of a core", share(e.idle_cpu_watching)),
                    )
                },
            ],
        }
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = vec![
            format!(
                "Corpus: seeded, generated in {:.1} s: MEMORY.md, {} days of daily logs \
                 (## HH:MM entries of bullets) and {} knowledge notes (sections, paragraphs, \
                 lists, code) plus the template's files; {} words drawn by a Zipf law (English \
                 words, then made-up ones for the tail), with names, projects and numbers.",
                self.generated.as_secs_f64(),
                self.corpus.days,
                self.corpus.notes.len(),
                super::vocab::SIZE,
            ),
            "Queries: 1-4 words, mostly mid-frequency and rare words, some common words, \
             names and projects, and 2-3 word runs from the text (never only words among the \
             100 most frequent, like \"of the\"). Tantivy: \
             MemoryIndex::search_now (BM25 on body and heading, phrase boost, recency decay \
             of daily logs, stored docs and snippets). FTS5: the words quoted and OR-ed, \
             ORDER BY bm25 LIMIT 10 with snippet(), one cached statement. One warm-up pass, \
             then one timed pass alternating the engines query by query; one thread each."
                .into(),
            format!(
                "Build: Tantivy = MemoryIndex::open + sync (scan, read, hash, chunk, index, \
                 commit, catalog). FTS5 = read + chunk_markdown ({:.2} s of it) + insert in one \
                 transaction + 'optimize'; size after VACUUM. FTS5 columns path, start_line, \
                 end_line UNINDEXED, heading, body, tokenize 'porter unicode61'; queries run \
                 with mmap_size 1 GiB and a 64 MiB page cache. Built several times, the two \
                 engines take turns and the verdict is by pairs (faster in at least half).",
                self.fts5.chunking.as_secs_f64()
            ),
            format!(
                "Edit to searchable: the note is rewritten whole (as an editor saves) and \
                 searched every 1 ms until the word is found there. Watcher on: nothing else \
                 tells the index; the debounce is subtracted (the watcher's tick adds up to a \
                 quarter of it). Watcher off: MemoryIndex::changed right after the save (the \
                 cost of indexing and committing one note). Recency measured from {TODAY}."
            ),
            format!("load average {}", self.load),
            format!("written in {} ({})", self.dir.display(), self.fs_type),
        ];
        if self.edits.early > 0 {
            notes.push(format!(
                "{} of {} saves were found before the debounce was over, so not through the \
                 watcher's event for that save but by a reconcile that was running anyway; \
                 the figure then says when that reconcile noticed the save. See the CPU used \
                 while watching with nothing edited.",
                self.edits.early, self.edits.edits
            ));
        }
        notes
    }

    fn json(&self) -> Value {
        let (t, built, fts5, e) = (&self.times, &self.built, &self.fts5, &self.edits);
        let pass: serde_json::Map<String, Value> = self
            .pass()
            .into_iter()
            .map(|(name, pass)| (name.to_string(), json!(pass)))
            .collect();
        json!({
            "benchmark": "search",
            "build": report::build(),
            "load_average": self.load,
            "dir": self.dir,
            "fs": self.fs_type,
            "chunks": built.chunks,
            "files": built.files,
            "corpus_bytes": self.corpus.bytes,
            "queries": self.queries.len(),
            "tantivy": {
                "build_s": round3(built.build.as_secs_f64()),
                "build_runs": built.builds,
                "build_runs_faster": built.faster,
                "bytes": built.bytes,
                "p50_ms": round3(ms(t.tantivy.p50())),
                "p95_ms": round3(ms(t.tantivy.p95())),
                "p99_ms": round3(ms(t.tantivy.p99())),
                "max_ms": round3(ms(t.tantivy.percentile(100))),
                "queries_with_hits": t.tantivy_hits,
                "segments": built.segments,
                "segments_after_queries": self.segments_after,
                "resync_ms": round3(ms(built.resync)),
            },
            "fts5": {
                "build_s": round3(fts5.build.as_secs_f64()),
                "chunking_s": round3(fts5.chunking.as_secs_f64()),
                "bytes": fts5.bytes,
                "p50_ms": round3(ms(t.fts5.p50())),
                "p95_ms": round3(ms(t.fts5.p95())),
                "p99_ms": round3(ms(t.fts5.p99())),
                "max_ms": round3(ms(t.fts5.percentile(100))),
                "queries_with_hits": t.fts5_hits,
            },
            "speedup_p50": round3(self.speedup()),
            "top10_overlap": round3(t.overlap),
            "edit_to_searchable": {
                "p50_ms": round3(ms(e.after_debounce.p50())),
                "max_ms": round3(ms(e.after_debounce.percentile(100))),
                "save_to_found_p50_ms": round3(ms(e.found.p50())),
                "save_to_found_max_ms": round3(ms(e.found.percentile(100))),
                "told_p50_ms": round3(ms(e.direct.p50())),
                "told_max_ms": round3(ms(e.direct.percentile(100))),
                "found_before_debounce": e.early,
                "idle_cpu_share": e.idle_cpu.map(round3),
                "idle_cpu_share_watching": e.idle_cpu_watching.map(round3),
                "edits": e.edits,
                "debounce_ms": round3(ms(e.debounce)),
            },
            "goals": {
                "speedup_p50": GOAL_SPEEDUP,
                "tantivy_p99_ms": GOAL_P99_MS,
                "edit_to_searchable_ms": GOAL_EDIT_MS,
            },
            "pass": pass,
            "meaning": super::meaning_figures::json(&self.meaning),
        })
    }
}

fn share(cpu: Option<f64>) -> String {
    cpu.map_or_else(|| "?".into(), |x| format!("{:.0}%", x * 100.0))
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
