//! The rows erasure and retention remove. Each step deletes a batch in its own transaction
//! and can run again after a crash: what is gone stays gone, and what is left is found
//! again. Stored contents (`storage`) are removed by the caller before the rows that name
//! them, so that no crash leaves contents without a row to find them by.
//!
//! The audit trail is never touched: its entries keep the ids they name, and hold no
//! personal data (details name fields, counts and ids, never values).

use std::collections::HashSet;

use sea_orm::sea_query::{Expr, ExprTrait, IntoColumnRef, Query};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Select,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::entities::{
    access_token, account_link, event, file, job, login_attempt, measurement, measurement_group,
    measurement_report, measurement_tag, measurement_user, notification, notification_preference,
    patient_enlistment, profile, refresh_token, report, report_link, session, shared_link,
    staff_enlistment, user, webhook_delivery,
};
use super::{Reader, Scope, StoreError, StoreResult, Tx};
use crate::domain::id::Id;

/// What a patient still has: an erasure's progress counts it down.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holdings {
    pub measurements: u64,
    pub reports: u64,
    pub files: u64,
}

impl Holdings {
    /// Everything counted together.
    pub fn total(&self) -> u64 {
        self.measurements + self.reports + self.files
    }
}

/// What the retention period has outlived at one instant (see [`Reader::retention_due`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionDue {
    /// Measurements stored before the cutoff, of patients under no legal hold.
    pub measurements: u64,
    /// Periodic reports made before the cutoff.
    pub reports: u64,
    /// Stored documents made before the cutoff.
    pub files: u64,
    /// Accounts deactivated before the cutoff and not yet erased, oldest deactivation first.
    pub accounts: Vec<Id>,
}

/// Rows whose patient (in `patient_column`) is under no legal hold.
fn not_held(patient_column: impl IntoColumnRef) -> Expr {
    Expr::col(patient_column).not_in_subquery(
        Query::select()
            .column(user::Column::Id)
            .from(user::Entity)
            .and_where(Expr::col(user::Column::LegalHold).eq(true))
            .to_owned(),
    )
}

/// The start of the unique key of every erasure job of `patient`
/// (`erasure:<patient>:<requested at>`).
pub fn erasure_key_prefix(patient: &Id) -> String {
    format!("erasure:{patient}:")
}

/// Stored documents about a patient under no hold, or about no patient known.
fn unheld_file() -> Condition {
    Condition::any()
        .add(file::Column::PatientId.is_null())
        .add(not_held((file::Entity, file::Column::PatientId)))
}

// What an erasure removes, and what retention removes: each set is selected here once, so
// that what progress counts and what a dry run lists are what the steps delete.

/// `patient`'s measurements.
fn measurements_of(scope: &dyn Scope, patient: &Id) -> Select<measurement::Entity> {
    measurement::Entity::find()
        .filter(measurement::Column::CreatorId.eq(*patient))
        .filter(scope.measurements("measurements", "id", "creator_id"))
}

/// `patient`'s periodic reports.
fn reports_of(scope: &dyn Scope, patient: &Id) -> Select<report::Entity> {
    report::Entity::find()
        .filter(report::Column::UserId.eq(*patient))
        .filter(scope.periodic_reports())
}

/// The stored documents about `patient`.
fn files_about(scope: &dyn Scope, patient: &Id) -> Select<file::Entity> {
    file::Entity::find()
        .filter(file::Column::PatientId.eq(*patient))
        .filter(scope.files())
}

/// Measurements stored before `cutoff`, of patients under no hold.
fn measurements_before(scope: &dyn Scope, cutoff: i64) -> Select<measurement::Entity> {
    measurement::Entity::find()
        .filter(measurement::Column::CreationTimestamp.lt(cutoff))
        .filter(not_held((
            measurement::Entity,
            measurement::Column::CreatorId,
        )))
        .filter(scope.measurements("measurements", "id", "creator_id"))
}

/// Periodic reports made before `cutoff`, of patients under no hold.
fn reports_before(scope: &dyn Scope, cutoff: i64) -> Select<report::Entity> {
    report::Entity::find()
        .filter(report::Column::CreationTimestamp.lt(cutoff))
        .filter(not_held((report::Entity, report::Column::UserId)))
        .filter(scope.periodic_reports())
}

/// Stored documents made before `cutoff`, about patients under no hold (or about no patient
/// known: files stored before their patient was kept, whose name did not tell it).
fn files_made_before(scope: &dyn Scope, cutoff: i64) -> Select<file::Entity> {
    file::Entity::find()
        .filter(file::Column::CreationTimestamp.lt(cutoff))
        .filter(unheld_file())
        .filter(scope.files())
}

impl Reader {
    /// What `patient` still has, as `scope` sees it.
    pub async fn holdings(&self, scope: &dyn Scope, patient: &Id) -> StoreResult<Holdings> {
        let measurements = measurements_of(scope, patient).count(&self.db).await?;
        let reports = reports_of(scope, patient).count(&self.db).await?;
        let files = files_about(scope, patient).count(&self.db).await?;
        Ok(Holdings {
            measurements,
            reports,
            files,
        })
    }

    /// Up to `limit` stored documents about `patient`.
    pub async fn files_of_patient(
        &self,
        scope: &dyn Scope,
        patient: &Id,
        limit: u64,
    ) -> StoreResult<Vec<file::Model>> {
        Ok(files_about(scope, patient)
            .order_by_asc(file::Column::Id)
            .limit(limit)
            .all(&self.db)
            .await?)
    }

    /// The ids of up to `limit` of `patient`'s measurements.
    pub async fn measurement_ids_of(
        &self,
        scope: &dyn Scope,
        patient: &Id,
        limit: u64,
    ) -> StoreResult<Vec<Id>> {
        Ok(measurements_of(scope, patient)
            .select_only()
            .column(measurement::Column::Id)
            .order_by_asc(measurement::Column::Id)
            .limit(limit)
            .into_tuple()
            .all(&self.db)
            .await?)
    }

    /// The ids of up to `limit` of `patient`'s periodic reports.
    pub async fn report_ids_of(
        &self,
        scope: &dyn Scope,
        patient: &Id,
        limit: u64,
    ) -> StoreResult<Vec<Id>> {
        Ok(reports_of(scope, patient)
            .select_only()
            .column(report::Column::Id)
            .order_by_asc(report::Column::Id)
            .limit(limit)
            .into_tuple()
            .all(&self.db)
            .await?)
    }

    /// The stored documents of the reports of measurements `ids`.
    pub async fn files_of_measurements(
        &self,
        scope: &dyn Scope,
        ids: &[Id],
    ) -> StoreResult<Vec<file::Model>> {
        Ok(file::Entity::find()
            .filter(
                file::Column::Id.in_subquery(
                    Query::select()
                        .column(measurement_report::Column::FileId)
                        .from(measurement_report::Entity)
                        .and_where(
                            Expr::col(measurement_report::Column::MeasurementId)
                                .is_in(ids.iter().copied()),
                        )
                        .to_owned(),
                ),
            )
            .filter(scope.files())
            .all(&self.db)
            .await?)
    }

    /// The stored documents of periodic reports `ids`: each is named after its report
    /// (`tacho-report-<id>-<language>.pdf`, see `reports::Reports::periodic_report_pdf`).
    pub async fn files_of_reports(
        &self,
        scope: &dyn Scope,
        ids: &[Id],
    ) -> StoreResult<Vec<file::Model>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut named = Condition::any();
        for id in ids {
            named =
                named.add(file::Column::Name.starts_with(super::files::periodic_file_prefix(id)));
        }
        Ok(file::Entity::find()
            .filter(named)
            .filter(scope.files())
            .all(&self.db)
            .await?)
    }

    /// Up to `limit` stored documents made before `cutoff` ([`files_made_before`]).
    pub async fn files_before(
        &self,
        scope: &dyn Scope,
        cutoff: i64,
        limit: u64,
    ) -> StoreResult<Vec<file::Model>> {
        Ok(files_made_before(scope, cutoff)
            .order_by_asc(file::Column::CreationTimestamp)
            .limit(limit)
            .all(&self.db)
            .await?)
    }

    /// The ids of up to `limit` measurements stored before `cutoff`, of patients under no
    /// hold.
    pub async fn measurement_ids_before(
        &self,
        scope: &dyn Scope,
        cutoff: i64,
        limit: u64,
    ) -> StoreResult<Vec<Id>> {
        Ok(measurements_before(scope, cutoff)
            .select_only()
            .column(measurement::Column::Id)
            .order_by_asc(measurement::Column::CreationTimestamp)
            .limit(limit)
            .into_tuple()
            .all(&self.db)
            .await?)
    }

    /// The ids of up to `limit` periodic reports made before `cutoff`, of patients under no
    /// hold.
    pub async fn report_ids_before(
        &self,
        scope: &dyn Scope,
        cutoff: i64,
        limit: u64,
    ) -> StoreResult<Vec<Id>> {
        Ok(reports_before(scope, cutoff)
            .select_only()
            .column(report::Column::Id)
            .order_by_asc(report::Column::CreationTimestamp)
            .limit(limit)
            .into_tuple()
            .all(&self.db)
            .await?)
    }

    /// Accounts deactivated before `cutoff`, under no hold and not yet erased, oldest
    /// deactivation first.
    pub async fn accounts_deactivated_before(
        &self,
        scope: &dyn Scope,
        cutoff: i64,
    ) -> StoreResult<Vec<Id>> {
        Ok(user::Entity::find()
            .select_only()
            .column(user::Column::Id)
            .filter(user::Column::Activation.eq(false))
            .filter(user::Column::DeactivationTimestamp.lt(cutoff))
            .filter(user::Column::LegalHold.eq(false))
            .filter(user::Column::ErasedTimestamp.is_null())
            .filter(scope.users("users", "id", self.now()))
            .order_by_asc(user::Column::DeactivationTimestamp)
            .into_tuple()
            .all(&self.db)
            .await?)
    }

    /// The latest erasure job of `patient`, for an administrator following its progress.
    pub async fn erasure_job_of(
        &self,
        viewer: &super::Viewer,
        patient: &Id,
    ) -> StoreResult<Option<job::Model>> {
        viewer.administer(super::AdminTask::EraseUsers)?;
        Ok(job::Entity::find()
            .filter(job::Column::Kind.eq(job::JobKind::Erasure))
            .filter(job::Column::DedupeKey.starts_with(erasure_key_prefix(patient)))
            .order_by_desc(job::Column::CreationTimestamp)
            .one(&self.db)
            .await?)
    }

    /// What a retention run at `cutoff` would erase now.
    pub async fn retention_due(&self, scope: &dyn Scope, cutoff: i64) -> StoreResult<RetentionDue> {
        let measurements = measurements_before(scope, cutoff).count(&self.db).await?;
        let reports = reports_before(scope, cutoff).count(&self.db).await?;
        let files = files_made_before(scope, cutoff).count(&self.db).await?;
        let accounts = self.accounts_deactivated_before(scope, cutoff).await?;
        Ok(RetentionDue {
            measurements,
            reports,
            files,
            accounts,
        })
    }
}

/// What the last step of an erasure removed besides the patient's data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tombstoned {
    pub notifications: u64,
    pub jobs: u64,
}

impl Tx {
    /// Deletes the rows of stored documents `ids` (whose contents the caller removed), with
    /// the shared links and report links that open them and the measurement reports that
    /// name them.
    pub async fn delete_files(&self, ids: &[Id]) -> StoreResult<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        shared_link::Entity::delete_many()
            .filter(shared_link::Column::FileId.is_in(ids.iter().copied()))
            .exec(&self.db)
            .await?;
        report_link::Entity::delete_many()
            .filter(report_link::Column::FileId.is_in(ids.iter().copied()))
            .exec(&self.db)
            .await?;
        measurement_report::Entity::delete_many()
            .filter(measurement_report::Column::FileId.is_in(ids.iter().copied()))
            .exec(&self.db)
            .await?;
        let deleted = file::Entity::delete_many()
            .filter(file::Column::Id.is_in(ids.iter().copied()))
            .exec(&self.db)
            .await?;
        self.cache.invalidate();
        Ok(deleted.rows_affected)
    }

    /// Deletes measurements `ids` and everything that hangs off them: their sharing rows,
    /// tags, report documents, shared links, and the events and inbox entries about them.
    pub async fn delete_measurements(&self, ids: &[Id]) -> StoreResult<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        // The patients' locks before the readers' that deleting inbox entries takes: their
        // work tallies are counted again last.
        let patients = self.creators_of(ids).await?;
        self.lock_tallies(&patients, &[]).await?;
        let ids = || ids.iter().copied();
        self.delete_notifications(
            Condition::all().add(notification::Column::MeasurementId.is_in(ids())),
        )
        .await?;
        self.delete_events(Condition::all().add(event::Column::MeasurementId.is_in(ids())))
            .await?;
        shared_link::Entity::delete_many()
            .filter(shared_link::Column::MeasurementId.is_in(ids()))
            .exec(&self.db)
            .await?;
        measurement_report::Entity::delete_many()
            .filter(measurement_report::Column::MeasurementId.is_in(ids()))
            .exec(&self.db)
            .await?;
        measurement_user::Entity::delete_many()
            .filter(measurement_user::Column::MeasurementId.is_in(ids()))
            .exec(&self.db)
            .await?;
        let groups = self.groups_of_measurements(ids()).await?;
        measurement_group::Entity::delete_many()
            .filter(measurement_group::Column::MeasurementId.is_in(ids()))
            .exec(&self.db)
            .await?;
        self.recount_groups(&groups).await?;
        measurement_tag::Entity::delete_many()
            .filter(measurement_tag::Column::MeasurementId.is_in(ids()))
            .exec(&self.db)
            .await?;
        let deleted = measurement::Entity::delete_many()
            .filter(measurement::Column::Id.is_in(ids()))
            .exec(&self.db)
            .await?;
        self.retally_work(&patients).await?;
        self.cache.invalidate();
        Ok(deleted.rows_affected)
    }

    /// Deletes periodic reports `ids`, their report links, and the events and inbox entries
    /// about them.
    pub async fn delete_periodic_reports(&self, ids: &[Id]) -> StoreResult<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        let ids = || ids.iter().copied();
        self.delete_notifications(
            Condition::all().add(notification::Column::ReportId.is_in(ids())),
        )
        .await?;
        self.delete_events(Condition::all().add(event::Column::ReportId.is_in(ids())))
            .await?;
        report_link::Entity::delete_many()
            .filter(report_link::Column::ReportId.is_in(ids()))
            .exec(&self.db)
            .await?;
        let deleted = report::Entity::delete_many()
            .filter(report::Column::Id.is_in(ids()))
            .exec(&self.db)
            .await?;
        Ok(deleted.rows_affected)
    }

    /// Deletes the events `which` selects, their webhook delivery log, and the jobs that
    /// would deliver them.
    async fn delete_events(&self, which: Condition) -> StoreResult<u64> {
        let events: Vec<Id> = event::Entity::find()
            .select_only()
            .column(event::Column::Id)
            .filter(which)
            .into_tuple()
            .all(&self.db)
            .await?;
        if events.is_empty() {
            return Ok(0);
        }
        let mut deleted = 0;
        for chunk in events.chunks(500) {
            let chunk = || chunk.iter().copied();
            self.delete_notifications(
                Condition::all().add(notification::Column::EventId.is_in(chunk())),
            )
            .await?;
            webhook_delivery::Entity::delete_many()
                .filter(webhook_delivery::Column::EventId.is_in(chunk()))
                .exec(&self.db)
                .await?;
            deleted += event::Entity::delete_many()
                .filter(event::Column::Id.is_in(chunk()))
                .exec(&self.db)
                .await?
                .rows_affected;
        }
        let events: HashSet<Id> = events.into_iter().collect();
        // The deliveries still to make; those made name only ids, and the patient's own are
        // found by the last step.
        let pending = Condition::all()
            .add(job::Column::Status.is_in([job::JobStatus::Queued, job::JobStatus::Running]));
        self.delete_jobs_naming(pending, |payload| {
            payload
                .get("event_id")
                .and_then(|v| v.as_str())
                .and_then(|id| Id::parse(id).ok())
                .is_some_and(|id| events.contains(&id))
        })
        .await?;
        Ok(deleted)
    }

    /// Deletes the jobs of the scheduler and the notifier that `which` selects and whose
    /// payload `names` picks. Payloads are JSON objects of ids; the erasure job's own is not
    /// among the kinds looked at.
    async fn delete_jobs_naming(
        &self,
        which: Condition,
        names: impl Fn(&serde_json::Value) -> bool,
    ) -> StoreResult<u64> {
        use job::JobKind;
        let candidates = job::Entity::find()
            .select_only()
            .column(job::Column::Id)
            .column(job::Column::Payload)
            .filter(job::Column::Kind.is_in([
                JobKind::PeriodicReport,
                JobKind::Email,
                JobKind::Digest,
                JobKind::Webhook,
            ]))
            .filter(which)
            .into_tuple::<(Id, String)>()
            .all(&self.db)
            .await?;
        let named: Vec<Id> = candidates
            .into_iter()
            .filter(|(_, payload)| {
                serde_json::from_str::<serde_json::Value>(payload).is_ok_and(|p| names(&p))
            })
            .map(|(id, _)| id)
            .collect();
        let mut deleted = 0;
        for chunk in named.chunks(500) {
            deleted += job::Entity::delete_many()
                .filter(job::Column::Id.is_in(chunk.iter().copied()))
                .exec(&self.db)
                .await?
                .rows_affected;
        }
        Ok(deleted)
    }

    /// The last step of an erasure: deletes what is left of `patient` (events and inbox
    /// entries about them and their own, the jobs that name them, tokens, sessions kept in
    /// the database, account links, failed-login counters under `login_key`, notification
    /// preferences, enlistments and the profile) and makes the account a tombstone: no
    /// name, address, e-mail, phone, password or roles, deactivated, marked erased. The
    /// caller has deleted the measurements, reports and files first.
    pub async fn make_tombstone(&self, patient: &Id, login_key: &str) -> StoreResult<Tombstoned> {
        let account = user::Entity::find_by_id(*patient)
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)?;
        let mut gone = Tombstoned::default();
        gone.notifications += self
            .delete_notifications(
                Condition::any()
                    .add(notification::Column::PatientId.eq(*patient))
                    .add(notification::Column::UserId.eq(*patient)),
            )
            .await?;
        self.delete_events(Condition::all().add(event::Column::PatientId.eq(*patient)))
            .await?;
        let text = patient.to_string();
        // Every job that names the patient, in any state (a failed e-mail's error may hold
        // the address), found by the id in its payload before the payload is read.
        let naming = Condition::all().add(job::Column::Payload.contains(text.as_str()));
        gone.jobs += self
            .delete_jobs_naming(naming, |payload| {
                payload.get("user_id").and_then(|v| v.as_str()) == Some(text.as_str())
            })
            .await?;
        access_token::Entity::delete_many()
            .filter(access_token::Column::UserId.eq(*patient))
            .exec(&self.db)
            .await?;
        refresh_token::Entity::delete_many()
            .filter(refresh_token::Column::UserId.eq(*patient))
            .exec(&self.db)
            .await?;
        session::Entity::delete_many()
            .filter(session::Column::UserId.eq(*patient))
            .exec(&self.db)
            .await?;
        account_link::Entity::delete_many()
            .filter(account_link::Column::UserId.eq(*patient))
            .exec(&self.db)
            .await?;
        login_attempt::Entity::delete_many()
            .filter(login_attempt::Column::LoginKey.eq(login_key))
            .exec(&self.db)
            .await?;
        notification_preference::Entity::delete_many()
            .filter(notification_preference::Column::UserId.eq(*patient))
            .exec(&self.db)
            .await?;
        patient_enlistment::Entity::delete_many()
            .filter(patient_enlistment::Column::UserId.eq(*patient))
            .exec(&self.db)
            .await?;
        staff_enlistment::Entity::delete_many()
            .filter(staff_enlistment::Column::UserId.eq(*patient))
            .exec(&self.db)
            .await?;
        profile::Entity::delete_by_id(*patient)
            .exec(&self.db)
            .await?;
        let now = self.now();
        let mut tombstone: user::ActiveModel = account.into();
        tombstone.email = Set(format!("erased-{patient}@erased.invalid"));
        tombstone.password_hash = Set(String::new());
        tombstone.first_name = Set(String::new());
        tombstone.last_name = Set(String::new());
        tombstone.phone_number = Set(None);
        tombstone.profile_image = Set(None);
        tombstone.roles = Set(json!([]));
        tombstone.activation = Set(false);
        tombstone.failed_count = Set(0);
        tombstone.last_failed_timestamp = Set(None);
        tombstone.password_change_due = Set(false);
        tombstone.legal_hold = Set(false);
        tombstone.time_zone = Set("UTC".into());
        tombstone.erased_timestamp = Set(Some(now));
        tombstone.deactivation_timestamp = Set(Some(now));
        tombstone.update_timestamp = Set(now);
        user::Entity::update(tombstone).exec(&self.db).await?;
        self.cache.invalidate();
        Ok(gone)
    }

    /// Sets or lifts the legal hold on `patient`.
    pub async fn set_legal_hold(&self, patient: &Id, hold: bool) -> StoreResult<user::Model> {
        let account = user::Entity::find_by_id(*patient)
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)?;
        let mut model: user::ActiveModel = account.into();
        model.legal_hold = Set(hold);
        model.update_timestamp = Set(self.now());
        let updated = user::Entity::update(model).exec(&self.db).await?;
        self.cache.invalidate();
        Ok(updated)
    }
}
