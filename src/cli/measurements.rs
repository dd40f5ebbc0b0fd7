//! `tacho measurements reanalyse`: the current analysis over stored measurements.

use std::time::Instant;

use anyhow::Context;
use chrono::NaiveDate;

use super::progress::Progress;
use super::reports::open_store;
use crate::config::Settings;
use crate::store::Service;

/// Measurements read per query: each carries its payload (~0.4 MB for a minute of camera
/// traces), so a batch holds some 25 MB at most.
const BATCH: u64 = 64;

/// `--since`: a day (YYYY-MM-DD, from its midnight UTC) or epoch milliseconds.
fn parse_since(text: &str) -> anyhow::Result<i64> {
    let text = text.trim();
    if let Ok(millis) = text.parse::<i64>() {
        return Ok(millis);
    }
    let day = NaiveDate::parse_from_str(text, "%Y-%m-%d").with_context(|| {
        format!("--since `{text}` is neither YYYY-MM-DD nor epoch milliseconds")
    })?;
    crate::domain::time::start_of_day(day, chrono_tz::Tz::UTC).context("a day in range")
}

/// Analyses the measurements taken since `since` (all without it) again and rewrites those
/// whose result changed; prints how many were examined, changed and failed.
pub async fn reanalyse(settings: Settings, since: Option<&str>) -> anyhow::Result<()> {
    let since = since.map(parse_since).transpose()?;
    let store = open_store(&settings).await?;
    let started = Instant::now();
    let total = store
        .count_measurements_since(&Service::Operator, since)
        .await?;
    let mut progress = Progress::new(
        "reanalyse",
        "measurements",
        "measurements to analyse",
        total,
    );
    let run = crate::actions::operator::reanalyse(&store, since, BATCH, |run| {
        let counts = format!("{} changed, {} failed", run.changed, run.failed);
        progress.update(run.examined, &counts)
    })
    .await?;
    progress.finish();
    println!(
        "{} measurements examined, {} changed, {} failed analysis in {:.1} s (algorithm {})",
        run.examined,
        run.changed,
        run.failed,
        started.elapsed().as_secs_f64(),
        crate::analysis::VERSION
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_since;

    #[test]
    fn since_takes_a_day_or_milliseconds() {
        assert_eq!(parse_since("1795219200000").unwrap(), 1_795_219_200_000);
        assert_eq!(parse_since("2026-11-22").unwrap(), 1_795_305_600_000);
        assert!(parse_since("22/11/2026").is_err());
    }
}
