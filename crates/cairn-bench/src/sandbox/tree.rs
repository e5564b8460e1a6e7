//! `cairn-bench sandbox --folders N`: a `true` call in a workspace of N folders with the
//! sandbox on and off in turns. Before each sandboxed call the launcher looks for the
//! entries to bind read-only; the rows give what the sandbox adds at that size, how long
//! working out bubblewrap's arguments (finding the entries among it) takes alone, how long
//! bubblewrap takes alone with those mounts, and how many mounts there were: with the
//! default protection, and also protecting executables and a glob's folder.
//!
//! The workspace is a tree of N folders, five deep at most, three files in each. One
//! file in a hundred is executable; one folder in a thousand is a repository's root with
//! a `.git/` folder, one in two thousand has an `.env`, one in five thousand a
//! `.vscode/`; `knowledge/private/` holds a few files for a glob to protect.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cairn_process::{capture, EnvScrub, Launch, Sandbox};
use serde_json::{json, Value};

use crate::report::{Row, Section, Verdict};
use crate::stats::{ms, round3, Samples};

/// The goal: the sandbox adds less than this to a call's median.
const GOAL_MS: f64 = 15.0;

/// Files in each folder.
const FILES_PER_FOLDER: usize = 3;

/// A call that takes longer than this failed.
const LIMIT: Duration = Duration::from_secs(120);

/// The wait after the tree is made: a folder changed in the last two seconds is listed
/// again at every call whatever the sandbox remembers, and a workspace is mostly older.
const SETTLE: Duration = Duration::from_millis(2500);

/// What [`make`] wrote.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tree {
    pub folders: usize,
    pub files: usize,
    pub executables: usize,
    pub dot_entries: usize,
}

/// Writes a workspace of `folders` folders into `root` (see the module's comment).
pub fn make(root: &Path, folders: usize) -> anyhow::Result<Tree> {
    let fanout = fanout(folders);
    let mut tree = Tree::default();
    let mut level = vec![root.to_path_buf()];
    while tree.folders < folders && !level.is_empty() {
        let mut next = Vec::new();
        for parent in &level {
            for k in 0..fanout {
                if tree.folders == folders {
                    break;
                }
                let folder = parent.join(format!("d{k}"));
                std::fs::create_dir(&folder)?;
                fill(&folder, &mut tree)?;
                tree.folders += 1;
                next.push(folder);
            }
        }
        level = next;
    }
    let private = root.join("knowledge/private");
    std::fs::create_dir_all(&private)?;
    for n in 0..3 {
        std::fs::write(private.join(format!("secret-{n}.md")), "private\n")?;
    }
    Ok(tree)
}

/// The smallest fan-out that holds `folders` folders in five levels.
fn fanout(folders: usize) -> usize {
    (2..)
        .find(|f: &usize| (1..=5).map(|d| f.pow(d)).sum::<usize>() >= folders)
        .unwrap_or(2)
}

/// The files of the `tree.folders`-th folder, and its dot entries if it gets any.
fn fill(folder: &Path, tree: &mut Tree) -> anyhow::Result<()> {
    for j in 0..FILES_PER_FOLDER {
        if tree.files % 100 == 99 {
            let script = folder.join(format!("run-{j}.sh"));
            std::fs::write(&script, "#!/bin/sh\necho run\n")?;
            executable(&script)?;
            tree.executables += 1;
        } else {
            std::fs::write(folder.join(format!("note-{j}.md")), "# Note\n\nText.\n")?;
        }
        tree.files += 1;
    }
    let i = tree.folders;
    if i % 1000 == 1 {
        std::fs::create_dir_all(folder.join(".git/hooks"))?;
        std::fs::write(folder.join(".git/config"), "[core]\n")?;
        std::fs::write(folder.join(".git/hooks/pre-commit"), "#!/bin/sh\n")?;
        tree.dot_entries += 1;
    }
    if i % 2000 == 2 {
        std::fs::write(folder.join(".env"), "KEY=1\n")?;
        tree.dot_entries += 1;
    }
    if i % 5000 == 3 {
        std::fs::create_dir_all(folder.join(".vscode"))?;
        std::fs::write(folder.join(".vscode/settings.json"), "{}\n")?;
        tree.dot_entries += 1;
    }
    Ok(())
}

#[cfg(unix)]
fn executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn executable(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

/// The section of the `--folders` rows and their JSON figures.
pub async fn section(root: &Path, tree: Tree, calls: usize) -> anyhow::Result<(Section, Value)> {
    tokio::time::sleep(SETTLE).await;
    let mut rows = Vec::new();
    let mut figures = serde_json::Map::new();
    for (label, sandbox) in sandboxes(root)? {
        eprintln!(
            "cairn-bench sandbox: `true` in {} folders, {label}",
            tree.folders
        );
        let (mut more, figure) = match measure(root, &sandbox, calls).await {
            Ok(m) => (m.rows(&label), m.json()),
            Err(e) => (
                vec![failed(&label, &e)],
                json!({ "error": format!("{e:#}") }),
            ),
        };
        rows.append(&mut more);
        figures.insert(label, figure);
    }
    let section = Section {
        title: format!(
            "`true` in a workspace of {} folders ({} files, {} executable, {} dot entries), \
             in the sandbox (figure) and outside it (baseline)",
            tree.folders, tree.files, tree.executables, tree.dot_entries
        ),
        rows,
    };
    let json = json!({
        "folders": tree.folders, "files": tree.files, "executables": tree.executables,
        "dot_entries": tree.dot_entries, "sandboxes": figures,
    });
    Ok((section, json))
}

/// The sandboxes compared, by label: the default protection, and also executables and
/// a glob's folder.
fn sandboxes(root: &Path) -> anyhow::Result<Vec<(String, Sandbox)>> {
    let plain = Sandbox::new(root, &[], false);
    let more = plain
        .clone()
        .protecting(&["knowledge/private/**".to_string()], true)
        .map_err(anyhow::Error::msg)?;
    Ok(vec![
        ("default protection".to_string(), plain),
        ("executables and a glob too".to_string(), more),
    ])
}

/// What one sandbox measured.
struct Measured {
    with: Samples,
    without: Samples,
    finding: Samples,
    /// bubblewrap alone with the same arguments, found once.
    bwrap: Samples,
    first: Duration,
    mounts: Mounts,
}

async fn measure(root: &Path, sandbox: &Sandbox, calls: usize) -> anyhow::Result<Measured> {
    let first = call(root, Some(sandbox)).await?;
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..calls {
        with.push(call(root, Some(sandbox)).await?);
        without.push(call(root, None).await?);
    }
    let mut finding = Vec::new();
    let mut args = Vec::new();
    for _ in 0..calls {
        let started = Instant::now();
        args = sandbox.bwrap_args(root);
        finding.push(started.elapsed());
    }
    let mut bwrap = Vec::new();
    for _ in 0..calls {
        bwrap.push(bwrap_alone(&args).await?);
    }
    Ok(Measured {
        with: Samples::new(with),
        without: Samples::new(without),
        finding: Samples::new(finding),
        bwrap: Samples::new(bwrap),
        first,
        mounts: Mounts::in_args(&args, sandbox.workspace()),
    })
}

/// `true` through bubblewrap started with `args`, not through the launcher.
async fn bwrap_alone(args: &[std::ffi::OsString]) -> anyhow::Result<Duration> {
    let program = std::env::var_os("CAIRN_BWRAP").unwrap_or_else(|| "bwrap".into());
    let started = Instant::now();
    let out = tokio::process::Command::new(program)
        .args(args)
        .args(["--", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .await?;
    let took = started.elapsed();
    anyhow::ensure!(
        out.status.success(),
        "bwrap failed: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(took)
}

/// The mounts inside the workspace that one call's arguments ask for.
#[derive(Debug, Clone, Copy)]
struct Mounts {
    read_only: usize,
    /// Folders bound onto themselves (above a protected entry, so it cannot be moved
    /// aside with them).
    writable: usize,
}

impl Mounts {
    fn in_args(args: &[std::ffi::OsString], workspace: &Path) -> Self {
        let inside = |flag: &str| {
            args.windows(2)
                .filter(|w| w[0] == flag)
                .map(|w| PathBuf::from(&w[1]))
                .filter(|p| p.starts_with(workspace) && p != workspace)
                .count()
        };
        Self {
            read_only: inside("--ro-bind"),
            writable: inside("--bind"),
        }
    }
}

impl Measured {
    fn added(&self) -> f64 {
        ms(self.with.p50()) - ms(self.without.p50())
    }

    fn rows(&self, label: &str) -> Vec<Row> {
        let pair = |s: &Samples| format!("{:.1} / {:.1} ms", ms(s.p50()), ms(s.p99()));
        vec![
            Row {
                name: format!("{label}: p50 / p99"),
                figure: pair(&self.with),
                baseline: pair(&self.without),
                goal: format!("adds < {GOAL_MS} ms p50"),
                verdict: Verdict::of(self.added() < GOAL_MS),
            },
            Row::info(
                format!("{label}: added at p50"),
                format!("{:.1} ms", self.added()),
            ),
            Row::info(
                format!("{label}: finding the entries, p50 / p99"),
                pair(&self.finding),
            ),
            Row::info(
                format!("{label}: bwrap alone with those mounts, p50 / p99"),
                pair(&self.bwrap),
            ),
            Row::info(
                format!("{label}: first call (nothing remembered)"),
                format!("{:.1} ms", ms(self.first)),
            ),
            Row::info(
                format!("{label}: mounts inside the workspace, read-only + pinned"),
                format!("{} + {}", self.mounts.read_only, self.mounts.writable),
            ),
        ]
    }

    fn json(&self) -> Value {
        json!({
            "sandbox_p50_ms": round3(ms(self.with.p50())), "sandbox_p99_ms": round3(ms(self.with.p99())),
            "plain_p50_ms": round3(ms(self.without.p50())), "plain_p99_ms": round3(ms(self.without.p99())),
            "added_p50_ms": round3(self.added()),
            "finding_p50_ms": round3(ms(self.finding.p50())), "finding_p99_ms": round3(ms(self.finding.p99())),
            "bwrap_p50_ms": round3(ms(self.bwrap.p50())), "bwrap_p99_ms": round3(ms(self.bwrap.p99())),
            "first_call_ms": round3(ms(self.first)),
            "read_only_mounts": self.mounts.read_only, "pinned_mounts": self.mounts.writable,
        })
    }
}

fn failed(label: &str, error: &anyhow::Error) -> Row {
    Row {
        name: format!("{label}: p50 / p99"),
        figure: format!("failed: {error:#}"),
        baseline: "-".into(),
        goal: format!("adds < {GOAL_MS} ms p50"),
        verdict: Verdict::Fail,
    }
}

/// One `true` in `root`, inside `sandbox` if there is one.
async fn call(root: &Path, sandbox: Option<&Sandbox>) -> anyhow::Result<Duration> {
    let mut launch = Launch::new("true", root, &EnvScrub::default());
    if let Some(sandbox) = sandbox {
        launch = launch.sandboxed(sandbox);
    }
    let started = Instant::now();
    let out = capture(launch.prepare(), b"", 1 << 16, LIMIT).await?;
    let took = started.elapsed();
    anyhow::ensure!(out.code == Some(0), "`true` failed: {}", out.stderr.trim());
    Ok(took)
}
