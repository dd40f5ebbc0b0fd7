//! Every change a person can make, and every read of a patient's data that leaves a trace,
//! written once for both front doors. The JSON API and the portal decode their input into the
//! typed values of `domain/`, call one function here with the acting [`Viewer`], and encode its
//! answer; neither checks a rule nor writes an audit record itself.
//!
//! A change runs through [`Actions::act`]: one transaction of the store in which it asks
//! `store/access` whether the viewer may act, writes, and names its audit record, which is
//! appended as the transaction commits, so a change never lands without its record, nor a
//! record without its change. What a rollback cannot undo (ending sessions kept in Redis,
//! sending mail) happens outside it, after the change it follows. A read of a patient's data
//! is recorded with [`Store::record_reads`], which says why a read needs no transaction.
//!
//! The module sits between the routes and the store (`routes/{api,web}` → `actions` →
//! `store`, `domain`), not inside `store/`: it also needs the password hasher, the report
//! renderer and the session store, which the store must not know about.

mod account_links;
mod accounts;
mod consents;
mod enlistments;
mod erasure;
mod export;
pub mod fhir;
mod groups;
mod measurements;
mod notifications;
pub mod operator;
mod profiles;
mod reads;
mod reports;
mod shared_links;

use std::sync::Arc;

pub use account_links::{AdminReset, EMAIL_LINK_HOURS, RESET_LINK_HOURS};
pub use accounts::{AccountChanges, NewAccount, RoleChange};
pub use erasure::ErasureProgress;
pub use export::{EXPORTS_PER_HOUR, Export, ExportThrottle};
pub use measurements::Review;
pub use notifications::{DELIVERY_LOG_SIZE, WebhookRequest};
pub use reports::{MeasurementPdf, PeriodicPdf};
pub use shared_links::{DEFAULT_LINK_DAYS, MAX_LINK_DAYS, NewLink};

use crate::auth::Authenticator;
use crate::auth::throttle::LoginThrottle;
use crate::domain::id::Id;
use crate::notify::Notifier;
use crate::reports::{ReportError, Reports};
use crate::store::{AuditAction, AuditEntry, Store, StoreError, Tx, Viewer};

/// Why an action did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    /// Not found or not visible (404), seen but not the viewer's to do (403), an e-mail
    /// address in use, or a database fault.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The input breaks a rule of `domain/`: `message` names the field for the API, `key` is
    /// the portal's message.
    #[error("{message}")]
    Invalid { message: String, key: &'static str },
    /// Seen, but a part of the change is not the viewer's to make (the message says which).
    #[error("{0}")]
    Forbidden(String),
    /// The object is not in a state that allows the action (e.g. a review of a measurement
    /// without results), or it changed while the action ran.
    #[error("{message}")]
    State { message: String, key: &'static str },
    /// A PDF could not be made.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// Too many attempts from the client's network (the login throttle); retry later.
    #[error("too many attempts; retry in {retry_after_secs} s")]
    Throttled { retry_after_secs: u64 },
    /// A fault of the service.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl ActionError {
    fn invalid(message: impl Into<String>, key: &'static str) -> Self {
        ActionError::Invalid {
            message: message.into(),
            key,
        }
    }
}

impl From<sea_orm::DbErr> for ActionError {
    fn from(err: sea_orm::DbErr) -> Self {
        ActionError::Store(err.into())
    }
}

/// What an action returns.
pub type ActionResult<T> = Result<T, ActionError>;

/// Ends a user's portal sessions wherever they are kept (the database, or Redis).
#[async_trait::async_trait]
pub trait SessionEnder: Send + Sync {
    /// Deletes every session of `user_id`; returns how many there were.
    async fn end_sessions_of(&self, user_id: &Id) -> anyhow::Result<u64>;
}

/// The service's parts the actions work with; one per application, cheap to clone.
#[derive(Clone)]
pub struct Actions {
    store: Store,
    auth: Authenticator,
    /// Logins and forgotten-password requests per client network, for both doors.
    login_throttle: Arc<LoginThrottle>,
    reports: Arc<Reports>,
    sessions: Arc<dyn SessionEnder>,
    notifier: Notifier,
    /// Exports of a whole record per acting account, for both doors.
    export_throttle: Arc<ExportThrottle>,
}

impl Actions {
    /// Actions over these parts.
    pub fn new(
        store: Store,
        auth: Authenticator,
        login_throttle: LoginThrottle,
        reports: Arc<Reports>,
        sessions: Arc<dyn SessionEnder>,
        notifier: Notifier,
    ) -> Self {
        Actions {
            store,
            auth,
            login_throttle: Arc::new(login_throttle),
            reports,
            sessions,
            notifier,
            export_throttle: Arc::new(ExportThrottle::per_hour(EXPORTS_PER_HOUR)),
        }
    }

    /// The user a bearer token acts for (its last use is the token's own bookkeeping).
    pub async fn authenticate(
        &self,
        bearer: &str,
    ) -> Result<crate::store::entities::user::Model, crate::auth::BearerError> {
        self.auth.authenticate(bearer).await
    }

    /// The shape of every change: `work` runs in one transaction, checks the rules, writes,
    /// and answers with what it did and its audit records; the records are appended and the
    /// transaction committed together. An error anywhere rolls all of it back.
    async fn act<T>(
        &self,
        work: impl AsyncFnOnce(&Tx) -> ActionResult<(T, Records)>,
    ) -> ActionResult<T> {
        act_on(&self.store, work).await
    }
}

/// [`Actions::act`] with an error of the caller's (a login's), or on a store of its own (the
/// operator's command line has no [`Actions`]).
async fn act_on<T, E: From<StoreError>>(
    store: &Store,
    work: impl AsyncFnOnce(&Tx) -> Result<(T, Records), E>,
) -> Result<T, E> {
    let tx = store.begin().await?;
    let (answer, records) = work(&tx).await?;
    tx.commit(records.0).await?;
    Ok(answer)
}

/// The audit records of one action: usually one ([`AuditEntry`] converts), one per patient
/// for a change of many, or none where the action found nothing to change.
struct Records(Vec<AuditEntry>);

impl From<AuditEntry> for Records {
    fn from(record: AuditEntry) -> Self {
        Records(vec![record])
    }
}

impl From<Vec<AuditEntry>> for Records {
    fn from(records: Vec<AuditEntry>) -> Self {
        Records(records)
    }
}

/// The answer of an action and its audit records, for the end of [`Actions::act`]'s work.
fn done<T, E>(answer: T, records: impl Into<Records>) -> Result<(T, Records), E> {
    Ok((answer, records.into()))
}

/// The actor of what no one logged in did: a failed login.
pub const ANONYMOUS: Id = Id::ZERO;

/// An audit record of `viewer`'s action, as every action writes it.
fn entry(
    viewer: &Viewer,
    action: AuditAction,
    object_kind: &'static str,
    object_id: &Id,
) -> AuditEntry {
    operator_entry(action, object_kind, object_id).actor(viewer)
}

/// An audit record of the operator's action at the command line: no account is its actor
/// ([`operator::OPERATOR`]).
fn operator_entry(action: AuditAction, object_kind: &'static str, object_id: &Id) -> AuditEntry {
    AuditEntry {
        actor_id: operator::OPERATOR,
        action,
        patient_id: None,
        object_kind,
        object_id: Some(*object_id),
        detail: String::new(),
    }
}

/// Builder-style additions to an [`AuditEntry`].
trait EntryExt {
    fn actor(self, viewer: &Viewer) -> Self;
    fn patient(self, patient_id: &Id) -> Self;
    fn detail(self, detail: impl Into<String>) -> Self;
}

impl EntryExt for AuditEntry {
    fn actor(mut self, viewer: &Viewer) -> Self {
        self.actor_id = viewer.user_id;
        self
    }

    fn patient(mut self, patient_id: &Id) -> Self {
        self.patient_id = Some(*patient_id);
        self
    }

    fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = detail.into();
        self
    }
}
