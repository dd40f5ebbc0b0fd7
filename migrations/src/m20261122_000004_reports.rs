//! Periodic reports, and what the scheduler needs to make each of them once.
//!
//! - `reports`: a report's period, trigger and the measurements it covers, as they were when it
//!   was made. `dedupe_key` is unique, so a job run twice (a lease that ran out while its
//!   worker was still busy) still makes one report.
//! - `patient_enlistments.scheduled_until`: the end of the latest period enqueued for a
//!   prescription, so each scheduler tick looks only at what is new.
//! - `measurements.summary`: the few fields a periodic report lists of each measurement (label,
//!   symptoms, signal quality), kept beside the payload so reports never parse payloads.

use sea_orm_migration::prelude::*;

use crate::columns::{id, index, millis, reference};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Reports {
    Table,
    Id,
    UserId,
    CreatorId,
    Trigger,
    Status,
    DedupeKey,
    PeriodStartTimestamp,
    PeriodEndTimestamp,
    Data,
    CreationTimestamp,
    UpdateTimestamp,
}

#[derive(DeriveIden)]
enum PatientEnlistments {
    Table,
    ScheduledUntil,
}

#[derive(DeriveIden)]
enum Measurements {
    Table,
    Summary,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Reports::Table)
                    .col(id(Reports::Id))
                    .col(reference(Reports::UserId))
                    .col(ColumnDef::new(Reports::CreatorId).char_len(24).null())
                    .col(ColumnDef::new(Reports::Trigger).string_len(32).not_null())
                    .col(ColumnDef::new(Reports::Status).string_len(16).not_null())
                    .col(ColumnDef::new(Reports::DedupeKey).string_len(200).null())
                    .col(millis(Reports::PeriodStartTimestamp))
                    .col(millis(Reports::PeriodEndTimestamp))
                    .col(ColumnDef::new(Reports::Data).text().not_null())
                    .col(millis(Reports::CreationTimestamp))
                    .col(millis(Reports::UpdateTimestamp))
                    .to_owned(),
            )
            .await?;
        for (name, columns, unique) in [
            ("reports_dedupe_key", &["dedupe_key"][..], true),
            (
                "reports_user_created",
                &["user_id", "creation_timestamp"][..],
                false,
            ),
            ("reports_trigger", &["trigger"][..], false),
            ("reports_created", &["creation_timestamp"][..], false),
        ] {
            manager
                .create_index(index(Reports::Table, name, columns, unique))
                .await?;
        }
        // SQLite adds one column per ALTER TABLE.
        manager
            .alter_table(
                Table::alter()
                    .table(PatientEnlistments::Table)
                    .add_column(
                        ColumnDef::new(PatientEnlistments::ScheduledUntil)
                            .big_integer()
                            .null(),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Measurements::Table)
                    .add_column(ColumnDef::new(Measurements::Summary).text().null())
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Measurements::Table)
                    .drop_column(Measurements::Summary)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(PatientEnlistments::Table)
                    .drop_column(PatientEnlistments::ScheduledUntil)
                    .to_owned(),
            )
            .await?;
        manager
            .drop_table(Table::drop().table(Reports::Table).to_owned())
            .await
    }
}
