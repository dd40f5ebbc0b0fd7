//! Erasure and legal holds: an administrator erases a patient (after typing the patient's
//! name or e-mail address), and may hold a patient's data against erasure and retention.
//! The erasure itself runs as a background job (`crate::erasure`), whose progress both doors
//! show.

use super::{ActionError, ActionResult, Actions, EntryExt, done, entry};
use crate::domain::id::Id;
use crate::erasure::ErasureJob;
use crate::store::entities::job::{self, JobKind, JobStatus};
use crate::store::entities::user;
use crate::store::{
    AdminTask, AuditAction, Holdings, NewJob, Service, StoreError, Viewer, erasure_key_prefix,
};

/// Attempts of an erasure job before it is marked failed (each one goes on from where the
/// last stopped).
const ERASURE_ATTEMPTS: i32 = 10;

/// Where a patient's erasure is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErasureProgress {
    /// The erasure job, if one was asked for: its status and last error.
    pub job: Option<job::Model>,
    /// What the patient had when the erasure was asked for.
    pub at_start: Holdings,
    /// What the patient still has.
    pub left: Holdings,
    /// When the account became a tombstone.
    pub erased_at: Option<i64>,
    /// Whether a legal hold is set.
    pub legal_hold: bool,
}

impl ErasureProgress {
    /// The share of the data erased so far, in percent (100 once erased).
    pub fn percent(&self) -> u8 {
        if self.erased_at.is_some() {
            return 100;
        }
        let start = self.at_start.total();
        if start == 0 {
            return 0;
        }
        let gone = start.saturating_sub(self.left.total());
        u8::try_from(gone * 100 / start).unwrap_or(100).min(99)
    }

    /// The job's status as the wire and the page name it: `none` before any request.
    pub fn status(&self) -> &'static str {
        if self.erased_at.is_some() {
            return "done";
        }
        match &self.job {
            None => "none",
            Some(job) => match job.status {
                JobStatus::Queued => "queued",
                JobStatus::Running => "running",
                // Done without a tombstone: a legal hold stopped it.
                JobStatus::Done => "stopped",
                JobStatus::Failed => "failed",
            },
        }
    }
}

/// Whether `typed` names `patient`: the e-mail address, or the full name, in any case and
/// spacing.
fn names_patient(typed: &str, patient: &user::Model) -> bool {
    let squeeze = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let typed = squeeze(typed);
    !typed.is_empty()
        && (typed == patient.email.to_lowercase()
            || typed == squeeze(&patient.full_name())
            || typed == squeeze(&format!("{} {}", patient.first_name, patient.last_name)))
}

impl Actions {
    /// Sets or lifts the legal hold on `patient` (administrators): while set, the patient is
    /// neither erased nor touched by retention.
    pub async fn set_legal_hold(
        &self,
        viewer: &Viewer,
        patient: &Id,
        hold: bool,
    ) -> ActionResult<user::Model> {
        self.act(async |tx| {
            let account = tx
                .user_to_administer(viewer, patient, AdminTask::SetLegalHolds)
                .await?;
            if account.erased_timestamp.is_some() {
                return Err(erased());
            }
            let updated = tx.set_legal_hold(patient, hold).await?;
            let record = entry(viewer, AuditAction::UserLegalHold, "user", patient)
                .patient(patient)
                .detail(if hold { "set" } else { "lifted" });
            done(updated, record)
        })
        .await
    }

    /// Asks for `patient`'s erasure (administrators), confirmed by `typed`, which must be the
    /// patient's e-mail address or full name. Refused under a legal hold, for one's own
    /// account, for an account already erased, and while an erasure of it is under way. The account is deactivated at once (its
    /// tokens, links and sessions end); the data goes in a background job, whose progress
    /// [`Actions::erasure_progress`] tells.
    pub async fn request_erasure(
        &self,
        viewer: &Viewer,
        patient: &Id,
        typed: &str,
    ) -> ActionResult<ErasureProgress> {
        let task = AdminTask::EraseUsers;
        self.act(async |tx| {
            let account = tx.user_to_administer(viewer, patient, task).await?;
            viewer
                .may_lock_out(patient, task)
                .map_err(StoreError::Denied)?;
            if account.erased_timestamp.is_some() {
                return Err(erased());
            }
            if account.legal_hold {
                return Err(ActionError::State {
                    message: "a legal hold is set on this patient: lift it before erasing".into(),
                    key: "erase-held",
                });
            }
            let under_way = tx
                .erasure_job_of(viewer, patient)
                .await?
                .is_some_and(|job| matches!(job.status, JobStatus::Queued | JobStatus::Running));
            if under_way {
                return Err(ActionError::State {
                    message: "an erasure of this patient is under way".into(),
                    key: "erase-under-way",
                });
            }
            if !names_patient(typed, &account) {
                return Err(ActionError::invalid(
                    "`confirmation` must be the patient's e-mail address or full name",
                    "erase-confirmation",
                ));
            }
            let now = tx.clock().now_millis();
            let at_start = tx.holdings(&Service::Eraser, patient).await?;
            if account.activation {
                tx.set_activation(patient, false).await?;
            }
            tx.spend_account_links_of(patient).await?;
            let payload = ErasureJob {
                patient_id: *patient,
                requested_by: viewer.user_id,
                at_start,
            };
            tx.enqueue_jobs(vec![NewJob {
                kind: JobKind::Erasure,
                dedupe_key: format!("{}{now}", erasure_key_prefix(patient)),
                payload: serde_json::to_string(&payload).map_err(anyhow::Error::from)?,
                run_after: now,
                max_attempts: ERASURE_ATTEMPTS,
            }])
            .await?;
            let record = entry(viewer, AuditAction::UserEraseRequest, "user", patient)
                .patient(patient)
                .detail(format!(
                    "{} measurements, {} periodic reports, {} files",
                    at_start.measurements, at_start.reports, at_start.files
                ));
            done((), record)
        })
        .await?;
        self.sessions.end_sessions_of(patient).await?;
        self.erasure_progress(viewer, patient).await
    }

    /// Where `patient`'s erasure is (administrators).
    pub async fn erasure_progress(
        &self,
        viewer: &Viewer,
        patient: &Id,
    ) -> ActionResult<ErasureProgress> {
        let account = self
            .store
            .user_to_administer(viewer, patient, AdminTask::EraseUsers)
            .await?;
        let job = self.store.erasure_job_of(viewer, patient).await?;
        let at_start = job
            .as_ref()
            .and_then(|job| serde_json::from_str::<ErasureJob>(&job.payload).ok())
            .map(|job| job.at_start)
            .unwrap_or_default();
        let left = self.store.holdings(&Service::Eraser, patient).await?;
        Ok(ErasureProgress {
            job,
            at_start,
            left,
            erased_at: account.erased_timestamp,
            legal_hold: account.legal_hold,
        })
    }
}

/// The refusal of a change to an erased account.
fn erased() -> ActionError {
    ActionError::State {
        message: "this account has been erased".into(),
        key: "erase-done",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patient() -> user::Model {
        crate::reports::render_data_tests::patient()
    }

    #[test]
    fn the_confirmation_names_the_patient_by_address_or_full_name() {
        let p = patient();
        assert!(names_patient(&p.email.to_uppercase(), &p));
        assert!(names_patient(
            &format!("  {}   {} ", p.first_name, p.last_name),
            &p
        ));
        assert!(!names_patient("", &p));
        assert!(!names_patient(&p.first_name, &p));
        assert!(!names_patient("someone@else.example", &p));
    }

    #[test]
    fn progress_counts_down_from_what_the_patient_had() {
        let start = Holdings {
            measurements: 8,
            reports: 1,
            files: 1,
        };
        let mut progress = ErasureProgress {
            job: None,
            at_start: start,
            left: start,
            erased_at: None,
            legal_hold: false,
        };
        assert_eq!((progress.percent(), progress.status()), (0, "none"));
        progress.left.measurements = 3;
        assert_eq!(progress.percent(), 50);
        progress.left = Holdings::default();
        assert_eq!(progress.percent(), 99, "not done before the tombstone");
        progress.erased_at = Some(1);
        assert_eq!((progress.percent(), progress.status()), (100, "done"));
    }
}
