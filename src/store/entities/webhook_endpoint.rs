//! `webhook_endpoints`: a clinic system's address for a group's events. Its signing secret is
//! derived from its id under a server key, never stored.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_endpoints")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    pub group_id: Id,
    pub url: String,
    /// Event kinds, separated by spaces.
    pub events: String,
    pub enabled: bool,
    pub disabled_reason: Option<String>,
    pub creator_id: Id,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
