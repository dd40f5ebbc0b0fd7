//! Consents: every consent a patient gave or withdrew, with the version of its text, the door
//! it came through and who recorded it. Rows are only added, never changed, so the history is
//! what was consented to when; the latest of a kind (and group) is the one in force.

use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, Set};

use super::entities::consent::{self, ConsentDoor, ConsentKind};
use super::{Reader, Scope, StoreResult, Tx};
use crate::domain::id::Id;

/// A consent to record; the store gives it its id and time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewConsent {
    /// The patient whose consent it is.
    pub user_id: Id,
    pub kind: ConsentKind,
    /// The group shared with, for [`ConsentKind::GroupSharing`].
    pub group_id: Option<Id>,
    /// The version of the text (`domain::consent`).
    pub text_version: String,
    pub door: ConsentDoor,
    /// Given, or withdrawn.
    pub given: bool,
    /// Who recorded it: the patient, or who did for them.
    pub actor_id: Id,
}

impl Reader {
    /// The consents of patient `patient`, oldest first, if `scope` sees the patient's record;
    /// none otherwise.
    pub async fn consents_of(
        &self,
        scope: &dyn Scope,
        patient: &Id,
    ) -> StoreResult<Vec<consent::Model>> {
        Ok(consent::Entity::find()
            .filter(consent::Column::UserId.eq(*patient))
            .filter(scope.users("consents", "user_id", self.now()))
            // Ids grow within a second, so two rows of the same millisecond keep their order.
            .order_by_asc(consent::Column::CreationTimestamp)
            .order_by_asc(consent::Column::Id)
            .all(&self.db)
            .await?)
    }
}

impl Tx {
    /// Records a consent given or withdrawn, now.
    pub async fn record_consent(&self, new: NewConsent) -> StoreResult<consent::Model> {
        Ok(consent::ActiveModel {
            id: Set(Id::generate()),
            user_id: Set(new.user_id),
            kind: Set(new.kind),
            group_id: Set(new.group_id),
            text_version: Set(new.text_version),
            door: Set(new.door),
            given: Set(new.given),
            actor_id: Set(new.actor_id),
            creation_timestamp: Set(self.now()),
        }
        .insert(&self.db)
        .await?)
    }
}
