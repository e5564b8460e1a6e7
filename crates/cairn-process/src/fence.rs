//! The fence of a sandbox's own network (`network = true`): slirp4netns carries every
//! connection the command makes through a socket of Cairn's user, so without routes of its
//! own the command would reach whatever that user reaches — the host's services on its
//! own addresses, the LAN, the cloud's metadata service. Before the command starts, the
//! sandbox's network namespace gets a `prohibit` route for each range that is not the
//! internet ([`REFUSED`]) and for each of the host's own IPv4 addresses: a connection
//! there fails at once with "Permission denied", and no packet leaves. The network's own
//! subnet (the DNS forwarder `10.0.2.3`) stays reachable, being more specific; slirp4netns
//! runs with `--disable-host-loopback`, so nothing on it but the forwarder answers. The
//! sandbox has no IPv6 route at all.
//!
//! The command cannot take the routes away: it runs without capabilities and may not make
//! a user namespace of its own. Setting them needs the capabilities of the namespace's
//! owner inside it, which a process of Cairn's user gets by entering its user namespace;
//! a multithreaded process may not, so a short perl program (`fence.pl`) does it. Where it
//! fails the command runs with no network at all.

use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

const SCRIPT: &str = include_str!("fence.pl");

/// How long setting the routes may take.
const WITHIN: Duration = Duration::from_secs(10);

/// The IPv4 ranges a sandbox's network never reaches: this network, private networks
/// (RFC 1918), shared address space (CGNAT), link-local (cloud metadata services at
/// `169.254.169.254`), IETF protocol assignments, benchmarking, multicast and reserved
/// (broadcast included). The loopback is the sandbox's own.
pub const REFUSED: &[(Ipv4Addr, u8)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8),
    (Ipv4Addr::new(10, 0, 0, 0), 8),
    (Ipv4Addr::new(100, 64, 0, 0), 10),
    (Ipv4Addr::new(169, 254, 0, 0), 16),
    (Ipv4Addr::new(172, 16, 0, 0), 12),
    (Ipv4Addr::new(192, 0, 0, 0), 24),
    (Ipv4Addr::new(192, 168, 0, 0), 16),
    (Ipv4Addr::new(198, 18, 0, 0), 15),
    (Ipv4Addr::new(224, 0, 0, 0), 4),
    (Ipv4Addr::new(240, 0, 0, 0), 4),
];

/// Whether `address` lies in one of [`REFUSED`]'s ranges.
pub fn refused(address: Ipv4Addr) -> bool {
    REFUSED.iter().any(|(net, len)| within(address, *net, *len))
}

fn within(address: Ipv4Addr, net: Ipv4Addr, len: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    u32::from(address) & mask == u32::from(net) & mask
}

/// Every route the fence sets: [`REFUSED`], then each of the host's own addresses that no
/// range covers (a public one, say), as a /32.
pub fn routes(host: &[Ipv4Addr]) -> Vec<(Ipv4Addr, u8)> {
    let mut routes = REFUSED.to_vec();
    for address in host {
        if !address.is_loopback() && !refused(*address) && !routes.contains(&(*address, 32)) {
            routes.push((*address, 32));
        }
    }
    routes
}

/// The routing requests for `routes`: each an RTM_NEWROUTE of type `prohibit` in the main
/// table, asking for an acknowledgement.
fn requests(routes: &[(Ipv4Addr, u8)]) -> Vec<u8> {
    const RTM_NEWROUTE: u16 = 24;
    const FLAGS: u16 = 0x1 | 0x4 | 0x200 | 0x400; // REQUEST | ACK | EXCL | CREATE
    const LENGTH: u32 = 16 + 12 + 8;
    let mut bytes = Vec::with_capacity(routes.len() * LENGTH as usize);
    for (seq, (address, len)) in (1u32..).zip(routes) {
        // nlmsghdr: length, type, flags, sequence, port.
        bytes.extend(LENGTH.to_ne_bytes());
        bytes.extend(RTM_NEWROUTE.to_ne_bytes());
        bytes.extend(FLAGS.to_ne_bytes());
        bytes.extend(seq.to_ne_bytes());
        bytes.extend(0u32.to_ne_bytes());
        // rtmsg: AF_INET, destination length, source length, tos, RT_TABLE_MAIN,
        // RTPROT_STATIC, RT_SCOPE_UNIVERSE, RTN_PROHIBIT; flags.
        bytes.extend([2, *len, 0, 0, 254, 4, 0, 8]);
        bytes.extend(0u32.to_ne_bytes());
        // rtattr RTA_DST.
        bytes.extend(8u16.to_ne_bytes());
        bytes.extend(1u16.to_ne_bytes());
        bytes.extend(address.octets());
    }
    bytes
}

/// Sets the fence in the network namespace `net`, owned by the user namespace `user`.
pub(crate) async fn set(user: &OwnedFd, net: &OwnedFd) -> Result<(), String> {
    let user = user.try_clone().map_err(|e| e.to_string())?;
    let net = net.try_clone().map_err(|e| e.to_string())?;
    let mut command = Command::new(crate::parent::PERL);
    command
        .args(["-e", SCRIPT, "--"])
        .arg(setns_number().to_string())
        .arg(user.as_raw_fd().to_string())
        .arg(net.as_raw_fd().to_string())
        .env_clear()
        .env("PERL_BADLANG", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    crate::link::inherit(&mut command, vec![user, net]);
    let mut child = command
        .spawn()
        .map_err(|e| format!("perl could not be started: {e}"))?;
    drop(command);
    let request = requests(&routes(&host_addresses()));
    let run = async {
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(&request).await.map_err(|e| e.to_string())?;
        }
        child.wait_with_output().await.map_err(|e| e.to_string())
    };
    let out = tokio::time::timeout(WITHIN, run)
        .await
        .map_err(|_| format!("its routes were not set within {} s", WITHIN.as_secs()))??;
    if out.status.success() && out.stdout == b"fenced\n" {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    Err(match said.lines().next() {
        Some(line) => format!("its routes could not be set: {line}"),
        None => format!("its routes could not be set ({})", out.status),
    })
}

#[cfg(target_os = "linux")]
fn setns_number() -> libc::c_long {
    libc::SYS_setns
}

#[cfg(not(target_os = "linux"))]
fn setns_number() -> i64 {
    -1
}

/// The IPv4 addresses of this host's interfaces.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn host_addresses() -> Vec<Ipv4Addr> {
    let mut found = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs writes a list it allocated to `list`, or fails and leaves it.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return found;
    }
    let mut at = list;
    while !at.is_null() {
        // SAFETY: `at` is an entry of the list getifaddrs made, which lives until
        // freeifaddrs below; its address, when set, is a sockaddr of its family, and an
        // AF_INET one is a sockaddr_in.
        unsafe {
            let addr = (*at).ifa_addr;
            if !addr.is_null() && i32::from((*addr).sa_family) == libc::AF_INET {
                let inet = &*(addr as *const libc::sockaddr_in);
                found.push(Ipv4Addr::from(u32::from_be(inet.sin_addr.s_addr)));
            }
            at = (*at).ifa_next;
        }
    }
    // SAFETY: `list` came from getifaddrs and is freed once, after its last use.
    unsafe { libc::freeifaddrs(list) };
    found
}

#[cfg(not(unix))]
pub fn host_addresses() -> Vec<Ipv4Addr> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_ranges_cover_private_link_local_and_shared_addresses_but_not_public_ones() {
        for inside in [
            "10.1.2.3",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.100.200",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.251",
        ] {
            assert!(refused(inside.parse().unwrap()), "{inside}");
        }
        for outside in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "192.169.0.1",
            "151.101.1.1",
        ] {
            assert!(!refused(outside.parse().unwrap()), "{outside}");
        }
    }

    #[test]
    fn the_hosts_own_public_address_is_fenced_once_and_private_ones_by_their_range() {
        let host: Vec<Ipv4Addr> = ["127.0.0.1", "192.168.1.20", "203.0.113.7", "203.0.113.7"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        let routes = routes(&host);
        assert_eq!(routes.len(), REFUSED.len() + 1);
        assert_eq!(routes.last(), Some(&("203.0.113.7".parse().unwrap(), 32)));
    }

    #[test]
    fn each_request_is_a_whole_prohibit_route() {
        let bytes = requests(&[("169.254.0.0".parse().unwrap(), 16)]);
        assert_eq!(bytes.len(), 36);
        assert_eq!(u32::from_ne_bytes(bytes[0..4].try_into().unwrap()), 36);
        assert_eq!(&bytes[16..24], &[2, 16, 0, 0, 254, 4, 0, 8]);
        assert_eq!(&bytes[32..36], &[169, 254, 0, 0]);
    }
}
