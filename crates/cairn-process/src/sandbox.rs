//! The OS sandbox of the bash tool, on Linux through bubblewrap (`bwrap`): namespaces set
//! up by a kept tool, no namespace code of Cairn's own.
//!
//! What a sandboxed command sees:
//! - the system read-only (`/` bound read-only), a fresh `/dev` and `/proc`, a private `/tmp`
//!   and an empty `/run` (no sockets of the host's services);
//! - the workspace writable, except `.cairn/`, `sessions/`, AGENTS.md, `skills/`,
//!   `subagents/` at its root and every dot entry at any depth (`.git/` among them), and,
//!   as [`Sandbox::protecting`] asks, executable files and entries matching the user's
//!   globs, bound read-only;
//! - of the user's home (and of `/home` and `/root`) nothing but the toolchains of
//!   [`HOME_TOOLS`] read-only and what the user's `read_only`/`writable` name: the home is
//!   an empty folder of the call's own, so credential stores, agents' sockets, other
//!   projects and histories are out of reach by construction, not by a list;
//! - nothing of the hidden paths (Cairn's config folder, every credential store of
//!   [`HOME_SECRETS`] where something shows the home's folder again, the sockets of the
//!   host's container and package daemons of [`crate::SYSTEM_SOCKETS`], every other socket the
//!   host has bound (`sockets.rs` reads its table), `$XDG_RUNTIME_DIR` with the session bus
//!   and agent sockets, the bus named by `DBUS_SESSION_BUS_ADDRESS`): an empty folder or an
//!   empty file in their place;
//! - no network (a namespace with only its own loopback) unless it was asked for, and then
//!   one of its own (`network.rs`): the host's loopback services and abstract unix sockets
//!   stay out of reach;
//! - no capabilities, even when Cairn runs as root (which could otherwise remount), and no
//!   user namespace of its own making (`--disable-userns`, where bubblewrap has it);
//! - its own pid namespace, which ends with the call: nothing it started outlives it.
//!
//! Paths are looked at when each call starts (`protected/`), so a `.git/` made since is
//! read-only too.
//! Only what exists can be bound: a protected path that does not exist yet can be made by
//! a command (and is protected from the next call on); a new git repository or tool's
//! settings among them is moved aside when the call ends (`quarantine.rs`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::protected::{Entry, Kind};
use crate::quarantine::{Before, Quarantined};
use crate::reach::{Mount, Plan, Planned, Reach};

/// What under the home folder holds keys and credentials, hidden from every command (each
/// only where it exists): the user's own keys, cloud command lines, containers and
/// clusters, forges and package registries, browsers' profiles (cookies, saved logins),
/// shell and client histories, and other agents' keys.
pub const HOME_SECRETS: &[&str] = &[
    // The user's own keys.
    ".ssh",
    ".gnupg",
    ".local/share/keyrings",
    ".password-store",
    ".pki",
    // Cloud command lines.
    ".aws",
    ".azure",
    ".config/gcloud",
    ".oci",
    // Containers and clusters.
    ".docker/config.json",
    ".kube",
    // Forges and package registries.
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".netrc",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings-security.xml",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    // Browsers' profiles.
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".var/app/org.mozilla.firefox",
    ".var/app/com.google.Chrome",
    ".var/app/org.chromium.Chromium",
    ".var/app/com.brave.Browser",
    ".var/app/com.microsoft.Edge",
    // Histories.
    ".bash_history",
    ".zsh_history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    // Other agents' keys.
    ".config/openai",
    ".anthropic",
    ".codex/auth.json",
    ".claude/.credentials.json",
];

/// What of the user's home a command sees, read-only, each only where it exists: the
/// toolchains people run from their home and the caches they read (the rest of the home is
/// an empty folder inside). Git's settings are shown as a copy without credentials (see
/// `gitconfig.rs`).
pub const HOME_TOOLS: &[&str] = &[
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".rustup",
    ".local/bin",
    ".local/lib",
    ".nvm",
    ".pyenv",
    ".rbenv",
    ".volta",
    ".asdf",
    ".sdkman",
    ".bun/bin",
    ".deno/bin",
    "go/bin",
    "go/pkg/mod",
];

/// Where sandboxed commands run and what they may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    workspace: PathBuf,
    hidden: Vec<PathBuf>,
    network: bool,
    /// The home folder whose credentials are hidden (the process's own unless a test says).
    home: Option<PathBuf>,
    /// The user's `hide`, `read_only` and `writable` paths.
    reach: Reach,
    /// What is bound read-only besides the dot entries and the named ones at the root.
    protected: crate::protected::Rules,
    /// Nothing is writable but the private `/tmp`: the workspace is read-only too.
    sealed: bool,
}

impl Sandbox {
    /// The sandbox for commands in `workspace`, hiding `hidden` (Cairn's config folder and
    /// the key file) besides the user's keys; `network` lets commands reach the network.
    pub fn new(workspace: &Path, hidden: &[PathBuf], network: bool) -> Self {
        Self {
            workspace: real(workspace),
            hidden: hidden.to_vec(),
            network,
            home: dirs::home_dir(),
            reach: Reach::default(),
            protected: crate::protected::Rules::default(),
            sealed: false,
        }
    }

    /// The sandbox of a program that reads only what it is given on its input (a document
    /// reader): `dir`, its working folder, and `shown` (its own program and libraries, say)
    /// are read-only like the system; the homes are hidden but for their toolchains, and so
    /// are `hidden` and the credential stores; no network; nothing is writable but a
    /// private `/tmp`.
    pub fn sealed(dir: &Path, hidden: &[PathBuf], shown: &[PathBuf]) -> Self {
        let reach = Reach {
            read_only: shown.to_vec(),
            ..Reach::default()
        };
        Self {
            sealed: true,
            ..Self::new(dir, hidden, false).with_reach(&reach)
        }
    }

    /// The same sandbox with the user's paths hidden, read-only or writable; those that
    /// would open Cairn's own are left out (see [`Sandbox::refusals`]).
    pub fn with_reach(mut self, reach: &Reach) -> Self {
        self.reach = reach.clone();
        self
    }

    /// Why each of the user's paths that is left out is, one line each.
    pub fn refusals(&self) -> Vec<String> {
        crate::reach::refusals(
            &self.workspace,
            &self.hidden,
            &home_secrets(self.home.as_deref()),
            &self.reach,
        )
    }

    /// The same sandbox, also binding read-only the entries that match `ask_globs`
    /// (relative to the workspace root, matched like `[approvals] ask_paths`: without
    /// regard to case, `*` not crossing `/`; a folder matched by what comes before a
    /// trailing `/**` is bound whole) and, when `executables`, every file with an execute
    /// bit. A glob that does not parse is an error naming it.
    pub fn protecting(mut self, ask_globs: &[String], executables: bool) -> Result<Self, String> {
        self.protected = crate::protected::Rules::new(ask_globs, executables)?;
        Ok(self)
    }

    /// The same sandbox, hiding the credentials under `home` instead of the process's own
    /// home folder.
    pub fn with_home(mut self, home: &Path) -> Self {
        self.home = Some(home.to_path_buf());
        self
    }

    /// The same sandbox, reaching the network or not.
    pub fn with_network(mut self, network: bool) -> Self {
        self.network = network;
        self
    }

    pub fn network(&self) -> bool {
        self.network
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// bubblewrap's arguments (before `--` and the program) for a command in `cwd`.
    pub fn bwrap_args(&self, cwd: &Path) -> Vec<OsString> {
        self.bwrap_args_noted(cwd).0
    }

    /// [`Sandbox::bwrap_args`], what a command's output says about paths the call left
    /// unbound (more than one call binds), if any, and the workspace's protected entries
    /// as the call starts (what `quarantine.rs` compares the call's end with), found once
    /// for both.
    pub(crate) fn bwrap_args_noted(&self, cwd: &Path) -> (Vec<OsString>, Option<String>, Before) {
        let mut args = Args::default();
        args.flags(&["--die-with-parent", "--new-session", "--unshare-all"]);
        // A network of its own is attached by the launcher (`network.rs`); where it
        // cannot be, there is none: the host's is never shared.
        if crate::bwrap::userns_disabled() {
            // A user namespace of its own would give a command the capabilities to
            // mount over what the sandbox hides; bubblewrap can only forbid new ones
            // from one it made.
            args.flags(&["--unshare-user", "--disable-userns"]);
        }
        args.flags(&["--cap-drop", "ALL"]);
        args.pair("--ro-bind", Path::new("/"));
        args.one("--dev", Path::new("/dev"));
        args.one("--proc", Path::new("/proc"));
        args.one("--tmpfs", Path::new("/tmp"));
        args.one("--tmpfs", Path::new("/run"));
        let entries = self.entries();
        let homes = self.homes();
        let planned = self.mounts(&entries, &homes);
        for (path, mount) in planned.mounts.iter().cloned() {
            match mount {
                Mount::Writable if self.sealed => args.pair("--ro-bind", &path),
                Mount::Writable => args.pair("--bind", &path),
                Mount::ReadOnly => args.pair("--ro-bind", &path),
                Mount::Hidden if path.is_dir() => args.one("--tmpfs", &path),
                Mount::Hidden => {
                    args.flags(&["--ro-bind"]);
                    args.path(Path::new("/dev/null"));
                    args.path(&path);
                }
            }
        }
        // A reader (sealed) runs no git: no copy of its settings to write at each call.
        let git_homes = self.home.iter().filter(|_| !self.sealed);
        for (copy, at) in git_homes.flat_map(|h| crate::gitconfig::shown(h)) {
            args.flags(&["--ro-bind"]);
            args.path(&copy);
            args.path(&at);
        }
        let cwd = real(cwd);
        let out_of_sight = cwd.starts_with("/tmp")
            || cwd.starts_with("/run")
            || homes.iter().any(|home| cwd.starts_with(home));
        if !cwd.starts_with(&self.workspace) && out_of_sight {
            // A working directory of a hook or a server, out of sight inside otherwise.
            args.pair("--ro-bind", &cwd);
        }
        args.one("--chdir", &cwd);
        (args.0, planned.note(), Before::of(entries))
    }

    /// The workspace as it is before a call (a sandboxed launch takes it itself:
    /// [`crate::Prepared::before`]).
    pub fn before_call(&self) -> Before {
        Before::of(self.entries())
    }

    /// Moves into `.cairn/quarantine/` every git repository and tool's settings made since
    /// `before` (see `quarantine.rs`), and says what was moved.
    pub fn undo_new_tool_entries(&self, before: &Before) -> Vec<Quarantined> {
        crate::quarantine::undo(&self.workspace, before, &self.before_call())
    }

    /// The workspace's protected entries as they are now (see `protected/`).
    pub(crate) fn entries(&self) -> Vec<Entry> {
        crate::protected::protected_entries(&self.workspace, &self.protected)
    }

    /// The protected entries as they are now (see `protected/`), where they lead
    /// (inside the workspace only: what lies outside is read-only or hidden already),
    /// leaving out those inside another (its bind covers them).
    fn read_only(&self, entries: &[Entry]) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = entries
            .iter()
            // Only a symlink can lead elsewhere: the folders looked into are real ones.
            .filter_map(|entry| match entry.link {
                true => std::fs::canonicalize(&entry.path).ok(),
                false => Some(entry.path.clone()),
            })
            .filter(|p| p.starts_with(&self.workspace) && *p != self.workspace)
            .collect();
        paths.sort();
        paths.dedup();
        crate::protected::outermost(paths)
    }

    /// Every mount of a call beneath `/` with the protected `entries` and the `homes`, in
    /// order (see `reach.rs`).
    fn mounts(&self, entries: &[Entry], homes: &[PathBuf]) -> Planned {
        let (protected, executables) = self
            .read_only(entries)
            .into_iter()
            .partition(|path| !self.for_its_mode_alone(path));
        crate::reach::plan(Plan {
            workspace: &self.workspace,
            own: &self.hidden,
            secrets: default_hidden(self.home.as_deref()),
            homes: homes.to_vec(),
            tools: self.tools(),
            protected,
            executables,
            reach: &self.reach,
        })
    }

    /// The folders hidden whole: the home whose tools are shown, the process's own, and
    /// every other user's (`/home`, `/root`); never `/`.
    fn homes(&self) -> Vec<PathBuf> {
        let mut homes: Vec<PathBuf> = [self.home.clone(), dirs::home_dir()]
            .into_iter()
            .flatten()
            .chain([PathBuf::from("/home"), PathBuf::from("/root")])
            .map(|p| real(&p))
            .filter(|p| p.parent().is_some())
            .collect();
        homes.sort();
        homes.dedup();
        homes
    }

    /// The toolchains shown of the sandbox's home.
    fn tools(&self) -> Vec<PathBuf> {
        self.home
            .iter()
            .flat_map(|home| HOME_TOOLS.iter().map(move |t| home.join(t)))
            .collect()
    }

    /// Whether the protected entry `path` is one only for its execute bit (not for its
    /// name, its place or a glob).
    fn for_its_mode_alone(&self, path: &Path) -> bool {
        let (Ok(rel), Ok(meta)) = (
            path.strip_prefix(&self.workspace),
            std::fs::symlink_metadata(path),
        ) else {
            return false;
        };
        self.protected.executables()
            && self.protected.kind(rel, meta.file_type(), || None) != Kind::Protected
    }
}

/// The credential stores under `home`.
fn home_secrets(home: Option<&Path>) -> Vec<PathBuf> {
    home.into_iter()
        .flat_map(|home| HOME_SECRETS.iter().map(move |p| home.join(p)))
        .collect()
}

/// The credentials under `home`, the host's daemons' sockets and the session's sockets,
/// wherever this process says they are, and every other unix socket bound on the host
/// (which a read-only bind does not stop `connect()` to).
fn default_hidden(home: Option<&Path>) -> Vec<PathBuf> {
    let mut paths = home_secrets(home);
    paths.extend(crate::sockets::host_sockets());
    paths
}

/// The path with symlinks resolved, or as given when it cannot be.
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn flags(&mut self, flags: &[&str]) {
        self.0.extend(flags.iter().map(OsString::from));
    }

    fn path(&mut self, path: &Path) {
        self.0.push(path.as_os_str().to_os_string());
    }

    fn one(&mut self, flag: &str, path: &Path) {
        self.flags(&[flag]);
        self.path(path);
    }

    fn pair(&mut self, flag: &str, path: &Path) {
        self.one(flag, path);
        self.path(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The entries `sandbox` binds read-only, relative to its workspace.
    fn read_only_names(sandbox: &Sandbox) -> Vec<String> {
        let root = sandbox.workspace();
        sandbox
            .read_only(&sandbox.entries())
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn protected_entries_are_bound_read_only_where_they_lead_inside() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        for sub in [".git", ".cairn", "sessions", "Skills", "notes"] {
            std::fs::create_dir_all(ws.join(sub)).unwrap();
        }
        std::fs::write(ws.join("AGENTS.md"), "x").unwrap();
        std::fs::write(ws.join(".env"), "x").unwrap();
        #[cfg(unix)]
        {
            // Points outside: already read-only there, nothing to bind.
            std::os::unix::fs::symlink("/etc", ws.join(".outside")).unwrap();
            // Points inside: the target is what becomes read-only.
            std::os::unix::fs::symlink("notes", ws.join("subagents")).unwrap();
        }
        let sandbox = Sandbox::new(&ws, &[], false);
        let names = read_only_names(&sandbox);
        assert_eq!(
            names,
            [
                ".cairn",
                ".env",
                ".git",
                "AGENTS.md",
                "Skills",
                "notes",
                "sessions"
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn executables_and_glob_matches_are_bound_once_each_when_asked() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        for sub in ["tools/deep", "knowledge/private/sub", "notes"] {
            std::fs::create_dir_all(ws.join(sub)).unwrap();
        }
        for file in ["tools/deep/run", "knowledge/private/sub/x.sh", "notes/a.md"] {
            std::fs::write(ws.join(file), "x").unwrap();
            let mode = if file.ends_with(".md") { 0o644 } else { 0o755 };
            std::fs::set_permissions(ws.join(file), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        // A link to an executable is not one; what it leads to is bound already.
        std::os::unix::fs::symlink("deep/run", ws.join("tools/run")).unwrap();
        let globs = ["Knowledge/Private/**".to_string()];
        let sandbox = Sandbox::new(&ws, &[], false)
            .protecting(&globs, true)
            .unwrap();
        let names = read_only_names(&sandbox);
        assert_eq!(names, ["knowledge/private", "tools/deep/run"]);
        let plain_sandbox = Sandbox::new(&ws, &[], false);
        let plain: Vec<PathBuf> = plain_sandbox.read_only(&plain_sandbox.entries());
        assert_eq!(plain, Vec::<PathBuf>::new());
    }

    #[test]
    fn hidden_paths_never_hide_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        // Not under /tmp or /run, which are hidden whole and so left out of the list.
        let home = tempfile::tempdir_in("/var/tmp").unwrap();
        let config = home.path().join("config");
        std::fs::create_dir_all(config.join("ws")).unwrap();
        let hidden = |sandbox: Sandbox| {
            sandbox
                .mounts(&sandbox.entries(), &sandbox.homes())
                .mounts
                .into_iter()
                .any(|(path, mount)| path == real(&config) && mount == Mount::Hidden)
        };
        let inside = Sandbox::new(&config.join("ws"), std::slice::from_ref(&config), false);
        assert!(!hidden(inside));
        let apart = Sandbox::new(dir.path(), std::slice::from_ref(&config), false);
        assert!(hidden(apart));
    }

    #[test]
    fn a_sealed_sandbox_binds_nothing_writable_and_shows_what_it_is_given() {
        let home = tempfile::tempdir_in("/var/tmp").unwrap();
        let dir = home.path().join("cwd");
        let program = home.path().join("bin/reader");
        std::fs::create_dir_all(program.parent().unwrap()).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&program, "x").unwrap();
        let sandbox =
            Sandbox::sealed(&dir, &[], std::slice::from_ref(&program)).with_home(home.path());
        assert!(!sandbox.network());
        let args: Vec<String> = sandbox
            .bwrap_args(&dir)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(!args.iter().any(|a| a == "--bind"), "{args:?}");
        let shown = |path: &Path| {
            let path = real(path).to_string_lossy().into_owned();
            args.windows(3)
                .any(|w| w[0] == "--ro-bind" && w[1] == path && w[2] == path)
        };
        assert!(shown(&dir), "{args:?}");
        assert!(shown(&program), "{args:?}");
        let hidden = real(home.path()).to_string_lossy().into_owned();
        assert!(
            args.windows(2).any(|w| w[0] == "--tmpfs" && w[1] == hidden),
            "{args:?}"
        );
    }
}
