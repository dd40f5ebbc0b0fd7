//! `webhook_deliveries`: the log of every attempt to deliver an event to an endpoint.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_deliveries")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    pub endpoint_id: Id,
    pub event_id: Id,
    /// 1 for the first attempt.
    pub attempt: i32,
    /// `delivered` (a 2xx answer) or `failed`.
    pub outcome: String,
    /// The receiver's HTTP status, if it answered.
    pub status_code: Option<i32>,
    pub latency_ms: i64,
    /// Why it failed: the status, or the connection's error.
    pub error: Option<String>,
    pub creation_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
