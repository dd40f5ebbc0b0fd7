//! App tokens (`readFileToken`) are no longer stored: each is derived from the file's id and a
//! version under a server key, so it can be shown again without being kept. The secrets of the
//! tokens handed out before are kept only as their SHA-256 (`legacy_secret_hash`), so those
//! tokens go on working until the file's tokens are revoked (which empties it and moves
//! `token_version`).

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, Statement};
use sha2::{Digest, Sha256};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Files {
    Table,
    Secret,
    LegacySecretHash,
    TokenVersion,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let backend = manager.get_database_backend();
        // A hash is 64 characters where a secret was 36; SQLite keeps no lengths.
        if backend == sea_orm_migration::sea_orm::DbBackend::Postgres {
            manager
                .alter_table(
                    Table::alter()
                        .table(Files::Table)
                        .modify_column(ColumnDef::new(Files::Secret).string_len(64).not_null())
                        .to_owned(),
                )
                .await?;
        }
        let rows = db
            .query_all_raw(Statement::from_string(
                backend,
                "SELECT id, secret FROM files",
            ))
            .await?;
        for row in rows {
            let id: String = row.try_get("", "id")?;
            let secret: String = row.try_get("", "secret")?;
            let hash = hex::encode(Sha256::digest(secret.as_bytes()));
            let update = Query::update()
                .table(Files::Table)
                .value(Files::Secret, hash)
                .and_where(Expr::col(Alias::new("id")).eq(id))
                .to_owned();
            manager.exec_stmt(update).await?;
        }
        manager
            .alter_table(
                Table::alter()
                    .table(Files::Table)
                    .rename_column(Files::Secret, Files::LegacySecretHash)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Files::Table)
                    .add_column(
                        ColumnDef::new(Files::TokenVersion)
                            .integer()
                            .not_null()
                            .default(0),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        // The secrets are gone; only their hashes could be put back.
        Err(DbErr::Migration("app tokens cannot be un-derived".into()))
    }
}
