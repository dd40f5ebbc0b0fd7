//! Measurements, measurement reports and stored files.
//!
//! A measurement's payload is kept verbatim in `data`; the fields clients filter and sort on
//! are copied to indexed columns, and its list fields (`userIds`, `groupIds`, `data.tags`) to
//! link tables, so queries never scan JSON.

use sea_orm_migration::prelude::*;

use crate::columns::{id, index, millis, reference};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Measurements {
    Table,
    Id,
    CreatorId,
    Status,
    Data,
    MeasurementTimestamp,
    Heartrate,
    Indicator,
    CreationTimestamp,
    UpdateTimestamp,
    StatusChangedTimestamp,
}

#[derive(DeriveIden)]
enum MeasurementUsers {
    Table,
    MeasurementId,
    UserId,
}

#[derive(DeriveIden)]
enum MeasurementGroups {
    Table,
    MeasurementId,
    GroupId,
}

#[derive(DeriveIden)]
enum MeasurementTags {
    Table,
    MeasurementId,
    Tag,
}

#[derive(DeriveIden)]
enum Files {
    Table,
    Id,
    Secret,
    CacheKey,
    Name,
    Mimetype,
    Size,
    Sha256,
    CreationTimestamp,
}

#[derive(DeriveIden)]
enum FileBlobs {
    Table,
    CacheKey,
    Content,
}

#[derive(DeriveIden)]
enum MeasurementReports {
    Table,
    Id,
    CreatorId,
    PatientId,
    MeasurementId,
    Status,
    Language,
    TimeZone,
    FileId,
    ForMeasurementUpdatedTimestamp,
    CreationTimestamp,
    UpdateTimestamp,
    StatusChangedTimestamp,
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
}

fn cascade(
    from: (impl IntoIden, impl IntoIden),
    to: (impl IntoIden, impl IntoIden),
) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .from(from.0, from.1)
        .to(to.0, to.1)
        .on_delete(ForeignKeyAction::Cascade)
        .to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Measurements::Table)
                    .col(id(Measurements::Id))
                    .col(reference(Measurements::CreatorId))
                    .col(
                        ColumnDef::new(Measurements::Status)
                            .string_len(32)
                            .not_null(),
                    )
                    // Text, not JSON: PostgreSQL's jsonb would reorder the keys of a payload that
                    // is to be returned verbatim.
                    .col(ColumnDef::new(Measurements::Data).text().not_null())
                    .col(
                        ColumnDef::new(Measurements::MeasurementTimestamp)
                            .big_integer()
                            .null(),
                    )
                    .col(ColumnDef::new(Measurements::Heartrate).double().null())
                    .col(
                        ColumnDef::new(Measurements::Indicator)
                            .string_len(64)
                            .null(),
                    )
                    .col(millis(Measurements::CreationTimestamp))
                    .col(millis(Measurements::UpdateTimestamp))
                    .col(millis(Measurements::StatusChangedTimestamp))
                    .foreign_key(&mut cascade(
                        (Measurements::Table, Measurements::CreatorId),
                        (Users::Table, Users::Id),
                    ))
                    .to_owned(),
            )
            .await?;
        for (name, columns) in [
            (
                "measurements_creator",
                &["creator_id", "measurement_timestamp"][..],
            ),
            ("measurements_status", &["status"][..]),
            ("measurements_timestamp", &["measurement_timestamp"][..]),
            ("measurements_heartrate", &["heartrate"][..]),
            ("measurements_indicator", &["indicator"][..]),
            ("measurements_creation", &["creation_timestamp"][..]),
            ("measurements_update", &["update_timestamp"][..]),
        ] {
            manager
                .create_index(index(Measurements::Table, name, columns, false))
                .await?;
        }

        manager
            .create_table(
                Table::create()
                    .table(MeasurementUsers::Table)
                    .col(reference(MeasurementUsers::MeasurementId))
                    .col(reference(MeasurementUsers::UserId))
                    .primary_key(
                        Index::create()
                            .col(MeasurementUsers::MeasurementId)
                            .col(MeasurementUsers::UserId),
                    )
                    .foreign_key(&mut cascade(
                        (MeasurementUsers::Table, MeasurementUsers::MeasurementId),
                        (Measurements::Table, Measurements::Id),
                    ))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                MeasurementUsers::Table,
                "measurement_users_user",
                &["user_id"],
                false,
            ))
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(MeasurementGroups::Table)
                    .col(reference(MeasurementGroups::MeasurementId))
                    .col(reference(MeasurementGroups::GroupId))
                    .primary_key(
                        Index::create()
                            .col(MeasurementGroups::MeasurementId)
                            .col(MeasurementGroups::GroupId),
                    )
                    .foreign_key(&mut cascade(
                        (MeasurementGroups::Table, MeasurementGroups::MeasurementId),
                        (Measurements::Table, Measurements::Id),
                    ))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                MeasurementGroups::Table,
                "measurement_groups_group",
                &["group_id"],
                false,
            ))
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(MeasurementTags::Table)
                    .col(reference(MeasurementTags::MeasurementId))
                    .col(
                        ColumnDef::new(MeasurementTags::Tag)
                            .string_len(100)
                            .not_null(),
                    )
                    .primary_key(
                        Index::create()
                            .col(MeasurementTags::MeasurementId)
                            .col(MeasurementTags::Tag),
                    )
                    .foreign_key(&mut cascade(
                        (MeasurementTags::Table, MeasurementTags::MeasurementId),
                        (Measurements::Table, Measurements::Id),
                    ))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                MeasurementTags::Table,
                "measurement_tags_tag",
                &["tag"],
                false,
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Files::Table)
                    .col(id(Files::Id))
                    .col(ColumnDef::new(Files::Secret).string_len(36).not_null())
                    .col(ColumnDef::new(Files::CacheKey).char_len(64).not_null())
                    .col(ColumnDef::new(Files::Name).string_len(200).not_null())
                    .col(ColumnDef::new(Files::Mimetype).string_len(100).not_null())
                    .col(ColumnDef::new(Files::Size).big_integer().not_null())
                    .col(ColumnDef::new(Files::Sha256).char_len(64).not_null())
                    .col(millis(Files::CreationTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(Files::Table, "files_cache_key", &["cache_key"], true))
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(FileBlobs::Table)
                    .col(
                        ColumnDef::new(FileBlobs::CacheKey)
                            .char_len(64)
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(FileBlobs::Content).blob().not_null())
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(MeasurementReports::Table)
                    .col(id(MeasurementReports::Id))
                    .col(reference(MeasurementReports::CreatorId))
                    .col(reference(MeasurementReports::PatientId))
                    .col(reference(MeasurementReports::MeasurementId))
                    .col(
                        ColumnDef::new(MeasurementReports::Status)
                            .string_len(32)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(MeasurementReports::Language)
                            .string_len(8)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(MeasurementReports::TimeZone)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(MeasurementReports::FileId)
                            .char_len(24)
                            .null(),
                    )
                    .col(millis(MeasurementReports::ForMeasurementUpdatedTimestamp))
                    .col(millis(MeasurementReports::CreationTimestamp))
                    .col(millis(MeasurementReports::UpdateTimestamp))
                    .col(millis(MeasurementReports::StatusChangedTimestamp))
                    .foreign_key(&mut cascade(
                        (MeasurementReports::Table, MeasurementReports::MeasurementId),
                        (Measurements::Table, Measurements::Id),
                    ))
                    .to_owned(),
            )
            .await?;
        for (name, columns) in [
            ("measurement_reports_measurement", &["measurement_id"][..]),
            ("measurement_reports_patient", &["patient_id"][..]),
            ("measurement_reports_creator", &["creator_id"][..]),
            ("measurement_reports_creation", &["creation_timestamp"][..]),
        ] {
            manager
                .create_index(index(MeasurementReports::Table, name, columns, false))
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            MeasurementReports::Table.into_iden(),
            FileBlobs::Table.into_iden(),
            Files::Table.into_iden(),
            MeasurementTags::Table.into_iden(),
            MeasurementGroups::Table.into_iden(),
            MeasurementUsers::Table.into_iden(),
            Measurements::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
