//! `tacho retention`: what the retention period has outlived, listed (`--dry-run`) or erased
//! now, as the daily job of `tacho serve` erases it.

use anyhow::Context;

use super::progress::Progress;
use super::reports::open_store;
use crate::config::Settings;
use crate::domain::id::Id;
use crate::domain::time::rfc3339_millis;
use crate::erasure::{Eraser, RetentionJob};
use crate::store::Service;

/// A day in milliseconds.
const DAY_MS: i64 = 86_400_000;

/// `--at`: epoch milliseconds or an RFC 3339 instant.
fn parse_at(text: &str) -> anyhow::Result<i64> {
    let text = text.trim();
    if let Ok(millis) = text.parse::<i64>() {
        return Ok(millis);
    }
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|at| at.timestamp_millis())
        .with_context(|| format!("--at `{text}` is neither an RFC 3339 instant nor epoch ms"))
}

/// Lists (`dry_run`) or erases what is older than `days` (else `TACHO_RETENTION_DAYS`) at
/// `at` (a dry run's instant; now without it).
pub async fn run(
    settings: Settings,
    days: Option<u32>,
    dry_run: bool,
    at: Option<&str>,
) -> anyhow::Result<()> {
    let days = days.or(settings.retention_days).context(
        "no retention period: set TACHO_RETENTION_DAYS or give --days (unset keeps everything)",
    )?;
    let at = at.map(parse_at).transpose()?;
    let store = open_store(&settings).await?;
    let now = at.unwrap_or_else(|| store.clock().now_millis());
    let cutoff = now - i64::from(days) * DAY_MS;
    let due = store.retention_due(&Service::Operator, cutoff).await?;
    let before = rfc3339_millis(cutoff);
    if dry_run {
        println!(
            "retention of {days} days: before {before}, {} measurements, {} periodic reports, \
             {} files and {} accounts would be erased (patients under a legal hold are kept)",
            due.measurements,
            due.reports,
            due.files,
            due.accounts.len()
        );
        for account in &due.accounts {
            println!("account {account}: deactivated before {before}");
        }
        return Ok(());
    }
    let storage = crate::storage::from_settings(&settings, &store)?;
    let eraser = Eraser::new(store, storage);
    let total = due.measurements + due.reports + due.files + due.accounts.len() as u64;
    let mut progress = Progress::new("retention", "items", "items to erase", total);
    let done = eraser
        .retain_with(&RetentionJob { cutoff }, Id::ZERO, |done| {
            let counts = format!(
                "{} measurements, {} reports, {} files, {} accounts",
                done.measurements, done.reports, done.files, done.accounts
            );
            progress.update(done.total(), &counts);
        })
        .await?;
    progress.finish();
    println!(
        "retention of {days} days: before {before}, erased {} measurements, {} periodic \
         reports, {} files and {} accounts",
        done.measurements, done.reports, done.files, done.accounts
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_at;

    #[test]
    fn at_takes_milliseconds_or_an_rfc3339_instant() {
        assert_eq!(parse_at("1795219200000").unwrap(), 1_795_219_200_000);
        assert_eq!(parse_at("2026-11-22T00:00:00Z").unwrap(), 1_795_305_600_000);
        assert!(parse_at("next week").is_err());
    }
}
