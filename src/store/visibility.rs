//! Who may see what. One set of rules, used by every query of the API and the portal:
//! a user sees itself; staff see the patients of the groups they are staff in; admins see all.

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

/// The patients (user ids) enlisted in any group `user_id` is staff in.
pub fn patients_of_staff(user_id: &Id) -> SelectStatement {
    Query::select()
        .column((Alias::new("patient_enlistments"), Alias::new("user_id")))
        .from(Alias::new("patient_enlistments"))
        .and_where(col("patient_enlistments", "group_id").in_subquery(staff_groups_of(user_id)))
        .to_owned()
}

/// Only the user `user_id` (for lists keyed by a user id in `table.column`).
pub fn only_user(table: &str, column: &str, user_id: &Id) -> Condition {
    Condition::all().add(col(table, column).eq(*user_id))
}

impl Viewer {
    /// Users (or anything keyed by a user id in `table.column`) this viewer may see.
    pub fn users(&self, table: &str, column: &str) -> Condition {
        if self.admin {
            return Condition::all();
        }
        Condition::any()
            .add(col(table, column).eq(self.user_id))
            .add(col(table, column).in_subquery(patients_of_staff(&self.user_id)))
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
