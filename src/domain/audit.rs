//! What the audit trail records: the name of each kind of action and read, as the trail
//! stores it (`object.verb`) and as administrators search it.

/// An action or read the audit trail records. Its stored name never changes once written:
/// the trail of past years is searched by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::VariantArray)]
pub enum AuditAction {
    // Accounts.
    /// An administrator created an account for someone.
    #[strum(serialize = "user.create")]
    UserCreate,
    /// Someone registered an account for themselves.
    #[strum(serialize = "user.register")]
    UserRegister,
    /// An account's own fields changed (the fields are named, never their values).
    #[strum(serialize = "account.update")]
    AccountUpdate,
    /// A user changed their own password.
    #[strum(serialize = "account.password")]
    AccountPassword,
    /// Someone asked for a password-reset link for an address.
    #[strum(serialize = "account.password.reset.request")]
    AccountPasswordResetRequest,
    /// A password was reset with a link.
    #[strum(serialize = "account.password.reset")]
    AccountPasswordReset,
    /// An administrator sent a user a password-reset link.
    #[strum(serialize = "user.password.reset")]
    UserPasswordReset,
    /// A user asked to change their address; the link went to the new one.
    #[strum(serialize = "account.email.change.request")]
    AccountEmailChangeRequest,
    /// An address change was confirmed from the new address.
    #[strum(serialize = "account.email.change")]
    AccountEmailChange,
    /// A pending address change was stopped from the old address.
    #[strum(serialize = "account.email.change.stop")]
    AccountEmailChangeStop,
    /// An administrator activated an account.
    #[strum(serialize = "user.activate")]
    UserActivate,
    /// An administrator deactivated an account.
    #[strum(serialize = "user.deactivate")]
    UserDeactivate,
    /// An administrator lifted a lockout after failed logins.
    #[strum(serialize = "user.unblock")]
    UserUnblock,
    /// An administrator granted or revoked global roles.
    #[strum(serialize = "user.roles")]
    UserRoles,
    /// A patient's account was read.
    #[strum(serialize = "user.view")]
    UserView,
    /// A page of accounts was read (one record per patient on it).
    #[strum(serialize = "user.list")]
    UserList,

    // Logins.
    /// A login succeeded.
    #[strum(serialize = "session.login")]
    SessionLogin,
    /// A login was refused (recorded by no one, about the account the address names).
    #[strum(serialize = "session.login.failed")]
    SessionLoginFailed,
    /// A user ended every login of their account.
    #[strum(serialize = "session.logout.everywhere")]
    SessionLogoutEverywhere,
    /// A refresh grant rotated a login's tokens.
    #[strum(serialize = "token.refresh")]
    TokenRefresh,
    /// A login's tokens were revoked (RFC 7009).
    #[strum(serialize = "token.revoke")]
    TokenRevoke,

    // Profiles.
    /// A profile was read.
    #[strum(serialize = "profile.view")]
    ProfileView,
    /// A profile changed (the fields are named, never their values).
    #[strum(serialize = "profile.update")]
    ProfileUpdate,
    /// A page of profiles was read.
    #[strum(serialize = "profile.list")]
    ProfileList,

    // Measurements.
    /// A measurement was uploaded.
    #[strum(serialize = "measurement.upload")]
    MeasurementUpload,
    /// A measurement was read.
    #[strum(serialize = "measurement.view")]
    MeasurementView,
    /// A page of measurements was read.
    #[strum(serialize = "measurement.list")]
    MeasurementList,
    /// A measurement's fields changed.
    #[strum(serialize = "measurement.update")]
    MeasurementUpdate,
    /// A physician reviewed a measurement.
    #[strum(serialize = "measurement.review")]
    MeasurementReview,
    /// The operator re-analysed a measurement with the current analysis.
    #[strum(serialize = "measurement.reanalyse")]
    MeasurementReanalyse,
    /// A page of a physician's patient list was read.
    #[strum(serialize = "patient.list")]
    PatientList,
    /// A page of a physician's work list was read.
    #[strum(serialize = "worklist.view")]
    WorklistView,

    // Reports.
    /// A PDF report was made (of a measurement, or a periodic report).
    #[strum(serialize = "report.create")]
    ReportCreate,
    /// A PDF report was downloaded.
    #[strum(serialize = "report.download")]
    ReportDownload,
    /// An administrator had the periodic reports that are due made at once, instead of at
    /// the scheduler's next tick (the detail says how many).
    #[strum(serialize = "report.enqueue.due")]
    ReportEnqueueDue,
    /// A periodic report's record was read.
    #[strum(serialize = "periodic-report.view")]
    PeriodicReportView,
    /// A page of periodic reports was read.
    #[strum(serialize = "periodic-report.list")]
    PeriodicReportList,
    /// A measurement report's record was read.
    #[strum(serialize = "measurement-report.view")]
    MeasurementReportView,
    /// A page of measurement reports was read.
    #[strum(serialize = "measurement-report.list")]
    MeasurementReportList,

    // Groups.
    /// An administrator created a group.
    #[strum(serialize = "group.create")]
    GroupCreate,
    /// A group's staff notification settings changed.
    #[strum(serialize = "group.notifications")]
    GroupNotifications,
    /// A patient's prescription in a group started or changed.
    #[strum(serialize = "enlistment.patient")]
    EnlistmentPatient,
    /// A patient's prescription in a group ended.
    #[strum(serialize = "enlistment.patient.end")]
    EnlistmentPatientEnd,
    /// A user joined a group's staff.
    #[strum(serialize = "enlistment.staff")]
    EnlistmentStaff,
    /// A user left a group's staff.
    #[strum(serialize = "enlistment.staff.remove")]
    EnlistmentStaffRemove,

    // Notifications.
    /// A user's notification preferences changed.
    #[strum(serialize = "notifications.preferences")]
    NotificationsPreferences,
    /// A webhook endpoint was added.
    #[strum(serialize = "webhook.create")]
    WebhookCreate,
    /// A webhook endpoint was enabled.
    #[strum(serialize = "webhook.enable")]
    WebhookEnable,
    /// A webhook endpoint was disabled.
    #[strum(serialize = "webhook.disable")]
    WebhookDisable,
    /// A webhook endpoint was deleted.
    #[strum(serialize = "webhook.delete")]
    WebhookDelete,

    // Shared links and files.
    /// A shared link to a measurement's report was made.
    #[strum(serialize = "link.create")]
    LinkCreate,
    /// A shared link was revoked.
    #[strum(serialize = "link.revoke")]
    LinkRevoke,
    /// A report was downloaded through a shared link.
    #[strum(serialize = "link.download")]
    LinkDownload,
    /// A report file's app token was changed, ending the old one.
    #[strum(serialize = "file.revoke")]
    FileRevoke,
    /// A report file was downloaded with its app token.
    #[strum(serialize = "file.download")]
    FileDownload,

    // The FHIR interface.
    /// A FHIR read, search or `$everything` page (one record per patient whose data it held,
    /// with the resources it held).
    #[strum(serialize = "fhir.read")]
    FhirRead,

    // The patient's rights over their data.
    /// A patient's whole record was exported as a ZIP (by the patient, or an administrator
    /// for them).
    #[strum(serialize = "user.export")]
    UserExport,
    /// An administrator set or lifted a legal hold on a patient (the detail says which).
    #[strum(serialize = "user.legal-hold")]
    UserLegalHold,
    /// An administrator asked for a patient's erasure; a background job does it.
    #[strum(serialize = "user.erase.request")]
    UserEraseRequest,
    /// A patient's data was erased and the account became a tombstone (the detail counts
    /// what went, never what it held).
    #[strum(serialize = "user.erase")]
    UserErase,
    /// The retention job erased what outlived the retention period (the detail counts it).
    #[strum(serialize = "retention.erase")]
    RetentionErase,
    /// A consent was given (to the processing of health data, or to sharing with a group).
    #[strum(serialize = "consent.give")]
    ConsentGive,
    /// A consent was withdrawn.
    #[strum(serialize = "consent.withdraw")]
    ConsentWithdraw,

    // The audit trail itself.
    /// A page of the audit trail was read.
    #[strum(serialize = "audit.view")]
    AuditView,
    /// The audit trail was exported.
    #[strum(serialize = "audit.export")]
    AuditExport,
}

impl AuditAction {
    /// The name the trail stores.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl std::fmt::Display for AuditAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use strum::VariantArray;

    use super::*;

    #[test]
    fn every_stored_name_is_distinct_and_shaped_object_dot_verb() {
        let names: HashSet<&str> = AuditAction::VARIANTS.iter().map(|a| a.as_str()).collect();
        assert_eq!(names.len(), AuditAction::VARIANTS.len());
        for name in names {
            assert!(
                name.contains('.')
                    && name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c == '.' || c == '-'),
                "{name}"
            );
        }
    }
}
