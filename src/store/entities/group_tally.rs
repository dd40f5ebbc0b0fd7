//! `group_tallies`: how many measurements are shared with a group (see `store::group_tallies`).

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "group_tallies")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub group_id: Id,
    /// Its `measurement_groups` rows.
    pub measurements: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
