//! The work list ranks a regular rhythm at a slow or fast rate (`result = 'regular'` with the
//! `warning` indicator: bradycardia or tachycardia) above a normal one, with the other
//! abnormal results, and an unreadable recording after them:
//!
//! | rank | waiting for review |
//! |---:|---|
//! | 0 | an urgent result |
//! | 1 | possible atrial fibrillation |
//! | 2 | possibly irregular |
//! | 3 | a regular rhythm at a slow or fast rate |
//! | 4 | unreadable (quality too low, or the analysis failed) |
//! | 5 | no result |
//! | 6 | a regular rhythm at a normal rate |
//!
//! A generated column cannot be redefined in place: it is dropped with its index and added
//! again (on PostgreSQL, which stores it, that rewrites the table once).

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The ranks above (see `m20261127_000090_clinic_scale` for the ones they replace).
const WORK_RANK: &str = "CASE \
     WHEN status NOT IN ('analyzed', 'analysis_failed', 'pending_review') THEN NULL \
     WHEN indicator = 'urgent' THEN 0 \
     WHEN status = 'analysis_failed' THEN 4 \
     WHEN result = 'possible_atrial_fibrillation' THEN 1 \
     WHEN result = 'possibly_irregular' THEN 2 \
     WHEN result = 'regular' AND indicator = 'warning' THEN 3 \
     WHEN result = 'quality_too_low' THEN 4 \
     WHEN result = 'no_result' THEN 5 \
     WHEN result = 'regular' THEN 6 \
     ELSE 5 END";

/// The ranks of `m20261127_000090_clinic_scale`, for `down`.
const PREVIOUS_WORK_RANK: &str = "CASE \
     WHEN status NOT IN ('analyzed', 'analysis_failed', 'pending_review') THEN NULL \
     WHEN indicator = 'urgent' THEN 0 \
     WHEN status = 'analysis_failed' THEN 3 \
     WHEN result = 'possible_atrial_fibrillation' THEN 1 \
     WHEN result = 'possibly_irregular' THEN 2 \
     WHEN result = 'quality_too_low' THEN 3 \
     WHEN result = 'no_result' THEN 4 \
     WHEN result = 'regular' THEN 5 \
     ELSE 4 END";

async fn define(manager: &SchemaManager<'_>, rank: &str) -> Result<(), DbErr> {
    let stored = match manager.get_database_backend() {
        DbBackend::Postgres => "STORED",
        _ => "VIRTUAL",
    };
    // One batch, so one connection: on SQLite another connection of the pool could prepare
    // the ADD against the schema it read before the DROP.
    manager
        .get_connection()
        .execute_unprepared(&format!(
            "DROP INDEX measurements_work_list; \
             ALTER TABLE measurements DROP COLUMN work_rank; \
             ALTER TABLE measurements ADD COLUMN work_rank INTEGER \
             GENERATED ALWAYS AS ({rank}) {stored}; \
             CREATE INDEX measurements_work_list ON measurements \
             (work_rank, measurement_timestamp DESC, id DESC, creator_id) \
             WHERE work_rank IS NOT NULL"
        ))
        .await?;
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        define(manager, WORK_RANK).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        define(manager, PREVIOUS_WORK_RANK).await
    }
}
