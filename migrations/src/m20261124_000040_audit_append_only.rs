//! The audit trail refuses changes: triggers abort every `UPDATE` and `DELETE` of
//! `audit_events`, so that no code path, present or future, and no one with the application's
//! database role can rewrite what happened (HIPAA §164.312(b), ASVS 5.0 V16.4.2).

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The triggers on SQLite; made again with the table by `m20261207_000240_audit_without_rowid`.
pub(crate) const SQLITE_UP: &str = "
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
";

const POSTGRES_UP: &str = "
CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'the audit trail is append-only'; END $$;
CREATE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events
FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();
";

const SQLITE_DOWN: &str = "
DROP TRIGGER audit_events_no_update;
DROP TRIGGER audit_events_no_delete;
";

const POSTGRES_DOWN: &str = "
DROP TRIGGER audit_events_no_change ON audit_events;
DROP TRIGGER audit_events_no_truncate ON audit_events;
DROP FUNCTION audit_events_append_only();
";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let sql = match manager.get_database_backend() {
            DbBackend::Postgres => POSTGRES_UP,
            _ => SQLITE_UP,
        };
        manager.get_connection().execute_unprepared(sql).await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let sql = match manager.get_database_backend() {
            DbBackend::Postgres => POSTGRES_DOWN,
            _ => SQLITE_DOWN,
        };
        manager.get_connection().execute_unprepared(sql).await?;
        Ok(())
    }
}
