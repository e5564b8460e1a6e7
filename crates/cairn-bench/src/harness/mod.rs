//! `cairn-bench harness`: what the harness itself costs.
//!
//! 1. Overhead per step: an agent on a zero-latency scripted provider calls a do-nothing
//!    tool `--steps` times; its run time minus the provider alone answering the same number
//!    of calls, per step. Run with the session on tmpfs (syncs are free: the harness's CPU
//!    cost) and on disk (with the fsync at every save point).
//! 2. Session open: `SessionStore::open` of a `--entries`-entry session beside reading the
//!    file and parsing each line as untyped JSON.
//! 3. Session list: `SessionStore::list` over `--list-sessions` sessions, first listing
//!    beside listings of the same store after nothing or one session changed.
//! 4. Subagent spawn: from the model's `agent_spawn` to the subagent's first model request,
//!    beside an ordinary step of the same run.

mod breakdown;
mod figures;
mod location;
mod overhead;
mod session_list;
mod session_open;
mod spawn;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::ensure;

use crate::fsinfo::{self, ScratchDir};
use crate::report::Report;

use self::figures::Figures;
use self::location::Location;

/// Goals (DESIGN: the harness must be cheap next to any real model call).
pub const GOAL_OVERHEAD_US: f64 = 100.0;
pub const GOAL_OPEN_MS: f64 = 50.0;
/// From `agent_spawn` to the subagent's first model request.
pub const GOAL_SPAWN_MS: f64 = 5.0;
/// Entries of each listed session.
const LIST_ENTRIES: usize = 200;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Tool steps of the timed agent run (a final answer step follows).
    #[arg(long, default_value_t = 2000)]
    steps: u32,
    /// Entries of the generated session that is opened.
    #[arg(long, default_value_t = 10_000)]
    entries: usize,
    /// Timed opens of the session (after one warm-up).
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Sessions in the listed folder (200 entries each).
    #[arg(long, default_value_t = 5000)]
    list_sessions: usize,
    /// Subagents spawned for the spawn cost (one every other step).
    #[arg(long, default_value_t = 200)]
    spawns: u32,
    /// Where the "disk" run writes (a scratch folder is made inside) [default: the system
    /// temp dir].
    #[arg(long)]
    disk_dir: Option<PathBuf>,
}

pub async fn run(args: Args) -> anyhow::Result<Report> {
    ensure!(args.steps >= 1, "--steps must be at least 1");
    ensure!(args.entries >= 1, "--entries must be at least 1");
    ensure!(args.runs >= 1, "--runs must be at least 1");
    ensure!(args.spawns >= 1, "--spawns must be at least 1");
    ensure!(
        args.list_sessions >= 1,
        "--list-sessions must be at least 1"
    );
    let load_before = fsinfo::load_average();
    let tmpfs = fsinfo::tmpfs_scratch()?;
    let disk_parent = args
        .disk_dir
        .clone()
        .unwrap_or_else(fsinfo::default_disk_parent);
    let disk = fsinfo::scratch_in(&disk_parent)?;

    let warm_dir = tmpfs.as_ref().unwrap_or(&disk);
    let warm_steps = args.steps.min(200);
    eprintln!("warm-up: {warm_steps} steps");
    overhead::run_agent(&warm_dir.path().join("warm-up"), warm_steps).await?;
    overhead::provider_alone(warm_steps + 1).await?;

    let mut locations = Vec::new();
    for (label, scratch) in [("tmpfs", tmpfs.as_ref()), ("disk", Some(&disk))] {
        if let Some(scratch) = scratch {
            locations.push(measure_location(label, scratch, args.steps).await?);
        }
    }
    let tools = overhead::bench_tools();
    let replay = match locations.first() {
        Some(location) => breakdown::replay(&location.run.tree, &tools)?,
        None => breakdown::Replay::default(),
    };
    let plumbing = match locations.first() {
        Some(location) => {
            let run = &location.run;
            breakdown::plumbing(run.calls, run.events / u64::from(run.calls.max(1))).await
        }
        None => breakdown::Plumbing::default(),
    };

    eprintln!("session open: generating {} entries", args.entries);
    let sessions_dir = disk.path().join("open").join("sessions");
    let file = session_open::generate(&sessions_dir, args.entries).await?;
    eprintln!("session open: {} runs", args.runs);
    let open = session_open::measure(&sessions_dir, &file, args.runs).await?;

    eprintln!("session list: generating {} sessions", args.list_sessions);
    let list_dir = disk.path().join("list").join("sessions");
    let list =
        session_list::measure(&list_dir, args.list_sessions, LIST_ENTRIES, args.runs).await?;

    let spawn_dir = tmpfs.as_ref().unwrap_or(&disk).path().join("spawn");
    eprintln!(
        "subagents: {} spawns in {}",
        args.spawns,
        spawn_dir.display()
    );
    let spawn = spawn::measure(&spawn_dir, args.spawns).await?;

    let figures = Figures {
        spawn,
        steps: args.steps,
        locations,
        replay,
        plumbing,
        file,
        open,
        list,
        runs: args.runs,
        baseline_request: overhead::baseline_request(&tools),
        load: format!("{load_before} before, {} after", fsinfo::load_average()),
    };
    Ok(figures.report())
}

/// The timed agent run in `scratch`, its baseline right after it, and the save point cost
/// there.
async fn measure_location(
    label: &'static str,
    scratch: &ScratchDir,
    steps: u32,
) -> anyhow::Result<Location> {
    eprintln!(
        "{label}: agent run, {steps} steps in {}",
        scratch.path().display()
    );
    let run = overhead::run_agent(&scratch.path().join("workspace"), steps).await?;
    eprintln!("{label}: provider alone, {} calls", run.calls);
    let baseline = overhead::provider_alone(run.calls).await?;
    let save_point = breakdown::save_point_cost(scratch.path(), 50).await?;
    Ok(Location {
        label,
        dir: scratch.path().to_path_buf(),
        fs_type: scratch.fs_type.clone(),
        run,
        baseline,
        save_point,
    })
}

/// `d` over `n`, as microseconds.
fn per(d: Duration, n: u32) -> f64 {
    crate::stats::us_per(d, u64::from(n))
}
