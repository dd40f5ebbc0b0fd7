//! Who may see what. One set of rules, used by every query of the API and the portal:
//! - a user sees itself and its own documents;
//! - staff see a patient's record (account, profile) while the patient holds an active
//!   enlistment (a running prescription) in a group they are staff in;
//! - staff see a periodic report whose period overlaps an enlistment of its patient in one of
//!   their groups, so the report made when a prescription ends stays with the group that
//!   prescribed it, and a report of a time outside any of its prescriptions does not;
//! - staff see a measurement, and its report documents, only if the measurement's `groupIds`
//!   hold one of their groups. A measurement takes the groups of the enlistments active when it
//!   is made, so what a patient records after a prescription ends is not shared with its group;
//! - administrators see everything.
//!
//! "Active" is judged at the store's clock, passed in as `now` (epoch ms).

use sea_orm::sea_query::{Alias, Condition, Expr, ExprTrait, Query, SelectStatement};

use crate::domain::id::Id;

/// The user on whose behalf a query runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Viewer {
    pub user_id: Id,
    pub admin: bool,
}

fn col(table: &str, column: &str) -> Expr {
    Expr::col((Alias::new(table), Alias::new(column)))
}

/// The groups `user_id` is staff in.
pub fn staff_groups_of(user_id: &Id) -> SelectStatement {
    Query::select()
        .column((Alias::new("staff_enlistments"), Alias::new("group_id")))
        .from(Alias::new("staff_enlistments"))
        .and_where(col("staff_enlistments", "user_id").eq(*user_id))
        .to_owned()
}

/// The patients (user ids) with an enlistment active at `now` in a group `user_id` is staff in.
pub fn patients_of_staff(user_id: &Id, now: i64) -> SelectStatement {
    Query::select()
        .column((Alias::new("patient_enlistments"), Alias::new("user_id")))
        .from(Alias::new("patient_enlistments"))
        .and_where(col("patient_enlistments", "group_id").in_subquery(staff_groups_of(user_id)))
        .and_where(col("patient_enlistments", "expiry_timestamp").gt(now))
        .to_owned()
}

/// The measurements (ids) shared with a group `user_id` is staff in.
fn measurements_shared_with(user_id: &Id) -> SelectStatement {
    Query::select()
        .column((
            Alias::new("measurement_groups"),
            Alias::new("measurement_id"),
        ))
        .from(Alias::new("measurement_groups"))
        .and_where(col("measurement_groups", "group_id").in_subquery(staff_groups_of(user_id)))
        .to_owned()
}

/// Only the user `user_id` (for lists keyed by a user id in `table.column`).
pub fn only_user(table: &str, column: &str, user_id: &Id) -> Condition {
    Condition::all().add(col(table, column).eq(*user_id))
}

impl Viewer {
    /// Users, or a patient's record keyed by a user id in `table.column`, this viewer may see
    /// at `now`.
    pub fn users(&self, table: &str, column: &str, now: i64) -> Condition {
        if self.admin {
            return Condition::all();
        }
        Condition::any()
            .add(col(table, column).eq(self.user_id))
            .add(col(table, column).in_subquery(patients_of_staff(&self.user_id, now)))
    }

    /// Measurements, keyed by their id in `table.id_column` and their patient in
    /// `table.patient_column`, this viewer may see: its own, and those whose groups hold one
    /// of its staff groups.
    pub fn measurements(&self, table: &str, id_column: &str, patient_column: &str) -> Condition {
        if self.admin {
            return Condition::all();
        }
        Condition::any()
            .add(col(table, patient_column).eq(self.user_id))
            .add(col(table, id_column).in_subquery(measurements_shared_with(&self.user_id)))
    }

    /// Periodic reports (the `reports` table) this viewer may see: its own, and those whose
    /// period overlaps an enlistment of the patient in one of its staff groups.
    pub fn periodic_reports(&self) -> Condition {
        if self.admin {
            return Condition::all();
        }
        let prescribed = Query::select()
            .expr(Expr::val(1))
            .from(Alias::new("patient_enlistments"))
            .and_where(
                col("patient_enlistments", "user_id")
                    .equals((Alias::new("reports"), Alias::new("user_id"))),
            )
            .and_where(
                col("patient_enlistments", "group_id").in_subquery(staff_groups_of(&self.user_id)),
            )
            // Up to and including the period's last instant: a manual report "up to now"
            // covers a prescription started that same millisecond.
            .and_where(
                col("patient_enlistments", "creation_timestamp")
                    .lte(col("reports", "period_end_timestamp")),
            )
            .and_where(
                col("patient_enlistments", "expiry_timestamp")
                    .gt(col("reports", "period_start_timestamp")),
            )
            .to_owned();
        Condition::any()
            .add(col("reports", "user_id").eq(self.user_id))
            .add(Expr::exists(prescribed))
    }

    /// Groups this viewer may see: those it is staff or patient in.
    pub fn groups(&self) -> Condition {
        if self.admin {
            return Condition::all();
        }
        let patient_groups = Query::select()
            .column((Alias::new("patient_enlistments"), Alias::new("group_id")))
            .from(Alias::new("patient_enlistments"))
            .and_where(col("patient_enlistments", "user_id").eq(self.user_id))
            .to_owned();
        Condition::any()
            .add(col("groups", "id").in_subquery(staff_groups_of(&self.user_id)))
            .add(col("groups", "id").in_subquery(patient_groups))
    }
}
