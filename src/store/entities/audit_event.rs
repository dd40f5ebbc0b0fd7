//! `audit_events`: the append-only audit trail.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "audit_events")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    /// Who acted.
    pub actor_id: Id,
    /// What was done, e.g. `measurement.view` or `user.deactivate`.
    pub action: String,
    /// The patient whose data was concerned, if any.
    pub patient_id: Option<Id>,
    /// The kind of object acted on: `measurement`, `report`, `user`, …
    pub object_kind: String,
    pub object_id: Option<Id>,
    /// A short description of the change (never secrets or file tokens).
    #[sea_orm(column_type = "Text")]
    pub detail: String,
    pub creation_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
