//! Where file contents live: a local directory (the default), the database, or an S3-compatible
//! object store, so that several instances can share rendered PDFs. Files are addressed by their
//! cache key (the hash of what they show), so writing the same key twice writes the same bytes.

mod database;
mod local;
mod migrate;
mod s3;

use std::sync::Arc;

use futures_util::future::BoxFuture;

pub use database::DatabaseStorage;
pub use local::LocalStorage;
pub use migrate::{Migration, MigrationCounts};
pub use s3::S3Storage;

use crate::config::{FileStorageKind, Settings};
use crate::store::Store;

/// The storage of `kind`, configured by `settings`.
pub fn of_kind(
    kind: FileStorageKind,
    settings: &Settings,
    store: &Store,
) -> anyhow::Result<Arc<dyn FileStorage>> {
    Ok(match kind {
        FileStorageKind::Local => Arc::new(LocalStorage::new(settings.data_dir.join("files"))),
        FileStorageKind::Database => Arc::new(DatabaseStorage::new(store.clone())),
        FileStorageKind::S3 => Arc::new(S3Storage::from_options(&settings.s3)?),
    })
}

/// The storage `TACHO_FILE_STORAGE` names.
pub fn from_settings(settings: &Settings, store: &Store) -> anyhow::Result<Arc<dyn FileStorage>> {
    of_kind(settings.file_storage, settings, store)
}

/// A place to keep file contents.
pub trait FileStorage: Send + Sync {
    /// Stores `content` under `key`; a crash midway leaves no partial file under `key`.
    fn put<'a>(&'a self, key: &'a str, content: Vec<u8>) -> BoxFuture<'a, anyhow::Result<()>>;
    /// The contents under `key`, if any.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, anyhow::Result<Option<Vec<u8>>>>;
    /// Removes the contents under `key`; a key that holds nothing is not an error (erasure
    /// runs again after a crash, and finds some keys gone).
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, anyhow::Result<()>>;
    /// Every key held, in no particular order (what a migration need not copy again).
    fn keys(&self) -> BoxFuture<'_, anyhow::Result<Vec<String>>>;
    /// Whether files can be written and read now (the readiness probe).
    fn check(&self) -> BoxFuture<'_, anyhow::Result<()>>;
}

/// A storage that cannot take or give files now: a full disk, a folder that cannot be
/// written, an unreachable bucket. Callers answer 503 with `Retry-After`, as for an
/// unreachable database; nothing was stored.
#[derive(Debug, thiserror::Error)]
pub enum StorageFault {
    /// No space left (`ENOSPC`) or over quota.
    #[error("the file storage is full")]
    Full(#[source] std::io::Error),
    /// Anything else that kept the storage from answering.
    #[error("the file storage cannot be used now")]
    Unusable(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl StorageFault {
    /// The fault of a local file operation.
    fn of_io(err: std::io::Error) -> Self {
        use std::io::ErrorKind;
        match err.kind() {
            ErrorKind::StorageFull | ErrorKind::QuotaExceeded => StorageFault::Full(err),
            _ => StorageFault::Unusable(Box::new(err)),
        }
    }
}

/// Whether `key` can name a stored file: keys are hex hashes, so anything else (a path, say)
/// is refused before it reaches a file system or a bucket.
fn is_key(key: &str) -> bool {
    key.len() >= 3 && key.chars().all(|c| c.is_ascii_hexdigit())
}
