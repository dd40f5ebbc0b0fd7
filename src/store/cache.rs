//! A short-lived read cache for the hottest lookups: bearer token → user, and user → record.
//!
//! Every write in this process to users, enlistments or tokens clears it at once, so a
//! process never serves its own stale data. Other processes (several instances on one
//! PostgreSQL) may serve an entry for at most the TTL after a change made elsewhere; a TTL of
//! zero turns the cache off. A generation counter keeps a read that raced with a write from
//! caching what it read before the write.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use moka::sync::Cache;

use super::UserRecord;
use super::entities::user;
use crate::domain::id::Id;

/// Entries kept at most in each map; beyond, the least used go first (an attack with random
/// tokens only misses).
const MAX_ENTRIES: u64 = 50_000;

/// The cache; one per store. Each map is a moka cache bounded by entries, whose entries live
/// the TTL at most.
pub struct ReadCache {
    enabled: bool,
    generation: AtomicU64,
    tokens: Cache<String, (user::Model, i64)>,
    records: Cache<Id, UserRecord>,
}

impl std::fmt::Debug for ReadCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadCache")
            .field("enabled", &self.enabled)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// A map of at most [`MAX_ENTRIES`] entries, each living `ttl` at most.
fn bounded<K, V>(ttl: Duration) -> Cache<K, V>
where
    K: std::hash::Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    Cache::builder()
        .max_capacity(MAX_ENTRIES)
        .time_to_live(ttl.max(Duration::from_nanos(1)))
        .build()
}

impl ReadCache {
    /// A cache whose entries live `ttl` at most.
    pub fn new(ttl: Duration) -> Self {
        ReadCache {
            enabled: !ttl.is_zero(),
            generation: AtomicU64::new(0),
            tokens: bounded(ttl),
            records: bounded(ttl),
        }
    }

    /// The generation to pass to the `put_*` methods, read before the database is.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Inserts unless a write happened since `generation` was read; a write that lands
    /// between the check and the insert is caught by the check after it.
    fn put<K, V>(&self, map: &Cache<K, V>, generation: u64, key: K, value: V)
    where
        K: std::hash::Hash + Eq + Clone + Send + Sync + 'static,
        V: Clone + Send + Sync + 'static,
    {
        if !self.enabled || self.generation() != generation {
            return;
        }
        map.insert(key.clone(), value);
        if self.generation() != generation {
            map.invalidate(&key);
        }
    }

    /// The user and expiry of a valid access token, by hash.
    pub fn token(&self, hash: &str) -> Option<(user::Model, i64)> {
        self.tokens.get(hash)
    }

    /// Remembers a valid access token.
    pub fn put_token(&self, generation: u64, hash: &str, user: &user::Model, expires_at: i64) {
        self.put(
            &self.tokens,
            generation,
            hash.to_owned(),
            (user.clone(), expires_at),
        );
    }

    /// A user's record with its enlistments.
    pub fn record(&self, user_id: &Id) -> Option<UserRecord> {
        self.records.get(user_id)
    }

    /// Remembers a user's record.
    pub fn put_record(&self, generation: u64, record: &UserRecord) {
        self.put(&self.records, generation, record.user.id, record.clone());
    }

    /// Forgets everything; called by every write that could change a cached answer.
    pub fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.tokens.invalidate_all();
        self.records.invalidate_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user() -> user::Model {
        user::Model {
            id: Id::generate(),
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
            password_change_due: false,
            legal_hold: false,
            erased_timestamp: None,
            deactivation_timestamp: None,
            creation_timestamp: 0,
            update_timestamp: 0,
        }
    }

    #[test]
    fn entries_are_served_until_invalidated() {
        let cache = ReadCache::new(Duration::from_secs(60));
        let generation = cache.generation();
        let user = user();
        cache.put_token(generation, "h", &user, 5);
        assert_eq!(cache.token("h").map(|(u, e)| (u.id, e)), Some((user.id, 5)));
        cache.invalidate();
        assert!(cache.token("h").is_none());
    }

    #[test]
    fn a_read_that_raced_a_write_is_not_cached() {
        let cache = ReadCache::new(Duration::from_secs(60));
        let before = cache.generation();
        cache.invalidate();
        cache.put_token(before, "h", &user(), 5);
        assert!(cache.token("h").is_none());
    }

    #[test]
    fn zero_ttl_disables_and_entries_expire() {
        let off = ReadCache::new(Duration::ZERO);
        off.put_token(off.generation(), "h", &user(), 5);
        assert!(off.token("h").is_none());
        let short = ReadCache::new(Duration::from_millis(1));
        short.put_token(short.generation(), "h", &user(), 5);
        std::thread::sleep(Duration::from_millis(5));
        assert!(short.token("h").is_none());
    }
}
