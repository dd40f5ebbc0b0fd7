//! Background jobs: due work is enqueued once under a unique key and claimed under a lease,
//! so that several processes share it without losing or doubling any.

use sea_orm_migration::prelude::*;

use crate::columns::{id, index, millis};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Jobs {
    Table,
    Id,
    Kind,
    DedupeKey,
    Payload,
    Status,
    Attempts,
    MaxAttempts,
    RunAfter,
    LeaseUntil,
    ClaimedBy,
    LastError,
    CreationTimestamp,
    UpdateTimestamp,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Jobs::Table)
                    .col(id(Jobs::Id))
                    .col(ColumnDef::new(Jobs::Kind).string_len(64).not_null())
                    .col(ColumnDef::new(Jobs::DedupeKey).string_len(200).not_null())
                    .col(ColumnDef::new(Jobs::Payload).text().not_null())
                    .col(ColumnDef::new(Jobs::Status).string_len(16).not_null())
                    .col(ColumnDef::new(Jobs::Attempts).integer().not_null())
                    .col(ColumnDef::new(Jobs::MaxAttempts).integer().not_null())
                    .col(millis(Jobs::RunAfter))
                    .col(ColumnDef::new(Jobs::LeaseUntil).big_integer().null())
                    .col(ColumnDef::new(Jobs::ClaimedBy).string_len(64).null())
                    .col(ColumnDef::new(Jobs::LastError).text().null())
                    .col(millis(Jobs::CreationTimestamp))
                    .col(millis(Jobs::UpdateTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(Jobs::Table, "jobs_dedupe_key", &["dedupe_key"], true))
            .await?;
        manager
            .create_index(index(
                Jobs::Table,
                "jobs_due",
                &["status", "run_after"],
                false,
            ))
            .await?;
        manager
            .create_index(index(
                Jobs::Table,
                "jobs_lease",
                &["status", "lease_until"],
                false,
            ))
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Jobs::Table).to_owned())
            .await
    }
}
