//! The server's own result of each measurement, in columns lists and reports read without
//! parsing payloads: `heart_rate` (the analysis' bpm; `heartrate` stays the phone's) and
//! `result` (the headline result key: `regular`, `possibly_irregular`,
//! `possible_atrial_fibrillation`, `quality_too_low`, `no_result`). `indicator` keeps its
//! column and now holds the server's indicator.
//!
//! `measurements_list` must cover every column of `measurement::Header` (see migration 12:
//! on SQLite a column the index lacks is read by walking the row's ~0.4 MB payload), so it is
//! recreated with the two new columns.

use sea_orm_migration::prelude::*;

use crate::columns::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Measurements {
    Table,
    HeartRate,
    Result,
}

const LIST_INDEX: &str = "measurements_list";
const LIST_COLUMNS: [&str; 7] = [
    "creator_id",
    "measurement_timestamp",
    "id",
    "status",
    "heartrate",
    "indicator",
    "creation_timestamp",
];

fn drop_list_index() -> IndexDropStatement {
    Index::drop()
        .name(LIST_INDEX)
        .table(Measurements::Table)
        .to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    /// On one connection, also on SQLite: there statements outside a transaction go to any
    /// connection of the pool, and one that cached the schema before the index was dropped
    /// refuses to create it again ("already exists"). SQLite's DDL is transactional.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite's ALTER TABLE adds one at a time.
        manager
            .alter_table(
                Table::alter()
                    .table(Measurements::Table)
                    .add_column(ColumnDef::new(Measurements::HeartRate).double().null())
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Measurements::Table)
                    .add_column(ColumnDef::new(Measurements::Result).string_len(64).null())
                    .to_owned(),
            )
            .await?;
        manager.drop_index(drop_list_index()).await?;
        let mut columns = LIST_COLUMNS.to_vec();
        columns.extend(["heart_rate", "result"]);
        manager
            .create_index(index(Measurements::Table, LIST_INDEX, &columns, false))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_index(drop_list_index()).await?;
        manager
            .create_index(index(Measurements::Table, LIST_INDEX, &LIST_COLUMNS, false))
            .await?;
        for column in [Measurements::HeartRate, Measurements::Result] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Measurements::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
