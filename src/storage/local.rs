//! File contents in a local directory, two levels deep by key prefix.

use std::path::PathBuf;

use futures_util::future::BoxFuture;

use super::{FileStorage, is_key};

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
        is_key(key).then(|| self.root.join(&key[..2]).join(key))
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

    fn keys(&self) -> BoxFuture<'_, anyhow::Result<Vec<String>>> {
        Box::pin(async move {
            let mut keys = Vec::new();
            let mut prefixes = match tokio::fs::read_dir(&self.root).await {
                Ok(prefixes) => prefixes,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(keys),
                Err(err) => return Err(err.into()),
            };
            while let Some(prefix) = prefixes.next_entry().await? {
                if !prefix.file_type().await?.is_dir() {
                    continue;
                }
                let mut files = tokio::fs::read_dir(prefix.path()).await?;
                while let Some(file) = files.next_entry().await? {
                    // Temporary files start with a dot and are not keys.
                    if let Some(name) = file.file_name().to_str().filter(|name| is_key(name)) {
                        keys.push(name.to_owned());
                    }
                }
            }
            Ok(keys)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn local_storage_round_trips_and_refuses_odd_keys() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::new(dir.path().to_owned());
        assert!(storage.keys().await.unwrap().is_empty());
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
        std::fs::write(dir.path().join("ab").join(".ab.1.tmp"), b"half").unwrap();
        assert_eq!(storage.keys().await.unwrap(), vec![key]);
    }
}
