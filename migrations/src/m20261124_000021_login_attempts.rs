//! Failed logins counted per (login, client network) instead of per account, so that failures
//! from an attacker's network do not lock the owner out from another one. The login is the
//! SHA-256 of the e-mail address as typed (normalised), so that addresses no account has are
//! counted, frozen and blocked exactly as existing ones are.

use sea_orm_migration::prelude::*;

use crate::columns::millis;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum LoginAttempts {
    Table,
    LoginKey,
    Network,
    Failures,
    LastFailed,
    UpdateTimestamp,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(LoginAttempts::Table)
                    .col(
                        ColumnDef::new(LoginAttempts::LoginKey)
                            .char_len(64)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(LoginAttempts::Network)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(LoginAttempts::Failures)
                            .integer()
                            .not_null()
                            .default(0),
                    )
                    .col(
                        ColumnDef::new(LoginAttempts::LastFailed)
                            .big_integer()
                            .null(),
                    )
                    .col(millis(LoginAttempts::UpdateTimestamp))
                    .primary_key(
                        Index::create()
                            .col(LoginAttempts::LoginKey)
                            .col(LoginAttempts::Network),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(LoginAttempts::Table).to_owned())
            .await
    }
}
