//! `measurement_users`: one row per element of a measurement's list field, so it can be queried.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "measurement_users")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub measurement_id: Id,
    #[sea_orm(primary_key, auto_increment = false)]
    pub user_id: Id,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
