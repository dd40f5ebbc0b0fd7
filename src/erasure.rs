//! Erasure (GDPR art. 17) and retention (art. 5(1)(e)): the background work that removes a
//! patient's data, or what outlived `TACHO_RETENTION_DAYS`, from every place it is kept.
//!
//! An erasure removes, in steps that can each run again after a crash:
//! 1. the stored documents: their contents from the file storage (local folder, database or
//!    bucket), then their rows with the links that open them. A download of a file another
//!    instance still holds in memory is refused from then on, since every download's audit
//!    record is written only while the file's row exists (`Store::record_download`), and the
//!    memory is given back within the cache's TTL;
//! 2. the measurements, with their reports, links, events and inbox entries;
//! 3. the periodic reports, with theirs;
//! 4. the stored documents again (one a render stored meanwhile);
//! 5. in one transaction with its audit record: the rest (events, inbox entries, the jobs that
//!    name the patient, tokens, sessions, account links, failed-login counters, preferences,
//!    enlistments, the profile), and the account becomes a tombstone.
//!
//! The audit trail keeps every entry, with the patient's id. Consent records are kept too:
//! they hold ids, versions and dates, the evidence that the processing was lawful.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::domain::audit::AuditAction;
use crate::domain::id::Id;
use crate::storage::FileStorage;
use crate::store::entities::file;
use crate::store::{AuditEntry, Holdings, Service, Store, StoreError, Unaudited};

/// Rows deleted a transaction: small enough that SQLite's single writer is never held for
/// long, so that requests go on while an erasure runs.
const BATCH: u64 = 200;

/// What an erasure job carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErasureJob {
    /// The patient to erase.
    pub patient_id: Id,
    /// The administrator who asked, named by the audit record of the erasure (the operator
    /// for retention).
    pub requested_by: Id,
    /// What the patient had when the erasure was asked for: its progress counts down from it.
    pub at_start: Holdings,
}

/// What a retention job carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetentionJob {
    /// Data stored before this instant (epoch ms) goes; accounts deactivated before it are
    /// erased.
    pub cutoff: i64,
}

/// How an erasure ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Erasure {
    /// The patient's data is gone and the account is a tombstone.
    Erased(Holdings),
    /// The account was a tombstone already (a job run again after its last step).
    AlreadyErased,
    /// A legal hold was set after the erasure was asked for: nothing was erased.
    Held,
    /// No such account.
    Unknown,
}

/// What a retention run erased.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retained {
    pub measurements: u64,
    pub reports: u64,
    pub files: u64,
    pub accounts: u64,
}

impl Retained {
    /// Everything counted together.
    pub fn total(&self) -> u64 {
        self.measurements + self.reports + self.files + self.accounts
    }
}

/// Removes data from the database and the file storage; one per process, cheap to clone.
#[derive(Clone)]
pub struct Eraser {
    store: Store,
    storage: Arc<dyn FileStorage>,
}

impl Eraser {
    /// An eraser of `store` and the file contents kept in `storage`.
    pub fn new(store: Store, storage: Arc<dyn FileStorage>) -> Self {
        Eraser { store, storage }
    }

    /// Erases the patient of `job` (see the module's steps). Under a legal hold nothing is
    /// erased.
    pub async fn erase(&self, job: &ErasureJob) -> anyhow::Result<Erasure> {
        let patient = &job.patient_id;
        let Some(account) = self.store.user_by_id(&Service::Eraser, patient).await? else {
            return Ok(Erasure::Unknown);
        };
        if account.erased_timestamp.is_some() {
            return Ok(Erasure::AlreadyErased);
        }
        if account.legal_hold {
            return Ok(Erasure::Held);
        }
        let mut gone = Holdings::default();
        gone.files += self.erase_files_of(patient).await?;
        loop {
            let ids = self
                .store
                .measurement_ids_of(&Service::Eraser, patient, BATCH)
                .await?;
            if ids.is_empty() {
                break;
            }
            gone.measurements += self
                .store
                .write(Unaudited::Erasure, async |tx| {
                    tx.delete_measurements(&ids).await
                })
                .await?;
        }
        loop {
            let ids = self
                .store
                .report_ids_of(&Service::Eraser, patient, BATCH)
                .await?;
            if ids.is_empty() {
                break;
            }
            gone.reports += self
                .store
                .write(Unaudited::Erasure, async |tx| {
                    tx.delete_periodic_reports(&ids).await
                })
                .await?;
        }
        gone.files += self.erase_files_of(patient).await?;
        let login = crate::auth::login_key(&account.email);
        let tx = self.store.begin().await?;
        let still = tx
            .user_by_id(&Service::Eraser, patient)
            .await?
            .ok_or(StoreError::NotFound)?;
        if still.legal_hold {
            // Set while the data went: what is gone stays gone, the account stays whole.
            return Ok(Erasure::Held);
        }
        tx.make_tombstone(patient, &login).await?;
        let record = AuditEntry {
            actor_id: job.requested_by,
            action: AuditAction::UserErase,
            patient_id: Some(*patient),
            object_kind: "user",
            object_id: Some(*patient),
            detail: format!(
                "{} measurements, {} periodic reports, {} files",
                gone.measurements, gone.reports, gone.files
            ),
        };
        tx.commit(vec![record]).await?;
        Ok(Erasure::Erased(gone))
    }

    /// Erases what outlived the retention period ending at `job.cutoff`: documents,
    /// measurements and periodic reports stored before it (of patients under no legal hold),
    /// then every account deactivated before it. The run is audited once, with its counts.
    pub async fn retain(&self, job: &RetentionJob, actor: Id) -> anyhow::Result<Retained> {
        self.retain_with(job, actor, |_| {}).await
    }

    /// [`Eraser::retain`], calling `progress` with the running counts after every batch.
    pub async fn retain_with(
        &self,
        job: &RetentionJob,
        actor: Id,
        mut progress: impl FnMut(&Retained),
    ) -> anyhow::Result<Retained> {
        let cutoff = job.cutoff;
        let mut done = Retained::default();
        loop {
            let files = self
                .store
                .files_before(&Service::Eraser, cutoff, BATCH)
                .await?;
            if files.is_empty() {
                break;
            }
            done.files += self.erase_files(&files).await?;
            progress(&done);
        }
        loop {
            let ids = self
                .store
                .measurement_ids_before(&Service::Eraser, cutoff, BATCH)
                .await?;
            if ids.is_empty() {
                break;
            }
            let files = self
                .store
                .files_of_measurements(&Service::Eraser, &ids)
                .await?;
            done.files += self.erase_files(&files).await?;
            done.measurements += self
                .store
                .write(Unaudited::Erasure, async |tx| {
                    tx.delete_measurements(&ids).await
                })
                .await?;
            progress(&done);
        }
        loop {
            let ids = self
                .store
                .report_ids_before(&Service::Eraser, cutoff, BATCH)
                .await?;
            if ids.is_empty() {
                break;
            }
            let files = self.store.files_of_reports(&Service::Eraser, &ids).await?;
            done.files += self.erase_files(&files).await?;
            done.reports += self
                .store
                .write(Unaudited::Erasure, async |tx| {
                    tx.delete_periodic_reports(&ids).await
                })
                .await?;
            progress(&done);
        }
        for patient in self
            .store
            .accounts_deactivated_before(&Service::Eraser, cutoff)
            .await?
        {
            let at_start = self.store.holdings(&Service::Eraser, &patient).await?;
            let erased = self
                .erase(&ErasureJob {
                    patient_id: patient,
                    requested_by: actor,
                    at_start,
                })
                .await?;
            if let Erasure::Erased(gone) = erased {
                done.accounts += 1;
                done.measurements += gone.measurements;
                done.reports += gone.reports;
                done.files += gone.files;
            }
            progress(&done);
        }
        let record = AuditEntry {
            actor_id: actor,
            action: AuditAction::RetentionErase,
            patient_id: None,
            object_kind: "retention",
            object_id: None,
            detail: format!(
                "before {cutoff}: {} measurements, {} periodic reports, {} files, {} accounts",
                done.measurements, done.reports, done.files, done.accounts
            ),
        };
        self.store.begin().await?.commit(vec![record]).await?;
        Ok(done)
    }

    /// Erases every stored document about `patient`; returns how many.
    async fn erase_files_of(&self, patient: &Id) -> anyhow::Result<u64> {
        let mut erased = 0;
        loop {
            let files = self
                .store
                .files_of_patient(&Service::Eraser, patient, BATCH)
                .await?;
            if files.is_empty() {
                return Ok(erased);
            }
            erased += self.erase_files(&files).await?;
        }
    }

    /// Removes the contents of `files` from the storage, then their rows.
    async fn erase_files(&self, files: &[file::Model]) -> anyhow::Result<u64> {
        for file in files {
            self.storage.delete(&file.cache_key).await?;
        }
        let ids: Vec<Id> = files.iter().map(|f| f.id).collect();
        Ok(self
            .store
            .write(Unaudited::Erasure, async |tx| tx.delete_files(&ids).await)
            .await?)
    }
}
