//! The audit trail: who viewed or downloaded which patient's data, and who changed what.
//! Append-only: the application inserts and reads, never updates or deletes.

use sea_orm_migration::prelude::*;

use crate::columns::{id, index, millis};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum AuditEvents {
    Table,
    Id,
    ActorId,
    Action,
    PatientId,
    ObjectKind,
    ObjectId,
    Detail,
    CreationTimestamp,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(AuditEvents::Table)
                    .col(id(AuditEvents::Id))
                    .col(ColumnDef::new(AuditEvents::ActorId).char_len(24).not_null())
                    .col(
                        ColumnDef::new(AuditEvents::Action)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(ColumnDef::new(AuditEvents::PatientId).char_len(24).null())
                    .col(
                        ColumnDef::new(AuditEvents::ObjectKind)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(ColumnDef::new(AuditEvents::ObjectId).string_len(64).null())
                    .col(ColumnDef::new(AuditEvents::Detail).text().not_null())
                    .col(millis(AuditEvents::CreationTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                AuditEvents::Table,
                "audit_events_time",
                &["creation_timestamp", "id"],
                false,
            ))
            .await?;
        manager
            .create_index(index(
                AuditEvents::Table,
                "audit_events_patient",
                &["patient_id", "creation_timestamp"],
                false,
            ))
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(AuditEvents::Table).to_owned())
            .await
    }
}
