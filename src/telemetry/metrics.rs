//! Metrics in the Prometheus text format, served on an address of their own
//! (`TACHO_METRICS_ADDR`, off by default) so that they are never public by accident.
//!
//! Every metric the service records is named here, once, with the labels it takes; the
//! rest of the code calls these functions. `docs/operations.md` says what each one means.
//! Labels hold route patterns, kinds, languages and outcomes only: never an id, a path or
//! anything about a person, so their number stays bounded.
//!
//! The recorder is global (the `metrics` facade has one per process); it is installed by the
//! first application built, and every later one (tests build many) shares it.

use std::net::TcpListener;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::{App, HttpResponse, HttpServer, web};
use metrics::{counter, gauge, histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// The job queue of one kind at a scrape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueSample {
    pub kind: String,
    /// Due and not yet claimed.
    pub waiting: u64,
    /// Claimed under a lease.
    pub running: u64,
    /// Failed on their last attempt.
    pub failed: u64,
    /// How long the oldest waiting job has been due; 0 when none waits.
    pub oldest_waiting_secs: f64,
}

/// The database pool at a scrape.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolSample {
    pub in_use: usize,
    pub idle: usize,
    pub max: usize,
    pub waiting: usize,
}

/// What the metrics listener reads of the service at each scrape; `startup` hands one over,
/// so that this module needs nothing of the rest of the crate.
#[async_trait::async_trait]
pub trait Sampler: Send + Sync {
    /// The pool now.
    fn pool(&self) -> PoolSample;
    /// The job queue of every kind (a kind with nothing queued included, at zero), or why it
    /// could not be read.
    async fn queues(&self) -> Result<Vec<QueueSample>, String>;
}

/// Upper bounds (seconds) of the duration histograms' buckets: from a cached answer (under a
/// millisecond) to a render at its deadline.
const DURATION_BUCKETS: [f64; 14] = [
    0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The process's recorder, installed on first use.
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &DURATION_BUCKETS)
            .expect("the buckets are not empty");
        match builder.install_recorder() {
            Ok(handle) => handle,
            // Another recorder was installed first (a program embedding this library): keep
            // an unregistered one so that scrapes still answer, empty.
            Err(_) => PrometheusBuilder::new().build_recorder().handle(),
        }
    })
}

/// Serves `GET /metrics` on `listener`: the recorded metrics, plus the job queue and the
/// database pool sampled at the moment of the scrape.
pub fn serve(listener: TcpListener, sampler: Arc<dyn Sampler>) -> std::io::Result<Server> {
    handle();
    let sampler = web::Data::from(sampler);
    Ok(HttpServer::new(move || {
        App::new()
            .app_data(sampler.clone())
            .route("/metrics", web::get().to(scrape))
    })
    .workers(1)
    .disable_signals()
    .listen(listener)?
    .run())
}

/// `GET /metrics`.
async fn scrape(sampler: web::Data<dyn Sampler>) -> HttpResponse {
    // The gauges are the process's: two listeners (tests run several servers in one process)
    // sample and render one at a time, so each page shows its own server's queue.
    static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let _turn = ONE_AT_A_TIME.lock().await;
    sample(sampler.get_ref()).await;
    let handle = handle();
    handle.run_upkeep();
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(handle.render())
}

/// Sets the gauges that are read from the database and the pool rather than counted.
async fn sample(sampler: &dyn Sampler) {
    let pool = sampler.pool();
    gauge!("tacho_db_pool_connections", "state" => "in_use").set(pool.in_use as f64);
    gauge!("tacho_db_pool_connections", "state" => "idle").set(pool.idle as f64);
    gauge!("tacho_db_pool_max_connections").set(pool.max as f64);
    gauge!("tacho_db_pool_waiting").set(pool.waiting as f64);
    match sampler.queues().await {
        Ok(kinds) => {
            for kind in kinds {
                let name = kind.kind.clone();
                gauge!("tacho_jobs_waiting", "kind" => name.clone()).set(kind.waiting as f64);
                gauge!("tacho_jobs_running", "kind" => name.clone()).set(kind.running as f64);
                gauge!("tacho_jobs_failed", "kind" => name.clone()).set(kind.failed as f64);
                gauge!("tacho_jobs_oldest_waiting_seconds", "kind" => name)
                    .set(kind.oldest_waiting_secs);
            }
            gauge!("tacho_metrics_database_up").set(1.0);
        }
        Err(err) => {
            tracing::warn!(error = %err, "metrics: the job queue could not be read");
            gauge!("tacho_metrics_database_up").set(0.0);
        }
    }
}

/// `2xx`, `4xx`…: the class of an HTTP status.
fn status_class(status: u16) -> &'static str {
    match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

/// One answered HTTP request, by route pattern (`/files/v1/{token}/file`, never the path).
pub fn http_request(route: &str, method: &str, status: u16, elapsed: Duration) {
    let (route, method) = (route.to_owned(), method.to_owned());
    counter!("tacho_http_requests_total", "route" => route.clone(), "method" => method.clone(),
        "status" => status_class(status))
    .increment(1);
    histogram!("tacho_http_request_duration_seconds", "route" => route, "method" => method)
        .record(elapsed.as_secs_f64());
}

/// One SQL statement run, in the pool or a transaction, and whether the database refused it.
/// Its time is left out: a histogram per statement would cost a good part of a short query.
pub fn statement(failed: bool) {
    let outcome = if failed { "failed" } else { "ok" };
    counter!("tacho_db_statements_total", "outcome" => outcome).increment(1);
}

/// One group commit of the audit trail, holding `records` records of reads.
pub fn audit_group_commit(records: usize) {
    counter!("tacho_audit_group_commits_total").increment(1);
    counter!("tacho_audit_records_total").increment(records as u64);
}

/// A PDF rendered from `template` (`measurement`, `periodic`) in `language`.
pub fn render(template: &'static str, language: &str, elapsed: Duration) {
    histogram!("tacho_render_duration_seconds", "template" => template,
        "language" => language.to_owned())
    .record(elapsed.as_secs_f64());
}

/// A render abandoned at its deadline.
pub fn render_abandoned(template: &'static str) {
    counter!("tacho_renders_abandoned_total", "template" => template).increment(1);
}

/// A PDF asked for: served from a file already rendered (`hit`) or rendered (`miss`).
pub fn render_cache(template: &'static str, hit: bool) {
    let outcome = if hit { "hit" } else { "miss" };
    counter!("tacho_render_cache_total", "template" => template, "outcome" => outcome).increment(1);
}

/// A stored file's contents served from memory (`hit`) or read from storage (`miss`).
pub fn file_cache(hit: bool) {
    let outcome = if hit { "hit" } else { "miss" };
    counter!("tacho_file_cache_total", "outcome" => outcome).increment(1);
}

/// One analysis of a recording (`camera`, `rr_intervals`…), readable or not.
pub fn analysis(source: &'static str, readable: bool, elapsed: Duration) {
    let outcome = if readable { "readable" } else { "unreadable" };
    histogram!("tacho_analysis_duration_seconds", "source" => source, "outcome" => outcome)
        .record(elapsed.as_secs_f64());
}

/// A job claimed for an attempt.
pub fn job_attempt(kind: &str) {
    counter!("tacho_job_attempts_total", "kind" => kind.to_owned()).increment(1);
}

/// A job attempt that failed; `last` when it was the job's final attempt.
pub fn job_failure(kind: &str, last: bool) {
    counter!("tacho_job_failures_total", "kind" => kind.to_owned(),
        "final" => if last { "true" } else { "false" })
    .increment(1);
}

/// A notification delivery over `channel` (`email`, `digest`, `webhook`): `sent`, `failed`
/// (to be retried) or `gave_up`.
pub fn delivery(channel: &'static str, outcome: &'static str) {
    counter!("tacho_notification_deliveries_total", "channel" => channel, "outcome" => outcome)
        .increment(1);
}

/// A login attempt's outcome: `success`, `failure` (wrong credentials or a deactivated
/// account), `lockout` (a failure that froze the login), `locked` (refused while frozen or
/// blocked), `throttled` (too many attempts from the client's network) or `error` (a fault).
pub fn login(outcome: &'static str) {
    counter!("tacho_logins_total", "outcome" => outcome).increment(1);
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// The `tacho_…` names in `text`, without the suffixes Prometheus adds to histograms.
    fn names_in(text: &str) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        let mut rest = text;
        while let Some(at) = rest.find("tacho_") {
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
                .unwrap_or(tail.len());
            let name = &tail[..end];
            let name = ["_bucket", "_count", "_sum"]
                .iter()
                .find_map(|suffix| name.strip_suffix(suffix))
                .unwrap_or(name);
            names.insert(name.to_owned());
            rest = &tail[end..];
        }
        names
    }

    #[test]
    fn the_operations_guide_and_the_dashboard_name_the_recorded_metrics() {
        let source = include_str!("metrics.rs");
        let code = &source[..source.find("#[cfg(test)]").unwrap()];
        let recorded = names_in(code);
        assert!(recorded.len() >= 18, "{recorded:?}");
        let guide = include_str!("../../docs/operations.md");
        let dashboard = include_str!("../../docs/grafana/tacho.json");
        let dashboard_json: serde_json::Value = serde_json::from_str(dashboard).unwrap();
        assert!(dashboard_json["panels"].as_array().unwrap().len() >= 10);
        for name in names_in(guide).union(&names_in(dashboard)) {
            assert!(
                recorded.contains(name),
                "{name} is named in the docs but never recorded"
            );
        }
        for name in &recorded {
            assert!(
                guide.contains(&format!("| `{name}` |")),
                "{name} is recorded but missing from the table in docs/operations.md"
            );
        }
    }

    #[test]
    fn statuses_fall_in_their_class() {
        assert_eq!(status_class(200), "2xx");
        assert_eq!(status_class(204), "2xx");
        assert_eq!(status_class(304), "3xx");
        assert_eq!(status_class(404), "4xx");
        assert_eq!(status_class(503), "5xx");
        assert_eq!(status_class(101), "1xx");
    }
}
