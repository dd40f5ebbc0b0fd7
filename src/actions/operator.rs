//! What the operator does from the command line (`tacho user add`, `tacho reports create`,
//! `tacho measurements reanalyse`, the demo seed): the same store rules and the same audit
//! records as the doors' actions, with the operator as the actor. The operator has no account:
//! its records name no one ([`OPERATOR`]) and say "by the operator" in their detail.

use super::{ActionError, ActionResult, EntryExt, NewAccount};
use crate::auth::password::PasswordHasher;
use crate::domain::id::Id;
use crate::domain::periods::Trigger;
use crate::domain::time::rfc3339_millis;
use crate::store::entities::{report, user};
use crate::store::{
    AuditEntry, NewReport, NewUser, Prescription, Reanalysis, Service, Store, StoreError,
};

/// The actor of the operator's records: no account.
pub const OPERATOR: Id = super::ANONYMOUS;

/// A record of the operator's `action` on `object_kind` `object_id`.
fn entry(action: &'static str, object_kind: &'static str, object_id: &Id) -> AuditEntry {
    AuditEntry {
        actor_id: OPERATOR,
        action,
        patient_id: None,
        object_kind,
        object_id: Some(*object_id),
        detail: String::new(),
    }
}

/// Creates an account (an administrator, when `new.roles` says so), recorded as the
/// operator's `user.create`.
pub async fn add_user(
    store: &Store,
    hasher: &PasswordHasher,
    new: NewAccount,
) -> ActionResult<user::Model> {
    let password_hash = hasher.hash(new.password.expose().to_owned()).await?;
    let roles: Vec<String> = new.roles.iter().map(|r| r.as_str().to_owned()).collect();
    let tx = store.begin().await?;
    if tx
        .user_by_email(&Service::Operator, new.email.as_str())
        .await?
        .is_some()
    {
        return Err(StoreError::EmailUsed.into());
    }
    let created = tx
        .create_user(NewUser {
            email: new.email.as_str().to_owned(),
            password_hash,
            first_name: new.first_name.as_str().to_owned(),
            last_name: new.last_name.as_str().to_owned(),
            phone_number: new.phone_number.map(|p| p.as_str().to_owned()),
            language: new.language.upper(),
            time_zone: new.time_zone.name().to_owned(),
            roles: roles.clone(),
        })
        .await?;
    tx.commit(
        entry("user.create", "user", &created.id)
            .detail(format!("by the operator; roles: {}", roles.join(","))),
    )
    .await?;
    Ok(created)
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
    let tx = store.begin().await?;
    let new = NewReport {
        user_id: *patient,
        group_id: group,
        creator_id: None,
        trigger: Trigger::Manual,
        dedupe_key: None,
        start,
        end,
    };
    let made = match group {
        Some(group) => {
            let prescription = Prescription {
                patient: *patient,
                group,
            };
            tx.create_report(&prescription, new).await?
        }
        None => tx.create_report(&Service::Operator, new).await?,
    };
    let report = made.ok_or_else(|| ActionError::Internal(anyhow::anyhow!("not stored")))?;
    let group = group.map_or_else(|| "the patient only".to_owned(), |g| format!("group {g}"));
    tx.commit(
        entry("report.create", "periodic-report", &report.id)
            .patient(patient)
            .detail(format!(
                "by the operator, manual, {} to {}, for {group}",
                rfc3339_millis(start),
                rfc3339_millis(end)
            )),
    )
    .await?;
    Ok(report)
}

/// Analyses the measurements taken since `since` (all without it) again, `batch` at a time,
/// and rewrites those whose result changed, each with the operator's `measurement.reanalyse`
/// record (see [`Store::reanalyse_measurements`]).
pub async fn reanalyse(
    store: &Store,
    since: Option<i64>,
    batch: u64,
    progress: impl FnMut(&Reanalysis),
) -> ActionResult<Reanalysis> {
    Ok(store
        .reanalyse_measurements(&Service::Operator, since, batch, progress)
        .await?)
}
