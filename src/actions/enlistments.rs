//! Enlistments: a patient's prescription in a group, and a user's place on a group's staff.

use super::{ActionError, ActionResult, Actions, EntryExt, consents, done, entry};
use crate::domain::account::StaffRole;
use crate::domain::id::Id;
use crate::domain::time::{check_millis, rfc3339_millis};
use crate::store::entities::consent::ConsentDoor;
use crate::store::entities::user;
use crate::store::{AdminTask, AuditAction, AuditEntry, GroupTask, Tx, Viewer};

impl Actions {
    /// Starts or extends a patient's prescription in a group until `expiry` (epoch ms, in the
    /// future): administrators, and the staff of that group. A prescription that starts
    /// records the patient's consent to sharing with the group, given through `door` and
    /// recorded by `viewer`.
    pub async fn enlist_patient(
        &self,
        viewer: &Viewer,
        patient: &Id,
        group: &Id,
        expiry: i64,
        door: ConsentDoor,
    ) -> ActionResult<()> {
        self.act(async |tx| {
            tx.visible_user(viewer, patient).await?;
            tx.group_to_staff(viewer, group, GroupTask::EnlistPatients)
                .await?;
            if expiry <= tx.clock().now_millis() {
                return Err(ActionError::invalid(
                    "`expiry_timestamp` must be in the future",
                    "admin-enlist-invalid",
                ));
            }
            // The scheduler counts days up to the expiry and reports show it as a date.
            check_millis("expiry_timestamp", expiry)
                .map_err(|message| ActionError::invalid(message, "admin-enlist-invalid"))?;
            let previous = tx.enlist_patient(patient, group, expiry).await?;
            let mut detail = format!("group {group} until {}", rfc3339_millis(expiry));
            if previous.is_some_and(|previous| expiry < previous) {
                // A shortened prescription ends what the group held on the patient now.
                let (links, files) = tx
                    .end_prescription_grants(patient, group, &viewer.user_id)
                    .await?;
                detail.push_str(&ended(links, files));
            }
            let record = entry(viewer, AuditAction::EnlistmentPatient, "user", patient)
                .patient(patient)
                .detail(detail);
            let mut records = vec![record];
            if previous.is_none() {
                // The patient agrees to the group's staff seeing their data when the
                // prescription is made with them; extending it asks nothing new.
                records.push(consents::give_sharing(tx, viewer, patient, group, door).await?);
            }
            done((), records)
        })
        .await
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
        self.act(async |tx| {
            let account = tx.visible_user(viewer, patient).await?;
            tx.group_to_staff(viewer, group, GroupTask::EndEnlistments)
                .await?;
            let record = end_prescription(tx, viewer, patient, group).await?;
            done(account, record)
        })
        .await
    }

    /// Adds a user to a group's staff with `roles` (administrators).
    pub async fn enlist_staff(
        &self,
        viewer: &Viewer,
        user: &Id,
        group: &Id,
        roles: Vec<StaffRole>,
    ) -> ActionResult<()> {
        self.act(async |tx| {
            tx.user_to_administer(viewer, user, AdminTask::ChangeStaffEnlistments)
                .await?;
            tx.visible_group(viewer, group).await?;
            let names: Vec<&str> = roles.iter().map(StaffRole::as_str).collect();
            let detail = format!("group {group}, roles {}", names.join(","));
            tx.enlist_staff(user, group, roles).await?;
            let record = entry(viewer, AuditAction::EnlistmentStaff, "user", user).detail(detail);
            done((), record)
        })
        .await
    }

    /// Removes a user from a group's staff (administrators). What it held through the group
    /// ends with it: its shared links to measurements it no longer sees are revoked, and the
    /// app tokens of those measurements' reports change.
    pub async fn remove_staff(&self, viewer: &Viewer, user: &Id, group: &Id) -> ActionResult<()> {
        self.act(async |tx| {
            let account = tx
                .user_to_administer(viewer, user, AdminTask::ChangeStaffEnlistments)
                .await?;
            tx.remove_staff(user, group).await?;
            let (links, files) = tx
                .end_staff_grants(&Viewer::of(&account), group, &viewer.user_id)
                .await?;
            let record = entry(viewer, AuditAction::EnlistmentStaffRemove, "user", user)
                .detail(format!("group {group}{}", ended(links, files)));
            done((), record)
        })
        .await
    }
}

/// Ends `patient`'s running prescription in `group` now, with what it granted (the links the
/// group's staff made to the patient's data, the tokens of the report files of the
/// measurements shared with the group), by `viewer`, whose rights the caller checked; answers
/// the audit record. The one way a prescription ends: by its staff or an administrator, or by
/// the patient withdrawing consent to sharing with the group. `NotFound` when none runs.
pub(super) async fn end_prescription(
    tx: &Tx,
    viewer: &Viewer,
    patient: &Id,
    group: &Id,
) -> ActionResult<AuditEntry> {
    tx.end_patient_enlistment(patient, group).await?;
    let (links, files) = tx
        .end_prescription_grants(patient, group, &viewer.user_id)
        .await?;
    Ok(
        entry(viewer, AuditAction::EnlistmentPatientEnd, "user", patient)
            .patient(patient)
            .detail(format!("group {group}{}", ended(links, files))),
    )
}

/// What ending a grant did, for its audit record.
fn ended(links: u64, files: u64) -> String {
    if links + files == 0 {
        String::new()
    } else {
        format!("; {links} shared links revoked, {files} report files given new tokens")
    }
}
