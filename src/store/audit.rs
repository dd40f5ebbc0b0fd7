//! The audit trail: appended to by the portal (and the API) whenever someone views or
//! downloads a patient's data or changes something; read by administrators.

use sea_orm::{ActiveValue::Set, EntityTrait, PaginatorTrait, QueryOrder, QuerySelect};

use super::entities::audit_event;
use super::{AdminTask, Store, StoreResult, Viewer};
use crate::domain::id::Id;

/// One entry to append.
#[derive(Debug, Clone)]
pub struct AuditEntry {
    pub actor_id: Id,
    pub action: &'static str,
    pub patient_id: Option<Id>,
    pub object_kind: &'static str,
    pub object_id: Option<Id>,
    pub detail: String,
}

impl Store {
    /// Appends an entry to the audit trail.
    pub async fn audit(&self, entry: AuditEntry) -> StoreResult<()> {
        audit_event::Entity::insert(audit_event::ActiveModel {
            id: Set(Id::generate()),
            actor_id: Set(entry.actor_id),
            action: Set(entry.action.to_owned()),
            patient_id: Set(entry.patient_id),
            object_kind: Set(entry.object_kind.to_owned()),
            object_id: Set(entry.object_id),
            detail: Set(entry.detail.chars().take(500).collect()),
            creation_timestamp: Set(self.now()),
        })
        .exec_without_returning(&self.db)
        .await?;
        Ok(())
    }

    /// A page of the audit trail, newest first, with the total.
    pub async fn audit_page(
        &self,
        viewer: &Viewer,
        offset: u64,
        limit: u64,
    ) -> StoreResult<(Vec<audit_event::Model>, u64)> {
        viewer.administer(AdminTask::ReadAuditTrail)?;
        let select = audit_event::Entity::find();
        let total = select.clone().count(&self.db).await?;
        let items = select
            .order_by_desc(audit_event::Column::CreationTimestamp)
            .order_by_desc(audit_event::Column::Id)
            .offset(offset)
            .limit(limit)
            .all(&self.db)
            .await?;
        Ok((items, total))
    }
}
