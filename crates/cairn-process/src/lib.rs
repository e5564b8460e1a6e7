//! The one door for every child process Cairn starts: the bash tool's commands, the
//! user's hooks and MCP stdio servers.
//!
//! - `env.rs`: the scrubbed environment (no provider keys, no Cairn variables, no session
//!   bus) and git's protected settings.
//! - `launch.rs`: a [`Launch`] becomes a `tokio::process::Command` in a process group of its
//!   own, in the working directory it names, marked so that everything it starts can be found.
//! - `reap.rs`: killing a call's process group and every process carrying its marker.
//! - `capture.rs`: running a command to its end with input, capped output and a timeout;
//!   `supervise.rs`: watching one as it runs, its output streamed to a sink, killed on a
//!   timeout or a cancel.
//! - `sandbox.rs`: the OS sandbox (bubblewrap): a read-only system, a writable workspace with
//!   read-only and hidden paths (`protected/` finds the read-only ones), a private temp
//!   folder and no network; `reach.rs` orders every mount of a call, the user's `hide`,
//!   `read_only` and `writable` paths among them; `sockets.rs` the host's unix sockets it
//!   hides; `probe.rs` tells whether it can start here; `selftest.rs` is
//!   the battery `cairn doctor` runs.
//! - `parent.rs`: the command's parent inside the sandbox, which says how it really ended;
//!   `network.rs`: the sandbox's own network (slirp4netns) when commands may reach it,
//!   `fence.rs` its routes that keep it to the internet;
//!   `link.rs` ties both to a launch.
//! - `neutral.rs`: the working directory of processes that must not start in the workspace.
//! - `quarantine.rs`: what a sandboxed command may not leave behind (a new git repository,
//!   a tool's settings), moved into `.cairn/quarantine/` when the call ends;
//!   `gitconfig.rs`: git's settings shown inside without their credentials.

mod bwrap;
mod capture;
mod env;
mod fence;
mod gitconfig;
mod launch;
mod link;
mod network;
mod neutral;
mod parent;
mod probe;
mod protected;
mod quarantine;
mod reach;
mod reap;
mod sandbox;
mod selftest;
mod sockets;
mod supervise;

pub use capture::{capture, CaptureError, Captured};
pub use env::EnvScrub;
pub use fence::{host_addresses, REFUSED};
pub use launch::{Launch, Prepared};
pub use network::network_note;
pub use neutral::neutral_dir;
pub use probe::{probe, SandboxStatus};
pub use quarantine::{Before, Quarantined, TOOL_SETTINGS};
pub use reach::Reach;
pub use reap::Group;
pub use sandbox::{Sandbox, HOME_SECRETS, HOME_TOOLS};
pub use selftest::{git_bare_repositories, self_test, Check, SelfTestPaths};
pub use sockets::SYSTEM_SOCKETS;
pub use supervise::{supervise, End, Sink};
