//! The patient's rights over their data (GDPR art. 7, 15–17, 20 and 5(1)(e)):
//! - `users.legal_hold`: an administrator's hold, under which a patient is neither erased nor
//!   touched by retention;
//! - `users.erased_timestamp`: set when an account has been erased and its row is a tombstone
//!   (no name, address, e-mail, phone or birth date), kept so the audit trail's ids still name
//!   an account;
//! - `users.deactivation_timestamp`: when an account was last deactivated, from which retention
//!   counts. Accounts inactive before this migration count from their last change;
//! - `files.patient_id`: the patient a stored document is about, so that erasure and
//!   retention find every PDF of a patient (a periodic report's file was found only by the
//!   hash of its content). Existing files get it from their name, which holds the id of
//!   their measurement or report;
//! - `consents`: every consent given or withdrawn, with the version of the text, the door it
//!   came through and who recorded it. Rows are only added; the latest of a kind (and group)
//!   is the one in force.

use sea_orm_migration::prelude::*;

use crate::columns::{id, index, millis, reference};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Users {
    Table,
    LegalHold,
    ErasedTimestamp,
    DeactivationTimestamp,
}

#[derive(DeriveIden)]
enum Files {
    Table,
    PatientId,
}

#[derive(DeriveIden)]
enum Consents {
    Table,
    Id,
    UserId,
    Kind,
    GroupId,
    TextVersion,
    Door,
    Given,
    ActorId,
    CreationTimestamp,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column an ALTER: SQLite takes no more.
        for column in [
            ColumnDef::new(Users::LegalHold)
                .boolean()
                .not_null()
                .default(false)
                .to_owned(),
            ColumnDef::new(Users::ErasedTimestamp)
                .big_integer()
                .null()
                .to_owned(),
            ColumnDef::new(Users::DeactivationTimestamp)
                .big_integer()
                .null()
                .to_owned(),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Users::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .get_connection()
            .execute_unprepared(
                "UPDATE users SET deactivation_timestamp = update_timestamp WHERE NOT activation",
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Files::Table)
                    .add_column(ColumnDef::new(Files::PatientId).string_len(24).null())
                    .to_owned(),
            )
            .await?;
        // `tacho-measurement-<id>-<language>.pdf` and `tacho-report-<id>-<language>.pdf`.
        for fill in [
            "UPDATE files SET patient_id = (SELECT m.creator_id FROM measurements m \
             WHERE m.id = substr(files.name, 19, 24)) \
             WHERE patient_id IS NULL AND name LIKE 'tacho-measurement-%'",
            "UPDATE files SET patient_id = (SELECT r.user_id FROM reports r \
             WHERE r.id = substr(files.name, 14, 24)) \
             WHERE patient_id IS NULL AND name LIKE 'tacho-report-%'",
        ] {
            manager.get_connection().execute_unprepared(fill).await?;
        }
        manager
            .create_index(index(Files::Table, "files_patient", &["patient_id"], false))
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Consents::Table)
                    .col(id(Consents::Id))
                    .col(reference(Consents::UserId))
                    .col(ColumnDef::new(Consents::Kind).string_len(32).not_null())
                    .col(ColumnDef::new(Consents::GroupId).string_len(24).null())
                    .col(
                        ColumnDef::new(Consents::TextVersion)
                            .string_len(32)
                            .not_null(),
                    )
                    .col(ColumnDef::new(Consents::Door).string_len(16).not_null())
                    .col(ColumnDef::new(Consents::Given).boolean().not_null())
                    .col(reference(Consents::ActorId))
                    .col(millis(Consents::CreationTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                Consents::Table,
                "consents_user",
                &["user_id", "creation_timestamp"],
                false,
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Consents::Table).to_owned())
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("files_patient")
                    .table(Files::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Files::Table)
                    .drop_column(Files::PatientId)
                    .to_owned(),
            )
            .await?;
        for column in [
            Users::DeactivationTimestamp,
            Users::ErasedTimestamp,
            Users::LegalHold,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Users::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
