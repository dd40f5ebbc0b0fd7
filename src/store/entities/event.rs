//! `events`: the outbox. Each row is written in the transaction of what it reports, and waits
//! (no `fanned_out_timestamp`) until a worker fans it out to its readers.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;
use crate::domain::notification::EventKind;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "events")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    pub kind: EventKind,
    /// The patient the event is about (for `webhook.disabled`, the administrator who made the
    /// endpoint).
    pub patient_id: Id,
    /// Who caused it, if a person did; the actor is not told of its own act.
    pub actor_id: Option<Id>,
    pub measurement_id: Option<Id>,
    /// A periodic report, a measurement report document, or a webhook endpoint.
    pub report_id: Option<Id>,
    /// A short, non-clinical detail: the result class of an analysis, an endpoint's address.
    pub detail: String,
    pub creation_timestamp: i64,
    /// When its inbox entries and delivery jobs were written; none while it waits.
    pub fanned_out_timestamp: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
