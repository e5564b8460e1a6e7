//! What ties Cairn to a sandboxed launch besides its child: the channel of the sandbox's
//! parent (`parent.rs`), which says how the command really ended, and the network's
//! helper (`network.rs`), attached once bubblewrap has started, by a task set off when the
//! launch is prepared (so that it works however the command is spawned), and ended with
//! the sandbox.
//!
//! The descriptors bubblewrap inherits belong to the command until it is dropped: a
//! command spawned elsewhere than [`crate::Prepared::spawn`] (an MCP server's) has them too.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::ExitStatus;
use std::sync::OnceLock;

use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use crate::network::{self, Attach, Plan};
use crate::sandbox::Sandbox;

/// A sandboxed launch's status channel and its network helper's stop switch.
#[derive(Debug)]
pub(crate) struct Link {
    channel: UnixStream,
    /// The wait status the parent reported, once read (reading takes it off the channel).
    reported: OnceLock<i32>,
    stop: CancellationToken,
}

impl Link {
    /// How the command really ended, given what bubblewrap said.
    pub(crate) fn status(&self, status: ExitStatus) -> ExitStatus {
        let reported = match self.reported.get() {
            Some(raw) => Some(*raw),
            None => crate::parent::reported(&self.channel).inspect(|raw| {
                let _ = self.reported.set(*raw);
            }),
        };
        crate::parent::real_status(reported, status)
    }

    /// Ends the network's helper now (it ends with the sandbox anyway).
    pub(crate) fn end(&self) {
        self.stop.cancel();
    }
}

/// Adds to `command` (bubblewrap, its sandbox's arguments given) what follows them: the
/// network's descriptors when the sandbox gets a network of its own, the parent as its pid
/// 1, and `program` with `args`. `env` is the launch's environment, `marker` its marker.
/// The link, unless the parent cannot run here (then `program` runs as bubblewrap starts
/// it).
pub(crate) fn sandboxed(
    command: &mut Command,
    sandbox: &Sandbox,
    env: &mut Vec<(OsString, OsString)>,
    program: &OsStr,
    args: &[OsString],
    marker: &str,
) -> Option<Link> {
    let pair = match crate::parent::available() {
        true => UnixStream::pair().ok(),
        false => None,
    };
    let Some((channel, theirs)) = pair else {
        command.arg("--").arg(program).args(args);
        return None;
    };
    let stop = CancellationToken::new();
    let mut inherited: Vec<OwnedFd> = vec![theirs.into()];
    let mut gate = None;
    if sandbox.network() && network::isolated() {
        if let Some((ours, theirs, plan)) = network_parts() {
            command.args(plan.bwrap_args());
            gate = Some(theirs.as_raw_fd());
            inherited.push(theirs.into());
            let (info, fds) = plan.split();
            inherited.extend(fds);
            attach(ours, info, marker, &stop);
        }
    }
    command.args(["--as-pid-1", "--"]);
    let fd = inherited[0].as_raw_fd();
    command.args(crate::parent::command_line(fd, gate, env, program, args));
    inherit(command, inherited);
    Some(Link {
        channel,
        reported: OnceLock::new(),
        stop,
    })
}

/// The gate's two ends and the network's pipes.
fn network_parts() -> Option<(UnixStream, UnixStream, Plan)> {
    let (ours, theirs) = UnixStream::pair().ok()?;
    Some((ours, theirs, Plan::new().ok()?))
}

/// Sets off the task that attaches the network (see `network.rs`); where there is no
/// runtime to run it, tells the parent to start the command without one.
fn attach(gate: UnixStream, info: std::io::PipeReader, marker: &str, stop: &CancellationToken) {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            let attach = Attach {
                info,
                gate,
                marker: marker.to_string(),
            };
            runtime.spawn(network::attach(attach, stop.clone()));
        }
        Err(_) => {
            let note = "cairn: the sandbox's network could not be set up; the command runs \
                        without it\n";
            let _ = (&gate).write_all(note.as_bytes());
        }
    }
}

/// Lets the child `command` starts inherit `fds` (opened close-on-exec by this process, so
/// that no other child gets them). The command owns them until it is dropped.
#[allow(unsafe_code)]
pub(crate) fn inherit(command: &mut Command, fds: Vec<OwnedFd>) {
    // SAFETY: the closure runs in the forked child before exec, where only
    // async-signal-safe calls may be made: it only calls fcntl on descriptors it owns (open
    // as long as the command lives), and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            for fd in fds.iter().map(AsRawFd::as_raw_fd) {
                let flags = libc::fcntl(fd, libc::F_GETFD);
                if flags < 0 || libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}
