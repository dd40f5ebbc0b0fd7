//! A physician's conclusion in the measurement's row: `review_label` (a rhythm label's wire
//! name, or the free text), `reviewer_id` and `review_timestamp`, copied from `data.review`
//! in the transaction that writes it. Lists lead with the conclusion and read no payload.
//! Rows reviewed before are filled from their payload here.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Measurements {
    Table,
    ReviewLabel,
    ReviewerId,
    ReviewTimestamp,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        for column in [
            ColumnDef::new(Measurements::ReviewLabel)
                .string()
                .null()
                .to_owned(),
            ColumnDef::new(Measurements::ReviewerId)
                .char_len(24)
                .null()
                .to_owned(),
            ColumnDef::new(Measurements::ReviewTimestamp)
                .big_integer()
                .null()
                .to_owned(),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Measurements::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        let fill = match manager.get_database_backend() {
            DbBackend::Postgres => {
                "UPDATE measurements SET \
                 review_label = NULLIF(data::jsonb #>> '{review,label}', ''), \
                 reviewer_id = data::jsonb #>> '{review,reviewer_id}', \
                 review_timestamp = (data::jsonb #>> '{review,review_timestamp}')::bigint \
                 WHERE data::jsonb ? 'review'"
            }
            _ => {
                "UPDATE measurements SET \
                 review_label = NULLIF(json_extract(data, '$.review.label'), ''), \
                 reviewer_id = json_extract(data, '$.review.reviewer_id'), \
                 review_timestamp = json_extract(data, '$.review.review_timestamp') \
                 WHERE json_type(data, '$.review') = 'object'"
            }
        };
        manager.get_connection().execute_unprepared(fill).await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            Measurements::ReviewTimestamp,
            Measurements::ReviewerId,
            Measurements::ReviewLabel,
        ] {
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
