//! File contents in the database's `file_blobs` table.

use futures_util::future::BoxFuture;

use super::FileStorage;
use crate::store::{Store, Unaudited};

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
        Box::pin(async move {
            let content = &content;
            Ok(self
                .store
                .write(Unaudited::Renders, async |tx| {
                    tx.put_blob(key, content.clone()).await
                })
                .await?)
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, anyhow::Result<Option<Vec<u8>>>> {
        Box::pin(async move { Ok(self.store.blob(key).await?) })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async move {
            Ok(self
                .store
                .write(Unaudited::Erasure, async |tx| tx.delete_blob(key).await)
                .await?)
        })
    }

    fn keys(&self) -> BoxFuture<'_, anyhow::Result<Vec<String>>> {
        Box::pin(async move { Ok(self.store.blob_keys().await?) })
    }

    fn check(&self) -> BoxFuture<'_, anyhow::Result<()>> {
        // The files are the database's rows: the probe of the database covers them.
        Box::pin(async { Ok(()) })
    }
}
