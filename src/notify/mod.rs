//! Delivering events: the job handlers behind the outbox (see `store::notifications`).
//!
//! - [`Notifier::fan_out_waiting`] fans waiting events out: inbox entries for their readers,
//!   and one job per e-mail and per webhook delivery, each under a unique key, all in one
//!   transaction with the events' mark.
//! - `email` sends one reader one event's message (`mail.rs`); `digest` sends a reader the
//!   day's events in one message.
//! - `webhook` posts one event to one endpoint, signed (`webhook.rs`), and logs the attempt.
//!
//! Delivery is at least once: a job is done only after its message went out, and a worker
//! that dies mid-delivery leaves the job to be claimed again when its lease runs out. Every
//! delivery carries the event's id (`webhook-id`, the e-mail's `Message-ID` and
//! `X-Tacho-Event-Id`), by which receivers drop a second copy.

mod mail;
mod webhook;

use std::sync::Arc;

use anyhow::Context;
use chrono::{Days, TimeZone as _};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

pub use mail::{AccountMail, MailSettings, Mailer};
pub use webhook::{Attempt, WebhookSender, signature, webhook_secret};

use crate::domain::account::TimeZone;
use crate::domain::id::Id;
use crate::domain::notification::{Channel, EventKind, Reach, url_for_logs};
use crate::domain::time::at_local_time;
use crate::storage::FileStorage;
use crate::store::entities::event;
use crate::store::entities::job::{self, JobKind};
use crate::store::{
    DeliveryRecord, FanOut, NewEvent, NewJob, Service, Store, StoreError, Tx, Unaudited, Viewer,
};

/// Waits after each failed webhook attempt: the Standard Webhooks schedule (immediately, 5 s,
/// 5 min, 30 min, 2 h, 5 h, 10 h), 7 attempts over 17 h 35 min, inside the 24 h a receiver
/// may be down.
const WEBHOOK_RETRIES_MS: [i64; 6] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000];
/// Waits after each failed e-mail attempt: 1 min, 5 min, 30 min, 2 h, 6 h.
const EMAIL_RETRIES_MS: [i64; 5] = [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000];

/// What a delivery job carries.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Delivery {
    event_id: Id,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    user_id: Option<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    endpoint_id: Option<Id>,
}

/// The job handlers of notifications; one per process, cheap to clone.
#[derive(Clone)]
pub struct Notifier {
    store: Store,
    mailer: Option<Arc<Mailer>>,
    webhooks: WebhookSender,
    base_url: String,
    storage: Arc<dyn FileStorage>,
}

impl Notifier {
    /// Handlers over these parts; without a mailer, e-mail is off.
    pub fn new(
        store: Store,
        mailer: Option<Mailer>,
        webhooks: WebhookSender,
        base_url: String,
        storage: Arc<dyn FileStorage>,
    ) -> Self {
        Notifier {
            store,
            mailer: mailer.map(Arc::new),
            webhooks,
            base_url,
            storage,
        }
    }

    /// The notifier `settings` describe: e-mail through `TACHO_SMTP_URL` if set, webhooks
    /// signed under the server's webhook key (kept in the database, shared by every instance).
    pub async fn from_settings(
        store: Store,
        settings: &crate::config::Settings,
        storage: Arc<dyn FileStorage>,
    ) -> anyhow::Result<Notifier> {
        let mailer = settings
            .smtp_url
            .as_ref()
            .map(|url| {
                Mailer::new(&MailSettings {
                    url: url.clone(),
                    from: settings.mail_from.clone(),
                })
            })
            .transpose()?;
        let key = store.shared_key("webhook-key", 32).await?;
        let webhooks = WebhookSender::new(
            &key,
            Reach {
                loopback: settings.webhook_allow_loopback,
                private: settings.webhook_allow_private,
            },
        )?;
        Ok(Notifier::new(
            store,
            mailer,
            webhooks,
            settings.base_url.clone(),
            storage,
        ))
    }

    /// The mailer, when e-mail is on (account links are sent through it directly).
    pub fn mailer(&self) -> Option<Arc<Mailer>> {
        self.mailer.clone()
    }

    /// The portal address of `path` (which starts with `/`).
    pub fn portal_url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// The webhook sender (for the secrets shown at registration).
    pub fn webhooks(&self) -> &WebhookSender {
        &self.webhooks
    }

    /// The file storage the notifier attaches PDFs from (the service's one).
    pub fn storage(&self) -> Arc<dyn FileStorage> {
        self.storage.clone()
    }

    /// Whether this notifier runs jobs of `kind`.
    pub fn handles(kind: JobKind) -> bool {
        channel_of(kind).is_some()
    }

    /// Runs one job; false when there was nothing to do.
    pub async fn run(&self, job: &job::Model) -> anyhow::Result<bool> {
        let result = self.run_job(job).await;
        if let Some(channel) = channel_of(job.kind) {
            let outcome = match &result {
                Ok(true) => "sent",
                Ok(false) => "skipped",
                Err(_) => "failed",
            };
            crate::telemetry::metrics::delivery(channel, outcome);
        }
        result
    }

    async fn run_job(&self, job: &job::Model) -> anyhow::Result<bool> {
        let delivery: Delivery =
            serde_json::from_str(&job.payload).context("the job's payload is not a delivery")?;
        match job.kind {
            JobKind::Email => {
                let user = delivery.user_id.context("an e-mail job names its reader")?;
                self.send_email(&delivery.event_id, &user).await
            }
            JobKind::Digest => {
                let user = delivery.user_id.context("a digest job names its reader")?;
                self.send_digest(&user).await
            }
            JobKind::Webhook => {
                let endpoint = delivery
                    .endpoint_id
                    .context("a webhook job names its endpoint")?;
                self.deliver_webhook(&delivery.event_id, &endpoint, job.attempts)
                    .await
            }
            other => anyhow::bail!("a job of kind `{other}` is not a delivery"),
        }
    }

    /// How long to wait before the next attempt of `job`, which just failed.
    pub fn retry_delay(job: &job::Model) -> i64 {
        let step = usize::try_from(job.attempts.max(1) - 1).unwrap_or(0);
        match job.kind {
            JobKind::Webhook => WEBHOOK_RETRIES_MS[step.min(WEBHOOK_RETRIES_MS.len() - 1)],
            JobKind::Email | JobKind::Digest => {
                EMAIL_RETRIES_MS[step.min(EMAIL_RETRIES_MS.len() - 1)]
            }
            JobKind::PeriodicReport | JobKind::Notify | JobKind::Erasure | JobKind::Retention => {
                30_000i64 << job.attempts.clamp(0, 10)
            }
        }
    }

    /// After the last attempt of `job` failed: a webhook endpoint that could not be reached
    /// for the whole retry schedule is disabled, and the administrators are told.
    pub async fn gave_up(&self, job: &job::Model, error: &str) -> anyhow::Result<()> {
        if let Some(channel) = channel_of(job.kind) {
            crate::telemetry::metrics::delivery(channel, "gave_up");
        }
        if job.kind != JobKind::Webhook {
            return Ok(());
        }
        let delivery: Delivery = serde_json::from_str(&job.payload)?;
        let Some(endpoint_id) = delivery.endpoint_id else {
            return Ok(());
        };
        let store = self.store.begin().await?;
        let Some(endpoint) = store
            .disable_webhook(
                &endpoint_id,
                &format!("event {} was not delivered: {error}", delivery.event_id),
            )
            .await?
        else {
            return Ok(());
        };
        store
            .record_event(NewEvent {
                kind: EventKind::WebhookDisabled,
                patient_id: endpoint.creator_id,
                actor_id: None,
                measurement_id: None,
                report_id: Some(endpoint.id),
                detail: url_for_logs(&endpoint.url),
            })
            .await?;
        store.commit_unaudited(Unaudited::Workers).await?;
        tracing::warn!(endpoint = %endpoint.id, "webhook endpoint disabled after its retries ran out");
        Ok(())
    }

    /// Fans out up to `limit` waiting events, oldest first, in one transaction; returns how
    /// many. A batch costs the same dozen queries however many events it holds, which is what
    /// keeps a run of thousands of reports cheap.
    pub async fn fan_out_waiting(&self, limit: u64) -> anyhow::Result<usize> {
        // A look outside a transaction first: on SQLite a transaction that may write holds
        // the write lock from its start.
        if self.store.waiting_events(1).await?.is_empty() {
            return Ok(0);
        }
        match self.fan_out_batch(limit).await {
            Ok(fanned) => Ok(fanned),
            Err(err) => {
                // One event that cannot be fanned out must not hold back those behind it:
                // each goes on its own, and those that fail wait for the next pass.
                tracing::warn!(error = %format!("{err:#}"), "a batch of fan-outs failed; each runs on its own");
                let mut fanned = 0;
                for id in self.store.waiting_events(limit).await? {
                    match self.fan_out_events(&[id]).await {
                        Ok(n) => fanned += n,
                        Err(err) => {
                            tracing::warn!(event = %id, error = %format!("{err:#}"), "an event could not be fanned out")
                        }
                    }
                }
                Ok(fanned)
            }
        }
    }

    /// Takes and fans out up to `limit` waiting events in one transaction.
    async fn fan_out_batch(&self, limit: u64) -> anyhow::Result<usize> {
        let store = self.store.begin().await?;
        let ids = store.waiting_events(limit).await?;
        let planned = self.fan_out_in(&store, &ids).await?;
        store.commit_unaudited(Unaudited::Workers).await?;
        Ok(planned)
    }

    /// Fans out those of the events `ids` that still wait, in one transaction.
    async fn fan_out_events(&self, ids: &[Id]) -> anyhow::Result<usize> {
        let store = self.store.begin().await?;
        let ids = store.waiting_among(ids).await?;
        let planned = self.fan_out_in(&store, &ids).await?;
        store.commit_unaudited(Unaudited::Workers).await?;
        Ok(planned)
    }

    /// Plans and writes the fan-out of `ids` in `store`'s transaction; returns how many
    /// events were found.
    async fn fan_out_in(&self, store: &Tx, ids: &[Id]) -> anyhow::Result<usize> {
        let now = store.clock().now_millis();
        let planned: Vec<(FanOut, Vec<NewJob>)> = store
            .plan_fan_outs(&Service::Notifier, ids)
            .await?
            .into_iter()
            .map(|p| {
                let jobs = self.delivery_jobs(&p, now);
                (p, jobs)
            })
            .collect();
        store.fan_out(&planned).await?;
        Ok(planned.len())
    }

    /// The e-mail (or digest) and webhook jobs of one planned event.
    fn delivery_jobs(&self, planned: &FanOut, now: i64) -> Vec<NewJob> {
        let event = &planned.event;
        let mut jobs = Vec::new();
        if self.mailer.is_some() {
            for reader in &planned.readers {
                if !reader.preferences.wants(event.kind, Channel::Email) {
                    continue;
                }
                jobs.push(if reader.preferences.daily_digest {
                    let zone = zone_of(&reader.user.time_zone);
                    let (day, run_after) = digest_time(now, zone);
                    NewJob {
                        kind: JobKind::Digest,
                        dedupe_key: format!("digest:{}:{day}", reader.user.id),
                        payload: payload(&event.id, Some(reader.user.id), None),
                        run_after,
                        max_attempts: EMAIL_RETRIES_MS.len() as i32 + 1,
                    }
                } else {
                    NewJob {
                        kind: JobKind::Email,
                        dedupe_key: format!("email:{}:{}", event.id, reader.user.id),
                        payload: payload(&event.id, Some(reader.user.id), None),
                        run_after: now,
                        max_attempts: EMAIL_RETRIES_MS.len() as i32 + 1,
                    }
                });
            }
        }
        for endpoint in &planned.endpoints {
            jobs.push(NewJob {
                kind: JobKind::Webhook,
                dedupe_key: format!("webhook:{}:{}", event.id, endpoint.id),
                payload: payload(&event.id, None, Some(endpoint.id)),
                run_after: now,
                max_attempts: WEBHOOK_RETRIES_MS.len() as i32 + 1,
            });
        }
        jobs
    }

    /// One event's e-mail to one reader.
    async fn send_email(&self, event_id: &Id, user_id: &Id) -> anyhow::Result<bool> {
        let Some(mailer) = &self.mailer else {
            return Ok(false);
        };
        let event = self.store.event(&Service::Notifier, event_id).await?;
        let Some(user) = self.store.active_user(&Service::Notifier, user_id).await? else {
            return Ok(false);
        };
        // A reader whose access to what the event is about ended since is not told.
        if !self
            .store
            .may_read_event(&Viewer::of(&user), event_id)
            .await?
        {
            return Ok(false);
        }
        let preferences = self.store.preferences(user_id).await?;
        let attachment = if preferences.attach_pdf {
            self.attachment(&event, &user).await?
        } else {
            None
        };
        let message = mail::Message {
            event_id: event.id,
            kinds: vec![mail::Told {
                kind: event.kind,
                own: event.patient_id == user.id,
            }],
            link: self.link(&event),
            settings_link: format!("{}/portal/notifications/settings", self.base_url),
            attachment,
        };
        mailer.send(&user, &message).await?;
        Ok(true)
    }

    /// A reader's digest: every entry waiting for it, in one message.
    async fn send_digest(&self, user_id: &Id) -> anyhow::Result<bool> {
        let Some(mailer) = &self.mailer else {
            return Ok(false);
        };
        let Some(user) = self.store.active_user(&Service::Notifier, user_id).await? else {
            return Ok(false);
        };
        let entries = self.store.digest_entries(&Viewer::of(&user)).await?;
        let Some(last) = entries.last() else {
            return Ok(false);
        };
        let message = mail::Message {
            event_id: last.event_id,
            kinds: entries
                .iter()
                .map(|e| mail::Told {
                    kind: e.kind,
                    own: e.patient_id == user.id,
                })
                .collect(),
            link: format!("{}/portal/notifications", self.base_url),
            settings_link: format!("{}/portal/notifications/settings", self.base_url),
            attachment: None,
        };
        mailer.send(&user, &message).await?;
        let ids: Vec<Id> = entries.iter().map(|e| e.id).collect();
        self.store
            .write(Unaudited::Workers, async |tx| tx.digest_sent(&ids).await)
            .await?;
        Ok(true)
    }

    /// The PDF of a report event, read through the reader's own visibility.
    async fn attachment(
        &self,
        event: &event::Model,
        user: &crate::store::entities::user::Model,
    ) -> anyhow::Result<Option<(String, Vec<u8>)>> {
        let (EventKind::MeasurementReportReady, Some(report_id)) = (event.kind, event.report_id)
        else {
            return Ok(None);
        };
        let viewer = Viewer::of(user);
        let record = match self
            .store
            .visible_measurement_report(&viewer, &report_id)
            .await
        {
            Ok(record) => record,
            Err(StoreError::NotFound) => return Ok(None),
            Err(err) => return Err(err.into()),
        };
        let Some(file) = record.file else {
            return Ok(None);
        };
        Ok(self
            .storage
            .get(&file.cache_key)
            .await?
            .map(|bytes| (file.name.clone(), bytes)))
    }

    /// One event to one endpoint; the attempt is logged whatever its outcome.
    async fn deliver_webhook(
        &self,
        event_id: &Id,
        endpoint_id: &Id,
        attempt: i32,
    ) -> anyhow::Result<bool> {
        let event = self.store.event(&Service::Notifier, event_id).await?;
        let Some(endpoint) = self.store.webhook(endpoint_id).await? else {
            return Ok(false);
        };
        if !endpoint.enabled {
            return Ok(false);
        }
        let body = webhook::body(&event, &endpoint, &self.base_url, self.link(&event));
        let outcome = self.webhooks.post(&endpoint, &event.id, &body).await;
        let record = DeliveryRecord {
            endpoint_id: endpoint.id,
            event_id: event.id,
            attempt,
            status: outcome.status,
            latency_ms: outcome.latency.as_millis() as i64,
            error: outcome.error.clone(),
        };
        self.store
            .write(Unaudited::Workers, async |tx| {
                tx.log_webhook_delivery(record).await
            })
            .await?;
        match outcome.error {
            None => Ok(true),
            Some(error) => anyhow::bail!(error),
        }
    }

    /// Where the portal shows what `event` is about.
    fn link(&self, event: &event::Model) -> String {
        let path = portal_path(event.kind, event.measurement_id, event.report_id);
        format!("{}{path}", self.base_url)
    }
}

/// The delivery channel a job kind is, for the metrics; none for the reports and the fan-out.
fn channel_of(kind: JobKind) -> Option<&'static str> {
    match kind {
        JobKind::Email | JobKind::Digest | JobKind::Webhook => Some(kind.as_str()),
        JobKind::PeriodicReport | JobKind::Notify | JobKind::Erasure | JobKind::Retention => None,
    }
}

/// The portal page of what an event of `kind` is about: a periodic report's PDF, a webhook
/// endpoint, a measurement, or else the inbox.
pub fn portal_path(kind: EventKind, measurement: Option<Id>, report: Option<Id>) -> String {
    match (kind, measurement, report) {
        (EventKind::PeriodicReportCreated, _, Some(report)) => {
            format!("/portal/reports/{report}/pdf")
        }
        (EventKind::WebhookDisabled, _, Some(endpoint)) => {
            format!("/portal/admin/webhooks/{endpoint}")
        }
        (_, Some(measurement), _) => format!("/portal/measurements/{measurement}"),
        _ => "/portal/notifications".to_owned(),
    }
}

fn payload(event_id: &Id, user_id: Option<Id>, endpoint_id: Option<Id>) -> String {
    serde_json::to_string(&Delivery {
        event_id: *event_id,
        user_id,
        endpoint_id,
    })
    .unwrap_or_default()
}

fn zone_of(name: &str) -> Tz {
    TimeZone::parse(name).map(|z| z.0).unwrap_or(Tz::UTC)
}

/// The reader's local day at `now` (its key) and when that day's digest goes out: at 07:00
/// local time the next morning, when people read their mail rather than at midnight.
fn digest_time(now: i64, zone: Tz) -> (String, i64) {
    let local = zone
        .timestamp_millis_opt(now)
        .single()
        .unwrap_or_else(|| Tz::UTC.timestamp_millis_opt(now).unwrap());
    let day = local.date_naive();
    let send = day
        .checked_add_days(Days::new(1))
        .and_then(|d| at_local_time(d, chrono::NaiveTime::from_hms_opt(7, 0, 0)?, zone))
        .unwrap_or(now + 86_400_000);
    (day.to_string(), send)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_go_out_at_seven_the_next_local_morning() {
        // 2026-11-24 22:30 UTC is 23:30 in Amsterdam: the digest of the 24th goes out at
        // 07:00 on the 25th, Amsterdam time (06:00 UTC).
        let now = chrono::Utc
            .with_ymd_and_hms(2026, 11, 24, 22, 30, 0)
            .unwrap()
            .timestamp_millis();
        let (day, at) = digest_time(now, chrono_tz::Europe::Amsterdam);
        assert_eq!(day, "2026-11-24");
        let expected = chrono::Utc
            .with_ymd_and_hms(2026, 11, 25, 6, 0, 0)
            .unwrap()
            .timestamp_millis();
        assert_eq!(at, expected);
        // In Tokyo it is already the 25th.
        let (day, _) = digest_time(now, chrono_tz::Asia::Tokyo);
        assert_eq!(day, "2026-11-25");
    }

    #[test]
    fn webhook_retries_follow_the_schedule_and_stay_inside_a_day() {
        let job = |attempts| job::Model {
            id: Id::generate(),
            kind: JobKind::Webhook,
            dedupe_key: String::new(),
            payload: String::new(),
            status: job::JobStatus::Running,
            attempts,
            max_attempts: 7,
            run_after: 0,
            lease_until: None,
            claimed_by: None,
            last_error: None,
            creation_timestamp: 0,
            update_timestamp: 0,
        };
        let waits: Vec<i64> = (1..=6).map(|a| Notifier::retry_delay(&job(a))).collect();
        assert_eq!(waits, WEBHOOK_RETRIES_MS);
        let total: i64 = waits.iter().sum();
        assert!(total < 24 * 3_600_000, "{total}");
    }
}
