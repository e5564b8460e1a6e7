//! The network of a sandbox that may reach it (`network = true`): the sandbox keeps the
//! network namespace bubblewrap made, and slirp4netns, attached to it from outside, carries
//! its traffic through sockets of Cairn's user (a user-mode network: `10.0.2.100` inside,
//! `10.0.2.3` answering DNS). Sharing the host's namespace instead would open its loopback
//! services and its abstract unix sockets (X11, D-Bus, agents) to every command.
//!
//! The command starts once the network is up: bubblewrap says the sandbox's pid on an info
//! fd, the sandbox's parent (`parent.rs`) says on its gate that it runs (bubblewrap has set
//! up the loopback by then), slirp4netns joins the namespace and says it is ready, and the
//! parent is told `go`. slirp4netns ends with the sandbox (the gate closes when it ends) or
//! when the call is ended before; it joins the call's process group, so that killing the
//! group kills it too, and it quits by itself once Cairn's end of its exit pipe closes.
//!
//! Where that cannot work (no slirp4netns, no perl, `/dev/net/tun` closed to this user) the
//! sandbox has no network at all, and [`network_note`] says why: sharing the host's would
//! give up everything `fence.rs` refuses.

use std::ffi::OsString;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

use crate::reap::MARKER_VAR;

/// Names the slirp4netns program to use instead of `slirp4netns` from the PATH.
const SLIRP_VAR: &str = "CAIRN_SLIRP4NETNS";

/// The DNS forwarder of slirp4netns, as the sandbox's resolver.
const NAMESERVER: &str = "nameserver 10.0.2.3\n";

/// How long slirp4netns may take to be ready before the command starts without it.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// Why `network = true` gives commands no network here, or `None` when they get one of
/// the sandbox's own; found out once per process.
pub fn network_note() -> Option<String> {
    static NOTE: OnceLock<Option<String>> = OnceLock::new();
    NOTE.get_or_init(|| why_none().err()).clone()
}

/// Whether sandboxes that may reach the network get one of their own.
pub(crate) fn isolated() -> bool {
    network_note().is_none()
}

fn slirp_program() -> OsString {
    std::env::var_os(SLIRP_VAR).unwrap_or_else(|| "slirp4netns".into())
}

fn why_none() -> Result<(), String> {
    let none = "network = true gives commands no network here";
    let program = slirp_program();
    if find_program(&program).is_none() {
        return Err(format!(
            "{none}: `{}` is not installed; install the `slirp4netns` package",
            program.to_string_lossy()
        ));
    }
    if !crate::parent::available() {
        return Err(format!("{none}: /usr/bin/perl is missing"));
    }
    if let Err(e) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
    {
        return Err(format!(
            "{none}: /dev/net/tun cannot be opened ({e}); give it mode 0666 as udev's \
             default rule does"
        ));
    }
    Ok(())
}

/// `program` itself when it names a path, else where it is on the PATH.
fn find_program(program: &std::ffi::OsStr) -> Option<PathBuf> {
    let named = Path::new(program);
    if named.components().count() > 1 {
        return named.is_file().then(|| named.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

/// The pipes one sandbox's network is set up through, before bubblewrap starts.
#[derive(Debug)]
pub(crate) struct Plan {
    /// bubblewrap writes the sandbox's pid here (`--info-fd`).
    info: (std::io::PipeReader, std::io::PipeWriter),
    /// The sandbox's `/etc/resolv.conf` (`--ro-bind-data`), and where it goes.
    resolv: Option<(std::io::PipeReader, PathBuf)>,
}

impl Plan {
    pub(crate) fn new() -> std::io::Result<Self> {
        let info = std::io::pipe()?;
        let resolv = match resolv_path() {
            Some(path) => {
                let (reader, mut writer) = std::io::pipe()?;
                writer.write_all(resolv_conf(&path).as_bytes())?;
                Some((reader, path))
            }
            None => None,
        };
        Ok(Self { info, resolv })
    }

    /// bubblewrap's arguments for it.
    pub(crate) fn bwrap_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--info-fd".into(), fd_arg(&self.info.1)];
        if let Some((reader, path)) = &self.resolv {
            args.extend(["--ro-bind-data".into(), fd_arg(reader), path.into()]);
        }
        args
    }

    /// The end the sandbox's pid is read from, and the descriptors bubblewrap inherits.
    pub(crate) fn split(self) -> (std::io::PipeReader, Vec<OwnedFd>) {
        let mut inherited = vec![OwnedFd::from(self.info.1)];
        inherited.extend(self.resolv.map(|(reader, _)| OwnedFd::from(reader)));
        (self.info.0, inherited)
    }
}

/// Where the system's resolver file is (the file a symlink leads to, which may be under
/// `/run`), when there is one.
fn resolv_path() -> Option<PathBuf> {
    std::fs::canonicalize("/etc/resolv.conf")
        .ok()
        .filter(|p| p.is_file())
}

/// The sandbox's resolver file: slirp4netns's forwarder, with the host's search domains.
fn resolv_conf(host: &Path) -> String {
    let host = std::fs::read_to_string(host).unwrap_or_default();
    let mut conf = NAMESERVER.to_string();
    for line in host.lines() {
        if line.starts_with("search") || line.starts_with("domain") {
            conf.push_str(line);
            conf.push('\n');
        }
    }
    conf
}

fn fd_arg(fd: &impl AsRawFd) -> OsString {
    fd.as_raw_fd().to_string().into()
}

/// What the task that attaches the network needs.
pub(crate) struct Attach {
    /// bubblewrap's info fd.
    pub info: std::io::PipeReader,
    /// Cairn's end of the parent's gate.
    pub gate: UnixStream,
    /// The launch's marker, which slirp4netns carries too.
    pub marker: String,
}

/// Sets up the sandbox's network and lets the command start (with a note on its stderr
/// when the network could not be set up); then keeps slirp4netns until the sandbox ends or
/// `stop` fires.
pub(crate) async fn attach(attach: Attach, stop: CancellationToken) {
    let gate = attach.gate;
    let Ok(mut gate) = gate
        .set_nonblocking(true)
        .and_then(|()| tokio::net::UnixStream::from_std(gate))
    else {
        return;
    };
    let helper = tokio::select! {
        _ = stop.cancelled() => return,
        helper = start(attach.info, &mut gate, &attach.marker) => helper,
    };
    let said = match &helper {
        Ok(_) => "go\n".to_string(),
        Err(why) => format!(
            "cairn: the sandbox's network could not be set up ({why}); the command runs \
             without it\n"
        ),
    };
    let _ = gate.write_all(said.as_bytes()).await;
    if let Ok(helper) = helper {
        helper.run_until(gate, stop).await;
    }
}

/// slirp4netns, running.
struct Helper {
    child: Child,
    /// Closing it makes slirp4netns quit.
    _exit: std::io::PipeWriter,
}

impl Helper {
    /// Keeps it until the gate closes (the sandbox has ended), `stop` fires or it ends, its
    /// stderr drained; then kills it.
    async fn run_until(mut self, mut gate: tokio::net::UnixStream, stop: CancellationToken) {
        let mut stderr = self.child.stderr.take();
        let drain = async {
            if let Some(stderr) = stderr.as_mut() {
                let _ = tokio::io::copy(stderr, &mut tokio::io::sink()).await;
            }
            std::future::pending::<()>().await
        };
        let closed = async {
            let mut byte = [0u8; 1];
            while let Ok(1) = gate.read(&mut byte).await {}
        };
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = self.child.wait() => {}
            _ = drain => {}
            _ = closed => {}
        }
        let _ = self.child.kill().await;
    }
}

/// Waits for the sandbox to run, then starts slirp4netns on its network namespace and
/// waits until it is ready.
async fn start(
    info: std::io::PipeReader,
    gate: &mut tokio::net::UnixStream,
    marker: &str,
) -> Result<Helper, String> {
    let pid = sandbox_pid(info).await?;
    let line = read_line(gate).await;
    if line != "up" {
        return Err("the sandbox did not start".into());
    }
    let net = std::fs::File::open(format!("/proc/{pid}/ns/net"))
        .map_err(|e| format!("its network namespace cannot be opened: {e}"))?;
    let user = owner(&net).map_err(|e| format!("its user namespace cannot be found: {e}"))?;
    let (ready, ready_w) = std::io::pipe().map_err(|e| e.to_string())?;
    let (exit_r, exit) = std::io::pipe().map_err(|e| e.to_string())?;
    let mut command = Command::new(slirp_program());
    command
        .args(slirp_args(ready_w.as_raw_fd(), exit_r.as_raw_fd()))
        .arg(format!("--userns-path=/proc/self/fd/{}", user.as_raw_fd()))
        .args([
            "--netns-type=path",
            &format!("/proc/self/fd/{}", net.as_raw_fd()),
        ])
        .arg("tap0")
        .env_clear()
        .env(MARKER_VAR, marker)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(group) = launch_group(pid) {
        command.process_group(group);
    }
    let net = OwnedFd::from(net);
    let fenced = (user.try_clone(), net.try_clone());
    let fds = [ready_w.into(), exit_r.into(), user, net];
    crate::link::inherit(&mut command, fds.into());
    let spawned = command.spawn();
    drop(command);
    let mut child = spawned.map_err(|e| format!("slirp4netns could not be started: {e}"))?;
    if let Err(why) = wait_ready(ready).await {
        let _ = child.start_kill();
        let said = match child.stderr.take() {
            Some(stderr) => first_line(stderr).await,
            None => String::new(),
        };
        return Err(format!(
            "slirp4netns: {}",
            if said.is_empty() { why } else { said }
        ));
    }
    let fenced = match fenced {
        (Ok(user), Ok(net)) => crate::fence::set(&user, &net).await,
        (Err(e), _) | (_, Err(e)) => Err(e.to_string()),
    };
    match fenced {
        Ok(()) => Ok(Helper { child, _exit: exit }),
        Err(why) => {
            let _ = child.start_kill();
            Err(why)
        }
    }
}

fn slirp_args(ready: RawFd, exit: RawFd) -> Vec<String> {
    let mut args: Vec<String> = [
        "--configure",
        "--mtu=65520",
        "--disable-host-loopback",
        "--enable-seccomp",
    ]
    .map(String::from)
    .to_vec();
    if is_root() {
        // Only root's slirp4netns can enter a mount namespace of its own, without
        // capabilities.
        args.push("--enable-sandbox".into());
    }
    args.extend([format!("--ready-fd={ready}"), format!("--exit-fd={exit}")]);
    args
}

#[allow(unsafe_code)]
fn is_root() -> bool {
    // SAFETY: geteuid takes nothing and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The sandbox's pid as bubblewrap says it (`{ "child-pid": N, ... }`), read up to the
/// closing brace (the pipe's writing end may stay open here as long as the command does).
async fn sandbox_pid(info: std::io::PipeReader) -> Result<i32, String> {
    let mut info = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(info))
        .map_err(|e| e.to_string())?;
    let mut said = Vec::new();
    let mut chunk = [0u8; 512];
    while !said.contains(&b'}') {
        match info.read(&mut chunk).await {
            Ok(n @ 1..) => said.extend_from_slice(&chunk[..n]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&said)
        .split("\"child-pid\":")
        .nth(1)
        .and_then(|rest| {
            let digits: String = rest
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .ok_or_else(|| "bubblewrap did not say the sandbox's pid".to_string())
}

/// The process group of bubblewrap, the sandbox's parent outside (the launch's group),
/// when it is in this process's session (only there can another process join it).
fn launch_group(sandbox: i32) -> Option<i32> {
    // After the name: state, ppid, pgrp, session.
    let field = |pid: &str, n: usize| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (_, rest) = stat.rsplit_once(')')?;
        rest.split_whitespace().nth(n)?.parse().ok()
    };
    let bwrap = field(&sandbox.to_string(), 1)?.to_string();
    let same_session = field(&bwrap, 3)? == field("self", 3)?;
    same_session.then_some(field(&bwrap, 2)?)
}

/// One line from the parent (without its newline); what came before an end otherwise.
async fn read_line(gate: &mut tokio::net::UnixStream) -> String {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while let Ok(1) = gate.read(&mut byte).await {
        if byte[0] == b'\n' {
            break;
        }
        line.push(byte[0]);
    }
    String::from_utf8_lossy(&line).into_owned()
}

/// The user namespace that owns the network namespace `net` (bubblewrap nests a second
/// user namespace inside it for an unprivileged user, and only the owner's grants the
/// right to configure the network).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn owner(net: &std::fs::File) -> std::io::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: NS_GET_USERNS takes no argument and returns a new file descriptor, or -1;
    // `net` is an open namespace file for the whole call.
    let fd = unsafe { libc::ioctl(net.as_raw_fd(), libc::NS_GET_USERNS) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned to this process, open, and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(not(target_os = "linux"))]
fn owner(_net: &std::fs::File) -> std::io::Result<OwnedFd> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// Waits for slirp4netns to say it is ready, at most [`READY_WITHIN`].
async fn wait_ready(ready: std::io::PipeReader) -> Result<(), String> {
    let mut ready = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(ready))
        .map_err(|e| e.to_string())?;
    let mut byte = [0u8; 1];
    match timeout(READY_WITHIN, ready.read(&mut byte)).await {
        Ok(Ok(1)) => Ok(()),
        Ok(_) => Err("it ended before it was ready".into()),
        Err(_) => Err(format!(
            "it was not ready within {} s",
            READY_WITHIN.as_secs()
        )),
    }
}

/// The first line of what a reader gives until its end.
async fn first_line(mut reader: impl AsyncRead + Unpin) -> String {
    let mut said = Vec::new();
    let _ = (&mut reader).take(4096).read_to_end(&mut said).await;
    String::from_utf8_lossy(&said)
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}
