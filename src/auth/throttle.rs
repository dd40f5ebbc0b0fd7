//! Per-address throttling of login attempts: a rate limit per client IP (governor's GCRA,
//! equivalent to a token bucket). Password checks cost ~20 ms of CPU each, so unthrottled
//! logins would be a cheap way to exhaust the server.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

/// Remembered addresses beyond which those back at a full allowance are forgotten.
const MAX_TRACKED: usize = 10_000;

/// `per_minute` attempts a minute per address, in bursts of up to the same number.
pub struct LoginThrottle<C: Clock = DefaultClock> {
    limiter: RateLimiter<IpAddr, DefaultKeyedStateStore<IpAddr>, C, NoOpMiddleware<C::Instant>>,
    clock: C,
}

impl std::fmt::Debug for LoginThrottle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginThrottle")
            .field("tracked", &self.limiter.len())
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
        let per_hour = NonZeroU32::new(per_hour).unwrap_or(NonZeroU32::MIN);
        let clock = DefaultClock::default();
        LoginThrottle {
            limiter: RateLimiter::dashmap_with_clock(Quota::per_hour(per_hour), clock.clone()),
            clock,
        }
    }
}

impl<C: Clock + Clone> LoginThrottle<C> {
    /// [`LoginThrottle::new`] on `clock` (tests move a fake one).
    pub fn with_clock(per_minute: u32, clock: C) -> Self {
        let per_minute = NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN);
        LoginThrottle {
            limiter: RateLimiter::dashmap_with_clock(Quota::per_minute(per_minute), clock.clone()),
            clock,
        }
    }

    /// Takes one attempt for `address`; when none is left, how long to wait.
    pub fn check(&self, address: IpAddr) -> Result<(), Duration> {
        if self.limiter.len() >= MAX_TRACKED {
            self.limiter.retain_recent();
        }
        self.limiter
            .check_key(&address)
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }
}

#[cfg(test)]
mod tests {
    use governor::clock::FakeRelativeClock;

    use super::*;

    #[test]
    fn bursts_are_allowed_then_refill_over_time() {
        let clock = FakeRelativeClock::default();
        let throttle = LoginThrottle::with_clock(3, clock.clone());
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        for _ in 0..3 {
            assert!(throttle.check(ip).is_ok());
        }
        let wait = throttle.check(ip).unwrap_err();
        assert!(
            wait > Duration::from_secs(19) && wait <= Duration::from_secs(20),
            "{wait:?}"
        );
        assert!(
            throttle.check(other).is_ok(),
            "addresses are throttled separately"
        );
        clock.advance(Duration::from_secs(20));
        assert!(throttle.check(ip).is_ok());
        clock.advance(Duration::from_secs(1));
        assert!(throttle.check(ip).is_err());
    }
}
