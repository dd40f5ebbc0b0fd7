//! `notifications`: one event as one reader received it; unique per reader and event.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;
use crate::domain::notification::EventKind;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "notifications")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    /// The reader.
    pub user_id: Id,
    pub event_id: Id,
    pub kind: EventKind,
    pub patient_id: Id,
    pub measurement_id: Option<Id>,
    pub report_id: Option<Id>,
    pub detail: String,
    /// Shown in the reader's inbox (the reader may have turned the inbox off for its kind and
    /// kept e-mail).
    pub in_inbox: bool,
    /// Waiting for the reader's daily digest e-mail.
    pub digest: bool,
    /// Read by the reader: `read_at` is set (kept as a flag so RQL can ask for unread
    /// entries).
    pub read: bool,
    pub read_at: Option<i64>,
    pub creation_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
