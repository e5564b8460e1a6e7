//! One launch of a window binary: spawn it with a clean environment, time it to its
//! `cairn-ready` line, let it settle, read the memory of its process tree, stop it.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use super::display::{signal, wait_gone};
use super::procmem::{self, TreeMemory};

/// Longest wait for the ready line (a first launch builds the memory index).
const READY_TIMEOUT: Duration = Duration::from_secs(90);

/// What is launched, with its own throwaway home.
#[derive(Debug, Clone)]
pub struct Subject {
    pub bin: PathBuf,
    pub home: PathBuf,
    /// `CAIRN_WORKSPACE` and `CAIRN_CONFIG_DIR` (the app only).
    pub cairn: Option<(PathBuf, PathBuf)>,
}

/// The display and bus every launch shares.
#[derive(Debug, Clone)]
pub struct Desk {
    pub display: String,
    pub bus: String,
}

/// The figures of one launch.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Spawn to the `cairn-ready` line on stdout.
    pub ready: Duration,
    /// The milliseconds the process printed (counted from its own start instant).
    pub self_ms: Option<f64>,
    /// How the binary says it was built ("release", "debug"), when it says.
    pub build: Option<String>,
    /// The page's start-up steps, milliseconds after the process started, as it said them
    /// (`page=120.5 script=180.0 ...`).
    pub steps: Vec<(String, f64)>,
    pub memory: TreeMemory,
}

pub fn launch(subject: &Subject, desk: &Desk, settle: Duration) -> anyhow::Result<Launch> {
    let log_path = subject.home.join("stderr.log");
    let mut cmd = command(subject, desk)?;
    cmd.stdout(Stdio::piped())
        .stderr(File::create(&log_path)?)
        .stdin(Stdio::null());
    let spawned = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", subject.bin.display()))?;
    let stdout = child.stdout.take().context("the child's stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(said) = line.strip_prefix("cairn-ready ") {
                let mut words = said.split_whitespace();
                let ms = words.next().and_then(|ms| ms.parse::<f64>().ok());
                let build = words.next().map(str::to_string);
                let steps = words
                    .filter_map(|word| {
                        let (name, at) = word.split_once('=')?;
                        Some((name.to_string(), at.parse::<f64>().ok()?))
                    })
                    .collect();
                let _ = tx.send((Instant::now(), ms, build, steps));
            }
        }
    });
    let (at, self_ms, build, steps) = match rx.recv_timeout(READY_TIMEOUT) {
        Ok(ready) => ready,
        Err(e) => {
            let pids = procmem::tree(child.id());
            stop(&mut child, &pids);
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            bail!(
                "{} printed no `cairn-ready` line ({}); its last stderr lines:\n{}",
                subject.bin.display(),
                if matches!(e, mpsc::RecvTimeoutError::Timeout) {
                    "timed out"
                } else {
                    "it ended"
                },
                tail.join("\n")
            );
        }
    };
    std::thread::sleep(settle);
    let pids = procmem::tree(child.id());
    let memory = procmem::measure(&pids);
    stop(&mut child, &pids);
    Ok(Launch {
        ready: at - spawned,
        self_ms,
        build,
        steps,
        memory,
    })
}

/// The binary with only what a desktop session gives it: no keys or Cairn settings from
/// the outer environment.
fn command(subject: &Subject, desk: &Desk) -> anyhow::Result<Command> {
    let home = &subject.home;
    let runtime = home.join("run");
    std::fs::create_dir_all(&runtime)?;
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )?;
    let mut cmd = Command::new(&subject.bin);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env(
            "LANG",
            std::env::var_os("LANG").unwrap_or_else(|| "C.UTF-8".into()),
        )
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("DISPLAY", &desk.display)
        .env("DBUS_SESSION_BUS_ADDRESS", &desk.bus)
        .env("GDK_BACKEND", "x11")
        .env("WEBKIT_DISABLE_DMABUF_RENDERER", "1")
        .env("CAIRN_REPORT_READY", "1");
    if let Some((workspace, config_dir)) = &subject.cairn {
        cmd.env("CAIRN_WORKSPACE", workspace)
            .env("CAIRN_CONFIG_DIR", config_dir);
    }
    Ok(cmd)
}

/// SIGTERM, then SIGKILL after 5 s; then waits for the whole tree to be gone.
fn stop(child: &mut Child, pids: &[u32]) {
    signal(child.id(), "TERM");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !matches!(child.try_wait(), Ok(Some(_))) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    if !wait_gone(pids, Duration::from_secs(5)) {
        for &pid in pids {
            signal(pid, "KILL");
        }
        wait_gone(pids, Duration::from_secs(2));
    }
}

/// How `bin` was built: as it says in its ready line (a copied release binary is still
/// one), else as its path says (`target/release/...`).
pub fn build_of(bin: &Path, said: Option<&str>) -> &'static str {
    let has = |name: &str| bin.components().any(|c| c.as_os_str() == name);
    match said {
        Some("release") => "release",
        Some("debug") => "DEBUG (not representative)",
        _ if has("release") => "release",
        _ if has("debug") => "DEBUG (not representative)",
        _ => "unknown build",
    }
}
