//! `group_notification_settings`: the events a group's administrators let reach its staff;
//! no row means every event.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "group_notification_settings")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub group_id: Id,
    /// Event kinds, separated by spaces.
    pub staff_events: String,
    pub update_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
