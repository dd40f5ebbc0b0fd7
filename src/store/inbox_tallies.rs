//! Kept tallies of the inboxes: for each reader and patient, how many entries the reader holds
//! about the patient (`entries`), how many of them the entries' own rules let the reader read
//! as staff (`readable`; see [`entry_readable`]), and until when the reader cares for the
//! patient as staff (`cared_until`; see [`care_ends`]).
//!
//! An inbox's exact total counts every entry the reader may read. Counted entry by entry, it
//! grew with the clinic (114,695 entries for a physician at 100,000 measurements); summed over
//! the tallies it reads one index entry per patient the reader has entries about, and judges
//! the care there by [`kept_care`]: a prescription runs out without a write, but its end was
//! written when it was made, extended or ended.
//!
//! The tallies are counted again, from the entries and the enlistments, in the transactions
//! that change them:
//! - [`Tx::fan_out`] adds entries;
//! - [`Tx::delete_notifications`] deletes them (erasure and retention);
//! - [`Tx::enlist_staff`] and [`Tx::remove_staff`] change what a reader's groups share and
//!   whom it cares for;
//! - [`Tx::enlist_patient`] and [`Tx::end_patient_enlistment`] change until when the staff of
//!   a group care for a patient ([`Tx::recount_care`]).
//!
//! An administrator reads every entry of its own inbox, so its total is the sum of `entries`.
//!
//! On PostgreSQL these transactions take advisory locks on the patients and readers whose
//! tallies they count again, so that two of them never count the same tally from each
//! other's half-finished work ([`Tx::lock_tallies`]).

use std::collections::{BTreeMap, BTreeSet};

use sea_orm::sea_query::{Alias, Condition, Expr, Func, Query};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, ExprTrait, QueryFilter, QuerySelect,
    Statement,
};

use super::entities::{inbox_tally, notification};
use super::notifications::entry_readable;
use super::visibility::{care_ends, care_rewritten, kept_care};
use super::{AsSet, Reader, StoreResult, Tx, Viewer};
use crate::domain::id::Id;

/// Patients per statement when tallies are counted again: far below SQLite's parameter
/// limit.
const PATIENTS_PER_STATEMENT: usize = 500;

/// The two spaces of the tallies' advisory locks on PostgreSQL (`pg_advisory_xact_lock`'s
/// first key); a transaction takes its patients' locks before its readers'.
const PATIENT_LOCKS: i32 = 0x7461_6c70;
const READER_LOCKS: i32 = 0x7461_6c72;

/// The staff lock (see [`Tx::lock_staff_changes`]).
const STAFF_LOCK: (i32, i32) = (0x7461_6c73, 0);

impl Reader {
    /// How many entries of `viewer`'s inbox it may read: the same number as counting them
    /// through the gate, read from one tally per patient.
    pub async fn inbox_total(&self, viewer: &Viewer) -> StoreResult<u64> {
        let counted = if viewer.admin { "entries" } else { "readable" };
        self.kept_sum("inbox_tallies", counted, viewer, Condition::all())
            .await
    }

    /// The sum of `column` over `viewer`'s rows of the kept tallies `table` (the inbox's or
    /// the work lists') that `narrow` keeps, about the patients it cares for now
    /// ([`kept_care`] on the rows' `cared_until`).
    pub(super) async fn kept_sum(
        &self,
        table: &str,
        column: &str,
        viewer: &Viewer,
        narrow: Condition,
    ) -> StoreResult<u64> {
        let total = Query::select()
            .expr_as(
                Expr::cust(format!("CAST(COALESCE(SUM({column}), 0) AS BIGINT)")),
                Alias::new("total"),
            )
            .from(Alias::new(table))
            .and_where(Expr::col(Alias::new("user_id")).eq(viewer.user_id))
            .cond_where(narrow)
            .cond_where(kept_care(
                viewer,
                table,
                "patient_id",
                "cared_until",
                self.now(),
            ))
            .to_owned();
        let total = match self.db.query_one(&total).await? {
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
        // `lock_tallies` sorts the keys and drops the repeated ones.
        let patients: Vec<Id> = by_reader.values().flatten().copied().collect();
        let readers: Vec<Id> = by_reader.keys().copied().collect();
        self.lock_tallies(&patients, &readers).await?;
        for (reader, patients) in by_reader {
            let patients: Vec<Id> = patients.into_iter().collect();
            for chunk in patients.chunks(PATIENTS_PER_STATEMENT) {
                self.retally(&reader, Some(chunk)).await?;
            }
        }
        Ok(())
    }

    /// Counts again every tally of `reader`, whose staff memberships changed: its inbox's and
    /// its work list's.
    pub(super) async fn retally_reader(&self, reader: &Id) -> StoreResult<()> {
        self.lock_staff_changes().await?;
        self.lock_tallies(&[], &[*reader]).await?;
        self.retally(reader, None).await?;
        self.retally_work_of_reader(reader).await
    }

    /// Counts again until when each reader with entries or waiting measurements about
    /// `patient` cares for it, after a change to the patient's enlistments.
    pub(super) async fn recount_care(&self, patient: &Id) -> StoreResult<()> {
        // No new reader's tally about the patient can appear while its lock is held.
        self.lock_tallies(&[*patient], &[]).await?;
        self.db
            .execute(&care_rewritten("work_tallies", patient))
            .await?;
        let readers: Vec<Id> = inbox_tally::Entity::find()
            .select_only()
            .column(inbox_tally::Column::UserId)
            .filter(inbox_tally::Column::PatientId.eq(*patient))
            .into_tuple()
            .all(&self.db)
            .await?;
        self.lock_tallies(&[], &readers).await?;
        self.db
            .execute(&care_rewritten("inbox_tallies", patient))
            .await?;
        Ok(())
    }

    /// On PostgreSQL, waits for and takes, until the transaction ends, the locks of the
    /// tallies about `patients` and then of the tallies of `readers`.
    ///
    /// Under READ COMMITTED a tally counted again can miss a change another transaction has
    /// not committed yet, and an update can miss a row another transaction has deleted and
    /// inserted again: a prescription changed while its patient's events fan out would leave
    /// the new row with the old end of care. The two can also lock the same tallies in
    /// opposite orders, and PostgreSQL then aborts one of them as a deadlock. Every
    /// transaction that counts tallies again takes these locks first, always patients before
    /// readers and each space in key order, so that two of them touching the same tallies
    /// take turns and never wait for each other in a circle. SQLite has one writer at a time
    /// and needs none.
    ///
    /// Before them it takes the staff lock shared: a change of staff memberships waits for
    /// every transaction holding tallies' locks, and they wait for it.
    pub(super) async fn lock_tallies(&self, patients: &[Id], readers: &[Id]) -> StoreResult<()> {
        if self.db.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        self.advisory_lock("pg_advisory_xact_lock_shared", STAFF_LOCK)
            .await?;
        let mut keys: Vec<(i32, i32)> = patients
            .iter()
            .map(|patient| (PATIENT_LOCKS, patient.fold32()))
            .chain(readers.iter().map(|reader| (READER_LOCKS, reader.fold32())))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        for key in keys {
            self.advisory_lock("pg_advisory_xact_lock", key).await?;
        }
        Ok(())
    }

    /// On PostgreSQL, waits for and takes, alone and until the transaction ends, the staff
    /// lock, before a change of staff memberships counts its reader's tallies again.
    ///
    /// Such a change counts again tallies about every patient its groups share measurements
    /// of, without their locks, while a transaction counting a patient's tallies cannot see a
    /// membership it has not committed: the two must not run at once. It is the transaction's
    /// first lock, so that it never waits for the staff lock while holding another.
    pub(super) async fn lock_staff_changes(&self) -> StoreResult<()> {
        if self.db.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        self.advisory_lock("pg_advisory_xact_lock", STAFF_LOCK)
            .await
    }

    /// Runs the advisory lock function `function` (one of PostgreSQL's transaction-level
    /// ones) on `(space, key)`.
    async fn advisory_lock(&self, function: &str, (space, key): (i32, i32)) -> StoreResult<()> {
        let lock = Statement::from_sql_and_values(
            DbBackend::Postgres,
            format!("SELECT {function}($1, $2)"),
            [space.into(), key.into()],
        );
        self.db.execute_raw(lock).await?;
        Ok(())
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
            .expr(care_ends(
                Expr::col((notification::Entity, notification::Column::UserId)),
                Expr::col((notification::Entity, notification::Column::PatientId)),
            ))
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
                inbox_tally::Column::CaredUntil,
            ])
            .select_from(counts)
            .map_err(|e| sea_orm::DbErr::Custom(e.to_string()))?
            .to_owned();
        self.db.execute(&insert).await?;
        Ok(())
    }
}
