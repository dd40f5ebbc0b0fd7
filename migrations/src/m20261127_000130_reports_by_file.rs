//! `measurement_reports_by_file` (file, patient): a download's audit record names the patient
//! of the file's report, read from the index alone in the statement that writes the record,
//! instead of reading every report.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::ConnectionTrait;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(
                "CREATE INDEX measurement_reports_by_file ON measurement_reports \
                 (file_id, patient_id) WHERE file_id IS NOT NULL",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("DROP INDEX measurement_reports_by_file")
            .await?;
        Ok(())
    }
}
