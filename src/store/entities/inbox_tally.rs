//! `inbox_tallies`: how many inbox entries a reader holds about a patient (see
//! `store::inbox_tallies`).

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "inbox_tallies")]
pub struct Model {
    /// The reader.
    #[sea_orm(primary_key, auto_increment = false)]
    pub user_id: Id,
    #[sea_orm(primary_key, auto_increment = false)]
    pub patient_id: Id,
    /// The reader's entries about the patient shown in its inbox.
    pub entries: i64,
    /// Those of them the entries' own rules let the reader read as staff.
    pub readable: i64,
    /// Until when the reader cares for the patient as staff (see
    /// [`crate::store::visibility::kept_care`]).
    pub cared_until: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
