//! `cairn-bench desktop`: the desktop app's start-up time and memory beside an empty Tauri
//! window built the same way (`cairn-bare-window`), measured in one run on a display of
//! the benchmark's own.
//!
//! Three subjects take turns: the bare window, the app on a new session, and the app on
//! a generated 200-message session. Each is launched once unmeasured (new profile, memory
//! index built), then `--runs` times. A launch is timed from spawn to the `cairn-ready`
//! line the page's first interactive frame prints; the memory of the process and all it
//! started (WebKit's web and network processes) is read `--settle` seconds later.
//!
//! Then the app streams answers from a loopback server at `--stream-rate` words a second
//! (`stream.rs`): each word's time from its bytes to the frame that paints it, and the
//! frame times while it streams.

mod display;
mod launch;
mod notes;
pub(crate) mod procmem;
mod session;
mod steps;
mod stream;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use serde_json::{json, Value};

use crate::report::{Report, Row, Section, Verdict};
use crate::stats::{ms, round3, Samples};
use display::{SessionBus, Xvfb};
use launch::{launch, Desk, Launch, Subject};

/// Start-up goal: first interactive frame within this.
const START_GOAL_MS: f64 = 1500.0;
/// Memory goal: the app's processes within this factor of the bare window's.
const MEMORY_GOAL: f64 = 1.3;
/// Streaming goal: a provider's bytes painted within this (p99 over every word).
const PAINT_GOAL_MS: f64 = 20.0;
/// Streaming goal: no frame longer than this while an answer streams.
const FRAME_GOAL_MS: f64 = 50.0;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The app binary [default: target/release/cairn-desktop].
    #[arg(long)]
    app: Option<PathBuf>,
    /// The empty window to compare with [default: target/release/cairn-bare-window].
    #[arg(long)]
    bare: Option<PathBuf>,
    /// Measured launches of each subject (after one unmeasured launch each).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Messages in the generated long session.
    #[arg(long, default_value_t = 200)]
    messages: usize,
    /// Seconds between the ready line and reading the memory.
    #[arg(long, default_value_t = 2.0)]
    settle: f64,
    /// Answers streamed into the window for the paint and frame figures (0: none).
    #[arg(long, default_value_t = 5)]
    stream_runs: usize,
    /// Words in each streamed answer.
    #[arg(long, default_value_t = 600)]
    stream_words: usize,
    /// Words a second the loopback server streams.
    #[arg(long, default_value_t = 200.0)]
    stream_rate: f64,
    /// Only write the generated long session into this workspace (made when missing) and
    /// stop, for `scripts/start-order.sh`.
    #[arg(long)]
    write_session: Option<PathBuf>,
}

/// The three subjects' keys in the JSON, in the order of their figures.
const KEYS: [&str; 3] = ["app", "app_session", "bare"];

/// The three subjects' names in the table.
fn labels(messages: usize) -> [String; 3] {
    [
        "app, new session".into(),
        format!("app, {messages}-message session"),
        "bare window".into(),
    ]
}

pub async fn run(args: Args) -> anyhow::Result<Report> {
    if let Some(workspace) = &args.write_session {
        cairn_memory::Workspace::open_or_create(workspace)?;
        let path = session::write(workspace, args.messages)?;
        return Ok(Report {
            title: "cairn-bench desktop --write-session".into(),
            sections: Vec::new(),
            notes: vec![format!("{} messages in {}", args.messages, path.display())],
            json: serde_json::json!({"session": path, "messages": args.messages}),
        });
    }
    let app = args
        .app
        .clone()
        .unwrap_or_else(|| release_bin("cairn-desktop"));
    let (stream_runs, words, rate) = (args.stream_runs, args.stream_words, args.stream_rate);
    let mut report = tokio::task::spawn_blocking(move || measure(args)).await??;
    if stream_runs > 0 {
        if !(rate > 0.0 && words > 0) {
            bail!("--stream-rate and --stream-words must be more than 0");
        }
        eprintln!("streaming {stream_runs} answers of {words} words at {rate} words/s");
        let answers = stream::measure(&app, words, stream_runs, rate).await?;
        streaming(&mut report, &answers, words, rate);
    }
    Ok(report)
}

/// Adds the streaming figures to `report`.
fn streaming(report: &mut Report, answers: &[stream::Answer], words: usize, rate: f64) {
    let all = |f: fn(&stream::Answer) -> &Vec<Duration>| {
        Samples::new(answers.iter().flat_map(|a| f(a).iter().copied()).collect())
    };
    let (latency, frames) = (all(|a| &a.latencies), all(|a| &a.frames));
    let firsts = Samples::new(
        answers
            .iter()
            .filter_map(|a| a.latencies.first().copied())
            .collect(),
    );
    let pct = |samples: &Samples, p: usize| ms(samples.percentile(p));
    let paint_p99 = pct(&latency, 99);
    let frame_max = pct(&frames, 100);
    let long = answers
        .iter()
        .flat_map(|a| &a.frames)
        .filter(|f| ms(**f) > FRAME_GOAL_MS)
        .count();
    let (words_seen, frames_seen) = (
        answers.iter().map(|a| a.latencies.len()).sum::<usize>(),
        answers.iter().map(|a| a.frames.len()).sum::<usize>(),
    );
    report.sections.push(Section {
        title: format!(
            "Streaming: {} answers of {words} words at {rate} words/s, through WebDriver",
            answers.len()
        ),
        rows: vec![
            Row {
                name: "provider's bytes to painted, every word".into(),
                figure: format!(
                    "p50 {:.1} ms, p99 {paint_p99:.1} ms (max {:.1})",
                    pct(&latency, 50),
                    pct(&latency, 100)
                ),
                baseline: format!("{words_seen} words"),
                goal: format!("p99 < {PAINT_GOAL_MS:.0} ms"),
                verdict: Verdict::of(paint_p99 < PAINT_GOAL_MS),
            },
            Row::info(
                "first word of each answer",
                format!(
                    "p50 {:.1} ms, max {:.1} ms",
                    pct(&firsts, 50),
                    pct(&firsts, 100)
                ),
            ),
            Row {
                name: "frame times while streaming".into(),
                figure: format!(
                    "p50 {:.1} ms, p99 {:.1} ms, max {frame_max:.1} ms",
                    pct(&frames, 50),
                    pct(&frames, 99)
                ),
                baseline: format!("{frames_seen} frames, {long} over {FRAME_GOAL_MS:.0} ms"),
                goal: format!("none over {FRAME_GOAL_MS:.0} ms"),
                verdict: Verdict::of(frame_max <= FRAME_GOAL_MS),
            },
        ],
    });
    report.notes.push(format!(
        "Streaming: a loopback OpenAI-compatible server sends numbered words at {rate} a \
         second and notes when each word's bytes went to the socket; a recorder in the page \
         notes each animation frame's time and how many words the answer shows. A word's \
         latency runs from its bytes to the start of the first frame showing it (both on the \
         wall clock); frame times are the gaps between frames from the first word painted to \
         the last. The app runs under WebKitWebDriver on a display of its own."
    ));
    report.json["streaming"] = json!({
        "answers": answers.len(),
        "words": words,
        "rate_words_per_s": rate,
        "paint_ms": {"p50": round3(pct(&latency, 50)), "p99": round3(paint_p99),
                     "max": round3(pct(&latency, 100))},
        "first_word_ms": {"p50": round3(pct(&firsts, 50)), "max": round3(pct(&firsts, 100))},
        "frame_ms": {"p50": round3(pct(&frames, 50)), "p99": round3(pct(&frames, 99)),
                     "max": round3(frame_max), "over_goal": long},
        "goals": {"paint_p99_ms": PAINT_GOAL_MS, "frame_max_ms": FRAME_GOAL_MS,
                  "pass": {"paint": paint_p99 < PAINT_GOAL_MS, "frames": frame_max <= FRAME_GOAL_MS}},
    });
}

/// A binary in `target/release`, found from this executable's place in the target folder.
fn release_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let target = exe
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    target.join("release").join(name)
}

fn measure(args: Args) -> anyhow::Result<Report> {
    let app = args
        .app
        .clone()
        .unwrap_or_else(|| release_bin("cairn-desktop"));
    let bare = args
        .bare
        .clone()
        .unwrap_or_else(|| release_bin("cairn-bare-window"));
    for bin in [&app, &bare] {
        if !bin.is_file() {
            bail!(
                "{} is missing: build it with `cargo build --release --locked -p cairn-desktop`, \
                 or name the binaries with --app and --bare",
                bin.display()
            );
        }
    }
    let settle = Duration::try_from_secs_f64(args.settle).context("--settle")?;
    let dir = tempfile::tempdir()?;
    let base_url = format!("http://127.0.0.1:{}/v1", closed_port()?);
    let subjects = [
        app_subject(&app, &dir.path().join("app"), &base_url, None)?,
        app_subject(
            &app,
            &dir.path().join("session"),
            &base_url,
            Some(args.messages),
        )?,
        Subject {
            bin: bare.clone(),
            home: dir.path().join("bare"),
            cairn: None,
        },
    ];
    let xvfb = Xvfb::start()?;
    let bus = SessionBus::start()?;
    let desk = Desk {
        display: xvfb.display.clone(),
        bus: bus.address.clone(),
    };
    eprintln!(
        "display {}, private session bus; model: {base_url} (nothing listens)",
        desk.display
    );
    let mut first = Vec::new();
    for (subject, label) in subjects.iter().zip(labels(args.messages)) {
        eprintln!("first launch: {label}");
        first.push(launch(subject, &desk, settle.max(Duration::from_secs(5)))?);
    }
    let mut launches: [Vec<Launch>; 3] = Default::default();
    for round in 0..args.runs {
        let order = if round % 2 == 0 { [0, 1, 2] } else { [2, 1, 0] };
        for i in order {
            launches[i].push(launch(&subjects[i], &desk, settle)?);
        }
        eprintln!("round {}/{} done", round + 1, args.runs);
    }
    let summaries: Vec<Summary> = launches
        .iter()
        .zip(&first)
        .map(|(runs, first)| Summary::of(runs, first))
        .collect();
    Ok(report(
        &args,
        &app,
        &bare,
        &base_url,
        &desk.display,
        &summaries,
    ))
}

/// The app with a loopback provider where nothing listens, so no model loads and the
/// figures are the app's own; `messages` adds a generated session to its workspace.
fn app_subject(
    bin: &Path,
    home: &Path,
    base_url: &str,
    messages: Option<usize>,
) -> anyhow::Result<Subject> {
    let config = home.join("config");
    let workspace = home.join("workspace");
    std::fs::create_dir_all(&config)?;
    // The models an installed app has (else every launch would fetch them, and the figures
    // would be the download's): the embedding model is there, and with nothing to embed it
    // should not be loaded.
    if let Some(models) = cairn_app::cairn_models::models_dir().filter(|m| m.is_dir()) {
        let share = home.join(".local/share/cairn");
        std::fs::create_dir_all(&share)?;
        let link = share.join("models");
        if !link.exists() {
            std::os::unix::fs::symlink(&models, &link)?;
        }
    }
    std::fs::write(
        config.join("config.toml"),
        format!(
            "default_provider = \"loopback\"\n\n[providers.loopback]\nkind = \"openai\"\n\
             base_url = \"{base_url}\"\nmodel = \"bench-model\"\n"
        ),
    )?;
    if let Some(messages) = messages {
        cairn_memory::Workspace::open_or_create(&workspace)?;
        session::write(&workspace, messages)?;
    }
    Ok(Subject {
        bin: bin.to_path_buf(),
        home: home.to_path_buf(),
        cairn: Some((workspace, config)),
    })
}

/// A loopback port nothing listens on (bound, then released).
fn closed_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// One subject's figures over its measured launches.
#[derive(Debug, Clone)]
struct Summary {
    start: Samples,
    start_ms: Vec<f64>,
    self_ms: Option<f64>,
    first_ms: f64,
    rss_kib: u64,
    pss_kib: Option<u64>,
    processes: usize,
    /// How the binary said it was built.
    build: Option<String>,
    /// Runs in which ONNX Runtime was loaded when the memory was read.
    embedder_loaded: usize,
    /// The page's start-up steps (median of the runs).
    steps: steps::Steps,
}

impl Summary {
    fn of(runs: &[Launch], first: &Launch) -> Self {
        let self_ms: Vec<f64> = runs.iter().filter_map(|l| l.self_ms).collect();
        let pss: Vec<u64> = runs.iter().filter_map(|l| l.memory.pss_kib).collect();
        Self {
            start: Samples::new(runs.iter().map(|l| l.ready).collect()),
            start_ms: runs.iter().map(|l| round3(ms(l.ready))).collect(),
            self_ms: (self_ms.len() == runs.len() && !runs.is_empty()).then(|| median_f64(self_ms)),
            first_ms: ms(first.ready),
            rss_kib: median(runs.iter().map(|l| l.memory.rss_kib).collect()),
            pss_kib: (pss.len() == runs.len() && !runs.is_empty()).then(|| median(pss)),
            processes: median(runs.iter().map(|l| l.memory.processes as u64).collect()) as usize,
            build: first.build.clone(),
            embedder_loaded: runs.iter().filter(|l| l.memory.embedder_loaded).count(),
            steps: steps::Steps::of(runs),
        }
    }

    fn median_ms(&self) -> f64 {
        ms(self.start.p50())
    }

    fn max_ms(&self) -> f64 {
        ms(self.start.percentile(100))
    }

    fn start_text(&self) -> String {
        format!("{:.0} ms (max {:.0})", self.median_ms(), self.max_ms())
    }

    fn json(&self) -> Value {
        json!({
            "start_median_ms": round3(self.median_ms()),
            "start_max_ms": round3(self.max_ms()),
            "start_samples_ms": self.start_ms,
            "self_reported_median_ms": self.self_ms.map(round3),
            "first_launch_ms": round3(self.first_ms),
            "rss_median_kib": self.rss_kib,
            "pss_median_kib": self.pss_kib,
            "processes": self.processes,
            "page_steps_median_ms": self.steps.json(),
        })
    }
}

/// The lower middle value (as [`Samples::p50`]).
fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values
        .get(values.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0)
}

fn median_f64(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values
        .get(values.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0.0)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::INFINITY
    }
}

fn report(
    args: &Args,
    app: &Path,
    bare: &Path,
    base_url: &str,
    display: &str,
    s: &[Summary],
) -> Report {
    let (new, long, window) = (&s[0], &s[1], &s[2]);
    let mut start_rows = Vec::new();
    let mut memory_rows = Vec::new();
    let mut ratios = serde_json::Map::new();
    let mut goals = serde_json::Map::new();
    // Judged on PSS when every process's smaps_rollup was readable, else on RSS.
    let pss_everywhere = s.iter().all(|x| x.pss_kib.is_some());
    for ((summary, key), label) in [new, long].into_iter().zip(KEYS).zip(labels(args.messages)) {
        let start_ok = summary.median_ms() < START_GOAL_MS;
        start_rows.push(Row {
            name: label.clone(),
            figure: summary.start_text(),
            baseline: format!("bare {}", window.start_text()),
            goal: format!("< {START_GOAL_MS:.0} ms"),
            verdict: Verdict::of(start_ok),
        });
        let start_ratio = ratio(summary.median_ms(), window.median_ms());
        let rss_ratio = ratio(summary.rss_kib as f64, window.rss_kib as f64);
        let pss_ratio = match (summary.pss_kib, window.pss_kib) {
            (Some(a), Some(b)) => Some(ratio(a as f64, b as f64)),
            _ => None,
        };
        let judged = if pss_everywhere { pss_ratio } else { None }.unwrap_or(rss_ratio);
        let memory_ok = judged <= MEMORY_GOAL;
        if let (Some(pss), Some(base), Some(r)) = (summary.pss_kib, window.pss_kib, pss_ratio) {
            memory_rows.push(Row {
                name: format!("{label}: PSS"),
                figure: format!("{} ({r:.2}×)", mib(pss)),
                baseline: format!("bare {}", mib(base)),
                goal: format!("≤ {MEMORY_GOAL}× bare"),
                verdict: Verdict::of(memory_ok),
            });
        }
        memory_rows.push(Row {
            name: format!("{label}: RSS"),
            figure: format!("{} ({rss_ratio:.2}×)", mib(summary.rss_kib)),
            baseline: format!("bare {}", mib(window.rss_kib)),
            goal: if pss_everywhere {
                "-".into()
            } else {
                format!("≤ {MEMORY_GOAL}× bare")
            },
            verdict: if pss_everywhere {
                Verdict::Info
            } else {
                Verdict::of(memory_ok)
            },
        });
        ratios.insert(format!("start_{key}"), json!(round3(start_ratio)));
        ratios.insert(format!("rss_{key}"), json!(round3(rss_ratio)));
        ratios.insert(format!("pss_{key}"), json!(pss_ratio.map(round3)));
        goals.insert(format!("start_{key}"), json!(start_ok));
        goals.insert(format!("memory_{key}"), json!(memory_ok));
    }
    start_rows.push(Row::info(
        "ratio app/bare (medians)",
        format!(
            "{:.2}× new session, {:.2}× long session",
            ratio(new.median_ms(), window.median_ms()),
            ratio(long.median_ms(), window.median_ms())
        ),
    ));
    let own = |x: &Summary| x.self_ms.map_or("-".into(), |v| format!("{v:.0} ms"));
    start_rows.push(Row::info(
        "as each process counts it (median)",
        format!(
            "app {}, long session {}, bare {}",
            own(new),
            own(long),
            own(window)
        ),
    ));
    start_rows.push(Row::info(
        "first launch (new profile and index)",
        format!(
            "app {:.0} ms, long session {:.0} ms, bare {:.0} ms",
            new.first_ms, long.first_ms, window.first_ms
        ),
    ));
    memory_rows.push(Row::info(
        "processes in the tree",
        format!(
            "app {}, long session {}, bare {}",
            new.processes, long.processes, window.processes
        ),
    ));
    memory_rows.push(Row::info(
        "embedding engine loaded when read",
        format!(
            "app {} of {runs} runs, long session {} of {runs}",
            new.embedder_loaded,
            long.embedder_loaded,
            runs = new.start_ms.len()
        ),
    ));
    let build = launch::build_of(app, new.build.as_deref());
    let title = format!(
        "cairn-bench desktop ({build} binaries)\n\
         model: loopback OpenAI-compatible provider at {base_url}, nothing listening \
         (no model is loaded)"
    );
    let notes = notes::notes(args, app, build, base_url, display, pss_everywhere);
    let mut subjects = serde_json::Map::new();
    for (summary, key) in s.iter().zip(KEYS) {
        subjects.insert(key.into(), summary.json());
    }
    Report {
        title,
        sections: vec![
            Section {
                title: format!(
                    "Start: spawn to the first interactive frame, {} runs each, median (max)",
                    args.runs
                ),
                rows: start_rows,
            },
            Section {
                title: "Where the start went: ms after the process started, as it counts them \
                        (median of the runs)"
                    .into(),
                rows: steps::rows(&[
                    ("app", &new.steps),
                    ("long session", &long.steps),
                    ("bare", &window.steps),
                ]),
            },
            Section {
                title: format!(
                    "Memory of all the processes, {} s after ready (median of the runs)",
                    args.settle
                ),
                rows: memory_rows,
            },
        ],
        notes,
        json: json!({
            "app": app.display().to_string(),
            "bare": bare.display().to_string(),
            "build": build,
            "runs": args.runs,
            "messages": args.messages,
            "settle_s": args.settle,
            "model": {"kind": "openai", "base_url": base_url, "listening": false},
            "memory_judged_on": if pss_everywhere { "pss" } else { "rss" },
            "subjects": subjects,
            "ratios": ratios,
            "goals": {"start_ms": START_GOAL_MS, "memory_ratio": MEMORY_GOAL, "pass": goals},
        }),
    }
}
