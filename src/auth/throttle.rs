//! Rate limits keyed by who asks: governor's GCRA, equivalent to a token bucket per key.
//! [`LoginThrottle`] keys login attempts by client network (/24, /48; `domain::network`), the
//! key the lockout and the registration limit use too: password checks cost ~20 ms of CPU
//! each, so unthrottled logins would be a cheap way to exhaust the server, and keying on the
//! network keeps a client from escaping the limit by moving through the addresses of its own
//! network. The export of a whole record is limited per account with the same [`Throttle`].

use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use crate::domain::network::Network;

/// Remembered keys beyond which those back at a full allowance are forgotten.
const MAX_TRACKED: usize = 10_000;

/// A quota per key, in bursts of up to the quota.
pub struct Throttle<K: Hash + Eq + Clone, C: Clock = DefaultClock> {
    limiter: RateLimiter<K, DefaultKeyedStateStore<K>, C, NoOpMiddleware<C::Instant>>,
    clock: C,
}

impl<K: Hash + Eq + Clone> Throttle<K> {
    /// `per_hour` a key and hour (at least one).
    pub fn per_hour(per_hour: u32) -> Self {
        let per_hour = NonZeroU32::new(per_hour).unwrap_or(NonZeroU32::MIN);
        Throttle::with_quota(Quota::per_hour(per_hour), DefaultClock::default())
    }
}

impl<K: Hash + Eq + Clone, C: Clock + Clone> Throttle<K, C> {
    fn with_quota(quota: Quota, clock: C) -> Self {
        Throttle {
            limiter: RateLimiter::dashmap_with_clock(quota, clock.clone()),
            clock,
        }
    }

    /// Takes one for `key`; when none is left, how long to wait.
    pub fn take(&self, key: &K) -> Result<(), Duration> {
        if self.limiter.len() >= MAX_TRACKED {
            self.limiter.retain_recent();
        }
        self.limiter
            .check_key(key)
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }
}

/// `per_minute` attempts a minute per client network, in bursts of up to the same number.
pub struct LoginThrottle<C: Clock = DefaultClock>(Throttle<IpAddr, C>);

impl std::fmt::Debug for LoginThrottle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginThrottle")
            .field("tracked", &self.0.limiter.len())
            .finish()
    }
}

impl LoginThrottle {
    /// A throttle allowing `per_minute` attempts per address and minute (at least one).
    pub fn new(per_minute: u32) -> Self {
        LoginThrottle::with_clock(per_minute, DefaultClock::default())
    }

    /// A throttle allowing `per_hour` attempts per address and hour, in bursts of up to the
    /// same number (registrations, each costing an Argon2 hash).
    pub fn per_hour(per_hour: u32) -> Self {
        LoginThrottle(Throttle::per_hour(per_hour))
    }
}

impl<C: Clock + Clone> LoginThrottle<C> {
    /// [`LoginThrottle::new`] on `clock` (tests move a fake one).
    pub fn with_clock(per_minute: u32, clock: C) -> Self {
        let per_minute = NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN);
        LoginThrottle(Throttle::with_quota(Quota::per_minute(per_minute), clock))
    }

    /// Takes one attempt for `network`; when none is left, how long to wait.
    pub fn check(&self, network: Network) -> Result<(), Duration> {
        self.0.take(&network.address())
    }
}

#[cfg(test)]
mod tests {
    use governor::clock::FakeRelativeClock;

    use super::*;

    fn network(text: &str) -> Network {
        Network::of(text.parse::<IpAddr>().unwrap())
    }

    #[test]
    fn bursts_are_allowed_then_refill_over_time() {
        let clock = FakeRelativeClock::default();
        let throttle = LoginThrottle::with_clock(3, clock.clone());
        let client = network("10.0.0.1");
        let other = network("10.0.1.1");
        for _ in 0..3 {
            assert!(throttle.check(client).is_ok());
        }
        let wait = throttle.check(client).unwrap_err();
        assert!(
            wait > Duration::from_secs(19) && wait <= Duration::from_secs(20),
            "{wait:?}"
        );
        // Another address of the same /24 shares the allowance; another network does not.
        assert!(throttle.check(network("10.0.0.200")).is_err());
        assert!(
            throttle.check(other).is_ok(),
            "networks are throttled separately"
        );
        clock.advance(Duration::from_secs(20));
        assert!(throttle.check(client).is_ok());
        clock.advance(Duration::from_secs(1));
        assert!(throttle.check(client).is_err());
    }
}
