//! File contents in an S3-compatible object store (AWS S3, MinIO, Ceph, moto…), through the
//! `object_store` crate, configured by the standard `AWS_*` variables.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use futures_util::TryStreamExt;
use futures_util::future::BoxFuture;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::path::Path;
use object_store::{ClientOptions, ObjectStore, PutPayload, RetryConfig};

use super::{FileStorage, StorageFault, is_key};
use crate::config::S3Options;

/// Where the files are kept in the bucket.
const PREFIX: &str = "files";

/// Files as objects `files/<key>` in one bucket.
pub struct S3Storage {
    objects: Arc<dyn ObjectStore>,
}

impl S3Storage {
    /// The bucket that `options` (the set `AWS_*` variables) name.
    pub fn from_options(options: &S3Options) -> anyhow::Result<Self> {
        // A request that cannot reach the server fails within seconds, so that the readiness
        // probe and a download answer 503 rather than wait through object_store's default of
        // ten retries over three minutes.
        let client = ClientOptions::new()
            .with_connect_timeout(Duration::from_secs(5))
            .with_timeout(Duration::from_secs(30));
        let retry = RetryConfig {
            max_retries: 3,
            retry_timeout: Duration::from_secs(15),
            ..RetryConfig::default()
        };
        // Client options first: they replace the whole set, `AWS_ALLOW_HTTP` included.
        let mut builder = AmazonS3Builder::new()
            .with_client_options(client)
            .with_retry(retry);
        for (name, value) in &options.0 {
            let key: AmazonS3ConfigKey = name
                .to_ascii_lowercase()
                .parse()
                .with_context(|| format!("{name} is not an S3 setting"))?;
            builder = builder.with_config(key, value);
        }
        let objects = builder.build().context(
            "TACHO_FILE_STORAGE=s3 needs AWS_BUCKET (and, for a server other than AWS, \
             AWS_ENDPOINT)",
        )?;
        Ok(S3Storage {
            objects: Arc::new(objects),
        })
    }

    fn path(key: &str) -> Option<Path> {
        is_key(key).then(|| Path::from(format!("{PREFIX}/{key}")))
    }
}

impl FileStorage for S3Storage {
    fn put<'a>(&'a self, key: &'a str, content: Vec<u8>) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async move {
            let path = Self::path(key).ok_or_else(|| anyhow::anyhow!("invalid file key"))?;
            // A single PUT: the object appears whole or not at all. Writing a key again writes
            // the same bytes, so a race between instances is harmless.
            self.objects
                .put(&path, PutPayload::from(content))
                .await
                .map_err(|err| StorageFault::Unusable(Box::new(err)))?;
            Ok(())
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, anyhow::Result<Option<Vec<u8>>>> {
        Box::pin(async move {
            let Some(path) = Self::path(key) else {
                return Ok(None);
            };
            let unusable = |err| StorageFault::Unusable(Box::new(err));
            match self.objects.get(&path).await {
                Ok(found) => Ok(Some(found.bytes().await.map_err(unusable)?.to_vec())),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(err) => Err(unusable(err).into()),
            }
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async move {
            let Some(path) = Self::path(key) else {
                return Ok(());
            };
            match self.objects.delete(&path).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(err) => Err(StorageFault::Unusable(Box::new(err)).into()),
            }
        })
    }

    fn keys(&self) -> BoxFuture<'_, anyhow::Result<Vec<String>>> {
        Box::pin(async move {
            let prefix = Path::from(PREFIX);
            let listed: Vec<_> = self.objects.list(Some(&prefix)).try_collect().await?;
            Ok(listed
                .into_iter()
                .filter_map(|object| object.location.filename().map(str::to_owned))
                .filter(|name| is_key(name))
                .collect())
        })
    }

    fn check(&self) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let probe = Path::from(format!("ready/{}", uuid::Uuid::new_v4().simple()));
            self.objects
                .put(&probe, PutPayload::from_static(b"ready"))
                .await?;
            let read = self.objects.get(&probe).await?.bytes().await;
            let _ = self.objects.delete(&probe).await;
            anyhow::ensure!(
                &read?[..] == b"ready",
                "the probe object read back differently"
            );
            Ok(())
        })
    }
}
