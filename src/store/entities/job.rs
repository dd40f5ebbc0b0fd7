//! `jobs`: queued background work with its lease.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "jobs")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    pub kind: JobKind,
    /// Unique: enqueuing the same work twice is a no-op.
    pub dedupe_key: String,
    /// JSON text the job's handler understands.
    #[sea_orm(column_type = "Text")]
    pub payload: String,
    pub status: JobStatus,
    pub attempts: i32,
    pub max_attempts: i32,
    pub run_after: i64,
    pub lease_until: Option<i64>,
    pub claimed_by: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub last_error: Option<String>,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
}

/// What a job does: stored as `periodic_report`, `notify`, `email`, `digest`, `webhook`,
/// `erasure` or `retention`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum JobKind {
    /// Makes a periodic report (the scheduler).
    #[sea_orm(string_value = "periodic_report")]
    PeriodicReport,
    /// Fans out waiting events to their readers: the outbox's queue, shown beside the jobs'
    /// (no job row has this kind).
    #[sea_orm(string_value = "notify")]
    Notify,
    /// Sends one e-mail about an event.
    #[sea_orm(string_value = "email")]
    Email,
    /// Sends a reader's daily digest.
    #[sea_orm(string_value = "digest")]
    Digest,
    /// Delivers an event to a webhook endpoint.
    #[sea_orm(string_value = "webhook")]
    Webhook,
    /// Erases one patient's data, in steps, leaving a tombstone (`actions::erasure`).
    #[sea_orm(string_value = "erasure")]
    Erasure,
    /// Erases what outlived `TACHO_RETENTION_DAYS`, once a day (`actions::erasure`).
    #[sea_orm(string_value = "retention")]
    Retention,
}

impl JobKind {
    /// Every kind, in the order pages and metrics list them.
    pub const ALL: [JobKind; 7] = [
        JobKind::PeriodicReport,
        JobKind::Notify,
        JobKind::Email,
        JobKind::Digest,
        JobKind::Webhook,
        JobKind::Erasure,
        JobKind::Retention,
    ];

    /// The stored name, as pages and metrics spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::PeriodicReport => "periodic_report",
            JobKind::Notify => "notify",
            JobKind::Email => "email",
            JobKind::Digest => "digest",
            JobKind::Webhook => "webhook",
            JobKind::Erasure => "erasure",
            JobKind::Retention => "retention",
        }
    }
}

impl std::fmt::Display for JobKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a job is: stored as `queued`, `running`, `done` or `failed`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum JobStatus {
    /// Waiting for its `run_after`.
    #[sea_orm(string_value = "queued")]
    Queued,
    /// Claimed by a worker, under a lease.
    #[sea_orm(string_value = "running")]
    Running,
    /// Finished.
    #[sea_orm(string_value = "done")]
    Done,
    /// Failed on its last attempt.
    #[sea_orm(string_value = "failed")]
    Failed,
}

impl JobStatus {
    /// The stored name, as pages and filters spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Done => "done",
            JobStatus::Failed => "failed",
        }
    }

    /// The status named `text`, if any.
    pub fn parse(text: &str) -> Option<Self> {
        <Self as sea_orm::Iterable>::iter().find(|s| s.as_str() == text)
    }
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
