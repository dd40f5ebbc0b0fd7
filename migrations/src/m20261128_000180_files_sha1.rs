//! `files.sha1`: the SHA-1 of a stored document's bytes, in base64, as FHIR's
//! `Attachment.hash` gives it. Filled when a file is stored; files stored before have none,
//! and their attachments carry no hash (a render of the same content again fills it in a new
//! row only when the cache key changes).

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Files {
    Table,
    Sha1,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Files::Table)
                    .add_column(ColumnDef::new(Files::Sha1).string_len(28).null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Files::Table)
                    .drop_column(Files::Sha1)
                    .to_owned(),
            )
            .await
    }
}
