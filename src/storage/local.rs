//! File contents in a local directory, two levels deep by key prefix.

use std::path::PathBuf;

use futures_util::future::BoxFuture;

use super::{FileStorage, StorageFault, is_key};

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

    /// Every entry of the prefix folders (stored files and temporary ones); none when the
    /// root does not exist yet.
    async fn entries(&self) -> std::io::Result<Vec<tokio::fs::DirEntry>> {
        let mut entries = Vec::new();
        let mut prefixes = match tokio::fs::read_dir(&self.root).await {
            Ok(prefixes) => prefixes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(entries),
            Err(err) => return Err(err),
        };
        while let Some(prefix) = prefixes.next_entry().await? {
            if !prefix.file_type().await?.is_dir() {
                continue;
            }
            let mut files = tokio::fs::read_dir(prefix.path()).await?;
            while let Some(file) = files.next_entry().await? {
                entries.push(file);
            }
        }
        Ok(entries)
    }
}

/// A temporary file whose writer is not known to be gone is left alone for this long (a write
/// takes milliseconds); past it, it is abandoned whoever wrote it.
const ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(3600);

impl LocalStorage {
    /// Removes the temporary files of writes that never finished: those of a process that no
    /// longer runs (a `kill -9` mid-write), and any older than an hour. Returns how many.
    pub async fn sweep_abandoned(&self) -> std::io::Result<usize> {
        let mut removed = 0;
        for file in self.entries().await? {
            let name = file.file_name().to_string_lossy().into_owned();
            let Some(writer) = temporary_writer(&name) else {
                continue;
            };
            let old = file
                .metadata()
                .await
                .and_then(|m| m.modified())
                .ok()
                .and_then(|modified| modified.elapsed().ok())
                .is_some_and(|age| age > ABANDONED_AFTER);
            if (old || !process_runs(writer)) && tokio::fs::remove_file(file.path()).await.is_ok() {
                removed += 1;
            }
        }
        Ok(removed)
    }
}

/// Writes `content` at `path` unless a file is there already. It is written under a temporary
/// name and renamed: readers never see a partial file, and a write that fails (a full disk)
/// leaves nothing behind. The name carries the writer's process id, so that what a killed
/// process left is known as such.
fn write_new(path: &std::path::Path, content: &[u8]) -> std::io::Result<()> {
    if path.try_exists().unwrap_or(false) {
        return Ok(());
    }
    let dir = path.parent().expect("keyed paths have a parent");
    std::fs::create_dir_all(dir)?;
    let key = path.file_name().unwrap_or_default().to_string_lossy();
    let temporary = dir.join(format!(
        ".{key}.{}-{}.tmp",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let written =
        std::fs::write(&temporary, content).and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// The process id in a temporary file's name (`.<key>.<pid>-<uuid>.tmp`).
fn temporary_writer(name: &str) -> Option<u32> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (_, writer) = inner.split_once('.')?;
    writer.split_once('-')?.0.parse().ok()
}

/// Whether process `pid` runs on this machine. Where that cannot be told (no `/proc`), it is
/// taken to run, and only the age of its files counts.
fn process_runs(pid: u32) -> bool {
    let proc = std::path::Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

impl FileStorage for LocalStorage {
    fn put<'a>(&'a self, key: &'a str, content: Vec<u8>) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async move {
            let path = self
                .path(key)
                .ok_or_else(|| anyhow::anyhow!("invalid file key"))?;
            // One trip to the blocking pool for the whole write rather than one per call: each
            // trip is a hand-off between threads, and a report waits for its PDF's write.
            tokio::task::spawn_blocking(move || write_new(&path, &content))
                .await?
                .map_err(|err| StorageFault::of_io(err).into())
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
                Err(err) => Err(StorageFault::of_io(err).into()),
            }
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async move {
            let Some(path) = self.path(key) else {
                return Ok(());
            };
            match tokio::fs::remove_file(&path).await {
                Ok(()) => Ok(()),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(err) => Err(StorageFault::of_io(err).into()),
            }
        })
    }

    fn keys(&self) -> BoxFuture<'_, anyhow::Result<Vec<String>>> {
        Box::pin(async move {
            // Temporary files start with a dot and are not keys.
            Ok(self
                .entries()
                .await?
                .into_iter()
                .filter_map(|file| file.file_name().to_str().map(str::to_owned))
                .filter(|name| is_key(name))
                .collect())
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

    #[tokio::test]
    async fn sweeping_removes_what_a_dead_writer_left_and_only_that() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::new(dir.path().to_owned());
        let key = "ef".repeat(32);
        storage.put(&key, b"%PDF-1.7 kept".to_vec()).await.unwrap();
        let folder = dir.path().join("ef");
        // A child that has exited: its process id names no running process.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let abandoned = folder.join(format!(".{key}.{dead}-0a1b.tmp"));
        let running = folder.join(format!(".{key}.{}-2c3d.tmp", std::process::id()));
        std::fs::write(&abandoned, b"%PDF-1.7 ha").unwrap();
        std::fs::write(&running, b"%PDF-1.7 be").unwrap();
        assert_eq!(storage.sweep_abandoned().await.unwrap(), 1);
        assert!(!abandoned.exists());
        assert!(running.exists(), "a running writer's file stays");
        assert!(folder.join(&key).exists());
        assert_eq!(temporary_writer(".ab.12-x.tmp"), Some(12));
        assert_eq!(temporary_writer("abab"), None);
    }
}
