//! A display and a session bus of the benchmark's own: Xvfb on a free display number and
//! a private D-Bus session daemon, both stopped when dropped.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use std::io::{BufRead, BufReader};

/// A virtual X display.
pub struct Xvfb {
    child: Child,
    /// `:N`, for `DISPLAY`.
    pub display: String,
}

impl Xvfb {
    /// Starts `Xvfb` on a display number it picks itself (`-displayfd`) and waits until it
    /// accepts clients.
    pub fn start() -> anyhow::Result<Self> {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start Xvfb (Debian package xvfb; `make test` installs it)")?;
        let stdout = child.stdout.take().context("Xvfb's stdout")?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        let number = line.trim();
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            let _ = child.kill();
            let _ = child.wait();
            bail!("Xvfb did not report a display number (got {line:?})");
        }
        Ok(Self {
            display: format!(":{number}"),
            child,
        })
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A private session bus (`dbus-daemon --session --fork`).
pub struct SessionBus {
    pid: u32,
    /// For `DBUS_SESSION_BUS_ADDRESS`.
    pub address: String,
}

impl SessionBus {
    pub fn start() -> anyhow::Result<Self> {
        let out = Command::new("dbus-daemon")
            .args(["--session", "--fork", "--print-address=1", "--print-pid=1"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .context("cannot start dbus-daemon (Debian package dbus)")?;
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        let address = lines.next().unwrap_or_default().trim().to_string();
        let pid = lines.next().and_then(|l| l.trim().parse::<u32>().ok());
        match pid {
            Some(pid) if !address.is_empty() => Ok(Self { pid, address }),
            _ => bail!("dbus-daemon did not print its address and pid (got {text:?})"),
        }
    }
}

impl Drop for SessionBus {
    fn drop(&mut self) {
        signal(self.pid, "TERM");
    }
}

/// Sends `signal` (e.g. "TERM") to `pid` with kill(1).
pub fn signal(pid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Waits until none of `pids` runs, up to `timeout`; whether they all ended.
pub fn wait_gone(pids: &[u32], timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if !pids.iter().any(|&pid| super::procmem::alive(pid)) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
