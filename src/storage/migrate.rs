//! Copying every file from one storage to another (`tacho files migrate`). Resumable: what the
//! destination already holds is not copied again, and each copy is a whole-file write, so an
//! interrupted run leaves nothing half-written and the next run picks up where it stopped.

use std::collections::HashSet;
use std::sync::Arc;

use futures_util::StreamExt;

use super::FileStorage;

/// Copies running at once: enough to hide an object store's round trips, few enough to keep
/// memory at a handful of PDFs.
const CONCURRENT_COPIES: usize = 8;

/// How the files of a migration went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MigrationCounts {
    /// Copied by this run.
    pub copied: u64,
    /// Already in the destination (an earlier run, or a render since the switch).
    pub present: u64,
    /// Recorded in the database but in neither storage: nothing to copy.
    pub missing: u64,
    /// Could not be read or written; a later run tries them again.
    pub failed: u64,
}

impl MigrationCounts {
    /// Files handled so far.
    pub fn done(&self) -> u64 {
        self.copied + self.present + self.missing + self.failed
    }
}

/// A copy of files from one storage to another.
pub struct Migration {
    /// Where the files are now.
    pub from: Arc<dyn FileStorage>,
    /// Where they go.
    pub to: Arc<dyn FileStorage>,
}

impl Migration {
    /// Copies the files under `keys` (the database's record of every file), telling
    /// `progress` after each one.
    pub async fn run(
        &self,
        keys: Vec<String>,
        mut progress: impl FnMut(&MigrationCounts),
    ) -> anyhow::Result<MigrationCounts> {
        let present: HashSet<String> = self.to.keys().await?.into_iter().collect();
        let mut counts = MigrationCounts::default();
        let mut copies = futures_util::stream::iter(keys)
            .map(|key| {
                let already = present.contains(&key);
                async move {
                    if already {
                        return Outcome::Present;
                    }
                    match self.from.get(&key).await {
                        Ok(Some(content)) => match self.to.put(&key, content).await {
                            Ok(()) => Outcome::Copied,
                            Err(err) => Outcome::Failed(key, err),
                        },
                        Ok(None) => Outcome::Missing(key),
                        Err(err) => Outcome::Failed(key, err),
                    }
                }
            })
            .buffer_unordered(CONCURRENT_COPIES);
        while let Some(outcome) = copies.next().await {
            match outcome {
                Outcome::Copied => counts.copied += 1,
                Outcome::Present => counts.present += 1,
                Outcome::Missing(key) => {
                    tracing::warn!(key = %key, "a recorded file is not in the source storage");
                    counts.missing += 1;
                }
                Outcome::Failed(key, err) => {
                    tracing::warn!(key = %key, error = %format!("{err:#}"), "a file was not copied");
                    counts.failed += 1;
                }
            }
            progress(&counts);
        }
        Ok(counts)
    }
}

enum Outcome {
    Copied,
    Present,
    Missing(String),
    Failed(String, anyhow::Error),
}

#[cfg(test)]
mod tests {
    use super::super::LocalStorage;
    use super::*;

    #[tokio::test]
    async fn a_second_run_copies_only_what_the_first_did_not() {
        let dir = tempfile::tempdir().unwrap();
        let from = Arc::new(LocalStorage::new(dir.path().join("from")));
        let to = Arc::new(LocalStorage::new(dir.path().join("to")));
        let keys: Vec<String> = ["aa", "bb", "cc"].iter().map(|k| k.repeat(32)).collect();
        for key in &keys[..2] {
            from.put(key, format!("%PDF {key}").into_bytes())
                .await
                .unwrap();
        }
        to.put(&keys[0], format!("%PDF {}", keys[0]).into_bytes())
            .await
            .unwrap();
        let migration = Migration {
            from: from.clone(),
            to: to.clone(),
        };
        let mut seen = Vec::new();
        let counts = migration
            .run(keys.clone(), |counts| seen.push(counts.done()))
            .await
            .unwrap();
        let expected = MigrationCounts {
            copied: 1,
            present: 1,
            missing: 1,
            failed: 0,
        };
        assert_eq!(counts, expected);
        assert_eq!(seen, vec![1, 2, 3]);
        assert_eq!(
            to.get(&keys[1]).await.unwrap().unwrap(),
            format!("%PDF {}", keys[1]).into_bytes()
        );
        let again = migration.run(keys, |_| {}).await.unwrap();
        assert_eq!((again.copied, again.present, again.missing), (0, 2, 1));
    }
}
