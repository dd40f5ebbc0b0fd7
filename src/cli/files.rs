//! `tacho files migrate` and `tacho backup`.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};

use super::progress::Progress;
use super::reports::open_store;
use crate::config::ExposeSecret;
use crate::config::{FileStorageKind, Settings};
use crate::domain::clock::SystemClock;
use crate::storage::{self, LocalStorage, Migration, MigrationCounts};
use crate::store::{Service, Store};

/// Copies every recorded file from `TACHO_FILE_STORAGE` to the storage of kind `to`, with a
/// progress bar. Resumable: files the destination holds are not copied again.
pub async fn migrate(settings: Settings, to: FileStorageKind) -> anyhow::Result<()> {
    if to == settings.file_storage {
        bail!(
            "TACHO_FILE_STORAGE is already {}: there is nothing to move",
            to.name()
        );
    }
    let store = open_store(&settings).await?;
    let from = storage::from_settings(&settings, &store)?;
    let destination = storage::of_kind(to, &settings, &store)?;
    destination
        .check()
        .await
        .with_context(|| format!("the {} storage cannot be written", to.name()))?;
    let keys = store.file_cache_keys().await?;
    let started = Instant::now();
    let mut progress = Progress::new("files migrate", "files", "files to copy", keys.len() as u64);
    let migration = Migration {
        from,
        to: destination,
    };
    let counts = migration
        .run(keys, |counts| {
            progress.update(counts.done(), &describe(counts))
        })
        .await?;
    progress.finish();
    println!(
        "{} from {} to {} in {:.1} s",
        describe(&counts),
        settings.file_storage.name(),
        to.name(),
        started.elapsed().as_secs_f64()
    );
    if counts.missing > 0 {
        eprintln!(
            "warning: {} recorded files are in neither storage; their reports are made again \
             when next requested",
            counts.missing
        );
    }
    if counts.failed > 0 {
        bail!(
            "{} files were not copied (the log says why); run the command again to copy them",
            counts.failed
        );
    }
    Ok(())
}

fn describe(counts: &MigrationCounts) -> String {
    format!(
        "{} copied, {} already there, {} missing, {} failed",
        counts.copied, counts.present, counts.missing, counts.failed
    )
}

/// Writes a consistent copy of the embedded SQLite database and its local files into `to`, a
/// new or empty folder, while the server may run. The copy is a data folder:
/// `TACHO_DATA_DIR=<to> tacho serve` runs on it. It holds health data and the server's
/// secrets, so everything it creates is its owner's alone: folders 0700, files 0600.
pub async fn backup(settings: Settings, to: &Path) -> anyhow::Result<()> {
    private_files_only();
    let not_empty = std::fs::read_dir(to)
        .map(|mut entries| entries.next().is_some())
        .unwrap_or(false);
    if not_empty {
        bail!(
            "{} is not empty; a backup goes into a new folder",
            to.display()
        );
    }
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    // A folder made before (empty, so allowed) may have been made readable by others.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot make {} private", to.display()))?;
    }
    let started = Instant::now();
    // No migration: a backup copies the database as it is.
    let store = Store::connect(settings.database_url.expose_secret(), Arc::new(SystemClock))
        .await
        .context("cannot connect to the database")?;
    let database = to.join("tacho.db");
    store.backup_into(&Service::Operator, &database).await.with_context(|| {
        format!(
            "cannot copy the database (for PostgreSQL, see pg_dump in docs/operations.md) to {}",
            database.display()
        )
    })?;
    let database_bytes = std::fs::metadata(&database)?.len();
    // After the snapshot: every file it records is already stored, since a file is written
    // before the row that names it.
    let files = match settings.file_storage {
        FileStorageKind::Local => {
            let keys = store.file_cache_keys().await?;
            let mut progress = Progress::new("backup", "files", "files to copy", keys.len() as u64);
            let migration = Migration {
                from: Arc::new(LocalStorage::new(settings.data_dir.join("files"))),
                to: Arc::new(LocalStorage::new(to.join("files"))),
            };
            let counts = migration
                .run(keys, |counts| {
                    progress.update(counts.done(), &describe(counts))
                })
                .await?;
            progress.finish();
            if counts.failed > 0 {
                bail!(
                    "{} files could not be copied (the log says why)",
                    counts.failed
                );
            }
            format!("{} files", counts.copied)
        }
        FileStorageKind::Database => "the files inside the database".to_owned(),
        FileStorageKind::S3 => "no files (they stay in the bucket; see docs/operations.md)".into(),
    };
    println!(
        "backup in {}: the database ({:.1} MB) and {files}, in {:.1} s; restore with \
         TACHO_DATA_DIR={} tacho serve",
        to.display(),
        database_bytes as f64 / 1e6,
        started.elapsed().as_secs_f64(),
        to.display()
    );
    Ok(())
}

/// From here on this process creates folders 0700 and files 0600 (a umask of 077), whatever
/// the shell's umask: the SQLite copy, the folders and the files of a backup are never
/// readable by others, not even for a moment.
fn private_files_only() {
    #[cfg(unix)]
    // SAFETY: umask only sets the process's file mode mask; it cannot fail.
    unsafe {
        libc::umask(0o077);
    }
}
