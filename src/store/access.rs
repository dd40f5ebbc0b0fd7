//! Who may do what. `visibility` decides what a user may see; these rules decide what it may do
//! with what it sees. The JSON API and the portal both ask here and nowhere else, so the two
//! front doors cannot disagree: what one may not see is [`StoreError::NotFound`], what one sees
//! but may not do is [`StoreError::Denied`].

use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};

use super::entities::{group, staff_enlistment, user};
use super::{Reader, StoreError, StoreResult, Viewer};
use crate::domain::id::Id;

/// Work reserved to administrators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminTask {
    /// Create accounts for others.
    CreateUsers,
    /// Create groups.
    CreateGroups,
    /// Grant or revoke global roles.
    ChangeRoles,
    /// Activate or deactivate accounts and lift login lockouts.
    ChangeActivation,
    /// Reset a user's password: every login ends, and a link to set a new one is e-mailed.
    ResetPasswords,
    /// Add users to or remove them from a group's staff.
    ChangeStaffEnlistments,
    /// The portal's administration pages: every user, group and prescription.
    Administer,
    /// Read the scheduler's job queue.
    ReadJobs,
    /// Have the due periodic reports made now rather than at the scheduler's next tick.
    MakeDueReports,
    /// Read the audit trail.
    ReadAuditTrail,
    /// Choose the events that reach a group's staff, and manage webhook endpoints.
    ManageNotifications,
    /// Set or lift a legal hold on a patient.
    SetLegalHolds,
    /// Erase a patient's data.
    EraseUsers,
}

impl AdminTask {
    /// The task as the end of "you are not allowed to …".
    fn describe(self) -> &'static str {
        match self {
            AdminTask::CreateUsers => "create users",
            AdminTask::CreateGroups => "create groups",
            AdminTask::ChangeRoles => "change roles",
            AdminTask::ChangeActivation => "change activation",
            AdminTask::ResetPasswords => "reset passwords",
            AdminTask::ChangeStaffEnlistments => "change staff enlistments",
            AdminTask::Administer => "administer users and groups",
            AdminTask::ReadJobs => "read the job queue",
            AdminTask::MakeDueReports => "make the due reports",
            AdminTask::ReadAuditTrail => "read the audit trail",
            AdminTask::ManageNotifications => "manage notifications and webhooks",
            AdminTask::SetLegalHolds => "set legal holds",
            AdminTask::EraseUsers => "erase users",
        }
    }
}

/// Work on a group's patients, done by the group's staff and by administrators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupTask {
    /// Start or extend a prescription.
    EnlistPatients,
    /// End a prescription now.
    EndEnlistments,
}

impl GroupTask {
    fn describe(self) -> &'static str {
        match self {
            GroupTask::EnlistPatients => "enlist patients in this group",
            GroupTask::EndEnlistments => "end enlistments in this group",
        }
    }
}

/// Why a user who sees an object may not do what it asked. The message is the one callers are
/// shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    /// Administrators only.
    #[error("you are not allowed to {}", .0.describe())]
    AdminOnly(AdminTask),
    /// The staff of the group and administrators only.
    #[error("you are not allowed to {}", .0.describe())]
    GroupStaffOnly(GroupTask),
    /// An account is changed by its owner and by administrators.
    #[error("you are not allowed to change this user")]
    OtherUser,
    /// Reports are made about patients, by someone else.
    #[error("reports are made by administrators and by the staff of the patient's group")]
    OwnReport,
    /// Reviews are of patients' measurements, by someone else.
    #[error("measurements are reviewed by the staff of the patient's group and by administrators")]
    OwnReview,
    /// An administrator would lock itself out.
    #[error("administrators cannot deactivate themselves or give up their own admin role")]
    LockOut,
    /// Only staff and administrators have patients.
    #[error("only staff and administrators have patients")]
    NoPatients,
    /// A patient's whole record leaves Tacho for the patient and administrators only.
    #[error("a patient's record is exported by the patient and by administrators")]
    OthersRecord,
    /// A patient's consent is withdrawn by the patient, or by an administrator for them.
    #[error("a consent is withdrawn by its patient and by administrators")]
    OthersConsent,
}

impl Viewer {
    /// The viewer acting as `user`.
    pub fn of(user: &user::Model) -> Viewer {
        Viewer {
            user_id: user.id,
            admin: user.is_admin(),
        }
    }

    /// Administrators only.
    pub fn administer(&self, task: AdminTask) -> Result<(), Denied> {
        if self.admin {
            Ok(())
        } else {
            Err(Denied::AdminOnly(task))
        }
    }

    /// An account is changed by itself and by administrators.
    pub fn may_change_user(&self, user_id: &Id) -> Result<(), Denied> {
        if self.admin || self.user_id == *user_id {
            Ok(())
        } else {
            Err(Denied::OtherUser)
        }
    }

    /// Whether the viewer may make a manual report about patient `patient_id`, which it sees:
    /// administrators always; anyone else who sees a patient other than itself is staff of
    /// that patient's group.
    pub fn may_report_on(&self, patient_id: &Id) -> Result<(), Denied> {
        if self.admin || self.user_id != *patient_id {
            Ok(())
        } else {
            Err(Denied::OwnReport)
        }
    }

    /// Whether the viewer may review (label, diagnose) a measurement of `owner_id`, which it
    /// sees: whoever sees another user's measurement is staff of its group or an administrator.
    pub fn may_review(&self, owner_id: &Id) -> Result<(), Denied> {
        if self.user_id != *owner_id {
            Ok(())
        } else {
            Err(Denied::OwnReview)
        }
    }

    /// A patient's consent is withdrawn by the patient, or by an administrator on their
    /// behalf; the staff who would lose the patient do not decide it for them.
    pub fn may_withdraw_consent(&self, patient_id: &Id) -> Result<(), Denied> {
        if self.admin || self.user_id == *patient_id {
            Ok(())
        } else {
            Err(Denied::OthersConsent)
        }
    }

    /// Whether the viewer may export the whole record of `patient_id`, which it sees: the
    /// patient, and administrators for them. A physician sees only what was shared with its
    /// groups, so an export by one would be a part presented as the whole.
    pub fn may_export(&self, patient_id: &Id) -> Result<(), Denied> {
        if self.admin || self.user_id == *patient_id {
            Ok(())
        } else {
            Err(Denied::OthersRecord)
        }
    }

    /// An administrator may deactivate or demote anyone but itself: a portal or API without
    /// any administrator left could not be given one back.
    pub fn may_lock_out(&self, user_id: &Id, task: AdminTask) -> Result<(), Denied> {
        self.administer(task)?;
        if self.user_id == *user_id {
            Err(Denied::LockOut)
        } else {
            Ok(())
        }
    }
}

impl From<Denied> for StoreError {
    fn from(denied: Denied) -> Self {
        StoreError::Denied(denied)
    }
}

impl Reader {
    /// User `id` for an administrator's `task`.
    pub async fn user_to_administer(
        &self,
        viewer: &Viewer,
        id: &Id,
        task: AdminTask,
    ) -> StoreResult<user::Model> {
        let user = self.visible_user(viewer, id).await?;
        viewer.administer(task)?;
        Ok(user)
    }

    /// A page of every user, for the administration pages.
    pub async fn users_to_administer(
        &self,
        viewer: &Viewer,
        spec: &crate::store::query::ListSpec,
    ) -> StoreResult<(Vec<super::UserRecord>, Option<u64>)> {
        viewer.administer(AdminTask::Administer)?;
        self.list_users(viewer, spec).await
    }

    /// The account with this e-mail address, for an administrator's form that names users by
    /// their address.
    pub async fn user_to_administer_by_email(
        &self,
        viewer: &Viewer,
        email: &str,
    ) -> StoreResult<Option<user::Model>> {
        viewer.administer(AdminTask::Administer)?;
        self.user_by_email(viewer, email).await
    }

    /// User `id` for a change of its account (names, language, time zone).
    pub async fn user_to_change(&self, viewer: &Viewer, id: &Id) -> StoreResult<user::Model> {
        let user = self.visible_user(viewer, id).await?;
        viewer.may_change_user(id)?;
        Ok(user)
    }

    /// Patient `id`, whose consent the viewer withdraws: the patient, and administrators.
    pub async fn consent_to_withdraw(&self, viewer: &Viewer, id: &Id) -> StoreResult<user::Model> {
        let patient = self.visible_user(viewer, id).await?;
        viewer.may_withdraw_consent(id)?;
        Ok(patient)
    }

    /// Group `id` for work on its patients: its staff and administrators.
    pub async fn group_to_staff(
        &self,
        viewer: &Viewer,
        id: &Id,
        task: GroupTask,
    ) -> StoreResult<group::Model> {
        let group = self.visible_group(viewer, id).await?;
        if !viewer.admin && !self.is_staff_of(&viewer.user_id, id).await? {
            return Err(Denied::GroupStaffOnly(task).into());
        }
        Ok(group)
    }

    /// Patient `id` for a manual periodic report.
    pub async fn patient_to_report_on(&self, viewer: &Viewer, id: &Id) -> StoreResult<user::Model> {
        let patient = self.visible_user(viewer, id).await?;
        viewer.may_report_on(&patient.id)?;
        Ok(patient)
    }

    /// Patient `id` for an export of its whole record.
    pub async fn patient_to_export(&self, viewer: &Viewer, id: &Id) -> StoreResult<user::Model> {
        let patient = self.visible_user(viewer, id).await?;
        viewer.may_export(&patient.id)?;
        Ok(patient)
    }

    /// Whether the viewer has a list of patients: administrators and staff of any group.
    pub async fn may_list_patients(&self, viewer: &Viewer) -> StoreResult<()> {
        if viewer.admin {
            return Ok(());
        }
        let staff = staff_enlistment::Entity::find()
            .filter(staff_enlistment::Column::UserId.eq(viewer.user_id))
            .count(&self.db)
            .await?;
        if staff == 0 {
            return Err(Denied::NoPatients.into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn viewer(id: &str, admin: bool) -> Viewer {
        Viewer {
            user_id: id.into(),
            admin,
        }
    }

    #[test]
    fn administrators_do_admin_tasks_and_nobody_else() {
        assert_eq!(viewer("a", true).administer(AdminTask::ChangeRoles), Ok(()));
        assert_eq!(
            viewer("p", false).administer(AdminTask::ChangeRoles),
            Err(Denied::AdminOnly(AdminTask::ChangeRoles))
        );
        assert_eq!(
            Denied::AdminOnly(AdminTask::CreateGroups).to_string(),
            "you are not allowed to create groups"
        );
    }

    #[test]
    fn accounts_are_changed_by_their_owner_and_administrators() {
        assert_eq!(viewer("p", false).may_change_user(&"p".into()), Ok(()));
        assert_eq!(viewer("a", true).may_change_user(&"p".into()), Ok(()));
        assert_eq!(
            viewer("s", false).may_change_user(&"p".into()),
            Err(Denied::OtherUser)
        );
    }

    #[test]
    fn reports_and_reviews_are_about_someone_else() {
        assert_eq!(viewer("s", false).may_report_on(&"p".into()), Ok(()));
        assert_eq!(
            viewer("p", false).may_report_on(&"p".into()),
            Err(Denied::OwnReport)
        );
        // An administrator's own measurements may be reported on, but not self-reviewed.
        assert_eq!(viewer("a", true).may_report_on(&"a".into()), Ok(()));
        assert_eq!(viewer("s", false).may_review(&"p".into()), Ok(()));
        assert_eq!(
            viewer("a", true).may_review(&"a".into()),
            Err(Denied::OwnReview)
        );
    }

    #[test]
    fn consents_are_withdrawn_by_their_patient_and_administrators() {
        assert_eq!(viewer("p", false).may_withdraw_consent(&"p".into()), Ok(()));
        assert_eq!(viewer("a", true).may_withdraw_consent(&"p".into()), Ok(()));
        assert_eq!(
            viewer("s", false).may_withdraw_consent(&"p".into()),
            Err(Denied::OthersConsent)
        );
    }

    #[test]
    fn a_record_is_exported_by_its_patient_and_administrators() {
        assert_eq!(viewer("p", false).may_export(&"p".into()), Ok(()));
        assert_eq!(viewer("a", true).may_export(&"p".into()), Ok(()));
        assert_eq!(
            viewer("s", false).may_export(&"p".into()),
            Err(Denied::OthersRecord)
        );
    }

    #[test]
    fn administrators_cannot_lock_themselves_out() {
        let task = AdminTask::ChangeActivation;
        assert_eq!(viewer("a", true).may_lock_out(&"b".into(), task), Ok(()));
        assert_eq!(
            viewer("a", true).may_lock_out(&"a".into(), task),
            Err(Denied::LockOut)
        );
        assert_eq!(
            viewer("s", false).may_lock_out(&"b".into(), task),
            Err(Denied::AdminOnly(task))
        );
    }
}
