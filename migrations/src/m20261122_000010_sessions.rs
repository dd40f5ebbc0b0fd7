//! Portal sessions kept on the server (the cookie carries only a random key), and secrets the
//! instances of one deployment share, such as the key that signs session cookies.

use sea_orm_migration::prelude::*;

use crate::columns::{index, millis};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Sessions {
    Table,
    Key,
    State,
    UserId,
    ExpiresAt,
    CreationTimestamp,
    UpdateTimestamp,
}

#[derive(DeriveIden)]
enum Secrets {
    Table,
    Name,
    Value,
    CreationTimestamp,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Sessions::Table)
                    .col(
                        ColumnDef::new(Sessions::Key)
                            .string_len(128)
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(Sessions::State).text().not_null())
                    .col(ColumnDef::new(Sessions::UserId).char_len(24).null())
                    .col(millis(Sessions::ExpiresAt))
                    .col(millis(Sessions::CreationTimestamp))
                    .col(millis(Sessions::UpdateTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(Sessions::Table, "sessions_user", &["user_id"], false))
            .await?;
        manager
            .create_index(index(
                Sessions::Table,
                "sessions_expiry",
                &["expires_at"],
                false,
            ))
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Secrets::Table)
                    .col(
                        ColumnDef::new(Secrets::Name)
                            .string_len(64)
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(Secrets::Value).text().not_null())
                    .col(millis(Secrets::CreationTimestamp))
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Secrets::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Sessions::Table).to_owned())
            .await
    }
}
