//! `work_tallies`: how many of a patient's measurements wait in a reader's work list (see
//! `store::work_tallies`).

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "work_tallies")]
pub struct Model {
    /// The reader.
    #[sea_orm(primary_key, auto_increment = false)]
    pub user_id: Id,
    #[sea_orm(primary_key, auto_increment = false)]
    pub patient_id: Id,
    /// The patient's measurements waiting for a review and shared with one of the reader's
    /// staff groups.
    pub waiting: i64,
    /// Until when the reader cares for the patient as staff (see
    /// [`crate::store::visibility::kept_care`]).
    pub cared_until: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
