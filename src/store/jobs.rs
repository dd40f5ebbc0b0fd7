//! The job queue: work is enqueued once under a unique key and claimed under a lease. A worker
//! that dies loses nothing: when its lease runs out the job is claimed again, until it has
//! been attempted `max_attempts` times.

use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbBackend, DbErr, EntityTrait, QueryFilter,
    Statement,
};

use super::entities::job::{self, JobKind, JobStatus};
use super::{Reader, StoreResult, Tx};
use crate::domain::id::Id;

/// Work to enqueue.
#[derive(Debug, Clone)]
pub struct NewJob {
    pub kind: JobKind,
    /// Enqueuing a second job with the same key does nothing.
    pub dedupe_key: String,
    /// JSON text for the job's handler.
    pub payload: String,
    /// Not claimed before this instant (epoch ms).
    pub run_after: i64,
    pub max_attempts: i32,
}

/// Claims due jobs: queued ones whose time has come, and running ones whose lease ran out.
/// PostgreSQL skips rows another transaction is claiming; SQLite runs the statement alone.
const CLAIM: &str = "UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = $1, claimed_by = $2, \
     update_timestamp = $3 WHERE id IN (SELECT id FROM jobs WHERE attempts < max_attempts AND \
     ((status = 'queued' AND run_after <= $3) OR (status = 'running' AND lease_until < $3)) \
     ORDER BY run_after, id LIMIT $4";

/// The row of a newly queued job.
fn job_row(new: &NewJob, now: i64) -> job::ActiveModel {
    job::ActiveModel {
        id: Set(Id::generate()),
        kind: Set(new.kind),
        dedupe_key: Set(new.dedupe_key.clone()),
        payload: Set(new.payload.clone()),
        status: Set(JobStatus::Queued),
        attempts: Set(0),
        max_attempts: Set(Ord::max(new.max_attempts, 1)),
        run_after: Set(new.run_after),
        lease_until: Set(None),
        claimed_by: Set(None),
        last_error: Set(None),
        creation_timestamp: Set(now),
        update_timestamp: Set(now),
    }
}

/// Inserts `jobs` on `db` (the pool, or the transaction of the work they follow); those
/// whose key exists already are skipped.
pub(crate) async fn insert_jobs<C: ConnectionTrait>(
    db: &C,
    now: i64,
    jobs: &[NewJob],
) -> Result<(), DbErr> {
    // 13 values a row keeps every statement far below SQLite's parameter limit.
    for chunk in jobs.chunks(500) {
        let rows = chunk.iter().map(|new| job_row(new, now));
        job::Entity::insert_many(rows)
            .on_conflict_do_nothing_on([job::Column::DedupeKey])
            .exec(db)
            .await?;
    }
    Ok(())
}

/// The queue's state for one kind of job (see [`Store::queue_status`]).
#[derive(Debug, Clone, PartialEq)]
pub struct QueueStatus {
    pub kind: JobKind,
    /// Due and not yet claimed.
    pub waiting: u64,
    /// Claimed under a lease.
    pub running: u64,
    /// Failed on their last attempt.
    pub failed: u64,
    /// How long the oldest waiting job has been due; 0 when none waits.
    pub oldest_waiting_secs: f64,
}

impl QueueStatus {
    /// A kind with nothing waiting, running or failed.
    pub fn empty(kind: JobKind) -> Self {
        QueueStatus {
            kind,
            waiting: 0,
            running: 0,
            failed: 0,
            oldest_waiting_secs: 0.0,
        }
    }
}

impl Reader {
    /// How many jobs of `kind` a worker could claim now: queued and due, or running with an
    /// expired lease.
    pub async fn claimable_jobs(&self, kind: JobKind) -> StoreResult<u64> {
        use sea_orm::{Condition, PaginatorTrait};
        let now = self.now();
        Ok(job::Entity::find()
            .filter(job::Column::Kind.eq(kind))
            .filter(Expr::col(job::Column::Attempts).lt(Expr::col(job::Column::MaxAttempts)))
            .filter(
                Condition::any()
                    .add(
                        Condition::all()
                            .add(job::Column::Status.eq(JobStatus::Queued))
                            .add(job::Column::RunAfter.lte(now)),
                    )
                    .add(
                        Condition::all()
                            .add(job::Column::Status.eq(JobStatus::Running))
                            .add(job::Column::LeaseUntil.lt(now)),
                    ),
            )
            .count(&self.db)
            .await?)
    }

    /// The queue by kind: jobs due and waiting (and how long the oldest has waited), running
    /// and failed for good, and the outbox's events waiting to be fanned out (as kind
    /// `notify`). Jobs queued for later (retries, digests) are not yet waiting.
    pub async fn queue_status(&self) -> StoreResult<Vec<QueueStatus>> {
        use sea_orm::QuerySelect;
        let now = self.now();
        let rows: Vec<(JobKind, JobStatus, i64, Option<i64>)> = job::Entity::find()
            .select_only()
            .column(job::Column::Kind)
            .column(job::Column::Status)
            .column_as(Expr::col(job::Column::Id).count(), "count")
            .column_as(job::Column::RunAfter.min(), "oldest")
            .filter(job::Column::Status.is_in([
                JobStatus::Queued,
                JobStatus::Running,
                JobStatus::Failed,
            ]))
            .filter(
                sea_orm::Condition::any()
                    .add(job::Column::Status.ne(JobStatus::Queued))
                    .add(job::Column::RunAfter.lte(now)),
            )
            .group_by(job::Column::Kind)
            .group_by(job::Column::Status)
            .into_tuple()
            .all(&self.db)
            .await?;
        // Seconds since `oldest` became due; 0 when nothing waits.
        let waited_secs =
            |oldest: Option<i64>| oldest.map_or(0.0, |at| Ord::max(now - at, 0) as f64 / 1000.0);
        let mut kinds: Vec<QueueStatus> = Vec::new();
        for (kind, status, count, oldest) in rows {
            let at = match kinds.iter().position(|k| k.kind == kind) {
                Some(at) => at,
                None => {
                    kinds.push(QueueStatus::empty(kind));
                    kinds.len() - 1
                }
            };
            let entry = &mut kinds[at];
            let count = u64::try_from(count).unwrap_or(0);
            match status {
                JobStatus::Queued => {
                    entry.waiting = count;
                    entry.oldest_waiting_secs = waited_secs(oldest);
                }
                JobStatus::Running => entry.running = count,
                JobStatus::Failed => entry.failed = count,
                JobStatus::Done => {}
            }
        }
        // The outbox's waiting events are the fan-out's queue.
        let (waiting, oldest) = self.events_waiting().await?;
        if waiting > 0 {
            kinds.push(QueueStatus {
                waiting,
                oldest_waiting_secs: waited_secs(oldest),
                ..QueueStatus::empty(JobKind::Notify)
            });
        }
        Ok(kinds)
    }

    /// A job by id.
    pub async fn job(&self, id: &Id) -> StoreResult<Option<job::Model>> {
        Ok(job::Entity::find_by_id(*id).one(&self.db).await?)
    }
}

impl Tx {
    /// Enqueues many jobs at once; those whose key exists already are skipped.
    pub async fn enqueue_jobs(&self, jobs: Vec<NewJob>) -> StoreResult<()> {
        insert_jobs(&self.db, self.now(), &jobs).await?;
        self.events_written();
        Ok(())
    }

    /// Claims up to `limit` due jobs for `worker`, leased for `lease_ms`. Jobs whose last lease
    /// ran out after their final attempt are marked failed first.
    pub async fn claim_jobs(
        &self,
        worker: &str,
        limit: u64,
        lease_ms: i64,
    ) -> StoreResult<Vec<job::Model>> {
        let now = self.now();
        job::Entity::update_many()
            .col_expr(job::Column::Status, Expr::value(JobStatus::Failed.as_str()))
            .col_expr(
                job::Column::LastError,
                Expr::value("the lease ran out on the last attempt"),
            )
            .col_expr(job::Column::UpdateTimestamp, Expr::value(now))
            .filter(job::Column::Status.eq(JobStatus::Running))
            .filter(job::Column::LeaseUntil.lt(now))
            .filter(Expr::col(job::Column::Attempts).gte(Expr::col(job::Column::MaxAttempts)))
            .exec(&self.db)
            .await?;
        let backend = self.db.get_database_backend();
        let sql = match backend {
            DbBackend::Postgres => format!("{CLAIM} FOR UPDATE SKIP LOCKED) RETURNING *"),
            // SQLite numbers parameters as ?N; it has no row locks, and runs one writer at a time.
            _ => format!("{CLAIM}) RETURNING *").replace('$', "?"),
        };
        let values = vec![
            (now + lease_ms).into(),
            worker.into(),
            now.into(),
            (limit as i64).into(),
        ];
        let mut claimed = job::Entity::find()
            .from_raw_sql(Statement::from_sql_and_values(backend, sql, values))
            .all(&self.db)
            .await?;
        claimed.sort_by(|a, b| (a.run_after, &a.id).cmp(&(b.run_after, &b.id)));
        Ok(claimed)
    }

    /// Marks the jobs `ids` done in one statement (one commit for a whole batch); returns how
    /// many `worker` still held.
    pub async fn complete_jobs(&self, ids: &[Id], worker: &str) -> StoreResult<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        let result = job::Entity::update_many()
            .col_expr(job::Column::Status, Expr::value(JobStatus::Done.as_str()))
            .col_expr(job::Column::LeaseUntil, Expr::value(Option::<i64>::None))
            .col_expr(job::Column::UpdateTimestamp, Expr::value(self.now()))
            .filter(job::Column::Id.is_in(ids.iter().cloned()))
            .filter(job::Column::ClaimedBy.eq(worker))
            .filter(job::Column::Status.eq(JobStatus::Running))
            .exec(&self.db)
            .await?;
        Ok(result.rows_affected)
    }

    /// Records a failed attempt: the job is queued again at `retry_at` while attempts remain,
    /// and marked failed after the last. False when `worker` no longer holds it.
    pub async fn fail_job(
        &self,
        id: &Id,
        worker: &str,
        error: &str,
        retry_at: i64,
    ) -> StoreResult<bool> {
        let Some(current) = job::Entity::find_by_id(*id).one(&self.db).await? else {
            return Ok(false);
        };
        let exhausted = current.attempts >= current.max_attempts;
        let result = job::Entity::update_many()
            .col_expr(
                job::Column::Status,
                Expr::value(
                    if exhausted {
                        JobStatus::Failed
                    } else {
                        JobStatus::Queued
                    }
                    .as_str(),
                ),
            )
            .col_expr(job::Column::RunAfter, Expr::value(retry_at))
            .col_expr(job::Column::LeaseUntil, Expr::value(Option::<i64>::None))
            .col_expr(
                job::Column::LastError,
                Expr::value(error.chars().take(2000).collect::<String>()),
            )
            .col_expr(job::Column::UpdateTimestamp, Expr::value(self.now()))
            .filter(job::Column::Id.eq(id))
            .filter(job::Column::ClaimedBy.eq(worker))
            .filter(job::Column::Status.eq(JobStatus::Running))
            .exec(&self.db)
            .await?;
        Ok(result.rows_affected == 1)
    }

    /// Returns the leases of the jobs `worker` is running, so that another worker takes them
    /// at once instead of when the leases end (a stopping process). The attempt is not
    /// counted against the job.
    pub async fn release_jobs(&self, worker: &str) -> StoreResult<u64> {
        let result = job::Entity::update_many()
            .col_expr(job::Column::Status, Expr::value(JobStatus::Queued.as_str()))
            .col_expr(
                job::Column::Attempts,
                Expr::col(job::Column::Attempts).sub(1),
            )
            .col_expr(job::Column::LeaseUntil, Expr::value(Option::<i64>::None))
            .col_expr(job::Column::ClaimedBy, Expr::value(Option::<String>::None))
            .col_expr(job::Column::UpdateTimestamp, Expr::value(self.now()))
            .filter(job::Column::ClaimedBy.eq(worker))
            .filter(job::Column::Status.eq(JobStatus::Running))
            .exec(&self.db)
            .await?;
        Ok(result.rows_affected)
    }
}
