//! `inbox_tallies.cared_until`: until when the reader cares, as staff, for the tally's
//! patient — the latest expiry of the patient's prescriptions (`patient_enlistments`) in the
//! groups where the reader is staff, 0 when there is none. A prescription runs out without a
//! write, but its expiry is written when it is made, extended or ended, so the reader cares
//! for the patient at a time exactly when `cared_until` is later than it.
//!
//! An inbox's exact total then sums the tallies of one reader from one index
//! (`inbox_tallies_care`, which holds every column the sum reads) instead of probing the
//! prescriptions and staff memberships once per patient. The store keeps the column in the
//! transactions that change either (`store::inbox_tallies`); `inbox_tallies_patient` finds
//! the tallies about a patient whose prescriptions changed.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::ConnectionTrait;

use crate::columns::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum InboxTallies {
    Table,
    CaredUntil,
}

/// The care of the tallies already stored, by the rules of `store::visibility` at this
/// version.
const BACKFILL: &str = "\
UPDATE inbox_tallies SET cared_until = COALESCE(( \
  SELECT MAX(pe.expiry_timestamp) FROM patient_enlistments pe \
  JOIN staff_enlistments se ON se.group_id = pe.group_id \
  WHERE pe.user_id = inbox_tallies.patient_id AND se.user_id = inbox_tallies.user_id), 0)";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(InboxTallies::Table)
                    .add_column(
                        ColumnDef::new(InboxTallies::CaredUntil)
                            .big_integer()
                            .not_null()
                            .default(0),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .get_connection()
            .execute_unprepared(BACKFILL)
            .await?;
        manager
            .create_index(index(
                InboxTallies::Table,
                "inbox_tallies_care",
                &[
                    "user_id",
                    "cared_until",
                    "patient_id",
                    "readable",
                    "entries",
                ],
                false,
            ))
            .await?;
        // A change to a patient's prescriptions counts its tallies' care again, in every
        // reader's inbox.
        manager
            .create_index(index(
                InboxTallies::Table,
                "inbox_tallies_patient",
                &["patient_id"],
                false,
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("inbox_tallies_patient")
                    .table(InboxTallies::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("inbox_tallies_care")
                    .table(InboxTallies::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(InboxTallies::Table)
                    .drop_column(InboxTallies::CaredUntil)
                    .to_owned(),
            )
            .await
    }
}
