//! A client's network: the address with its host part cleared, IPv4 to /24 and IPv6 to /48.
//! Failed logins are counted per network (an attacker's do not lock the owner out of another
//! network), registrations are throttled per network, and the audit trail keeps a client's
//! network rather than its address (data minimisation, GDPR art. 5(1)(c)).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The network a client address belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Network(IpAddr);

impl Network {
    /// The network of `address`; an IPv4 address mapped into IPv6 counts as IPv4.
    pub fn of(address: IpAddr) -> Network {
        match address {
            IpAddr::V4(v4) => Network::v4(v4),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Network::v4(v4),
                None => {
                    let s = v6.segments();
                    Network(IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], 0, 0, 0, 0, 0)))
                }
            },
        }
    }

    fn v4(address: Ipv4Addr) -> Network {
        let [a, b, c, _] = address.octets();
        Network(IpAddr::V4(Ipv4Addr::new(a, b, c, 0)))
    }

    /// The network's first address, a key for per-network limits.
    pub fn address(self) -> IpAddr {
        self.0
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IpAddr::V4(v4) => write!(f, "{v4}/24"),
            IpAddr::V6(v6) => write!(f, "{v6}/48"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_lose_their_host_part() {
        let of = |text: &str| Network::of(text.parse().unwrap()).to_string();
        assert_eq!(of("192.0.2.77"), "192.0.2.0/24");
        assert_eq!(of("2001:db8:1234:5678::1"), "2001:db8:1234::/48");
        assert_eq!(of("::ffff:192.0.2.77"), "192.0.2.0/24");
        assert_eq!(of("127.0.0.1"), of("127.0.0.200"));
        assert_ne!(of("127.0.0.1"), of("127.0.1.1"));
    }
}
