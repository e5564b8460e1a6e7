//! `cairn-bench sandbox`: what the OS sandbox adds to a bash call. The bash tool runs the
//! same command lines in the same workspace with the sandbox on and off, call by call in
//! turns (so both share the machine's load): `true`, and `git status` in a repository of
//! 1,000 committed files. With `--folders N`, also `true` in a workspace of N folders
//! (`sandbox/tree.rs`). And `true` in the sandbox with `network = true` against
//! `network = false` (`sandbox/network.rs`).

mod network;
mod tree;

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_core::tools::handlers::bash::{Bash, EnvScrub, SandboxChoice};
use cairn_core::tools::{Tool, ToolCtx};
use cairn_memory::Workspace;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::report::{self, Report, Row, Section, Verdict};
use crate::stats::{ms, round3, Samples};

/// The goal: the sandbox adds less than this to a call's median.
const GOAL_MS: f64 = 15.0;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Calls per command line and mode.
    #[arg(long, default_value_t = 200)]
    calls: usize,
    /// Files committed in the repository `git status` looks at.
    #[arg(long, default_value_t = 1000)]
    files: usize,
    /// Also time `true` in a workspace of this many folders (nested five deep, with
    /// executables and dot entries scattered), where the sandbox has more to look at.
    #[arg(long)]
    folders: Option<usize>,
}

pub async fn run(args: Args) -> anyhow::Result<Report> {
    anyhow::ensure!(args.calls >= 10, "--calls must be at least 10");
    if let Err(why) = cairn_process::probe() {
        anyhow::bail!("the sandbox cannot start here: {why}");
    }
    let dir = tempfile::tempdir()?;
    let workspace = Arc::new(Workspace::open_or_create(&dir.path().join("ws"))?);
    eprintln!("cairn-bench sandbox: a repository of {} files", args.files);
    make_repository(workspace.root(), args.files)?;
    let sandboxed = Bash::new(EnvScrub::default(), SandboxChoice::default(), false);
    let plain = Bash::unconfined(EnvScrub::default());
    let mut rows = Vec::new();
    let mut figures = serde_json::Map::new();
    for (name, line) in [
        ("true", "true"),
        ("git status (1,000 files)", "git status --short"),
    ] {
        eprintln!("cairn-bench sandbox: {name}, {} calls each way", args.calls);
        let (with, without) = measure(&sandboxed, &plain, &workspace, line, args.calls).await?;
        let added = ms(with.p50()) - ms(without.p50());
        rows.push(Row {
            name: format!("{name}: p50 / p99"),
            figure: format!("{:.1} / {:.1} ms", ms(with.p50()), ms(with.p99())),
            baseline: format!("{:.1} / {:.1} ms", ms(without.p50()), ms(without.p99())),
            goal: format!("adds < {GOAL_MS} ms p50"),
            verdict: Verdict::of(added < GOAL_MS),
        });
        rows.push(Row::info(
            format!("{name}: added at p50"),
            format!("{added:.1} ms"),
        ));
        figures.insert(
            line.to_string(),
            json!({
                "sandbox_p50_ms": round3(ms(with.p50())), "sandbox_p99_ms": round3(ms(with.p99())),
                "plain_p50_ms": round3(ms(without.p50())), "plain_p99_ms": round3(ms(without.p99())),
                "added_p50_ms": round3(added),
            }),
        );
    }
    let mut report = Report {
        title: format!("cairn-bench sandbox ({} build)", report::build()),
        sections: vec![Section {
            title: "bash call, in the sandbox (figure) and outside it (baseline)".into(),
            rows,
        }],
        notes: vec![
            "each call goes through the bash tool: launch, output, exit, reaping".into(),
            "sandboxed and plain calls alternate, so both share the machine's load".into(),
        ],
        json: json!({ "calls": args.calls, "files": args.files, "lines": figures }),
    };
    eprintln!(
        "cairn-bench sandbox: true with network = true and false, {} calls each way",
        args.calls
    );
    let (section, json) = network::section(&workspace, args.calls).await?;
    report.sections.push(section);
    report.json["network"] = json;
    if let Some(folders) = args.folders {
        let dir = tempfile::tempdir()?;
        let root = std::fs::canonicalize(dir.path())?.join("ws");
        std::fs::create_dir(&root)?;
        eprintln!("cairn-bench sandbox: a workspace of {folders} folders");
        let made = tree::make(&root, folders)?;
        let (section, json) = tree::section(&root, made, args.calls).await?;
        report.sections.push(section);
        report.json["folders"] = json;
        report
            .notes
            .push("the rows in N folders launch `true` directly, without the bash tool".into());
    }
    Ok(report)
}

/// Times `line` through both tools, one call of each in turn.
async fn measure(
    sandboxed: &Bash,
    plain: &Bash,
    workspace: &Arc<Workspace>,
    line: &str,
    calls: usize,
) -> anyhow::Result<(Samples, Samples)> {
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..calls {
        with.push(call(sandboxed, workspace, line).await?);
        without.push(call(plain, workspace, line).await?);
    }
    Ok((Samples::new(with), Samples::new(without)))
}

async fn call(tool: &Bash, workspace: &Arc<Workspace>, line: &str) -> anyhow::Result<Duration> {
    let ctx = ToolCtx::outside_run(workspace.clone(), CancellationToken::new());
    let started = Instant::now();
    let out = tool
        .call(json!({ "command": line }), ctx)
        .await
        .map_err(|e| anyhow::anyhow!("`{line}` failed: {e}"))?;
    let took = started.elapsed();
    anyhow::ensure!(!out.is_error, "`{line}` failed: {}", out.content);
    Ok(took)
}

/// A git repository of `files` committed notes in `root`.
fn make_repository(root: &std::path::Path, files: usize) -> anyhow::Result<()> {
    for n in 0..files {
        let dir = root.join(format!("notes/{:02}", n % 50));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join(format!("note-{n}.md")),
            format!("# Note {n}\n\nText {n}.\n"),
        )?;
    }
    let git = |args: &[&str]| -> anyhow::Result<()> {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=bench", "-c", "user.email=bench@localhost"])
            .args(args)
            .current_dir(root)
            .stdout(std::process::Stdio::null())
            .status()?;
        anyhow::ensure!(status.success(), "git {args:?} failed");
        Ok(())
    };
    git(&["init", "-q"])?;
    git(&["add", "-A"])?;
    git(&["commit", "-q", "-m", "notes"])?;
    Ok(())
}
