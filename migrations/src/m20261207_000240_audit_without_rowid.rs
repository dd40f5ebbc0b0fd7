//! On SQLite the audit trail becomes a `WITHOUT ROWID` table, stored in the order of its
//! primary key. A rowid table keeps its rows by rowid and the text primary key in an index of
//! its own, so each record was written into four B-trees (rows, key, time, patient); now it is
//! three. Every cached download writes a record before its answer goes out, and that write was
//! most of a download's cost (`docs/performance.md`). Ids begin with their creation second, so
//! new records still go at the end of the table. The table, its indexes and its append-only
//! triggers are made again as before, with the records copied over in one statement.
//! PostgreSQL stores rows apart from every index already: nothing changes there.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The table as `m20261122_000011_audit` made it, keyed by `id` alone.
const COLUMNS: &str = "\
    id varchar(24) NOT NULL PRIMARY KEY, \
    actor_id char(24) NOT NULL, \
    action varchar(64) NOT NULL, \
    patient_id char(24) NULL, \
    object_kind varchar(64) NOT NULL, \
    object_id varchar(64) NULL, \
    detail text NOT NULL, \
    creation_timestamp bigint NOT NULL";

const NAMES: &str =
    "id, actor_id, action, patient_id, object_kind, object_id, detail, creation_timestamp";

/// The indexes of `m20261122_000011_audit`, which go with the table they were made on (as do
/// the triggers of `m20261124_000040_audit_append_only`, made again from its own SQL).
const INDEXES: &str = "
CREATE INDEX audit_events_time ON audit_events (creation_timestamp, id);
CREATE INDEX audit_events_patient ON audit_events (patient_id, creation_timestamp);
";

/// Makes `audit_events` again as a table with `options` after its definition (`WITHOUT
/// ROWID`, or nothing), with every record. Dropping a table fires no trigger, so the
/// append-only rule does not stand in the way, and it holds again on the new table.
async fn rebuild(manager: &SchemaManager<'_>, options: &str) -> Result<(), DbErr> {
    let sql = format!(
        "CREATE TABLE audit_events_rebuilt ({COLUMNS}) {options};
         INSERT INTO audit_events_rebuilt ({NAMES}) SELECT {NAMES} FROM audit_events;
         DROP TABLE audit_events;
         ALTER TABLE audit_events_rebuilt RENAME TO audit_events;
         {INDEXES}
         {TRIGGERS}",
        TRIGGERS = super::m20261124_000040_audit_append_only::SQLITE_UP,
    );
    manager.get_connection().execute_unprepared(&sql).await?;
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Sqlite {
            return Ok(());
        }
        rebuild(manager, "WITHOUT ROWID").await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Sqlite {
            return Ok(());
        }
        rebuild(manager, "").await
    }
}
