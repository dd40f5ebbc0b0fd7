//! The job queue's worker: periodic reports on schedule, and the deliveries of notifications.
//! Each tick enqueues every period that has ended since the last one (once, under a unique key
//! per user, trigger and period start), then works the queue: fan out the events waiting in
//! the outbox, claim a batch of jobs under a lease, run each job (make a batch's reports
//! together; mail or post an event: `crate::notify`), mark the jobs done. Work queued by this
//! process wakes the worker at once; other processes' work waits for the next tick. Several
//! processes may tick at once; a process that dies leaves its claims to expire and be taken
//! again.

use std::time::Duration;

use anyhow::Context;

use chrono_tz::Tz;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::domain::account::TimeZone;
use crate::domain::id::Id;
use crate::domain::periods::{Period, Trigger, due_periods};
use crate::erasure::{Eraser, Erasure, ErasureJob, RetentionJob};
use crate::notify::Notifier;
use crate::store::entities::job::{self, JobKind};
use crate::store::entities::report;
use crate::store::{
    NewJob, NewReport, OpenPrescription, Prescription, Service, Store, StoreError, Tx, Unaudited,
    Viewer,
};
use crate::telemetry::metrics;

/// The job kind of a scheduled periodic report.
/// Attempts before a job is marked failed.
const MAX_ATTEMPTS: i32 = 5;

/// How the scheduler works the queue.
#[derive(Debug, Clone)]
pub struct SchedulerOptions {
    /// How long a claim lasts before another worker may take the job.
    pub lease: Duration,
    /// Jobs claimed at once.
    pub batch: u64,
    /// Jobs worked on at once.
    pub concurrency: usize,
    /// `TACHO_RETENTION_DAYS`: when set, a retention job is enqueued once a day (under a
    /// unique key per day, so once whichever instances tick) and erases what is older.
    pub retention_days: Option<u32>,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        SchedulerOptions {
            lease: Duration::from_secs(300),
            batch: 64,
            // Reports wait on the database far more than on the CPU.
            concurrency: 8,
            retention_days: None,
        }
    }
}

/// What a periodic-report job carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportJob {
    pub user_id: Id,
    /// The group of the prescription the report is made for. Jobs enqueued before reports
    /// belonged to a prescription have none: their group is found from the prescription's
    /// start in their key.
    #[serde(default)]
    pub group_id: Option<Id>,
    pub trigger: Trigger,
    pub start: i64,
    pub end: i64,
}

/// What a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Reports made.
    pub made: u64,
    /// Jobs with nothing to make: the report existed, or the user was deactivated.
    pub skipped: u64,
    /// Report, erasure and retention jobs that failed this time (retried later, or failed
    /// for good after the last attempt).
    pub failed: u64,
    /// Erasure and retention jobs done.
    pub erased: u64,
    /// Notification jobs done: fan-outs, e-mails, digests and webhook deliveries.
    pub notified: u64,
    /// Notification jobs that failed this time (retried on their own schedule).
    pub notify_failed: u64,
}

impl RunSummary {
    /// Jobs finished one way or another.
    pub fn handled(&self) -> u64 {
        self.made + self.skipped + self.failed + self.notified + self.notify_failed + self.erased
    }

    /// Report jobs finished one way or another.
    pub fn reports(&self) -> u64 {
        self.made + self.skipped + self.failed
    }
}

enum Outcome {
    Made,
    Erased,
    Skipped,
    Notified,
    Failed,
    NotifyFailed,
}

impl Outcome {
    fn failed(&self) -> bool {
        matches!(self, Outcome::Failed | Outcome::NotifyFailed)
    }
}

impl RunSummary {
    fn count(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Made => self.made += 1,
            Outcome::Erased => self.erased += 1,
            Outcome::Skipped => self.skipped += 1,
            Outcome::Notified => self.notified += 1,
            Outcome::Failed => self.failed += 1,
            Outcome::NotifyFailed => self.notify_failed += 1,
        }
    }
}

/// Enqueues due periodic reports and makes them, and fans out the events waiting in the outbox.
#[derive(Clone)]
pub struct Scheduler {
    store: Store,
    notifier: Notifier,
    eraser: Eraser,
    worker: String,
    options: SchedulerOptions,
    /// Cancelled when the process is stopping: no new batch is claimed.
    stop: CancellationToken,
}

/// The unique key of a scheduled report: the prescription (user, group and start), trigger
/// and the period's number. Not the period's start: a patient who changes time zone moves the
/// periods' instants by the zones' daylight-saving difference, and must not get one period
/// twice.
pub fn dedupe_key(user_id: &Id, group_id: &Id, prescription_start: i64, period: &Period) -> String {
    format!(
        "report:{user_id}:{group_id}:{prescription_start}:{}:{}",
        period.trigger.as_str(),
        period.index
    )
}

/// The report jobs of every period that has ended and is not yet enqueued, and how far each
/// prescription is then scheduled: what a tick enqueues, and what an administrator's "make
/// the due reports now" does at once.
#[derive(Debug, Default)]
pub struct DueReports {
    pub jobs: Vec<NewJob>,
    /// Each prescription's id and the end of its latest period now enqueued.
    pub marks: Vec<(Id, i64)>,
}

impl DueReports {
    /// The due reports of `open` (the store's open prescriptions) at `now`.
    pub fn of(open: &[OpenPrescription], now: i64) -> Self {
        let mut due = DueReports::default();
        for open in open {
            let e = &open.enlistment;
            let zone: Tz = TimeZone::parse(&open.time_zone)
                .map(|z| z.0)
                .unwrap_or(Tz::UTC);
            let after = e.scheduled_until.unwrap_or(i64::MIN);
            let fresh: Vec<_> = due_periods(e.creation_timestamp, e.expiry_timestamp, now, zone)
                .into_iter()
                .filter(|p| p.end > after)
                .collect();
            let Some(until) = fresh.iter().map(|p| p.end).max() else {
                continue;
            };
            for period in &fresh {
                let payload = ReportJob {
                    user_id: e.user_id,
                    group_id: Some(e.group_id),
                    trigger: period.trigger,
                    start: period.start,
                    end: period.end,
                };
                due.jobs.push(NewJob {
                    kind: JobKind::PeriodicReport,
                    dedupe_key: dedupe_key(&e.user_id, &e.group_id, e.creation_timestamp, period),
                    payload: serde_json::to_string(&payload).unwrap_or_default(),
                    run_after: now,
                    max_attempts: MAX_ATTEMPTS,
                });
            }
            due.marks.push((e.id, until));
        }
        due
    }

    /// Enqueues the jobs and marks the prescriptions in `tx`.
    pub async fn enqueue(self, tx: &Tx) -> Result<(), StoreError> {
        tx.enqueue_jobs(self.jobs).await?;
        for (id, until) in self.marks {
            tx.mark_scheduled(&id, until).await?;
        }
        Ok(())
    }
}

/// The unique key of the retention run of the UTC day of `now`: one run a day, whichever
/// instances tick.
pub fn retention_key(now: i64) -> String {
    format!("retention:{}", now.div_euclid(86_400_000))
}

/// Today's retention job, erasing what is older than `days` days at `now`. The operator is
/// the actor its audit record names (`Id::ZERO`, as `actions::operator::OPERATOR`).
fn retention_job(now: i64, days: u32) -> NewJob {
    let payload = RetentionJob {
        cutoff: now - i64::from(days) * 86_400_000,
    };
    NewJob {
        kind: JobKind::Retention,
        dedupe_key: retention_key(now),
        payload: serde_json::to_string(&payload).unwrap_or_default(),
        run_after: now,
        max_attempts: MAX_ATTEMPTS,
    }
}

/// The prescription start in a key of [`dedupe_key`]'s earlier form,
/// `report:<user>:<prescription start>:<trigger>:<period>`.
fn legacy_prescription_start(key: &str) -> Option<i64> {
    let parts: Vec<&str> = key.split(':').collect();
    match parts.as_slice() {
        ["report", _, start, _, _] => start.parse().ok(),
        _ => None,
    }
}

impl Scheduler {
    /// A scheduler working as a worker of its own (a random name, so two processes never
    /// share one).
    pub fn new(store: Store, notifier: Notifier, options: SchedulerOptions) -> Self {
        let worker = format!(
            "{}-{}",
            std::process::id(),
            &uuid::Uuid::new_v4().simple().to_string()[..12]
        );
        Scheduler {
            eraser: Eraser::new(store.clone(), notifier.storage()),
            store,
            notifier,
            worker,
            options,
            stop: CancellationToken::new(),
        }
    }

    /// This worker's name in the jobs table.
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// Enqueues every period that ended since the last call, for every prescription of an
    /// active patient; returns how many periods were new. Periods missed during downtime are
    /// all caught up, each once.
    pub async fn enqueue_due(&self) -> Result<usize, StoreError> {
        let now = self.store.clock().now_millis();
        let open = self.store.open_prescriptions(&Service::Scheduler).await?;
        let mut due = DueReports::of(&open, now);
        let enqueued = due.jobs.len();
        if let Some(days) = self.options.retention_days {
            due.jobs.push(retention_job(now, days));
        }
        // The jobs and how far each prescription got, together (the unique keys would absorb
        // a second enqueue anyway).
        self.store
            .write(Unaudited::Workers, async |tx| due.enqueue(tx).await)
            .await?;
        Ok(enqueued)
    }

    /// Enqueues what is due and works the queue until nothing is left to claim, calling
    /// `progress` after every job with the running summary.
    pub async fn run_due(
        &self,
        progress: impl FnMut(&RunSummary),
    ) -> Result<RunSummary, StoreError> {
        self.enqueue_due().await?;
        self.work(progress).await
    }

    /// Works the queue until nothing is left to claim, calling `progress` after every job.
    pub async fn work(
        &self,
        mut progress: impl FnMut(&RunSummary),
    ) -> Result<RunSummary, StoreError> {
        let mut summary = RunSummary::default();
        let lease_ms = self.options.lease.as_millis() as i64;
        loop {
            if self.stop.is_cancelled() {
                return Ok(summary);
            }
            let fanned = match self.notifier.fan_out_waiting(self.options.batch).await {
                Ok(fanned) => fanned,
                Err(err) => {
                    // The events stay waiting for the next pass; the reports go on.
                    tracing::warn!(error = %format!("{err:#}"), "a fan-out of events failed");
                    0
                }
            };
            for _ in 0..fanned {
                metrics::job_attempt(JobKind::Notify.as_str());
                summary.notified += 1;
                progress(&summary);
            }
            let claimed = self
                .store
                .write(Unaudited::Workers, async |tx| {
                    tx.claim_jobs(&self.worker, self.options.batch, lease_ms)
                        .await
                })
                .await?;
            if claimed.is_empty() && fanned == 0 {
                return Ok(summary);
            }
            for job in &claimed {
                metrics::job_attempt(job.kind.as_str());
            }
            let mut done = Vec::new();
            let (reports, claimed): (Vec<job::Model>, Vec<job::Model>) = claimed
                .into_iter()
                .partition(|j| j.kind == JobKind::PeriodicReport);
            for (id, outcome) in self.make_reports(reports).await {
                summary.count(&outcome);
                if !outcome.failed() {
                    done.push(id);
                }
                progress(&summary);
            }
            let mut outcomes = futures_util::stream::iter(claimed)
                .map(|job| async move {
                    let outcome = self.run_job(&job).await;
                    (job.id, outcome)
                })
                .buffer_unordered(self.options.concurrency.max(1));
            while let Some((id, outcome)) = outcomes.next().await {
                summary.count(&outcome);
                if !outcome.failed() {
                    done.push(id);
                }
                progress(&summary);
            }
            // A crash before this line leaves the batch to be retaken when its lease runs
            // out; the reports' unique keys make the second pass skip what was made.
            self.store
                .write(Unaudited::Workers, async |tx| {
                    tx.complete_jobs(&done, &self.worker).await
                })
                .await?;
        }
    }

    /// How many report jobs are waiting to be worked (for progress totals).
    pub async fn waiting_reports(&self) -> Result<u64, StoreError> {
        self.store.claimable_jobs(JobKind::PeriodicReport).await
    }

    /// Runs a job; done jobs are marked by the caller, a batch at a time.
    async fn run_job(&self, job: &job::Model) -> Outcome {
        if matches!(job.kind, JobKind::Erasure | JobKind::Retention) {
            return match self.erase(job).await {
                Ok(()) => Outcome::Erased,
                Err(err) => self.job_failed(job, &err).await,
            };
        }
        let notification = Notifier::handles(job.kind);
        let result = if notification {
            self.notifier.run(job).await
        } else {
            self.make_report(job).await
        };
        match result {
            Ok(_) if notification => Outcome::Notified,
            Ok(true) => Outcome::Made,
            Ok(false) => Outcome::Skipped,
            Err(err) => self.job_failed(job, &err).await,
        }
    }

    /// Records that `job` failed: it is retried on its kind's schedule, or marked failed
    /// after its last attempt.
    async fn job_failed(&self, job: &job::Model, err: &anyhow::Error) -> Outcome {
        let notification = Notifier::handles(job.kind);
        let error = format!("{err:#}");
        let retry_at = self.store.clock().now_millis() + Notifier::retry_delay(job);
        tracing::warn!(job = %job.id, kind = %job.kind, attempt = job.attempts, error = %error, "job failed");
        let last_attempt = job.attempts >= job.max_attempts;
        metrics::job_failure(job.kind.as_str(), last_attempt);
        let failed = self
            .store
            .write(Unaudited::Workers, async |tx| {
                tx.fail_job(&job.id, &self.worker, &error, retry_at).await
            })
            .await;
        match failed {
            Ok(true) if last_attempt => {
                if let Err(err) = self.notifier.gave_up(job, &error).await {
                    tracing::warn!(job = %job.id, error = %err, "could not act on a job that gave up");
                }
            }
            Ok(_) => {}
            Err(err) => {
                tracing::warn!(job = %job.id, error = %err, "could not record a failed job")
            }
        }
        if notification {
            Outcome::NotifyFailed
        } else {
            Outcome::Failed
        }
    }

    /// Makes the reports of a batch of report jobs: each one's measurements are read on its
    /// own (several at once), and the reports and their events are stored in one
    /// transaction. If that transaction fails, each job is made on its own, so that a failure
    /// is recorded against the job that caused it.
    async fn make_reports(&self, jobs: Vec<job::Model>) -> Vec<(Id, Outcome)> {
        let mut outcomes = Vec::with_capacity(jobs.len());
        let mut prepared = Vec::new();
        let mut reads = futures_util::stream::iter(jobs)
            .map(|job| async move {
                let report = self.prepare_report(&job).await;
                (job, report)
            })
            .buffer_unordered(self.options.concurrency.max(1));
        while let Some((job, report)) = reads.next().await {
            match report {
                Ok(Some(report)) => prepared.push((job, report)),
                Ok(None) => outcomes.push((job.id, Outcome::Skipped)),
                Err(err) => outcomes.push((job.id, self.job_failed(&job, &err).await)),
            }
        }
        let (jobs, reports): (Vec<job::Model>, Vec<report::Model>) = prepared.into_iter().unzip();
        let report_ids: Vec<Id> = reports.iter().map(|r| r.id).collect();
        let stored = self
            .store
            .write(Unaudited::Workers, async |tx| {
                tx.store_reports(reports).await
            })
            .await;
        match stored {
            Ok(stored) => {
                let made: std::collections::HashSet<Id> = stored.iter().map(|r| r.id).collect();
                for (job, report_id) in jobs.iter().zip(&report_ids) {
                    let outcome = if made.contains(report_id) {
                        Outcome::Made
                    } else {
                        Outcome::Skipped
                    };
                    outcomes.push((job.id, outcome));
                }
            }
            Err(err) => {
                tracing::warn!(jobs = jobs.len(), error = %err, "a batch of reports failed; each is made on its own");
                for job in jobs {
                    let outcome = self.run_job(&job).await;
                    outcomes.push((job.id, outcome));
                }
            }
        }
        outcomes
    }

    /// The report a job asks for, read but not stored; none when there is nothing to make
    /// (the patient's account was deactivated). It lists the measurements shared with the
    /// prescription's group, read through that [`Prescription`]'s scope.
    async fn prepare_report(&self, job: &job::Model) -> anyhow::Result<Option<report::Model>> {
        let payload: ReportJob = serde_json::from_str(&job.payload)?;
        let trigger = payload.trigger;
        if !self
            .store
            .user_is_active(&Service::Scheduler, &payload.user_id)
            .await?
        {
            return Ok(None);
        }
        let group = match payload.group_id {
            Some(group) => Some(group),
            None => match legacy_prescription_start(&job.dedupe_key) {
                Some(start) => {
                    self.store
                        .prescription_group(&Service::Scheduler, &payload.user_id, start)
                        .await?
                }
                None => None,
            },
        };
        let new = NewReport {
            user_id: payload.user_id,
            group_id: group,
            creator_id: None,
            trigger,
            dedupe_key: Some(job.dedupe_key.clone()),
            start: payload.start,
            end: payload.end,
        };
        let report = match group {
            Some(group) => {
                let prescription = Prescription {
                    patient: payload.user_id,
                    group,
                };
                self.store.prepare_report(&prescription, new).await?
            }
            // A prescription that no longer exists: the report is the patient's alone, of
            // what the patient sees.
            None => {
                let patient = Viewer {
                    user_id: payload.user_id,
                    admin: false,
                };
                self.store.prepare_report(&patient, new).await?
            }
        };
        Ok(Some(report))
    }

    /// Makes the report a job asks for; false when there is nothing to make.
    async fn make_report(&self, job: &job::Model) -> anyhow::Result<bool> {
        anyhow::ensure!(
            job.kind == JobKind::PeriodicReport,
            "unknown job kind `{}`",
            job.kind
        );
        let Some(report) = self.prepare_report(job).await? else {
            return Ok(false);
        };
        let stored = self
            .store
            .write(Unaudited::Workers, async |tx| {
                tx.store_reports(vec![report]).await
            })
            .await?;
        Ok(!stored.is_empty())
    }

    /// Runs an erasure or a retention job.
    async fn erase(&self, job: &job::Model) -> anyhow::Result<()> {
        if job.kind == JobKind::Retention {
            let retention: RetentionJob = serde_json::from_str(&job.payload)
                .context("the job's payload is not a retention")?;
            let done = self.eraser.retain(&retention, Id::ZERO).await?;
            tracing::info!(
                measurements = done.measurements,
                reports = done.reports,
                files = done.files,
                accounts = done.accounts,
                "retention"
            );
            return Ok(());
        }
        let erasure: ErasureJob =
            serde_json::from_str(&job.payload).context("the job's payload is not an erasure")?;
        match self.eraser.erase(&erasure).await? {
            Erasure::Held => {
                tracing::warn!(job = %job.id, "an erasure met a legal hold; nothing more was erased")
            }
            Erasure::Erased(_) | Erasure::AlreadyErased | Erasure::Unknown => {}
        }
        Ok(())
    }

    /// The token that stops this scheduler when cancelled: it finishes the batch it holds
    /// and claims no other (see [`Scheduler::run_forever`]).
    pub fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Ticks every `every` until its stop token is cancelled: each tick enqueues what is due and works
    /// the queue, and work queued by this process (an event's deliveries) is worked at once.
    /// Errors are logged and the next tick tries again. Asked to stop, it finishes the batch
    /// it holds and claims no other.
    pub async fn run_forever(self, every: Duration) {
        let mut interval = tokio::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let summary = tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = interval.tick() => self.run_due(|_| {}).await,
                _ = self.store.queued_work() => self.work(|_| {}).await,
            };
            match summary {
                Ok(summary) if summary.made + summary.failed > 0 => tracing::info!(
                    made = summary.made,
                    skipped = summary.skipped,
                    notified = summary.notified,
                    failed = summary.failed,
                    "scheduler tick"
                ),
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "scheduler tick failed"),
            }
        }
    }
}
