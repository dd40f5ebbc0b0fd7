//! Enlistments: a patient's prescription in a group, and a user's place on a group's staff.

use super::{ActionError, ActionResult, Actions, EntryExt, entry};
use crate::domain::id::Id;
use crate::domain::time::{check_millis, rfc3339_millis};
use crate::store::entities::user;
use crate::store::{AdminTask, GroupTask, StoreError, Viewer};

impl Actions {
    /// Starts or extends a patient's prescription in a group until `expiry` (epoch ms, in the
    /// future): administrators, and the staff of that group.
    pub async fn enlist_patient(
        &self,
        viewer: &Viewer,
        patient: &Id,
        group: &Id,
        expiry: i64,
    ) -> ActionResult<()> {
        let store = self.store.begin().await?;
        store.visible_user(viewer, patient).await?;
        store
            .group_to_staff(viewer, group, GroupTask::EnlistPatients)
            .await?;
        if expiry <= store.clock().now_millis() {
            return Err(ActionError::invalid(
                "`expiry_timestamp` must be in the future",
                "admin-enlist-invalid",
            ));
        }
        // The scheduler counts days up to the expiry and reports show it as a date.
        check_millis("expiry_timestamp", expiry)
            .map_err(|message| ActionError::invalid(message, "admin-enlist-invalid"))?;
        store.enlist_patient(patient, group, expiry).await?;
        store
            .audit(
                entry(viewer, "enlistment.patient", "user", patient)
                    .patient(patient)
                    .detail(format!("group {group} until {}", rfc3339_millis(expiry))),
            )
            .await?;
        Ok(store.commit().await?)
    }

    /// Ends a patient's prescription in a group now: administrators, and the group's staff.
    /// Answers the patient's account as it is after the change, which the group's staff may
    /// no longer see.
    pub async fn end_patient_enlistment(
        &self,
        viewer: &Viewer,
        patient: &Id,
        group: &Id,
    ) -> ActionResult<user::Model> {
        let store = self.store.begin().await?;
        let account = store.visible_user(viewer, patient).await?;
        store
            .group_to_staff(viewer, group, GroupTask::EndEnlistments)
            .await?;
        store.end_patient_enlistment(patient, group).await?;
        store
            .audit(
                entry(viewer, "enlistment.patient.end", "user", patient)
                    .patient(patient)
                    .detail(format!("group {group}")),
            )
            .await?;
        store.commit().await?;
        Ok(account)
    }

    /// Adds a user to a group's staff with `roles` (administrators).
    pub async fn enlist_staff(
        &self,
        viewer: &Viewer,
        user: &Id,
        group: &Id,
        roles: Vec<String>,
    ) -> ActionResult<()> {
        let store = self.store.begin().await?;
        store
            .user_to_administer(viewer, user, AdminTask::ChangeStaffEnlistments)
            .await?;
        store.visible_group(viewer, group).await?;
        let detail = format!("group {group}, roles {}", roles.join(","));
        store.enlist_staff(user, group, roles).await?;
        store
            .audit(entry(viewer, "enlistment.staff", "user", user).detail(detail))
            .await?;
        Ok(store.commit().await?)
    }

    /// Removes a user from a group's staff (administrators).
    pub async fn remove_staff(&self, viewer: &Viewer, user: &Id, group: &Id) -> ActionResult<()> {
        let store = self.store.begin().await?;
        store
            .user_to_administer(viewer, user, AdminTask::ChangeStaffEnlistments)
            .await?;
        store.remove_staff(user, group).await?;
        store
            .audit(
                entry(viewer, "enlistment.staff.remove", "user", user)
                    .detail(format!("group {group}")),
            )
            .await?;
        store.commit().await.map_err(StoreError::into)
    }
}
