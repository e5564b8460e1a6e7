//! A child process as Cairn starts every one: the scrubbed environment, a working directory
//! it names, a process group of its own, a marker in its environment, killed when dropped,
//! and (for the bash tool) inside the sandbox, under a parent of Cairn's (`link.rs`).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::{Child, Command};

use crate::env::{protect_git, EnvScrub};
use crate::link::{sandboxed, Link};
use crate::reap::{Group, MARKER_VAR};
use crate::sandbox::Sandbox;

/// What to start, and how.
#[derive(Debug, Clone)]
pub struct Launch {
    program: OsString,
    args: Vec<OsString>,
    cwd: PathBuf,
    env: Vec<(OsString, OsString)>,
    sandbox: Option<Sandbox>,
    stdin: bool,
    git_protected: bool,
}

/// A launch ready to spawn: the command and the marker its processes carry.
#[derive(Debug)]
pub struct Prepared {
    pub command: Command,
    pub marker: String,
    /// A sandboxed launch's link, for its group (see `link.rs`).
    link: Option<Link>,
    /// What the sandbox left out of this call: protected paths (more than it binds), the
    /// network asked for where it cannot be had.
    pub note: Option<String>,
    /// A sandboxed launch's workspace as the call starts, to undo what it makes
    /// ([`Sandbox::undo_new_tool_entries`]).
    pub before: Option<crate::quarantine::Before>,
}

impl Launch {
    /// `program` in `cwd` with Cairn's environment minus what `scrub` removes.
    pub fn new(program: impl AsRef<OsStr>, cwd: &Path, scrub: &EnvScrub) -> Self {
        Self::inheriting(program, cwd, scrub, std::env::vars_os())
    }

    /// [`Launch::new`] as if Cairn's environment were `parent` (the doctor's battery plants
    /// a secret in it).
    pub fn inheriting(
        program: impl AsRef<OsStr>,
        cwd: &Path,
        scrub: &EnvScrub,
        parent: impl Iterator<Item = (OsString, OsString)>,
    ) -> Self {
        Self {
            program: program.as_ref().to_os_string(),
            args: Vec::new(),
            cwd: cwd.to_path_buf(),
            env: scrub.apply(parent),
            sandbox: None,
            stdin: false,
            git_protected: false,
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// Sets (or replaces) one variable, after the scrub: the caller means it.
    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        let name = name.as_ref().to_os_string();
        self.env.retain(|(k, _)| *k != name);
        self.env.push((name, value.as_ref().to_os_string()));
        self
    }

    /// Runs the program inside `sandbox`.
    pub fn sandboxed(mut self, sandbox: &Sandbox) -> Self {
        self.sandbox = Some(sandbox.clone());
        self
    }

    /// Gives the child a pipe for its input (otherwise it reads nothing).
    pub fn stdin_piped(mut self) -> Self {
        self.stdin = true;
        self
    }

    /// git never takes a folder for an implicit bare repository (see [`protect_git`]).
    pub fn git_protected(mut self) -> Self {
        self.git_protected = true;
        self
    }

    /// The command to spawn, with stdout and stderr piped.
    pub fn prepare(self) -> Prepared {
        let marker = uuid::Uuid::now_v7().to_string();
        let mut env = self.env;
        if self.git_protected {
            protect_git(&mut env);
        }
        env.push((MARKER_VAR.into(), marker.clone().into()));
        let mut link = None;
        let mut note = None;
        let mut before = None;
        let mut command = match &self.sandbox {
            Some(sandbox) => {
                env.retain(|(k, _)| k != "TMPDIR");
                env.push(("TMPDIR".into(), "/tmp".into()));
                let mut command = Command::new(crate::bwrap::bwrap_program());
                let (args, noted, entries) = sandbox.bwrap_args_noted(&self.cwd);
                command.args(args);
                note = noted;
                let none = sandbox.network().then(crate::network::network_note);
                if let Some(why) = none.flatten() {
                    let none = format!("[sandbox: {why}]");
                    note = Some(note.map_or(none.clone(), |n| format!("{n}\n{none}")));
                }
                before = Some(entries);
                let (program, args) = (&self.program, &self.args);
                link = sandboxed(&mut command, sandbox, &mut env, program, args, &marker);
                command
            }
            None => {
                let mut command = Command::new(&self.program);
                command.args(&self.args);
                command
            }
        };
        command
            .current_dir(&self.cwd)
            .env_clear()
            .envs(env)
            .stdin(if self.stdin {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        Prepared {
            command,
            marker,
            link,
            note,
            before,
        }
    }
}

impl Prepared {
    /// Starts the child; the group ends everything it starts.
    pub fn spawn(self) -> std::io::Result<(Child, Group)> {
        let Self {
            mut command,
            marker,
            link,
            ..
        } = self;
        let child = command.spawn()?;
        // With it go this process's copies of what the sandbox inherited.
        drop(command);
        let group = Group::of(&child, &marker);
        match link {
            Some(link) => Ok((child, group.linked(link))),
            None => Ok((child, group)),
        }
    }
}
