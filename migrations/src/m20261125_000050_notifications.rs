//! Notifications: the outbox of events (written in the transaction of what caused them), each
//! reader's inbox, preferences per user and per group, and clinics' webhook endpoints with
//! their delivery log.

use sea_orm_migration::prelude::*;

use crate::columns::{id, index, millis, reference};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Events {
    Table,
    Id,
    Kind,
    PatientId,
    ActorId,
    MeasurementId,
    ReportId,
    Detail,
    CreationTimestamp,
}

#[derive(DeriveIden)]
enum Notifications {
    Table,
    Id,
    UserId,
    EventId,
    Kind,
    PatientId,
    MeasurementId,
    ReportId,
    Detail,
    InInbox,
    Digest,
    Read,
    ReadAt,
    CreationTimestamp,
}

#[derive(DeriveIden)]
enum NotificationPreferences {
    Table,
    UserId,
    Muted,
    DailyDigest,
    AttachPdf,
    UpdateTimestamp,
}

#[derive(DeriveIden)]
enum GroupNotificationSettings {
    Table,
    GroupId,
    StaffEvents,
    UpdateTimestamp,
}

#[derive(DeriveIden)]
enum WebhookEndpoints {
    Table,
    Id,
    GroupId,
    Url,
    Events,
    Enabled,
    DisabledReason,
    CreatorId,
    CreationTimestamp,
    UpdateTimestamp,
}

#[derive(DeriveIden)]
enum WebhookDeliveries {
    Table,
    Id,
    EndpointId,
    EventId,
    Attempt,
    Outcome,
    StatusCode,
    LatencyMs,
    Error,
    CreationTimestamp,
}

fn optional_id<T: IntoIden>(name: T) -> ColumnDef {
    ColumnDef::new(name).char_len(24).null().to_owned()
}

fn flag<T: IntoIden>(name: T) -> ColumnDef {
    ColumnDef::new(name).boolean().not_null().to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Events::Table)
                    .col(id(Events::Id))
                    .col(ColumnDef::new(Events::Kind).string_len(40).not_null())
                    .col(reference(Events::PatientId))
                    .col(optional_id(Events::ActorId))
                    .col(optional_id(Events::MeasurementId))
                    .col(optional_id(Events::ReportId))
                    .col(ColumnDef::new(Events::Detail).string_len(200).not_null())
                    .col(millis(Events::CreationTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Notifications::Table)
                    .col(id(Notifications::Id))
                    .col(reference(Notifications::UserId))
                    .col(reference(Notifications::EventId))
                    .col(
                        ColumnDef::new(Notifications::Kind)
                            .string_len(40)
                            .not_null(),
                    )
                    .col(reference(Notifications::PatientId))
                    .col(optional_id(Notifications::MeasurementId))
                    .col(optional_id(Notifications::ReportId))
                    .col(
                        ColumnDef::new(Notifications::Detail)
                            .string_len(200)
                            .not_null(),
                    )
                    .col(flag(Notifications::InInbox))
                    .col(flag(Notifications::Digest))
                    .col(flag(Notifications::Read))
                    .col(ColumnDef::new(Notifications::ReadAt).big_integer().null())
                    .col(millis(Notifications::CreationTimestamp))
                    .to_owned(),
            )
            .await?;
        // One entry per reader and event: a fan-out run twice adds nothing.
        manager
            .create_index(index(
                Notifications::Table,
                "notifications_reader_event",
                &["user_id", "event_id"],
                true,
            ))
            .await?;
        manager
            .create_index(index(
                Notifications::Table,
                "notifications_inbox",
                &["user_id", "creation_timestamp"],
                false,
            ))
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(NotificationPreferences::Table)
                    .col(
                        ColumnDef::new(NotificationPreferences::UserId)
                            .char_len(24)
                            .not_null()
                            .primary_key(),
                    )
                    .col(
                        ColumnDef::new(NotificationPreferences::Muted)
                            .text()
                            .not_null(),
                    )
                    .col(flag(NotificationPreferences::DailyDigest))
                    .col(flag(NotificationPreferences::AttachPdf))
                    .col(millis(NotificationPreferences::UpdateTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(GroupNotificationSettings::Table)
                    .col(
                        ColumnDef::new(GroupNotificationSettings::GroupId)
                            .char_len(24)
                            .not_null()
                            .primary_key(),
                    )
                    .col(
                        ColumnDef::new(GroupNotificationSettings::StaffEvents)
                            .text()
                            .not_null(),
                    )
                    .col(millis(GroupNotificationSettings::UpdateTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(WebhookEndpoints::Table)
                    .col(id(WebhookEndpoints::Id))
                    .col(reference(WebhookEndpoints::GroupId))
                    .col(ColumnDef::new(WebhookEndpoints::Url).text().not_null())
                    .col(ColumnDef::new(WebhookEndpoints::Events).text().not_null())
                    .col(flag(WebhookEndpoints::Enabled))
                    .col(
                        ColumnDef::new(WebhookEndpoints::DisabledReason)
                            .text()
                            .null(),
                    )
                    .col(reference(WebhookEndpoints::CreatorId))
                    .col(millis(WebhookEndpoints::CreationTimestamp))
                    .col(millis(WebhookEndpoints::UpdateTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                WebhookEndpoints::Table,
                "webhook_endpoints_group",
                &["group_id"],
                false,
            ))
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(WebhookDeliveries::Table)
                    .col(id(WebhookDeliveries::Id))
                    .col(reference(WebhookDeliveries::EndpointId))
                    .col(reference(WebhookDeliveries::EventId))
                    .col(
                        ColumnDef::new(WebhookDeliveries::Attempt)
                            .integer()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(WebhookDeliveries::Outcome)
                            .string_len(16)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(WebhookDeliveries::StatusCode)
                            .integer()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(WebhookDeliveries::LatencyMs)
                            .big_integer()
                            .not_null(),
                    )
                    .col(ColumnDef::new(WebhookDeliveries::Error).text().null())
                    .col(millis(WebhookDeliveries::CreationTimestamp))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                WebhookDeliveries::Table,
                "webhook_deliveries_endpoint",
                &["endpoint_id", "creation_timestamp"],
                false,
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            WebhookDeliveries::Table.into_iden(),
            WebhookEndpoints::Table.into_iden(),
            GroupNotificationSettings::Table.into_iden(),
            NotificationPreferences::Table.into_iden(),
            Notifications::Table.into_iden(),
            Events::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
