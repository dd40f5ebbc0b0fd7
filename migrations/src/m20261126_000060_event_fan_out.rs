//! The outbox fans out from the `events` table itself: an event waits with no
//! `fanned_out_timestamp` until a worker has written its inbox entries and delivery jobs, in
//! the transaction that sets it. Until now every event had a `notify` job for that.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::ConnectionTrait;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Events {
    Table,
    FannedOutTimestamp,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Events::Table)
                    .add_column(
                        ColumnDef::new(Events::FannedOutTimestamp)
                            .big_integer()
                            .null(),
                    )
                    .to_owned(),
            )
            .await?;
        let db = manager.get_connection();
        // An event whose `notify` job has not run yet waits in the outbox instead; the job's
        // work passes to the outbox, so it is closed.
        db.execute_unprepared(
            "UPDATE events SET fanned_out_timestamp = creation_timestamp WHERE 'event:' || id \
             NOT IN (SELECT dedupe_key FROM jobs WHERE kind = 'notify' \
             AND status IN ('queued', 'running'))",
        )
        .await?;
        db.execute_unprepared(
            "UPDATE jobs SET status = 'done', lease_until = NULL \
             WHERE kind = 'notify' AND status IN ('queued', 'running')",
        )
        .await?;
        // A partial index holds only the waiting events, so finding them stays cheap however
        // many events have been delivered (both SQLite and PostgreSQL have partial indexes).
        db.execute_unprepared(
            "CREATE INDEX events_waiting ON events (creation_timestamp, id) \
             WHERE fanned_out_timestamp IS NULL",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP INDEX events_waiting").await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Events::Table)
                    .drop_column(Events::FannedOutTimestamp)
                    .to_owned(),
            )
            .await?;
        Ok(())
    }
}
