//! Which addresses a web fetch may reach: not loopback, private, link-local, shared,
//! multicast or otherwise special ones (a page, or a model steered by one, must not reach
//! the user's router, a cloud metadata service or a server on their machine), unless
//! `[web] allow_private`. Checked on the addresses a name resolves to, so a public name
//! pointing inward is refused too, and on every redirect.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// What may be reached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    /// Private and local addresses too.
    pub allow_private: bool,
    /// These addresses whatever they are (tests that serve on 127.0.0.1).
    pub also: Vec<IpAddr>,
}

impl Reach {
    /// Why `ip` may not be reached, if it may not.
    pub fn refuses(&self, ip: IpAddr) -> Option<&'static str> {
        if self.allow_private || self.also.contains(&ip) {
            return None;
        }
        special(ip)
    }
}

/// What kind of special address `ip` is, if it is one.
pub fn special(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    Some(match () {
        _ if ip.is_loopback() => "a loopback address",
        _ if ip.is_private() => "a private address",
        _ if ip.is_link_local() => "a link-local address",
        _ if ip.is_unspecified() || a == 0 => "an unspecified address",
        _ if ip.is_broadcast() => "a broadcast address",
        _ if ip.is_multicast() => "a multicast address",
        _ if a == 100 && (64..128).contains(&b) => "a shared (carrier-grade NAT) address",
        _ if a == 198 && (b == 18 || b == 19) => "a benchmarking address",
        _ if a >= 240 => "a reserved address",
        _ if ip.is_documentation() => "a documentation address",
        _ if a == 192 && b == 0 && ip.octets()[2] == 0 => "a protocol assignment address",
        _ => return None,
    })
}

fn special_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return special_v4(v4);
    }
    let first = ip.segments()[0];
    Some(match () {
        _ if ip.is_loopback() => "a loopback address",
        _ if ip.is_unspecified() => "an unspecified address",
        _ if ip.is_multicast() => "a multicast address",
        _ if first & 0xfe00 == 0xfc00 => "a private (unique local) address",
        _ if first & 0xffc0 == 0xfe80 => "a link-local address",
        _ if first & 0xffc0 == 0xfec0 => "a site-local address",
        // NAT64 and IPv4-compatible forms carry an IPv4 address: judge that one.
        _ if ip.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || ip.segments()[..6] == [0; 6] => {
            let [.., c, d] = ip.segments();
            let v4 = Ipv4Addr::new((c >> 8) as u8, c as u8, (d >> 8) as u8, d as u8);
            return special_v4(v4).or(Some("an IPv4-embedding address"));
        }
        _ if first == 0x2001 && ip.segments()[1] == 0x0db8 => "a documentation address",
        _ => return None,
    })
}

/// Resolves names with the system's resolver, then drops what `reach` refuses; a name
/// with nothing left is an error naming why.
pub struct GuardedResolver {
    pub reach: Arc<Reach>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let reach = self.reach.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let mut why = None;
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|addr| match reach.refuses(addr.ip()) {
                    Some(kind) => {
                        why.get_or_insert(format!("{host} resolves to {}, {kind}", addr.ip()));
                        false
                    }
                    None => true,
                })
                .collect();
            if allowed.is_empty() {
                let why = why.unwrap_or_else(|| format!("{host} has no address"));
                return Err(format!("refused: {why} ([web] allow_private is off)").into());
            }
            let addrs: Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_addresses_are_told_apart_from_public_ones() {
        let refused = [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "ff02::1",
            "::127.0.0.1",
        ];
        for ip in refused {
            assert!(
                special(ip.parse().unwrap()).is_some(),
                "{ip} must be refused"
            );
        }
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "8.8.8.8",
        ] {
            assert_eq!(special(ip.parse().unwrap()), None, "{ip} is public");
        }
        let reach = Reach {
            allow_private: false,
            also: vec!["127.0.0.1".parse().unwrap()],
        };
        assert_eq!(reach.refuses("127.0.0.1".parse().unwrap()), None);
        assert!(reach.refuses("127.0.0.2".parse().unwrap()).is_some());
    }
}
