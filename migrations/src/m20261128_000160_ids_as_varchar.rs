//! On PostgreSQL, every fixed-length text column (`character(n)`: ids, secrets' hashes, cache
//! keys, a country) becomes `varchar(n)`. Tacho binds ids and hashes as `text`, and
//! `character = text` compares as text, casting the column: no index on such a column could
//! serve it, so every lookup by id read the whole table (a review's `UPDATE … WHERE id = $1`
//! took 80 ms at 90,000 measurements). `varchar` compares as text with its index.
//! Every value is 24 (or 64, or 2) characters, so nothing changes in what is stored; SQLite
//! keeps text whatever the declared type.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        manager
            .get_connection()
            .execute_unprepared(
                "DO $$
                 DECLARE c record;
                 BEGIN
                   FOR c IN SELECT table_name, column_name, character_maximum_length AS len
                            FROM information_schema.columns
                            WHERE table_schema = current_schema() AND data_type = 'character'
                   LOOP
                     EXECUTE format('ALTER TABLE %I ALTER COLUMN %I TYPE varchar(%s)',
                                    c.table_name, c.column_name, c.len);
                   END LOOP;
                 END $$",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        // `character(n)` is what made lookups slow; there is nothing to go back to.
        Ok(())
    }
}
