//! A short-lived read cache for the hottest lookups: bearer token → user, and user → record.
//!
//! Every write in this process to users, enlistments or tokens clears it at once, so a
//! process never serves its own stale data. Other processes (several instances on one
//! PostgreSQL) may serve an entry for at most the TTL after a change made elsewhere; a TTL of
//! zero turns the cache off. A generation counter keeps a read that raced with a write from
//! caching what it read before the write.

use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::UserRecord;
use super::entities::user;

/// Entries kept at most; beyond, the cache starts over (an attack with random tokens only
/// misses).
const MAX_ENTRIES: usize = 50_000;

#[derive(Debug, Clone)]
struct TokenEntry {
    cached_at: Instant,
    user: user::Model,
    expires_at: i64,
}

#[derive(Debug, Clone)]
struct RecordEntry {
    cached_at: Instant,
    record: UserRecord,
}

/// The cache; one per store.
#[derive(Debug)]
pub struct ReadCache {
    ttl: Duration,
    generation: AtomicU64,
    tokens: RwLock<HashMap<String, TokenEntry>>,
    records: RwLock<HashMap<String, RecordEntry>>,
}

impl ReadCache {
    /// A cache whose entries live `ttl` at most.
    pub fn new(ttl: Duration) -> Self {
        ReadCache {
            ttl,
            generation: AtomicU64::new(0),
            tokens: RwLock::new(HashMap::new()),
            records: RwLock::new(HashMap::new()),
        }
    }

    /// The generation to pass to the `put_*` methods, read before the database is.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn fresh(&self, cached_at: Instant) -> bool {
        cached_at.elapsed() < self.ttl
    }

    /// The user and expiry of a valid access token, by hash.
    pub fn token(&self, hash: &str) -> Option<(user::Model, i64)> {
        let tokens = self.tokens.read().unwrap_or_else(|e| e.into_inner());
        tokens
            .get(hash)
            .filter(|e| self.fresh(e.cached_at))
            .map(|e| (e.user.clone(), e.expires_at))
    }

    /// Remembers a valid access token.
    pub fn put_token(&self, generation: u64, hash: &str, user: &user::Model, expires_at: i64) {
        if self.ttl.is_zero() {
            return;
        }
        let mut tokens = self.tokens.write().unwrap_or_else(|e| e.into_inner());
        if self.generation() != generation {
            return;
        }
        if tokens.len() >= MAX_ENTRIES {
            tokens.clear();
        }
        let entry = TokenEntry {
            cached_at: Instant::now(),
            user: user.clone(),
            expires_at,
        };
        tokens.insert(hash.to_owned(), entry);
    }

    /// A user's record with its enlistments.
    pub fn record(&self, user_id: &str) -> Option<UserRecord> {
        let records = self.records.read().unwrap_or_else(|e| e.into_inner());
        records
            .get(user_id)
            .filter(|e| self.fresh(e.cached_at))
            .map(|e| e.record.clone())
    }

    /// Remembers a user's record.
    pub fn put_record(&self, generation: u64, record: &UserRecord) {
        if self.ttl.is_zero() {
            return;
        }
        let mut records = self.records.write().unwrap_or_else(|e| e.into_inner());
        if self.generation() != generation {
            return;
        }
        if records.len() >= MAX_ENTRIES {
            records.clear();
        }
        let entry = RecordEntry {
            cached_at: Instant::now(),
            record: record.clone(),
        };
        records.insert(record.user.id.clone(), entry);
    }

    /// Forgets everything; called by every write that could change a cached answer.
    pub fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.tokens
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.records
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(id: &str) -> user::Model {
        user::Model {
            id: id.into(),
            email: "a@b.c".into(),
            password_hash: String::new(),
            first_name: "A".into(),
            last_name: "B".into(),
            phone_number: None,
            language: "EN".into(),
            time_zone: "UTC".into(),
            activation: true,
            roles: json!([]),
            profile_image: None,
            failed_count: 0,
            last_failed_timestamp: None,
            creation_timestamp: 0,
            update_timestamp: 0,
        }
    }

    #[test]
    fn entries_are_served_until_invalidated() {
        let cache = ReadCache::new(Duration::from_secs(60));
        let generation = cache.generation();
        cache.put_token(generation, "h", &user("u"), 5);
        assert_eq!(
            cache.token("h").map(|(u, e)| (u.id, e)),
            Some(("u".into(), 5))
        );
        cache.invalidate();
        assert!(cache.token("h").is_none());
    }

    #[test]
    fn a_read_that_raced_a_write_is_not_cached() {
        let cache = ReadCache::new(Duration::from_secs(60));
        let before = cache.generation();
        cache.invalidate();
        cache.put_token(before, "h", &user("u"), 5);
        assert!(cache.token("h").is_none());
    }

    #[test]
    fn zero_ttl_disables_and_entries_expire() {
        let off = ReadCache::new(Duration::ZERO);
        off.put_token(off.generation(), "h", &user("u"), 5);
        assert!(off.token("h").is_none());
        let short = ReadCache::new(Duration::from_millis(1));
        short.put_token(short.generation(), "h", &user("u"), 5);
        std::thread::sleep(Duration::from_millis(5));
        assert!(short.token("h").is_none());
    }
}
