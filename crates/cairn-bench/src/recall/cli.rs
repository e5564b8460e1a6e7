//! The real command: `cairn --workspace <dir> search --corpus memory <question>` spawned
//! as a process, one warm-up run then timed runs, on one generated workspace. What a person
//! waits for at the terminal: start-up, opening the index, the sync, the search, printing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::stats::Samples;

/// The `cairn` binary beside this executable, when it was built.
pub fn binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.join("cairn");
    bin.is_file().then_some(bin)
}

/// Wall time of `cairn search` for each of `questions`, after one warm-up run; or why it
/// could not be measured.
pub fn time_search(bin: &Path, workspace: &Path, questions: &[String]) -> Result<Samples, String> {
    let first = questions.first().ok_or("no questions")?;
    run(bin, workspace, first)?;
    let mut times = Vec::with_capacity(questions.len());
    for question in questions {
        times.push(run(bin, workspace, question)?);
    }
    Ok(Samples::new(times))
}

fn run(bin: &Path, workspace: &Path, question: &str) -> Result<Duration, String> {
    let started = Instant::now();
    let output = Command::new(bin)
        .arg("--workspace")
        .arg(workspace)
        .args(["search", "--corpus", "memory", question])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let took = started.elapsed();
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "`cairn search` failed ({}): {}",
            output.status,
            said.lines().next().unwrap_or_default()
        ));
    }
    Ok(took)
}
