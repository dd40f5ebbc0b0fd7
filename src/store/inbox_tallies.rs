//! Kept tallies of the inboxes: for each reader and patient, how many entries the reader holds
//! about the patient (`entries`), and how many of them the entries' own rules let the reader
//! read as staff (`readable`; see [`entry_readable`]).
//!
//! An inbox's exact total counts every entry the reader may read. Counted entry by entry, it
//! grew with the clinic (114,695 entries for a physician at 100,000 measurements); summed over
//! the tallies it reads one row per patient the reader has entries about. The half of the
//! gate that changes with time (whether the patient is still in the reader's care: a
//! prescription runs out without a write) is judged when the total is read, on each tally's
//! patient, by the same [`Scope::users`] as the entries' own.
//!
//! The other half changes only with the entries and with the reader's staff memberships, so
//! the tallies are counted again, from the entries, in the transactions that change either:
//! - [`Tx::fan_out`] adds entries;
//! - [`Tx::delete_notifications`] deletes them (erasure and retention);
//! - [`Tx::enlist_staff`] and [`Tx::remove_staff`] change what a reader's groups share.
//!
//! An administrator reads every entry of its own inbox, so its total is the sum of `entries`.

use std::collections::{BTreeMap, BTreeSet};

use sea_orm::sea_query::{Condition, Expr, Func, Query};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, ExprTrait, QueryFilter, QuerySelect,
};

use super::entities::{inbox_tally, notification};
use super::notifications::entry_readable;
use super::{AsSet, Reader, Scope, StoreResult, Tx, Viewer};
use crate::domain::id::Id;

/// Patients per statement when tallies are counted again: far below SQLite's parameter
/// limit.
const PATIENTS_PER_STATEMENT: usize = 500;

impl Reader {
    /// How many entries of `viewer`'s inbox it may read: the same number as counting them
    /// through the gate, read from one tally per patient.
    pub async fn inbox_total(&self, viewer: &Viewer) -> StoreResult<u64> {
        let counted = if viewer.admin { "entries" } else { "readable" };
        let total = Query::select()
            .expr_as(
                Expr::cust(format!("CAST(COALESCE(SUM({counted}), 0) AS BIGINT)")),
                sea_orm::sea_query::Alias::new("total"),
            )
            .from(inbox_tally::Entity)
            .and_where(inbox_tally::Column::UserId.eq(viewer.user_id))
            .cond_where(AsSet(viewer).users("inbox_tallies", "patient_id", self.now()))
            .to_owned();
        let row = if self.backend() == DbBackend::Postgres {
            // After five runs of a prepared statement PostgreSQL may keep a generic plan,
            // which estimates a reader's tallies from the average reader (a patient, with a
            // few) and so probes a physician's thousands one by one: 10 ms at 5,000 patients.
            // Planned for the reader at hand, it hashes the patients the reader cares for
            // (5 ms). `SET LOCAL` asks that for this statement's transaction alone.
            let txn = self.db.begin().await?;
            txn.execute_unprepared("SET LOCAL plan_cache_mode = force_custom_plan")
                .await?;
            let row = txn.query_one(&total).await?;
            txn.commit().await?;
            row
        } else {
            self.db.query_one(&total).await?
        };
        let total = match row {
            Some(row) => row.try_get::<i64>("", "total")?,
            None => 0,
        };
        Ok(u64::try_from(total).unwrap_or(0))
    }
}

impl Tx {
    /// Counts again, from the entries, the tallies of each (reader, patient) in `pairs`.
    pub(super) async fn retally_inboxes(&self, pairs: Vec<(Id, Id)>) -> StoreResult<()> {
        let mut by_reader: BTreeMap<Id, BTreeSet<Id>> = BTreeMap::new();
        for (reader, patient) in pairs {
            by_reader.entry(reader).or_default().insert(patient);
        }
        for (reader, patients) in by_reader {
            let patients: Vec<Id> = patients.into_iter().collect();
            for chunk in patients.chunks(PATIENTS_PER_STATEMENT) {
                self.retally(&reader, Some(chunk)).await?;
            }
        }
        Ok(())
    }

    /// Counts again every tally of `reader`, whose staff memberships changed.
    pub(super) async fn retally_reader(&self, reader: &Id) -> StoreResult<()> {
        self.retally(reader, None).await
    }

    /// Deletes the inbox entries `which` selects and counts again the tallies they were in.
    /// Returns how many were deleted.
    pub(super) async fn delete_notifications(&self, which: Condition) -> StoreResult<u64> {
        let pairs: Vec<(Id, Id)> = notification::Entity::find()
            .select_only()
            .column(notification::Column::UserId)
            .column(notification::Column::PatientId)
            .distinct()
            .filter(which.clone())
            .into_tuple()
            .all(&self.db)
            .await?;
        if pairs.is_empty() {
            return Ok(0);
        }
        let deleted = notification::Entity::delete_many()
            .filter(which)
            .exec(&self.db)
            .await?
            .rows_affected;
        self.retally_inboxes(pairs).await?;
        Ok(deleted)
    }

    /// Replaces `reader`'s tallies about `patients` (every patient when `None`) with the
    /// counts of its entries about them.
    async fn retally(&self, reader: &Id, patients: Option<&[Id]>) -> StoreResult<()> {
        let (tallied, about) = match patients {
            Some(patients) => (
                Condition::all()
                    .add(inbox_tally::Column::PatientId.is_in(patients.iter().copied())),
                Condition::all()
                    .add(notification::Column::PatientId.is_in(patients.iter().copied())),
            ),
            None => (Condition::all(), Condition::all()),
        };
        inbox_tally::Entity::delete_many()
            .filter(inbox_tally::Column::UserId.eq(*reader))
            .filter(tallied)
            .exec(&self.db)
            .await?;
        // The entries' own rules as they hold for the reader as staff: an administrator's
        // total counts every entry instead, whatever its roles are when it is read.
        let staff = Viewer {
            user_id: *reader,
            admin: false,
        };
        let readable = Expr::case(entry_readable(&AsSet(&staff)), 1).finally(0);
        let counts = Query::select()
            .column(notification::Column::UserId)
            .column(notification::Column::PatientId)
            .expr(Expr::col(notification::Column::Id).count())
            .expr(Func::sum(readable))
            .from(notification::Entity)
            .and_where(notification::Column::UserId.eq(*reader))
            .and_where(notification::Column::InInbox.eq(true))
            .cond_where(about)
            .group_by_columns([
                notification::Column::UserId,
                notification::Column::PatientId,
            ])
            .to_owned();
        let insert = Query::insert()
            .into_table(inbox_tally::Entity)
            .columns([
                inbox_tally::Column::UserId,
                inbox_tally::Column::PatientId,
                inbox_tally::Column::Entries,
                inbox_tally::Column::Readable,
            ])
            .select_from(counts)
            .map_err(|e| sea_orm::DbErr::Custom(e.to_string()))?
            .to_owned();
        self.db.execute(&insert).await?;
        Ok(())
    }
}
