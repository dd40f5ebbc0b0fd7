//! What is about a measurement, found without reading every row:
//! - `events_by_measurement`: the fan-out asks whether an analysis was also reported as
//!   urgent, so that the staff are told of an urgent result once;
//! - `notifications_by_measurement`: a review settles the staff's unread entries about the
//!   measurement it concludes.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::ConnectionTrait;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared(
            "CREATE INDEX events_by_measurement ON events (measurement_id, kind) \
             WHERE measurement_id IS NOT NULL",
        )
        .await?;
        db.execute_unprepared(
            "CREATE INDEX notifications_by_measurement ON notifications (measurement_id) \
             WHERE measurement_id IS NOT NULL",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP INDEX notifications_by_measurement")
            .await?;
        db.execute_unprepared("DROP INDEX events_by_measurement")
            .await?;
        Ok(())
    }
}
