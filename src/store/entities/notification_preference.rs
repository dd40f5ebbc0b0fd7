//! `notification_preferences`: what a reader chose to receive; no row means everything.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "notification_preferences")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub user_id: Id,
    /// `kind:channel` pairs turned off, separated by spaces.
    pub muted: String,
    pub daily_digest: bool,
    pub attach_pdf: bool,
    pub update_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
