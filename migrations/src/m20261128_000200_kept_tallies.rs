//! Counts kept beside what they count, so that a list's exact total reads a few rows instead
//! of every row it counts.
//!
//! `group_tallies`: how many measurements are shared with each group (its `measurement_groups`
//! rows), for the measurement list's total of the group's staff.
//!
//! `inbox_tallies`: how many inbox entries each reader holds about each patient, for an
//! inbox's total, which then reads one row per patient instead of every entry:
//! - `entries`: the reader's entries about the patient shown in its inbox;
//! - `readable`: those of them the reader may read as staff, by the rules of the entries
//!   themselves (a measurement shared with one of the reader's groups, a periodic report made
//!   for one, or neither named), judged as `store::visibility` judges them. Whether the
//!   patient is still in the reader's care changes with time (a prescription runs out), so it
//!   is judged when the total is read.
//!
//! The store keeps them in the transactions that add or delete measurements and entries and
//! that change a reader's staff memberships. The rows for what is already stored are counted
//! here, the inbox's by the rules of `store::visibility` at this version.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::ConnectionTrait;

use crate::columns::{id, reference};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum GroupTallies {
    Table,
    GroupId,
    Measurements,
}

#[derive(DeriveIden)]
enum InboxTallies {
    Table,
    UserId,
    PatientId,
    Entries,
    Readable,
}

/// The tallies of the measurements already stored.
const GROUP_BACKFILL: &str = "\
INSERT INTO group_tallies (group_id, measurements) \
SELECT group_id, COUNT(*) FROM measurement_groups GROUP BY group_id";

/// The tallies of the entries already stored.
const BACKFILL: &str = "\
INSERT INTO inbox_tallies (user_id, patient_id, entries, readable) \
SELECT n.user_id, n.patient_id, COUNT(*), SUM(CASE WHEN \
  (n.patient_id = n.user_id OR n.measurement_id IS NULL OR EXISTS ( \
     SELECT 1 FROM measurement_groups mg \
     JOIN staff_enlistments se ON se.group_id = mg.group_id \
     WHERE mg.measurement_id = n.measurement_id AND se.user_id = n.user_id)) \
  AND (n.kind <> 'periodic_report.created' OR EXISTS ( \
     SELECT 1 FROM reports r WHERE r.id = n.report_id AND (r.user_id = n.user_id \
       OR r.group_id IN (SELECT se.group_id FROM staff_enlistments se \
                         WHERE se.user_id = n.user_id)))) \
  THEN 1 ELSE 0 END) \
FROM notifications n WHERE n.in_inbox = TRUE \
GROUP BY n.user_id, n.patient_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(GroupTallies::Table)
                    .col(id(GroupTallies::GroupId))
                    .col(
                        ColumnDef::new(GroupTallies::Measurements)
                            .big_integer()
                            .not_null(),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .get_connection()
            .execute_unprepared(GROUP_BACKFILL)
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(InboxTallies::Table)
                    .col(reference(InboxTallies::UserId))
                    .col(reference(InboxTallies::PatientId))
                    .col(
                        ColumnDef::new(InboxTallies::Entries)
                            .big_integer()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(InboxTallies::Readable)
                            .big_integer()
                            .not_null(),
                    )
                    .primary_key(
                        Index::create()
                            .col(InboxTallies::UserId)
                            .col(InboxTallies::PatientId),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .get_connection()
            .execute_unprepared(BACKFILL)
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(InboxTallies::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(GroupTallies::Table).to_owned())
            .await
    }
}
