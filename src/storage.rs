//! Where file contents live: a local directory (the default) or the database, so that several
//! instances on one PostgreSQL can share rendered PDFs. Files are addressed by their cache key
//! (the hash of what they show), so writing the same key twice writes the same bytes.

use std::path::PathBuf;

use futures_util::future::BoxFuture;

use std::sync::Arc;

use crate::config::{FileStorageKind, Settings};
use crate::store::Store;

/// The storage `settings` name (`TACHO_FILE_STORAGE`).
pub fn from_settings(settings: &Settings, store: &Store) -> Arc<dyn FileStorage> {
    match settings.file_storage {
        FileStorageKind::Local => Arc::new(LocalStorage::new(settings.data_dir.join("files"))),
        FileStorageKind::Database => Arc::new(DatabaseStorage::new(store.clone())),
    }
}

/// A place to keep file contents.
pub trait FileStorage: Send + Sync {
    /// Stores `content` under `key`; a crash midway leaves no partial file under `key`.
    fn put<'a>(&'a self, key: &'a str, content: Vec<u8>) -> BoxFuture<'a, anyhow::Result<()>>;
    /// The contents under `key`, if any.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, anyhow::Result<Option<Vec<u8>>>>;
    /// Whether files can be written and read now (the readiness probe).
    fn check(&self) -> BoxFuture<'_, anyhow::Result<()>>;
}

/// Files in a directory, two levels deep by key prefix.
pub struct LocalStorage {
    root: PathBuf,
}

impl LocalStorage {
    /// Storage under `root` (created when needed).
    pub fn new(root: PathBuf) -> Self {
        LocalStorage { root }
    }

    fn path(&self, key: &str) -> Option<PathBuf> {
        // Keys are hex hashes; anything else cannot name a file here.
        if key.len() < 3 || !key.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        Some(self.root.join(&key[..2]).join(key))
    }
}

impl FileStorage for LocalStorage {
    fn put<'a>(&'a self, key: &'a str, content: Vec<u8>) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async move {
            let path = self
                .path(key)
                .ok_or_else(|| anyhow::anyhow!("invalid file key"))?;
            if tokio::fs::try_exists(&path).await.unwrap_or(false) {
                return Ok(());
            }
            let dir = path.parent().expect("keyed paths have a parent");
            tokio::fs::create_dir_all(dir).await?;
            // Written under a temporary name and renamed: readers never see a partial file,
            // and a write that fails (a full disk) leaves nothing behind.
            let temporary = dir.join(format!(".{key}.{}.tmp", uuid::Uuid::new_v4().simple()));
            let written = match tokio::fs::write(&temporary, &content).await {
                Ok(()) => tokio::fs::rename(&temporary, &path).await,
                Err(err) => Err(err),
            };
            if let Err(err) = written {
                let _ = tokio::fs::remove_file(&temporary).await;
                return Err(err.into());
            }
            Ok(())
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, anyhow::Result<Option<Vec<u8>>>> {
        Box::pin(async move {
            let Some(path) = self.path(key) else {
                return Ok(None);
            };
            match tokio::fs::read(&path).await {
                Ok(bytes) => Ok(Some(bytes)),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(err) => Err(err.into()),
            }
        })
    }

    fn check(&self) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            tokio::fs::create_dir_all(&self.root).await?;
            let probe = self
                .root
                .join(format!(".ready.{}.tmp", uuid::Uuid::new_v4().simple()));
            tokio::fs::write(&probe, b"ready").await?;
            let read = tokio::fs::read(&probe).await;
            let _ = tokio::fs::remove_file(&probe).await;
            anyhow::ensure!(read? == b"ready", "the probe file read back differently");
            Ok(())
        })
    }
}

/// Files in the database (`file_blobs`).
pub struct DatabaseStorage {
    store: Store,
}

impl DatabaseStorage {
    /// Storage in `store`'s database.
    pub fn new(store: Store) -> Self {
        DatabaseStorage { store }
    }
}

impl FileStorage for DatabaseStorage {
    fn put<'a>(&'a self, key: &'a str, content: Vec<u8>) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async move { Ok(self.store.put_blob(key, content).await?) })
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, anyhow::Result<Option<Vec<u8>>>> {
        Box::pin(async move { Ok(self.store.blob(key).await?) })
    }

    fn check(&self) -> BoxFuture<'_, anyhow::Result<()>> {
        // The files are the database's rows: the probe of the database covers them.
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn local_storage_round_trips_and_refuses_odd_keys() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::new(dir.path().to_owned());
        let key = "ab".repeat(32);
        storage.put(&key, b"%PDF-1.7 hello".to_vec()).await.unwrap();
        assert_eq!(
            storage.get(&key).await.unwrap().as_deref(),
            Some(&b"%PDF-1.7 hello"[..])
        );
        storage.put(&key, b"%PDF-1.7 hello".to_vec()).await.unwrap();
        assert_eq!(storage.get(&"cd".repeat(32)).await.unwrap(), None);
        assert!(storage.put("../../etc/passwd", vec![]).await.is_err());
        assert_eq!(storage.get("../x").await.unwrap(), None);
        let leftovers = std::fs::read_dir(dir.path().join("ab")).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary files remain");
    }
}
