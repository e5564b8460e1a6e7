//! The sandbox's network seen from outside: servers of the host that commands must not
//! reach (an abstract unix socket, as X11's and D-Bus's are, a TCP server on the loopback,
//! and one on every address, tried through the host's own address), nor the LAN and the
//! metadata service, even when the network is asked for; names resolve through the
//! network's own forwarder, and the helper that carries the network ends with the call.
//! Run as this process and as an unprivileged user.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::{Ipv4Addr, TcpListener};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};

use cairn_process::{EnvScrub, Launch};
use pretty_assertions::assert_eq;
use support::launched::{helpers_left, Stop};
use support::{available, Scene, Who, LIMIT, TRIED};

/// The host's servers, listening (connections wait in their backlogs).
struct Servers {
    abstract_name: String,
    _abstract: UnixListener,
    loopback: TcpListener,
    everywhere: TcpListener,
    /// The host's address on its network, when it has one.
    host: Option<Ipv4Addr>,
}

impl Servers {
    fn start() -> Self {
        let abstract_name = format!("cairn-test-{}", uuid::Uuid::new_v4());
        let address = SocketAddr::from_abstract_name(&abstract_name).unwrap();
        let host = host_address();
        if host.is_none() {
            eprintln!("this machine has no IPv4 address but the loopback: outbound is not tried");
        }
        Self {
            _abstract: UnixListener::bind_addr(&address).unwrap(),
            abstract_name,
            loopback: TcpListener::bind("127.0.0.1:0").unwrap(),
            everywhere: TcpListener::bind("0.0.0.0:0").unwrap(),
            host,
        }
    }

    /// A script that tries each server and prints the name of each it reached, then
    /// [`TRIED`].
    fn script(&self) -> String {
        let port = |l: &TcpListener| l.local_addr().unwrap().port();
        let mut lines = vec![
            format!(
                "perl -MIO::Socket::UNIX -e 'exit !IO::Socket::UNIX->new(Peer => \"\\0$ARGV[0]\")' \
                 {} 2>/dev/null && echo abstract",
                self.abstract_name
            ),
            format!(
                "(exec 3<>/dev/tcp/127.0.0.1/{}) 2>/dev/null && echo loopback",
                port(&self.loopback)
            ),
        ];
        if let Some(host) = self.host {
            lines.push(format!(
                "(exec 3<>/dev/tcp/{host}/{}) 2>/dev/null && echo outside",
                port(&self.everywhere)
            ));
        }
        lines.push(format!("echo {TRIED}"));
        lines.join("\n")
    }

    /// What [`Servers::script`] prints when it reaches `reached` (of `abstract`,
    /// `loopback`, `outside`).
    fn printed(&self, reached: &[&str]) -> String {
        let mut printed: String = reached
            .iter()
            .filter(|name| **name != "outside" || self.host.is_some())
            .map(|name| format!("{name}\n"))
            .collect();
        printed.push_str(&format!("{TRIED}\n"));
        printed
    }
}

/// This machine's first IPv4 address that is not a loopback one.
fn host_address() -> Option<std::net::Ipv4Addr> {
    cairn_process::host_addresses()
        .into_iter()
        .find(|address| !address.is_loopback())
}

/// Without the sandbox every server is reached; in it none is, with the network or
/// without; with it, the ranges that are not the internet are prohibited, and names
/// resolve when they do on the host.
async fn network_check(scene: &Scene, who: Who) {
    let servers = Servers::start();
    let script = servers.script();
    let out = scene.run_as(who, None, &script).await;
    let all = servers.printed(&["abstract", "loopback", "outside"]);
    assert_eq!(out.stdout, all, "{who:?} without the sandbox: {out:?}");
    let closed = scene.launch_as(who, false, &script, Stop::Never).await;
    assert_eq!(closed.output, servers.printed(&[]), "{who:?}: {closed:?}");
    let open = scene.launch_as(who, true, &script, Stop::Never).await;
    assert_eq!(
        open.output,
        servers.printed(&[]),
        "{who:?} with the network: {open:?}"
    );
    assert_eq!(open.note, None, "{who:?}");
    assert_eq!(open.helpers_left, Vec::<u32>::new(), "{who:?}: {open:?}");
    fence_check(scene, who).await;
    resolve_check(scene, who).await;
}

/// Inside, the metadata service, the LAN and the host's own address are refused at once
/// (a prohibit route: no packet leaves), the internet goes out through the network's
/// gateway, and the command cannot take a route away.
async fn fence_check(scene: &Scene, who: Who) {
    let mut refused = vec![
        "169.254.169.254".to_string(),
        "192.168.1.1".into(),
        "10.1.2.3".into(),
    ];
    refused.extend(Servers::start().host.map(|h| h.to_string()));
    let mut script = String::new();
    for address in &refused {
        // A refused connection fails with "Permission denied" before any packet leaves.
        script.push_str(&format!(
            "timeout 5 bash -c 'exec 3<>/dev/tcp/{address}/80' 2>&1 | grep -q 'Permission denied' \
             && echo refused {address}\n"
        ));
    }
    let ip =
        std::path::Path::new("/usr/sbin/ip").exists() || std::path::Path::new("/sbin/ip").exists();
    if ip {
        script.push_str(
            "ip -4 route get 1.1.1.1 | head -n1 | grep -q 'via 10.0.2.2 dev tap0' && echo out\n",
        );
        script.push_str("ip route del prohibit 169.254.0.0/16 2>/dev/null || echo kept\n");
    }
    let open = scene.launch_as(who, true, &script, Stop::Never).await;
    let mut expected: String = refused.iter().map(|a| format!("refused {a}\n")).collect();
    if ip {
        expected.push_str("out\nkept\n");
    }
    assert_eq!(open.output, expected, "{who:?}: {open:?}");
}

/// Names resolve inside (through the network helper's DNS forwarder) when the host resolves
/// them.
async fn resolve_check(scene: &Scene, who: Who) {
    const NAME: &str = "deb.debian.org";
    let script = format!("cat /etc/resolv.conf; getent hosts {NAME} >/dev/null && echo resolved");
    let open = scene.launch_as(who, true, &script, Stop::Never).await;
    assert!(
        open.output.starts_with("nameserver 10.0.2.3\n"),
        "{who:?}: {open:?}"
    );
    if std::net::ToSocketAddrs::to_socket_addrs(&(NAME, 80)).is_err() {
        eprintln!("{NAME} does not resolve on this machine: resolving inside is not tried");
        return;
    }
    assert!(open.output.ends_with("resolved\n"), "{who:?}: {open:?}");
}

#[tokio::test]
async fn the_network_reaches_out_but_not_the_hosts_loopback_nor_its_abstract_sockets() {
    available();
    network_check(&Scene::new(), Who::Launcher).await;
}

#[tokio::test]
async fn the_network_holds_the_same_for_an_unprivileged_user() {
    available();
    if let Some((scene, user)) = Scene::unprivileged() {
        network_check(&scene, Who::User(user)).await;
    }
}

/// The network's helper runs while the command does and is gone once its timeout passes or
/// it is cancelled.
async fn helper_end_check(scene: &Scene, who: Who) {
    let script = "grep -q tap0 /proc/net/dev && echo up; sleep 30";
    for stop in [Stop::Timeout, Stop::Cancel] {
        let launched = scene.launch_as(who, true, script, stop).await;
        assert_eq!(launched.output, "up\n", "{who:?}, {stop:?}: {launched:?}");
        assert!(launched.end.is_err(), "{who:?}, {stop:?}: {launched:?}");
        assert_eq!(
            launched.helpers_left,
            Vec::<u32>::new(),
            "{who:?}, {stop:?}: the helper outlived the call"
        );
    }
}

#[tokio::test]
async fn the_network_helper_ends_with_a_call_that_times_out_or_is_cancelled() {
    available();
    helper_end_check(&Scene::new(), Who::Launcher).await;
}

#[tokio::test]
async fn the_network_helper_ends_with_an_unprivileged_users_call_too() {
    available();
    if let Some((scene, user)) = Scene::unprivileged() {
        helper_end_check(&scene, Who::User(user)).await;
    }
}

/// A command spawned from the prepared launch by its caller (as an MCP server is) gets the
/// network too, and its helper goes when it ends.
#[tokio::test]
async fn a_command_spawned_by_its_caller_gets_the_network_too() {
    available();
    let scene = Scene::new();
    let script = "grep -q tap0 /proc/net/dev && echo up";
    let mut command = Launch::new("bash", &scene.ws, &EnvScrub::default())
        .args(["-c", script])
        .sandboxed(&scene.sandbox(true))
        .prepare()
        .command;
    let out = tokio::time::timeout(LIMIT, command.output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "up\n", "{out:?}");
    // This process's copies of what the sandbox inherited go with the command.
    drop(command);
    assert_eq!(helpers_left().await, Vec::<u32>::new());
}

/// Where slirp4netns is missing there is no network at all (the host's is never shared),
/// and the note says why.
#[tokio::test]
async fn without_slirp4netns_there_is_no_network_and_the_note_says_why() {
    available();
    let scene = Scene::new();
    let servers = Servers::start();
    let missing = [("CAIRN_SLIRP4NETNS", "/nonexistent/slirp4netns")];
    let none = scene
        .launch_apart(None, &missing, true, &servers.script())
        .await;
    let note = none.note.clone().unwrap_or_default();
    assert!(
        note.contains("no network here: `/nonexistent/slirp4netns` is not installed"),
        "{none:?}"
    );
    assert_eq!(none.output, servers.printed(&[]), "{none:?}");
}

/// The launch another run of this binary asks for (see `support/launched.rs`).
#[tokio::test]
#[ignore = "run by the tests that launch in a run of their own (as an unprivileged user)"]
async fn launch_for_another_run() {
    support::launched::serve().await;
}
