//! Accounts: users, profiles, groups, enlistments and OAuth tokens.

use sea_orm_migration::prelude::*;

use crate::columns::{id, index, millis, reference};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
    Email,
    PasswordHash,
    FirstName,
    LastName,
    PhoneNumber,
    Language,
    TimeZone,
    Activation,
    Roles,
    ProfileImage,
    FailedCount,
    LastFailedTimestamp,
    CreationTimestamp,
    UpdateTimestamp,
}

#[derive(DeriveIden)]
enum Profiles {
    Table,
    Id,
    Data,
    Country,
    City,
    Physician,
    Gender,
    CreationTimestamp,
    UpdateTimestamp,
}

#[derive(DeriveIden)]
enum Groups {
    Table,
    Id,
    Name,
    Description,
    CreationTimestamp,
    UpdateTimestamp,
}

#[derive(DeriveIden)]
enum PatientEnlistments {
    Table,
    Id,
    UserId,
    GroupId,
    CreationTimestamp,
    ExpiryTimestamp,
}

#[derive(DeriveIden)]
enum StaffEnlistments {
    Table,
    Id,
    UserId,
    GroupId,
    Roles,
    CreationTimestamp,
    UpdateTimestamp,
}

#[derive(DeriveIden)]
enum AccessTokens {
    Table,
    Id,
    TokenHash,
    UserId,
    FamilyId,
    ExpiresAt,
    Revoked,
    CreationTimestamp,
}

#[derive(DeriveIden)]
enum RefreshTokens {
    Table,
    Id,
    TokenHash,
    UserId,
    FamilyId,
    ExpiresAt,
    RotatedAt,
    Revoked,
    CreationTimestamp,
}

fn cascade_to_users<T: IntoIden>(table: T, column: impl IntoIden) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .from(table, column)
        .to(Users::Table, Users::Id)
        .on_delete(ForeignKeyAction::Cascade)
        .to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Users::Table)
                    .col(id(Users::Id))
                    .col(ColumnDef::new(Users::Email).string_len(254).not_null())
                    .col(ColumnDef::new(Users::PasswordHash).string().not_null())
                    .col(ColumnDef::new(Users::FirstName).string_len(200).not_null())
                    .col(ColumnDef::new(Users::LastName).string_len(200).not_null())
                    .col(ColumnDef::new(Users::PhoneNumber).string_len(50).null())
                    .col(ColumnDef::new(Users::Language).string_len(8).not_null())
                    .col(ColumnDef::new(Users::TimeZone).string_len(64).not_null())
                    .col(ColumnDef::new(Users::Activation).boolean().not_null())
                    .col(ColumnDef::new(Users::Roles).json().not_null())
                    .col(ColumnDef::new(Users::ProfileImage).string().null())
                    .col(
                        ColumnDef::new(Users::FailedCount)
                            .integer()
                            .not_null()
                            .default(0),
                    )
                    .col(
                        ColumnDef::new(Users::LastFailedTimestamp)
                            .big_integer()
                            .null(),
                    )
                    .col(millis(Users::CreationTimestamp))
                    .col(millis(Users::UpdateTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(Users::Table, "users_email", &["email"], true))
            .await?;
        manager
            .create_index(index(
                Users::Table,
                "users_last_name",
                &["last_name"],
                false,
            ))
            .await?;
        manager
            .create_index(index(
                Users::Table,
                "users_creation",
                &["creation_timestamp"],
                false,
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Profiles::Table)
                    .col(id(Profiles::Id))
                    .col(ColumnDef::new(Profiles::Data).json().not_null())
                    .col(ColumnDef::new(Profiles::Country).char_len(2).null())
                    .col(ColumnDef::new(Profiles::City).string_len(200).null())
                    .col(ColumnDef::new(Profiles::Physician).string_len(200).null())
                    .col(ColumnDef::new(Profiles::Gender).integer().null())
                    .col(millis(Profiles::CreationTimestamp))
                    .col(millis(Profiles::UpdateTimestamp))
                    .foreign_key(&mut cascade_to_users(Profiles::Table, Profiles::Id))
                    .to_owned(),
            )
            .await?;
        for (name, column) in [
            ("profiles_country", "country"),
            ("profiles_city", "city"),
            ("profiles_physician", "physician"),
        ] {
            manager
                .create_index(index(Profiles::Table, name, &[column], false))
                .await?;
        }

        manager
            .create_table(
                Table::create()
                    .table(Groups::Table)
                    .col(id(Groups::Id))
                    .col(ColumnDef::new(Groups::Name).string_len(200).not_null())
                    .col(ColumnDef::new(Groups::Description).text().null())
                    .col(millis(Groups::CreationTimestamp))
                    .col(millis(Groups::UpdateTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(Groups::Table, "groups_name", &["name"], false))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(PatientEnlistments::Table)
                    .col(id(PatientEnlistments::Id))
                    .col(reference(PatientEnlistments::UserId))
                    .col(reference(PatientEnlistments::GroupId))
                    .col(millis(PatientEnlistments::CreationTimestamp))
                    .col(millis(PatientEnlistments::ExpiryTimestamp))
                    .foreign_key(&mut cascade_to_users(
                        PatientEnlistments::Table,
                        PatientEnlistments::UserId,
                    ))
                    .foreign_key(
                        ForeignKey::create()
                            .from(PatientEnlistments::Table, PatientEnlistments::GroupId)
                            .to(Groups::Table, Groups::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                PatientEnlistments::Table,
                "patient_enlistments_user",
                &["user_id"],
                false,
            ))
            .await?;
        manager
            .create_index(index(
                PatientEnlistments::Table,
                "patient_enlistments_group",
                &["group_id", "user_id"],
                false,
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(StaffEnlistments::Table)
                    .col(id(StaffEnlistments::Id))
                    .col(reference(StaffEnlistments::UserId))
                    .col(reference(StaffEnlistments::GroupId))
                    .col(ColumnDef::new(StaffEnlistments::Roles).json().not_null())
                    .col(millis(StaffEnlistments::CreationTimestamp))
                    .col(millis(StaffEnlistments::UpdateTimestamp))
                    .foreign_key(&mut cascade_to_users(
                        StaffEnlistments::Table,
                        StaffEnlistments::UserId,
                    ))
                    .foreign_key(
                        ForeignKey::create()
                            .from(StaffEnlistments::Table, StaffEnlistments::GroupId)
                            .to(Groups::Table, Groups::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                StaffEnlistments::Table,
                "staff_enlistments_user_group",
                &["user_id", "group_id"],
                true,
            ))
            .await?;
        manager
            .create_index(index(
                StaffEnlistments::Table,
                "staff_enlistments_group",
                &["group_id"],
                false,
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(AccessTokens::Table)
                    .col(id(AccessTokens::Id))
                    .col(
                        ColumnDef::new(AccessTokens::TokenHash)
                            .char_len(64)
                            .not_null(),
                    )
                    .col(reference(AccessTokens::UserId))
                    .col(reference(AccessTokens::FamilyId))
                    .col(millis(AccessTokens::ExpiresAt))
                    .col(ColumnDef::new(AccessTokens::Revoked).boolean().not_null())
                    .col(millis(AccessTokens::CreationTimestamp))
                    .foreign_key(&mut cascade_to_users(
                        AccessTokens::Table,
                        AccessTokens::UserId,
                    ))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                AccessTokens::Table,
                "access_tokens_hash",
                &["token_hash"],
                true,
            ))
            .await?;
        manager
            .create_index(index(
                AccessTokens::Table,
                "access_tokens_family",
                &["family_id"],
                false,
            ))
            .await?;
        manager
            .create_index(index(
                AccessTokens::Table,
                "access_tokens_user",
                &["user_id"],
                false,
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(RefreshTokens::Table)
                    .col(id(RefreshTokens::Id))
                    .col(
                        ColumnDef::new(RefreshTokens::TokenHash)
                            .char_len(64)
                            .not_null(),
                    )
                    .col(reference(RefreshTokens::UserId))
                    .col(reference(RefreshTokens::FamilyId))
                    .col(millis(RefreshTokens::ExpiresAt))
                    .col(
                        ColumnDef::new(RefreshTokens::RotatedAt)
                            .big_integer()
                            .null(),
                    )
                    .col(ColumnDef::new(RefreshTokens::Revoked).boolean().not_null())
                    .col(millis(RefreshTokens::CreationTimestamp))
                    .foreign_key(&mut cascade_to_users(
                        RefreshTokens::Table,
                        RefreshTokens::UserId,
                    ))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                RefreshTokens::Table,
                "refresh_tokens_hash",
                &["token_hash"],
                true,
            ))
            .await?;
        manager
            .create_index(index(
                RefreshTokens::Table,
                "refresh_tokens_family",
                &["family_id"],
                false,
            ))
            .await?;
        manager
            .create_index(index(
                RefreshTokens::Table,
                "refresh_tokens_user",
                &["user_id"],
                false,
            ))
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            RefreshTokens::Table.into_iden(),
            AccessTokens::Table.into_iden(),
            StaffEnlistments::Table.into_iden(),
            PatientEnlistments::Table.into_iden(),
            Groups::Table.into_iden(),
            Profiles::Table.into_iden(),
            Users::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
