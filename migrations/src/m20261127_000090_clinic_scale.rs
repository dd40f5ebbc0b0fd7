//! Lists whose cost does not grow with the clinic.
//!
//! - `measurements.work_rank`: a measurement's place in the physician's work list (0 urgent,
//!   then by the severity of its result), NULL once it no longer waits for a review. The
//!   database computes it from the row, so no write can leave it stale; the partial index
//!   `measurements_work_list` then hands the work list its rows in order, instead of ranking
//!   every unreviewed measurement for each page; it holds the patient too, so that the access
//!   gate's probes and a count read no row. SQLite can add only a virtual generated
//!   column to an existing table (and indexes it); PostgreSQL stores it.
//! - `measurement_groups_by_group` (group, measurement) replaces `measurement_groups_group`
//!   (group), so that what a group sees is read from the index alone.
//!
//! The ranks follow `ResultKey::BY_SEVERITY` (`src/analysis/result.rs`); a change of that order
//! needs a migration that redefines the column.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The rank of a measurement waiting for review (see the module's notes).
const WORK_RANK: &str = "CASE \
     WHEN status NOT IN ('analyzed', 'analysis_failed', 'pending_review') THEN NULL \
     WHEN indicator = 'urgent' THEN 0 \
     WHEN status = 'analysis_failed' THEN 3 \
     WHEN result = 'possible_atrial_fibrillation' THEN 1 \
     WHEN result = 'possibly_irregular' THEN 2 \
     WHEN result = 'quality_too_low' THEN 3 \
     WHEN result = 'no_result' THEN 4 \
     WHEN result = 'regular' THEN 5 \
     ELSE 4 END";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let stored = match manager.get_database_backend() {
            DbBackend::Postgres => "STORED",
            _ => "VIRTUAL",
        };
        db.execute_unprepared(&format!(
            "ALTER TABLE measurements ADD COLUMN work_rank INTEGER \
             GENERATED ALWAYS AS ({WORK_RANK}) {stored}"
        ))
        .await?;
        db.execute_unprepared(
            "CREATE INDEX measurements_work_list ON measurements \
             (work_rank, measurement_timestamp DESC, id DESC, creator_id) \
             WHERE work_rank IS NOT NULL",
        )
        .await?;
        db.execute_unprepared("DROP INDEX measurement_groups_group")
            .await?;
        db.execute_unprepared(
            "CREATE INDEX measurement_groups_by_group ON measurement_groups \
             (group_id, measurement_id)",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP INDEX measurement_groups_by_group")
            .await?;
        db.execute_unprepared(
            "CREATE INDEX measurement_groups_group ON measurement_groups (group_id)",
        )
        .await?;
        db.execute_unprepared("DROP INDEX measurements_work_list")
            .await?;
        db.execute_unprepared("ALTER TABLE measurements DROP COLUMN work_rank")
            .await?;
        Ok(())
    }
}
