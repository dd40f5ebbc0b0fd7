//! A consistent copy of an embedded SQLite database, taken while the service runs.

use std::path::Path;

use sea_orm::{ConnectionTrait, DbBackend};

use super::{Reader, Service};

impl Reader {
    /// Writes a consistent copy of the SQLite database to `target`, which must not exist.
    ///
    /// `VACUUM INTO` reads the database in one read transaction, so the copy is a snapshot of
    /// one moment even while other connections write (SQLite documents it as an alternative
    /// to the online-backup API: <https://sqlite.org/lang_vacuum.html#vacuuminto>); the copy
    /// is also compacted. Writers are not blocked in WAL mode.
    pub async fn backup_into(&self, scope: &Service, target: &Path) -> anyhow::Result<()> {
        // A copy holds everything: only the operator's scope may make one.
        anyhow::ensure!(
            *scope == Service::Operator,
            "a backup is made by the operator"
        );
        if self.backend() != DbBackend::Sqlite {
            anyhow::bail!("only an embedded SQLite database can be copied this way");
        }
        let target = target
            .to_str()
            .ok_or_else(|| anyhow::anyhow!("the backup path is not valid UTF-8"))?;
        // A string literal: SQLite binds no parameters in VACUUM INTO's file name on every
        // version sqlx bundles, so quotes are doubled instead.
        let literal = target.replace('\'', "''");
        self.db
            .execute_unprepared(&format!("VACUUM INTO '{literal}'"))
            .await
            .map_err(super::StoreError::from)?;
        Ok(())
    }
}
