//! What the operator does from the command line (`tacho user add`, `tacho reports create`,
//! `tacho measurements reanalyse`, the demo seed): the same store rules and the same audit
//! records as the doors' actions, with the operator as the actor. The operator has no account:
//! its records name no one ([`OPERATOR`]) and say "by the operator" in their detail.

use super::accounts::insert_account;
use super::measurements::update_measurement_in;
use super::reports::{Maker, insert_manual_report};
use super::{ActionError, ActionResult, EntryExt, NewAccount, act_on, done, operator_entry};
use crate::auth::password::PasswordHasher;
use crate::domain::id::Id;
use crate::domain::measurement::{MeasurementUpdate, Review};
use crate::domain::reanalysis::{self, Stored};
use crate::store::entities::{measurement, report, user};
use crate::store::{AuditAction, Service, Store, Viewer};

/// The actor of the operator's records: no account.
pub const OPERATOR: Id = super::ANONYMOUS;

/// Creates an account (an administrator, when `new.roles` says so), recorded as the
/// operator's `user.create`.
pub async fn add_user(
    store: &Store,
    hasher: &PasswordHasher,
    new: NewAccount,
) -> ActionResult<user::Model> {
    let password_hash = hasher.hash(new.password.expose().to_owned()).await?;
    act_on(store, async |tx| {
        // The operator creates accounts for the people who run the service, who chose
        // their password on the command line.
        let created = insert_account(tx, &Service::Operator, new, password_hash, false).await?;
        let roles = created.role_names()?.join(",");
        let record = operator_entry(AuditAction::UserCreate, "user", &created.id)
            .detail(format!("by the operator; roles: {roles}"));
        done(created, record)
    })
    .await
}

/// Makes a manual periodic report of `patient` over `[start, end)`: for `group` (the
/// measurements shared with it, seen by its staff), or without one every measurement of the
/// period, kept for the patient and administrators. Recorded as the operator's
/// `report.create`.
pub async fn create_report(
    store: &Store,
    patient: &Id,
    group: Option<Id>,
    start: i64,
    end: i64,
) -> ActionResult<report::Model> {
    act_on(store, async |tx| {
        let made = insert_manual_report(tx, Maker::Operator, patient, group, start, end).await?;
        done(made.report, made.record)
    })
    .await
}

/// Reviews the measurement `id` as the staff member `reviewer`: the same rules, change, event
/// and audit record as a review through the doors (the demo clinic's physicians review this
/// way).
pub async fn review_measurement(
    store: &Store,
    reviewer: &Viewer,
    id: &Id,
    review: Review,
) -> ActionResult<measurement::Model> {
    act_on(store, async |tx| {
        update_measurement_in(tx, reviewer, id, MeasurementUpdate::review(review)).await
    })
    .await
}

/// How far a re-analysis run got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reanalysis {
    /// Measurements analysed again.
    pub examined: u64,
    /// Those whose result, status or columns changed (and were rewritten).
    pub changed: u64,
    /// Those whose analysis now finds no result.
    pub failed: u64,
}

/// Analyses the measurements taken at or after `since` (all without it) again, `batch` at a
/// time in id order (never more payloads in memory than a batch), and rewrites those whose
/// result changed ([`crate::domain::reanalysis`]). Only they get a new `updateTimestamp` (and
/// `statusChangedTimestamp` when the status moved), so a report of an unchanged measurement
/// stays current. A measurement changed by someone else during the run is read and analysed
/// again. Each rewrite commits with the operator's `measurement.reanalyse` record.
/// `progress` is called after every batch.
pub async fn reanalyse(
    store: &Store,
    since: Option<i64>,
    batch: u64,
    mut progress: impl FnMut(&Reanalysis),
) -> ActionResult<Reanalysis> {
    let scope = Service::Operator;
    let mut run = Reanalysis::default();
    let mut after: Option<Id> = None;
    loop {
        let models = store.measurement_batch(&scope, since, after, batch).await?;
        let Some(last) = models.last() else {
            break;
        };
        after = Some(last.id);
        for model in models {
            let (changed, failed) = reanalyse_one(store, model).await?;
            run.examined += 1;
            run.changed += u64::from(changed);
            run.failed += u64::from(failed);
        }
        progress(&run);
    }
    Ok(run)
}

/// Re-analyses one measurement; whether it changed and whether its analysis failed.
async fn reanalyse_one(store: &Store, mut model: measurement::Model) -> ActionResult<(bool, bool)> {
    loop {
        // The analysis is CPU work; off the runtime's threads, as on upload.
        let (outcome, current) = tokio::task::spawn_blocking(move || {
            let outcome = reanalysis::reanalyse(Stored {
                data: &model.data,
                status: model.status,
                indicator: model.indicator.as_deref(),
                result: model.result.as_deref(),
                heart_rate: model.heart_rate,
                summary: model.summary.as_deref(),
            });
            (outcome, model)
        })
        .await
        .map_err(|err| ActionError::Internal(err.into()))?;
        if let Some(run) = outcome.run {
            crate::telemetry::metrics::analysis(run.source, run.readable, run.took);
        }
        let failed = outcome.failed;
        let Some(rewrite) = outcome.rewrite else {
            return Ok((false, failed));
        };
        let detail = format!(
            "by the operator, algorithm {}: status {} to {}",
            crate::analysis::VERSION,
            current.status,
            rewrite.status
        );
        let written = act_on::<_, ActionError>(store, async |tx| {
            if !tx.apply_rewrite(&current, rewrite).await? {
                return done(false, Vec::new());
            }
            let record = operator_entry(
                AuditAction::MeasurementReanalyse,
                "measurement",
                &current.id,
            )
            .patient(&current.creator_id)
            .detail(detail);
            done(true, record)
        })
        .await?;
        if written {
            return Ok((true, failed));
        }
        // Changed (or deleted) since it was read: analyse what is there now.
        match store
            .scoped_measurement(&Service::Operator, &current.id)
            .await?
        {
            Some(fresh) => model = fresh,
            None => return Ok((false, failed)),
        }
    }
}
