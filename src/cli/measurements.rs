//! `tacho measurements reanalyse`: the current analysis over stored measurements.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::NaiveDate;
use indicatif::{ProgressBar, ProgressStyle};

use super::reports::open_store;
use crate::config::Settings;
use crate::store::Reanalysis;

/// Measurements read per query: each carries its payload (~0.4 MB for a minute of camera
/// traces), so a batch holds some 25 MB at most.
const BATCH: u64 = 64;

/// Progress on a terminal as a bar, elsewhere (logs, CI) as a plain line every few seconds.
enum Progress {
    Bar(ProgressBar),
    Lines {
        total: u64,
        started: Instant,
        last: Instant,
    },
}

impl Progress {
    fn new(total: u64) -> Self {
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{bar:40}] {pos}/{len} measurements · {msg} · {eta} left",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            Progress::Bar(bar)
        } else {
            eprintln!("reanalyse: {total} measurements to analyse");
            let now = Instant::now();
            Progress::Lines {
                total,
                started: now,
                last: now,
            }
        }
    }

    fn update(&mut self, run: &Reanalysis) {
        let done = run.examined;
        match self {
            Progress::Bar(bar) => {
                // Measurements stored during the run may make it longer than counted.
                if done > bar.length().unwrap_or(0) {
                    bar.set_length(done);
                }
                bar.set_position(done);
                let rate = done as f64 / bar.elapsed().as_secs_f64().max(0.001);
                bar.set_message(format!(
                    "{rate:.0}/s · {} changed, {} failed",
                    run.changed, run.failed
                ));
            }
            Progress::Lines {
                total,
                started,
                last,
            } => {
                if last.elapsed() >= Duration::from_secs(2) || done == *total {
                    *last = Instant::now();
                    let total = (*total).max(done);
                    eprintln!(
                        "reanalyse: {done}/{total} ({}%) after {:.1} s: {} changed, {} failed",
                        done * 100 / total.max(1),
                        started.elapsed().as_secs_f64(),
                        run.changed,
                        run.failed
                    );
                }
            }
        }
    }

    fn finish(self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

/// `--since`: a day (YYYY-MM-DD, from its midnight UTC) or epoch milliseconds.
fn parse_since(text: &str) -> anyhow::Result<i64> {
    let text = text.trim();
    if let Ok(millis) = text.parse::<i64>() {
        return Ok(millis);
    }
    let day = NaiveDate::parse_from_str(text, "%Y-%m-%d").with_context(|| {
        format!("--since `{text}` is neither YYYY-MM-DD nor epoch milliseconds")
    })?;
    Ok(day
        .and_hms_opt(0, 0, 0)
        .context("a valid day")?
        .and_utc()
        .timestamp_millis())
}

/// Analyses the measurements taken since `since` (all without it) again and rewrites those
/// whose result changed; prints how many were examined, changed and failed.
pub async fn reanalyse(settings: Settings, since: Option<&str>) -> anyhow::Result<()> {
    let since = since.map(parse_since).transpose()?;
    let store = open_store(&settings).await?;
    let started = Instant::now();
    let mut progress = Progress::new(store.count_measurements_since(since).await?);
    let run = store
        .reanalyse_measurements(since, BATCH, |run| progress.update(run))
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
