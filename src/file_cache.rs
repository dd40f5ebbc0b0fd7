//! Hot stored files in memory: the `files` row (with the secret a token is checked against) and
//! the contents, by file id, so that a repeated download touches neither the database nor the
//! file storage.
//!
//! Bounded by bytes (`TACHO_FILE_CACHE_BYTES`); which files stay is decided by moka's
//! frequency-aware eviction, so a burst of one-off downloads does not push out the hot ones.
//! A file row and its contents never change once written (the contents are addressed by the
//! hash of what they show), so an entry can only go stale by the file being deleted. In this
//! process whatever deletes or replaces a file calls [`FileCache::forget`]; a deletion made
//! through another instance is seen within the TTL (`TACHO_CACHE_TTL_MS`, the same bound as
//! the token and user cache), after which an entry is read again.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use moka::sync::Cache;

use crate::domain::id::Id;
use crate::store::entities::file;

/// What a cached entry costs beyond its contents (the row's strings, the key, moka's node):
/// a rough figure, so that many tiny files cannot exceed the bound unnoticed.
const ENTRY_OVERHEAD: u64 = 512;

/// A stored file held in memory.
#[derive(Debug)]
pub struct CachedFile {
    /// The row: its secret is what a token is compared with, its hash is the ETag.
    pub file: file::Model,
    /// The contents, shared with every response that sends them (no copy per request).
    pub contents: Bytes,
}

/// The cache; one per process, shared by its workers.
#[derive(Clone)]
pub struct FileCache {
    /// `None` when turned off (no bytes or no TTL allowed).
    entries: Option<Cache<Id, Arc<CachedFile>>>,
    /// The largest file kept: a few big files must not flush all the small hot ones.
    largest: u64,
}

impl FileCache {
    /// A cache holding at most `max_bytes` of files (contents plus a small overhead each), each
    /// kept at most `ttl`. Zero for either turns the cache off.
    pub fn new(max_bytes: u64, ttl: Duration) -> Self {
        if max_bytes == 0 || ttl.is_zero() {
            return FileCache {
                entries: None,
                largest: 0,
            };
        }
        let entries = Cache::builder()
            .max_capacity(max_bytes)
            .weigher(|_id: &Id, entry: &Arc<CachedFile>| {
                u32::try_from(weight(entry)).unwrap_or(u32::MAX)
            })
            .time_to_live(ttl)
            .build();
        FileCache {
            entries: Some(entries),
            largest: max_bytes / 16,
        }
    }

    /// A cache that keeps nothing.
    pub fn disabled() -> Self {
        FileCache::new(0, Duration::ZERO)
    }

    /// The file with this id, if it is in memory. The caller still checks the secret.
    pub fn get(&self, id: &Id) -> Option<Arc<CachedFile>> {
        let found = self.entries.as_ref()?.get(id);
        crate::telemetry::metrics::file_cache(found.is_some());
        found
    }

    /// Keeps a file that was just read from the database and the storage, unless it is too
    /// large for the cache; returns the contents to send either way.
    pub fn insert(&self, file: file::Model, contents: Bytes) -> Bytes {
        if let Some(entries) = &self.entries
            && contents.len() as u64 <= self.largest
        {
            let id = file.id;
            let entry = Arc::new(CachedFile {
                file,
                contents: contents.clone(),
            });
            entries.insert(id, entry);
        }
        contents
    }

    /// Forgets a file at once; whatever deletes or replaces a stored file calls this.
    pub fn forget(&self, id: &Id) {
        if let Some(entries) = &self.entries {
            entries.invalidate(id);
        }
    }

    /// The bytes currently held (contents plus overhead), once pending evictions have run.
    pub fn weighted_size(&self) -> u64 {
        self.entries.as_ref().map_or(0, |entries| {
            entries.run_pending_tasks();
            entries.weighted_size()
        })
    }
}

fn weight(entry: &CachedFile) -> u64 {
    entry.contents.len() as u64 + ENTRY_OVERHEAD
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str) -> file::Model {
        file::Model {
            id: id.into(),
            legacy_secret_hash: String::new(),
            token_version: 0,
            cache_key: "ab".repeat(32),
            name: "report.pdf".into(),
            patient_id: None,
            mimetype: "application/pdf".into(),
            size: 4,
            sha256: "cd".repeat(32),
            sha1: None,
            creation_timestamp: 0,
        }
    }

    #[test]
    fn keeps_files_until_forgotten() {
        let cache = FileCache::new(1 << 20, Duration::from_secs(60));
        cache.insert(row("a"), Bytes::from_static(b"%PDF"));
        let hot = cache.get(&"a".into()).expect("kept");
        assert_eq!(hot.file, row("a"));
        assert_eq!(&hot.contents[..], b"%PDF");
        assert!(cache.get(&"b".into()).is_none());
        cache.forget(&"a".into());
        assert!(cache.get(&"a".into()).is_none());
    }

    #[test]
    fn stays_within_its_bytes_and_skips_large_files() {
        let cache = FileCache::new(64 * 1024, Duration::from_secs(60));
        let big = Bytes::from(vec![0u8; 64 * 1024 / 16 + 1]);
        assert_eq!(cache.insert(row("big"), big.clone()), big, "still served");
        assert!(
            cache.get(&"big".into()).is_none(),
            "larger than a sixteenth"
        );
        for i in 0..100 {
            cache.insert(row(&format!("f{i}")), Bytes::from(vec![0u8; 2048]));
        }
        assert!(cache.weighted_size() <= 64 * 1024);
    }

    #[test]
    fn entries_expire_after_the_ttl_and_zero_turns_it_off() {
        let cache = FileCache::new(1 << 20, Duration::from_millis(20));
        cache.insert(row("a"), Bytes::from_static(b"%PDF"));
        assert!(cache.get(&"a".into()).is_some());
        std::thread::sleep(Duration::from_millis(60));
        assert!(cache.get(&"a".into()).is_none());
        for off in [
            FileCache::disabled(),
            FileCache::new(0, Duration::from_secs(1)),
            FileCache::new(1 << 20, Duration::ZERO),
        ] {
            off.insert(row("a"), Bytes::from_static(b"%PDF"));
            assert!(off.get(&"a".into()).is_none());
        }
    }
}
