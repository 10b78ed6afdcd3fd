//! Whose connection or request this is, for the per-address limits: the
//! peer's address, or, when the peer is a proxy the operator named
//! (`--trusted-proxies`), the address that proxy saw, read from the right
//! of `X-Forwarded-For` past every trusted hop (the left of that header is
//! whatever the client wrote). Limits count IPv6 addresses by their
//! network prefix (`--ipv6-prefix`, /64 by default): one subscriber is
//! handed a whole /64, and counting its addresses apart would make the
//! limits meaningless.

use std::net::{IpAddr, Ipv6Addr};

use axum::http::HeaderMap;
use ipnet::IpNet;

/// How the gateway tells one client's address from another's.
#[derive(Clone, Debug)]
pub struct AddressPolicy {
    trusted_proxies: Vec<IpNet>,
    ipv6_prefix: u8,
}

impl AddressPolicy {
    pub fn new(trusted_proxies: Vec<IpNet>, ipv6_prefix: u8) -> AddressPolicy {
        AddressPolicy { trusted_proxies, ipv6_prefix: ipv6_prefix.min(128) }
    }

    fn trusted(&self, ip: IpAddr) -> bool {
        self.trusted_proxies.iter().any(|net| net.contains(&ip))
    }

    /// Whether `peer` is one of the proxies whose `X-Forwarded-For` is believed.
    pub fn is_trusted_proxy(&self, peer: IpAddr) -> bool {
        self.trusted(canonical(peer))
    }

    /// The client's address: the nearest address, walking back from the
    /// peer through `X-Forwarded-For`, that is not a trusted proxy.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if !self.trusted(peer) {
            return peer;
        }
        let mut client = peer;
        let hops = headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok());
        let hops: Vec<&str> = hops.flat_map(|v| v.split(',')).collect();
        for hop in hops.iter().rev() {
            let Ok(ip) = hop.trim().parse::<IpAddr>() else {
                // Garbage in the chain: nothing left of it can be believed.
                break;
            };
            client = canonical(ip);
            if !self.trusted(client) {
                break;
            }
        }
        client
    }

    /// The key the limits count `ip` under: an IPv4 address itself, an
    /// IPv6 address by its network prefix.
    pub fn limit_key(&self, ip: IpAddr) -> IpAddr {
        match canonical(ip) {
            IpAddr::V4(v4) => IpAddr::V4(v4),
            IpAddr::V6(v6) => {
                let bits = u128::from(v6);
                let mask = if self.ipv6_prefix == 0 { 0 } else { u128::MAX << (128 - u32::from(self.ipv6_prefix)) };
                IpAddr::V6(Ipv6Addr::from(bits & mask))
            }
        }
    }
}

/// An IPv4 address written as IPv6 (`::ffff:a.b.c.d`) is the IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// Parses `--trusted-proxies`: networks (`10.0.0.0/8`) or single addresses.
pub fn parse_network(text: &str) -> Result<IpNet, String> {
    let text = text.trim();
    text.parse::<IpNet>()
        .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| format!("{text:?} is not an address or a network such as 10.0.0.0/8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(xff: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in xff {
            headers.append("x-forwarded-for", value.parse().unwrap());
        }
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn forwarded_for_counts_only_from_trusted_proxies_and_from_the_right() {
        let policy = AddressPolicy::new(vec![parse_network("10.0.0.0/8").unwrap()], 64);
        // Not from a proxy: the header is the client's own writing.
        assert_eq!(policy.client(ip("203.0.113.9"), &headers(&["1.2.3.4"])), ip("203.0.113.9"));
        // From the proxy: the address it saw, not what the client prepended.
        let spoofed = headers(&["1.2.3.4, 198.51.100.7"]);
        assert_eq!(policy.client(ip("10.1.2.3"), &spoofed), ip("198.51.100.7"));
        // Through two trusted hops, in one header or several.
        assert_eq!(policy.client(ip("10.1.2.3"), &headers(&["1.2.3.4, 198.51.100.7, 10.9.9.9"])), ip("198.51.100.7"));
        assert_eq!(
            policy.client(ip("10.1.2.3"), &headers(&["1.2.3.4", "198.51.100.7", "10.9.9.9"])),
            ip("198.51.100.7")
        );
        // A proxy that sent no header, or garbage: the proxy itself.
        assert_eq!(policy.client(ip("10.1.2.3"), &headers(&[])), ip("10.1.2.3"));
        assert_eq!(policy.client(ip("10.1.2.3"), &headers(&["1.2.3.4, junk"])), ip("10.1.2.3"));
        // No trusted proxies: never read.
        let open = AddressPolicy::new(Vec::new(), 64);
        assert_eq!(open.client(ip("10.1.2.3"), &headers(&["198.51.100.7"])), ip("10.1.2.3"));
        assert_eq!(parse_network("127.0.0.1").unwrap(), parse_network("127.0.0.1/32").unwrap());
        assert!(parse_network("10.0.0.0/33").is_err() && parse_network("proxy").is_err());
    }

    #[test]
    fn ipv6_addresses_are_counted_by_their_prefix() {
        let policy = AddressPolicy::new(Vec::new(), 64);
        let a = policy.limit_key(ip("2001:db8:1:2:aaaa::1"));
        assert_eq!(a, policy.limit_key(ip("2001:db8:1:2:ffff:ffff:ffff:ffff")));
        assert_eq!(a, ip("2001:db8:1:2::"));
        assert_ne!(a, policy.limit_key(ip("2001:db8:1:3::1")));
        assert_eq!(policy.limit_key(ip("::ffff:192.0.2.1")), ip("192.0.2.1"));
        assert_eq!(policy.limit_key(ip("192.0.2.1")), ip("192.0.2.1"));
        let exact = AddressPolicy::new(Vec::new(), 128);
        assert_ne!(exact.limit_key(ip("2001:db8::1")), exact.limit_key(ip("2001:db8::2")));
    }
}
