//! `work_tallies`: for each reader and patient, how many of the patient's measurements wait
//! for a review (a `work_rank`) and are shared with a group the reader is staff in
//! (`waiting`), and until when the reader cares for the patient as staff (`cared_until`, as
//! in `inbox_tallies`). A physician's work list then reads its total from one index entry per
//! patient with something waiting, instead of probing each measurement through the gate.
//!
//! The store keeps the tallies in the transactions that store, review, re-analyse and delete
//! measurements, and that change prescriptions and staff memberships (`store::work_tallies`).
//! The rows for what is already stored are counted here, by the rules of `store::visibility`
//! at this version.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::ConnectionTrait;

use crate::columns::{index, reference};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum WorkTallies {
    Table,
    UserId,
    PatientId,
    Waiting,
    CaredUntil,
}

/// The tallies of the measurements already stored.
const BACKFILL: &str = "\
INSERT INTO work_tallies (user_id, patient_id, waiting, cared_until) \
SELECT se.user_id, m.creator_id, COUNT(DISTINCT m.id), COALESCE(( \
  SELECT MAX(pe.expiry_timestamp) FROM patient_enlistments pe \
  JOIN staff_enlistments care_se ON care_se.group_id = pe.group_id \
  WHERE pe.user_id = m.creator_id AND care_se.user_id = se.user_id), 0) \
FROM measurements m \
JOIN measurement_groups mg ON mg.measurement_id = m.id \
JOIN staff_enlistments se ON se.group_id = mg.group_id \
WHERE m.work_rank IS NOT NULL \
GROUP BY se.user_id, m.creator_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(WorkTallies::Table)
                    .col(reference(WorkTallies::UserId))
                    .col(reference(WorkTallies::PatientId))
                    .col(
                        ColumnDef::new(WorkTallies::Waiting)
                            .big_integer()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(WorkTallies::CaredUntil)
                            .big_integer()
                            .not_null(),
                    )
                    .primary_key(
                        Index::create()
                            .col(WorkTallies::UserId)
                            .col(WorkTallies::PatientId),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .get_connection()
            .execute_unprepared(BACKFILL)
            .await?;
        // The total sums one reader's tallies still in its care from this index alone.
        manager
            .create_index(index(
                WorkTallies::Table,
                "work_tallies_care",
                &["user_id", "cared_until", "patient_id", "waiting"],
                false,
            ))
            .await?;
        // A change to a patient's measurements or prescriptions counts its tallies again.
        manager
            .create_index(index(
                WorkTallies::Table,
                "work_tallies_patient",
                &["patient_id"],
                false,
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(WorkTallies::Table).to_owned())
            .await
    }
}
