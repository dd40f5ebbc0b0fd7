//! Lists of measurements read only indexed columns (the portal's lists, a patient's latest
//! measurement). On SQLite a row's columns after its ~0.4 MB payload are reached by walking the
//! payload's overflow pages, so this index carries every column a list shows: the list is then
//! read from the index alone. It replaces `measurements_creator`, its prefix.

use sea_orm_migration::prelude::*;

use crate::columns::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

const MEASUREMENTS: &str = "measurements";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(index(
                Alias::new(MEASUREMENTS),
                "measurements_list",
                &[
                    "creator_id",
                    "measurement_timestamp",
                    "id",
                    "status",
                    "heartrate",
                    "indicator",
                    "creation_timestamp",
                ],
                false,
            ))
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("measurements_creator")
                    .table(Alias::new(MEASUREMENTS))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(index(
                Alias::new(MEASUREMENTS),
                "measurements_creator",
                &["creator_id", "measurement_timestamp"],
                false,
            ))
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("measurements_list")
                    .table(Alias::new(MEASUREMENTS))
                    .to_owned(),
            )
            .await
    }
}
