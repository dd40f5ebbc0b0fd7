//! Report links: grants to read one periodic report's PDF without an account, made in the
//! portal by the patient or the staff of the report's group, each with an expiry, revocable,
//! as shared links are for measurement reports. Only the SHA-256 of a link's secret is stored.

use sea_orm_migration::prelude::*;

use crate::columns::{id, index, millis, reference};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum ReportLinks {
    Table,
    Id,
    SecretHash,
    ReportId,
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
                    .table(ReportLinks::Table)
                    .col(id(ReportLinks::Id))
                    .col(
                        ColumnDef::new(ReportLinks::SecretHash)
                            .char_len(64)
                            .not_null(),
                    )
                    .col(reference(ReportLinks::ReportId))
                    .col(reference(ReportLinks::FileId))
                    .col(reference(ReportLinks::PatientId))
                    .col(reference(ReportLinks::CreatorId))
                    .col(
                        ColumnDef::new(ReportLinks::Language)
                            .string_len(8)
                            .not_null(),
                    )
                    .col(millis(ReportLinks::ExpiresAt))
                    .col(ColumnDef::new(ReportLinks::RevokedAt).big_integer().null())
                    .col(ColumnDef::new(ReportLinks::RevokedBy).char_len(24).null())
                    .col(millis(ReportLinks::CreationTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                ReportLinks::Table,
                "report_links_secret",
                &["secret_hash"],
                true,
            ))
            .await?;
        manager
            .create_index(index(
                ReportLinks::Table,
                "report_links_report",
                &["report_id", "creation_timestamp"],
                false,
            ))
            .await?;
        // Ending a staff membership or a prescription revokes the links its holder made.
        manager
            .create_index(index(
                ReportLinks::Table,
                "report_links_creator",
                &["creator_id", "revoked_at"],
                false,
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ReportLinks::Table).to_owned())
            .await
    }
}
