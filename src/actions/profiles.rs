//! Profiles: the medical and personal details of a user.

use sea_orm::Condition;

use super::{ActionResult, Actions, EntryExt, done, entry};
use crate::domain::id::Id;
use crate::domain::profile::ProfilePatch;
use crate::store::AuditAction;
use crate::store::Viewer;
use crate::store::entities::profile;

impl Actions {
    /// A user's profile, if `viewer` sees the user; the read is recorded (a profile holds a
    /// patient's medical details).
    pub async fn view_profile(
        &self,
        viewer: &Viewer,
        id: &Id,
    ) -> ActionResult<Option<profile::Model>> {
        let found = self.store.visible_profile(viewer, id).await?;
        if found.is_some() {
            self.store
                .record_read(entry(viewer, AuditAction::ProfileView, "profile", id).patient(id))
                .await?;
        }
        Ok(found)
    }

    /// Merges `patch` into every profile that matches `which` and that `viewer` sees (who may
    /// see a profile may change it); each profile changed gets its own audit record, naming
    /// the fields (never their values). Returns how many were changed.
    pub async fn update_profiles(
        &self,
        viewer: &Viewer,
        which: Condition,
        patch: &ProfilePatch,
    ) -> ActionResult<u64> {
        let fields: Vec<&str> = patch.as_map().keys().map(String::as_str).collect();
        let fields = fields.join(", ");
        self.act(async |tx| {
            let changed = tx.update_profiles(viewer, which, patch).await?;
            let records: Vec<_> = changed
                .iter()
                .map(|id| {
                    entry(viewer, AuditAction::ProfileUpdate, "profile", id)
                        .patient(id)
                        .detail(fields.clone())
                })
                .collect();
            done(changed.len() as u64, records)
        })
        .await
    }
}
