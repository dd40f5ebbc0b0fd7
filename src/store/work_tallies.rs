//! Kept tallies of the work lists: for each reader and patient, how many of the patient's
//! measurements wait for a review (they have a `work_rank`) and are shared with a group the
//! reader is staff in (`waiting`), and until when the reader cares for the patient as staff
//! (`cared_until`; see [`care_ends`]).
//!
//! A physician's work list shows the measurements of the patients it cares for that wait for
//! a review and that it may see. Its pager counted them through the gate, each row probed for
//! the care and the sharing, up to [`LIST_COUNTED`](super::LIST_COUNTED) + 1: on PostgreSQL at
//! 100,000 measurements that count was most of the page's time. Summed over the tallies, the
//! unfiltered total reads one index entry per patient with something waiting, and judges the
//! care there by [`kept_care`](super::visibility::kept_care), as the inbox's total does
//! ([`Reader::kept_sum`]). A search or a filter by reason
//! still counts through the gate. An administrator's work list counts through the gate too:
//! it sees every measurement, and no tally is kept for it.
//!
//! A patient's tallies are counted again, from its measurements, in the transactions that
//! change what waits ([`Tx::retally_work`]):
//! - a measurement stored, reviewed (`update_measurement`), re-analysed (`apply_rewrite`) or
//!   deleted (erasure and retention);
//!
//! and kept up to date with the access they depend on:
//! - [`Tx::recount_care`](super::Tx::recount_care) writes the patient's new end of care after
//!   a change to its prescriptions ([`care_rewritten`](super::visibility::care_rewritten));
//! - [`Tx::retally_reader`](super::Tx::retally_reader) counts again every tally of a reader
//!   whose staff memberships changed.
//!
//! On PostgreSQL the first two take the tallies' locks on their patients (see
//! [`Tx::lock_tallies`]). A change of staff memberships cannot lock the patients whose tallies
//! it counts again (a group may hold thousands), and a transaction counting a patient again
//! cannot see a staff membership another one has not committed yet; so a change of staff
//! memberships holds the staff lock alone, and every transaction that takes the tallies'
//! locks holds it shared ([`Tx::lock_staff_changes`]).

use sea_orm::sea_query::{Alias, Condition, Expr, Func, JoinType, Query, SelectStatement};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, ExprTrait, QueryFilter, QuerySelect};

use super::entities::{measurement, work_tally};
use super::visibility::care_ends;
use super::{Reader, StoreResult, Tx, Viewer};
use crate::domain::id::Id;

/// Patients per statement when tallies are counted again: far below SQLite's parameter
/// limit.
const PATIENTS_PER_STATEMENT: usize = 500;

impl Reader {
    /// How many measurements wait in the unfiltered work list of `viewer`, who is not an
    /// administrator: the same number as counting them through the gate, read from one tally
    /// per patient.
    pub(super) async fn work_list_total(&self, viewer: &Viewer) -> StoreResult<u64> {
        let others = Condition::all().add(work_tally::Column::PatientId.ne(viewer.user_id));
        self.kept_sum("work_tallies", "waiting", viewer, others)
            .await
    }
}

/// Each (reader, patient)'s waiting measurements among those `narrow` selects, with the end
/// of the reader's care for the patient. A measurement shared with two of a reader's groups
/// counts once.
fn waiting(narrow: Condition) -> SelectStatement {
    let (m, shared, staff) = (
        Alias::new("work_m"),
        Alias::new("work_mg"),
        Alias::new("work_se"),
    );
    let reader = Expr::col((staff.clone(), Alias::new("user_id")));
    let patient = Expr::col((m.clone(), Alias::new("creator_id")));
    Query::select()
        .expr(reader.clone())
        .expr(patient.clone())
        .expr(Func::count_distinct(Expr::col((
            m.clone(),
            Alias::new("id"),
        ))))
        .expr(care_ends(reader.clone(), patient.clone()))
        .from_as(measurement::Entity, m.clone())
        .join_as(
            JoinType::InnerJoin,
            Alias::new("measurement_groups"),
            shared.clone(),
            Expr::col((shared.clone(), Alias::new("measurement_id")))
                .equals((m.clone(), Alias::new("id"))),
        )
        .join_as(
            JoinType::InnerJoin,
            Alias::new("staff_enlistments"),
            staff.clone(),
            Expr::col((staff.clone(), Alias::new("group_id")))
                .equals((shared, Alias::new("group_id"))),
        )
        .and_where(Expr::col((m, Alias::new("work_rank"))).is_not_null())
        .cond_where(narrow)
        .add_group_by([reader, patient])
        .to_owned()
}

impl Tx {
    /// Counts again, from their measurements, every reader's tallies about `patients`, after
    /// this transaction changed what of theirs waits for a review. Call it after those
    /// changes: it counts what it sees once it holds the patients' locks.
    pub(super) async fn retally_work(&self, patients: &[Id]) -> StoreResult<()> {
        let mut patients = patients.to_vec();
        patients.sort_unstable();
        patients.dedup();
        self.lock_tallies(&patients, &[]).await?;
        for chunk in patients.chunks(PATIENTS_PER_STATEMENT) {
            let chunk = || chunk.iter().copied();
            work_tally::Entity::delete_many()
                .filter(work_tally::Column::PatientId.is_in(chunk()))
                .exec(&self.db)
                .await?;
            let about = Condition::all()
                .add(Expr::col((Alias::new("work_m"), Alias::new("creator_id"))).is_in(chunk()));
            self.insert_work_tallies(waiting(about)).await?;
        }
        Ok(())
    }

    /// Counts again every work tally of `reader`, whose staff memberships changed; the caller
    /// holds the staff lock alone.
    pub(super) async fn retally_work_of_reader(&self, reader: &Id) -> StoreResult<()> {
        work_tally::Entity::delete_many()
            .filter(work_tally::Column::UserId.eq(*reader))
            .exec(&self.db)
            .await?;
        let of_reader = Condition::all()
            .add(Expr::col((Alias::new("work_se"), Alias::new("user_id"))).eq(*reader));
        self.insert_work_tallies(waiting(of_reader)).await
    }

    async fn insert_work_tallies(&self, counts: SelectStatement) -> StoreResult<()> {
        let insert = Query::insert()
            .into_table(work_tally::Entity)
            .columns([
                work_tally::Column::UserId,
                work_tally::Column::PatientId,
                work_tally::Column::Waiting,
                work_tally::Column::CaredUntil,
            ])
            .select_from(counts)
            .map_err(|e| sea_orm::DbErr::Custom(e.to_string()))?
            .to_owned();
        self.db.execute(&insert).await?;
        Ok(())
    }
}

impl Reader {
    /// The patients whose measurements `ids` are, for the tallies a deletion counts again.
    pub(super) async fn creators_of(&self, ids: &[Id]) -> StoreResult<Vec<Id>> {
        Ok(measurement::Entity::find()
            .select_only()
            .column(measurement::Column::CreatorId)
            .distinct()
            .filter(measurement::Column::Id.is_in(ids.iter().copied()))
            .into_tuple()
            .all(&self.db)
            .await?)
    }
}
