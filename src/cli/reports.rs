//! `tacho reports run-due` and `tacho reports create`.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use chrono::DateTime;
use chrono_tz::Tz;

use super::progress::Progress;
use crate::config::ExposeSecret;
use crate::config::Settings;
use crate::domain::account::TimeZone;
use crate::domain::clock::{Clock, SystemClock};
use crate::domain::id::Id;
use crate::domain::periods::manual_period;
use crate::domain::time::local_time;
use crate::notify::Notifier;
use crate::scheduler::{Scheduler, SchedulerOptions};
use crate::store::{Service, Store};

/// Migrates, then connects to the database of `settings`.
pub(super) async fn open_store(settings: &Settings) -> anyhow::Result<Store> {
    Store::migrate_url(settings.database_url.expose_secret())
        .await
        .context("database migration failed")?;
    Store::connect(settings.database_url.expose_secret(), Arc::new(SystemClock))
        .await
        .context("cannot connect to the database")
}

/// Makes every due periodic report, showing progress; fails when a report could not be made
/// (its job is retried by the next run or by `tacho serve`).
pub async fn run_due(settings: Settings) -> anyhow::Result<()> {
    let store = open_store(&settings).await?;
    let storage = crate::storage::from_settings(&settings, &store)?;
    let notifier = Notifier::from_settings(store.clone(), &settings, storage).await?;
    let scheduler = Scheduler::new(
        store,
        notifier,
        SchedulerOptions {
            lease: settings.job_lease,
            ..SchedulerOptions::default()
        },
    );
    let started = Instant::now();
    let periods = scheduler.enqueue_due().await?;
    let mut progress = Progress::new(
        "run-due",
        "reports",
        "reports to make",
        scheduler.waiting_reports().await?,
    );
    // The bar follows the reports; the notifications they cause are worked in the same run.
    let summary = scheduler
        .work(|s| {
            let counts = format!(
                "{} made, {} skipped, {} failed",
                s.made, s.skipped, s.failed
            );
            progress.update(s.reports(), &counts)
        })
        .await?;
    progress.finish();
    println!(
        "{} reports made, {} skipped, {} failed; {} notification jobs done, {} failed; in \
         {:.1} s ({periods} new periods enqueued)",
        summary.made,
        summary.skipped,
        summary.failed,
        summary.notified,
        summary.notify_failed,
        started.elapsed().as_secs_f64()
    );
    if summary.failed > 0 {
        bail!(
            "{} reports failed; they are retried later (the jobs table has their errors)",
            summary.failed
        );
    }
    Ok(())
}

/// A bound of a manual period: a day in the patient's zone (its start, or for the end the
/// start of the next day) or an RFC 3339 instant.
fn parse_bound(text: &str, zone: Tz, end: bool) -> anyhow::Result<i64> {
    if let Some(day) = crate::domain::time::parse_day(text) {
        let at = if end {
            crate::domain::time::end_of_day(day, zone)
        } else {
            crate::domain::time::start_of_day(day, zone)
        };
        return at.with_context(|| format!("{text} is out of range"));
    }
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp_millis())
        .with_context(|| format!("`{text}` is neither YYYY-MM-DD nor an RFC 3339 instant"))
}

fn local(zone: Tz, millis: i64) -> String {
    local_time(zone, millis)
        .map(|t| t.format("%Y-%m-%d %H:%M %Z").to_string())
        .unwrap_or_else(|| millis.to_string())
}

/// Makes a manual report of one patient.
pub async fn create(
    settings: Settings,
    user: &str,
    group: Option<&str>,
    from: Option<&str>,
    to: Option<&str>,
) -> anyhow::Result<()> {
    let store = open_store(&settings).await?;
    let operator = Service::Operator;
    let patient = if user.contains('@') {
        store
            .user_by_email(&operator, &user.trim().to_lowercase())
            .await?
    } else {
        let id = Id::parse(user).map_err(|e| anyhow::anyhow!("--user: {e}"))?;
        store.user_by_id(&operator, &id).await?
    }
    .with_context(|| format!("no user {user}"))?;
    let zone = TimeZone::parse(&patient.time_zone)
        .map(|z| z.0)
        .unwrap_or(Tz::UTC);
    let (start, end) = manual_period(
        from.map(|f| parse_bound(f, zone, false)).transpose()?,
        to.map(|t| parse_bound(t, zone, true)).transpose()?,
        SystemClock.now_millis(),
    )
    .map_err(|e| anyhow::anyhow!(e))?;
    let group = group
        .map(|g| Id::parse(g).map_err(|e| anyhow::anyhow!("--group: {e}")))
        .transpose()?;
    let report =
        crate::actions::operator::create_report(&store, &patient.id, group, start, end).await?;
    let count = crate::reports::periodic::items(&report)?.len();
    println!(
        "created report {} for {}: {count} measurements from {} to {}",
        report.id,
        patient.full_name(),
        local(zone, start),
        local(zone, end),
    );
    Ok(())
}
