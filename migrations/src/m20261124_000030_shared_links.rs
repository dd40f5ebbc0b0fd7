//! Shared links: grants to read one measurement report's PDF without an account, made in the
//! portal by the patient or the patient's staff, each with an expiry, revocable. Only the
//! SHA-256 of a link's secret is stored.

use sea_orm_migration::prelude::*;

use crate::columns::{id, index, millis, reference};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum SharedLinks {
    Table,
    Id,
    SecretHash,
    MeasurementId,
    FileId,
    PatientId,
    CreatorId,
    Language,
    ExpiresAt,
    RevokedAt,
    RevokedBy,
    CreationTimestamp,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(SharedLinks::Table)
                    .col(id(SharedLinks::Id))
                    .col(
                        ColumnDef::new(SharedLinks::SecretHash)
                            .char_len(64)
                            .not_null(),
                    )
                    .col(reference(SharedLinks::MeasurementId))
                    .col(reference(SharedLinks::FileId))
                    .col(reference(SharedLinks::PatientId))
                    .col(reference(SharedLinks::CreatorId))
                    .col(
                        ColumnDef::new(SharedLinks::Language)
                            .string_len(8)
                            .not_null(),
                    )
                    .col(millis(SharedLinks::ExpiresAt))
                    .col(ColumnDef::new(SharedLinks::RevokedAt).big_integer().null())
                    .col(ColumnDef::new(SharedLinks::RevokedBy).char_len(24).null())
                    .col(millis(SharedLinks::CreationTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                SharedLinks::Table,
                "shared_links_secret",
                &["secret_hash"],
                true,
            ))
            .await?;
        manager
            .create_index(index(
                SharedLinks::Table,
                "shared_links_measurement",
                &["measurement_id", "creation_timestamp"],
                false,
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(SharedLinks::Table).to_owned())
            .await
    }
}
