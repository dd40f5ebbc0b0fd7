//! Per-address throttling of login attempts: a token bucket per client IP. Password checks cost
//! ~20 ms of CPU each, so unthrottled logins would be a cheap way to exhaust the server.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Remembered addresses beyond which idle ones are forgotten.
const MAX_TRACKED: usize = 10_000;

/// A token bucket per address: `per_minute` attempts a minute, bursts up to the same number.
#[derive(Debug)]
pub struct LoginThrottle {
    per_minute: u32,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl LoginThrottle {
    /// A throttle allowing `per_minute` attempts per address and minute (at least one).
    pub fn new(per_minute: u32) -> Self {
        LoginThrottle {
            per_minute: per_minute.max(1),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one attempt for `address` at `now`; when none is left, how long to wait.
    pub fn check(&self, address: IpAddr, now: Instant) -> Result<(), Duration> {
        let capacity = f64::from(self.per_minute);
        let per_second = capacity / 60.0;
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= MAX_TRACKED {
            buckets.retain(|_, b| {
                b.tokens + now.duration_since(b.updated).as_secs_f64() * per_second < capacity
            });
        }
        let bucket = buckets.entry(address).or_insert(Bucket {
            tokens: capacity,
            updated: now,
        });
        let refilled =
            bucket.tokens + now.duration_since(bucket.updated).as_secs_f64() * per_second;
        bucket.tokens = refilled.min(capacity);
        bucket.updated = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / per_second))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_are_allowed_then_refill_over_time() {
        let throttle = LoginThrottle::new(3);
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        let start = Instant::now();
        for _ in 0..3 {
            assert!(throttle.check(ip, start).is_ok());
        }
        let wait = throttle.check(ip, start).unwrap_err();
        assert!(
            wait > Duration::from_secs(19) && wait <= Duration::from_secs(20),
            "{wait:?}"
        );
        assert!(
            throttle.check(other, start).is_ok(),
            "addresses are throttled separately"
        );
        assert!(throttle.check(ip, start + Duration::from_secs(20)).is_ok());
        assert!(throttle.check(ip, start + Duration::from_secs(21)).is_err());
    }
}
