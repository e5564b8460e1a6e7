//! The command's parent inside the sandbox (`parent.pl`, run by the system's perl as pid 1
//! there): bubblewrap reports a command killed by a signal as the exit code 128 + the
//! signal, so a parent of Cairn's own waits for the command and says on a channel (a socket
//! pair whose one end it inherits) what its wait status was. When the sandbox's network is
//! being set up, it also holds the command back on a second one, the gate, until Cairn says
//! `go`.
//!
//! Where perl is missing, the command runs as bubblewrap starts it and its status is what
//! bubblewrap says.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::OnceLock;

/// The interpreter; `/` is bound read-only in the sandbox, so it is there too.
pub(crate) const PERL: &str = "/usr/bin/perl";

const SCRIPT: &str = include_str!("parent.pl");

/// Variables perl reads at its start (options, library paths, I/O layers, the debugger):
/// taken from perl's environment and given back to the command by the parent.
const PERL_PREFIX: &str = "PERL";

/// Whether the parent can run here.
pub(crate) fn available() -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    *FOUND.get_or_init(|| is_executable(Path::new(PERL)))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_path: &Path) -> bool {
    false
}

/// bubblewrap's arguments after `--`: the parent, told its channel's `fd` and its `gate`'s
/// when it has one, then `program` with `args`. Moves perl's own variables out of `env` into
/// the parent's arguments, and keeps perl quiet about a locale the system lacks.
pub(crate) fn command_line(
    fd: i32,
    gate: Option<i32>,
    env: &mut Vec<(OsString, OsString)>,
    program: &OsStr,
    args: &[OsString],
) -> Vec<OsString> {
    let (kept, rest): (Vec<_>, Vec<_>) = std::mem::take(env)
        .into_iter()
        .partition(|(name, _)| name.to_string_lossy().starts_with(PERL_PREFIX));
    *env = rest;
    env.push(("PERL_BADLANG".into(), "0".into()));
    let mut line: Vec<OsString> = vec![PERL.into(), "-e".into(), SCRIPT.into(), "--".into()];
    line.push(fd.to_string().into());
    line.push(
        gate.map_or_else(|| "-".to_string(), |g| g.to_string())
            .into(),
    );
    line.push(setsid_number().to_string().into());
    line.push(keyctl_number().to_string().into());
    line.push(kept.len().to_string().into());
    for (name, value) in kept {
        let mut word = name;
        word.push("=");
        word.push(value);
        line.push(word);
    }
    line.push(program.to_os_string());
    line.extend(args.iter().cloned());
    line
}

#[cfg(target_os = "linux")]
fn setsid_number() -> libc::c_long {
    libc::SYS_setsid
}

#[cfg(not(target_os = "linux"))]
fn setsid_number() -> i64 {
    -1
}

#[cfg(target_os = "linux")]
fn keyctl_number() -> libc::c_long {
    libc::SYS_keyctl
}

#[cfg(not(target_os = "linux"))]
fn keyctl_number() -> i64 {
    -1
}

/// How the command really ended: the wait status the parent `reported`, when it agrees
/// with what bubblewrap said (`status`); otherwise `status`.
pub(crate) fn real_status(reported: Option<i32>, status: ExitStatus) -> ExitStatus {
    match reported {
        Some(raw) if agrees(raw, status) => from_raw(raw),
        _ => status,
    }
}

/// The last `status N` on the channel, read without waiting (once the sandbox has ended,
/// everything the parent wrote is there).
pub(crate) fn reported(channel: &UnixStream) -> Option<i32> {
    channel.set_nonblocking(true).ok()?;
    let mut said = Vec::new();
    let _ = channel.take(4096).read_to_end(&mut said);
    String::from_utf8_lossy(&said)
        .lines()
        .filter_map(|line| line.strip_prefix("status "))
        .filter_map(|n| n.trim().parse().ok())
        .next_back()
}

/// Whether bubblewrap's exit code is the one the parent exits with for `raw`: the code
/// itself, or 128 + the signal.
#[cfg(unix)]
fn agrees(raw: i32, status: ExitStatus) -> bool {
    let real = from_raw(raw);
    let expected = match std::os::unix::process::ExitStatusExt::signal(&real) {
        Some(signal) => 128 + signal,
        None => real.code().unwrap_or(-1),
    };
    status.code() == Some(expected)
}

#[cfg(not(unix))]
fn agrees(_raw: i32, _status: ExitStatus) -> bool {
    false
}

#[cfg(unix)]
fn from_raw(raw: i32) -> ExitStatus {
    std::os::unix::process::ExitStatusExt::from_raw(raw)
}

#[cfg(not(unix))]
fn from_raw(_raw: i32) -> ExitStatus {
    ExitStatus::default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;

    fn said(text: &str, bwrap_code: i32) -> ExitStatus {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        theirs.write_all(text.as_bytes()).unwrap();
        real_status(reported(&ours), ExitStatus::from_raw(bwrap_code << 8))
    }

    #[test]
    fn a_reported_signal_replaces_its_exit_code_and_nothing_else_does() {
        assert_eq!(said("up\nstatus 15\n", 143).signal(), Some(15));
        assert_eq!(said("up\nstatus 36608\n", 143).code(), Some(143));
        // A report that disagrees with bubblewrap, or none, leaves its status.
        assert_eq!(said("up\nstatus 15\n", 1).code(), Some(1));
        assert_eq!(said("up\n", 143).code(), Some(143));
        assert_eq!(said("", 0).code(), Some(0));
    }

    #[test]
    fn perls_own_variables_go_to_the_command_through_the_parent() {
        let mut env: Vec<(OsString, OsString)> = vec![
            ("PATH".into(), "/usr/bin".into()),
            ("PERL5OPT".into(), "-d".into()),
        ];
        let line = command_line(7, Some(8), &mut env, OsStr::new("bash"), &["-c".into()]);
        assert_eq!(
            env,
            [
                ("PATH".into(), "/usr/bin".into()),
                ("PERL_BADLANG".into(), "0".into())
            ]
        );
        let tail: Vec<&OsStr> = line[4..].iter().map(OsString::as_os_str).collect();
        let setsid = setsid_number().to_string();
        let keyctl = keyctl_number().to_string();
        let expected = ["7", "8", &setsid, &keyctl, "1", "PERL5OPT=-d", "bash", "-c"];
        assert_eq!(tail, expected.map(OsStr::new));
    }
}
