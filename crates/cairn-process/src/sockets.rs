//! The unix sockets of the host that a sandboxed command must not reach (a read-only bind
//! does not stop `connect()`): the folders of daemons that run code for whoever connects,
//! the session's runtime folder and bus, and every other socket bound on the host, found in
//! its table of sockets.

use std::path::{Path, PathBuf};

/// Folders outside the home that hold the sockets of daemons which run code on the host
/// for whoever connects (containers, system containers, the Nix daemon): an empty folder
/// in their place. Those under `/run` (Docker's, Podman's, libvirt's) are out of reach
/// already: `/run` is empty inside.
pub const SYSTEM_SOCKETS: &[&str] = &[
    "/var/lib/docker",
    "/var/lib/lxd",
    "/var/lib/incus",
    "/var/snap",
    "/nix/var/nix/daemon-socket",
];

/// Every socket path and socket folder of the host to hide, wherever this process says
/// they are.
pub(crate) fn host_sockets() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = SYSTEM_SOCKETS.iter().map(PathBuf::from).collect();
    let now = std::time::SystemTime::now();
    paths.extend(
        bound_sockets(&std::fs::read_to_string("/proc/net/unix").unwrap_or_default())
            .into_iter()
            .filter(|path| settled(path, now)),
    );
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR") {
        paths.push(PathBuf::from(runtime));
    }
    if let Some(bus) = std::env::var("DBUS_SESSION_BUS_ADDRESS")
        .ok()
        .and_then(|a| bus_path(&a))
    {
        paths.push(bus);
    }
    paths
}

/// The most sockets of the host's table hidden one by one (each is a mount, and each
/// mount costs bubblewrap time); past it the rest stay reachable. Those in the homes,
/// `/tmp` and `/run` (most of them) are not counted: those folders are hidden whole.
const MAX_SOCKETS: usize = 32;

/// The paths of the unix sockets in `table` (`/proc/net/unix`: every socket bound in
/// this network namespace, a path last on its line), abstract ones aside, each once, those
/// out of sight anyway (in a home, `/tmp`, `/run`) left out.
fn bound_sockets(table: &str) -> Vec<PathBuf> {
    let out_of_sight = |p: &Path| {
        ["/tmp", "/run", "/home", "/root", "/dev", "/proc"]
            .iter()
            .any(|dir| p.starts_with(dir))
    };
    let mut paths: Vec<PathBuf> = table
        .lines()
        .skip(1)
        // The fields before the path are numbers: its `/` is the first on the line.
        .filter_map(|line| line.find(" /").map(|at| PathBuf::from(&line[at + 1..])))
        .filter(|p| !out_of_sight(p))
        .collect();
    paths.sort();
    paths.dedup();
    paths.truncate(MAX_SOCKETS);
    paths
}

/// How long a socket of the user's own must have been there to be hidden.
const SETTLED_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

/// Whether the socket at `path` is there to stay and so is hidden: another user's (a
/// daemon's) at once, one of the user's own once it has been there [`SETTLED_AFTER`] (an
/// agent, a server). A mount over a socket that goes between the plan and bubblewrap's
/// start fails the whole call, and sockets of the user's own come and go in a moment (a
/// build's, a test's); a daemon's stay.
fn settled(path: &Path, now: std::time::SystemTime) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.file_type().is_socket() {
        return false;
    }
    let changed = std::time::UNIX_EPOCH
        + std::time::Duration::new(
            u64::try_from(meta.ctime()).unwrap_or(0),
            u32::try_from(meta.ctime_nsec()).unwrap_or(0),
        );
    // `/proc/self` belongs to this process's user.
    let own = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
    own != Some(meta.uid()) || now.duration_since(changed).unwrap_or_default() >= SETTLED_AFTER
}

/// The socket path of a D-Bus address (`unix:path=/run/user/1000/bus,guid=…`).
fn bus_path(address: &str) -> Option<PathBuf> {
    address.split(';').find_map(|one| {
        let params = one.strip_prefix("unix:")?;
        params
            .split(',')
            .find_map(|kv| kv.strip_prefix("path="))
            .map(PathBuf::from)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn bus_paths_are_read_from_the_address() {
        assert_eq!(
            bus_path("unix:path=/run/user/1000/bus,guid=abc"),
            Some(PathBuf::from("/run/user/1000/bus"))
        );
        assert_eq!(
            bus_path("unix:abstract=/tmp/x;unix:path=/var/bus"),
            Some(PathBuf::from("/var/bus"))
        );
        assert_eq!(bus_path("tcp:host=localhost,port=1"), None);
    }

    #[test]
    fn the_hosts_bound_sockets_are_read_from_its_table() {
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20411 /var/lib/lxd/unix.socket\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20412 @/tmp/.X11-unix/X0\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 20413\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20414 /run/user/1000/bus\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20415 /srv/my app/a.sock\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 20416 /var/lib/lxd/unix.socket\n";
        assert_eq!(
            bound_sockets(table),
            [
                PathBuf::from("/srv/my app/a.sock"),
                PathBuf::from("/var/lib/lxd/unix.socket")
            ]
        );
    }

    #[test]
    fn a_socket_of_the_users_own_is_hidden_once_it_has_stayed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let now = std::time::SystemTime::now();
        assert!(!settled(&path, now));
        assert!(settled(&path, now + SETTLED_AFTER));
        // Not a socket, or gone: nothing to hide.
        std::fs::write(dir.path().join("plain"), "x").unwrap();
        assert!(!settled(&dir.path().join("plain"), now + SETTLED_AFTER));
        assert!(!settled(&dir.path().join("gone.sock"), now + SETTLED_AFTER));
    }
}
