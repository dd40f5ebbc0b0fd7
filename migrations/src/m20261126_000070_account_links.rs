//! Account links: the single-use addresses sent by e-mail to reset a forgotten password or to
//! confirm a new e-mail address. Only the SHA-256 of a link's secret is stored; a link expires,
//! and is spent when used or when a newer one of the same purpose is sent.

use sea_orm_migration::prelude::*;

use crate::columns::{id, index, millis, reference};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum AccountLinks {
    Table,
    Id,
    SecretHash,
    UserId,
    Purpose,
    NewEmail,
    ExpiresAt,
    SpentAt,
    CreationTimestamp,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(AccountLinks::Table)
                    .col(id(AccountLinks::Id))
                    .col(
                        ColumnDef::new(AccountLinks::SecretHash)
                            .char_len(64)
                            .not_null(),
                    )
                    .col(reference(AccountLinks::UserId))
                    .col(
                        ColumnDef::new(AccountLinks::Purpose)
                            .string_len(32)
                            .not_null(),
                    )
                    .col(ColumnDef::new(AccountLinks::NewEmail).string().null())
                    .col(millis(AccountLinks::ExpiresAt))
                    .col(ColumnDef::new(AccountLinks::SpentAt).big_integer().null())
                    .col(millis(AccountLinks::CreationTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                AccountLinks::Table,
                "account_links_secret",
                &["secret_hash"],
                true,
            ))
            .await?;
        manager
            .create_index(index(
                AccountLinks::Table,
                "account_links_user",
                &["user_id", "purpose"],
                false,
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(AccountLinks::Table).to_owned())
            .await
    }
}
