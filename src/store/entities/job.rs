//! `jobs`: queued background work with its lease.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "jobs")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub kind: String,
    /// Unique: enqueuing the same work twice is a no-op.
    pub dedupe_key: String,
    /// JSON text the job's handler understands.
    #[sea_orm(column_type = "Text")]
    pub payload: String,
    /// `queued`, `running`, `done` or `failed`.
    pub status: String,
    pub attempts: i32,
    pub max_attempts: i32,
    pub run_after: i64,
    pub lease_until: Option<i64>,
    pub claimed_by: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub last_error: Option<String>,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
