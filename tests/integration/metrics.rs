//! The metrics listener (`TACHO_METRICS_ADDR`): an address of its own, the Prometheus text
//! format, and the figures the service records as it works.
//!
//! The recorder is one per process and the tests run side by side, so every check compares
//! two scrapes around what the test itself did: the figure grows by at least that much.

use prometheus_parse::{Scrape, Value as Sample};
use reqwest::Method;

use crate::helpers::{PASSWORD, TestApp, spawn_app, spawn_app_with};

async fn metrics_app() -> TestApp {
    spawn_app_with(|s| s.metrics_addr = Some("127.0.0.1:0".into())).await
}

/// Reads the metrics page and parses it as the Prometheus text format.
async fn scrape(app: &TestApp) -> Scrape {
    let address = app.metrics_address.as_ref().expect("a metrics listener");
    let response = app
        .client
        .get(format!("{address}/metrics"))
        .send()
        .await
        .expect("the metrics listener answers");
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let text = response.text().await.unwrap();
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        assert!(
            !line.contains("@") && !line.contains("Bearer"),
            "no address or token in a label: {line}"
        );
    }
    Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("the Prometheus text format")
}

/// The sum of the samples of `name` whose labels include `labels`: a counter's or gauge's
/// value, a histogram's count of observations.
fn value(scrape: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == name)
        .filter(|s| labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(|s| match &s.value {
            Sample::Counter(v) | Sample::Gauge(v) | Sample::Untyped(v) => *v,
            Sample::Histogram(buckets) => buckets
                .iter()
                .find(|b| b.less_than.is_infinite())
                .map_or(0.0, |b| b.count),
            Sample::Summary(_) => panic!("{name} is a summary; histograms are expected"),
        })
        .sum()
}

/// Whether `name` is exposed as a histogram (with buckets, for `histogram_quantile`).
fn is_histogram(scrape: &Scrape, name: &str) -> bool {
    scrape
        .samples
        .iter()
        .any(|s| s.metric == name && matches!(&s.value, Sample::Histogram(b) if b.len() > 5))
}

#[tokio::test]
async fn metrics_are_off_by_default_and_never_on_the_public_listener() {
    let app = spawn_app().await;
    assert!(app.metrics_address.is_none());
    let public = app.request(Method::GET, "/metrics", None, None).await;
    public.assert_error(404, 16);

    let app = metrics_app().await;
    let public = app.request(Method::GET, "/metrics", None, None).await;
    public.assert_error(404, 16);
    scrape(&app).await;
}

#[tokio::test]
async fn requests_logins_analyses_renders_and_jobs_are_counted() {
    let app = metrics_app().await;
    let patient = app.user("metrics-patient").await;
    let before = scrape(&app).await;

    for _ in 0..3 {
        app.request(Method::GET, "/health/ready", None, None)
            .await
            .assert_ok();
    }
    app.get("/users/v1/me", "not-a-token")
        .await
        .assert_error(401, 117);
    app.password_grant(&patient.email, "wrong password").await;
    app.password_grant(&patient.email, PASSWORD)
        .await
        .assert_ok();
    let at = app.clock_millis() - 60_000;
    let measurement = app.measure_at(&patient, at, 72.0, "normal", &[]).await;
    app.report(&patient, &measurement, Some("nl"))
        .await
        .assert_ok();
    app.report(&patient, &measurement, Some("nl"))
        .await
        .assert_ok();
    let waiting = scrape(&app).await;
    let worked = app.work_queue().await;
    assert!(worked.notified >= 1, "{worked:?}");
    let after = scrape(&app).await;

    let grew = |name: &str, labels: &[(&str, &str)]| {
        value(&after, name, labels) - value(&before, name, labels)
    };
    let ready = [
        ("route", "/health/ready"),
        ("method", "GET"),
        ("status", "2xx"),
    ];
    assert!(grew("tacho_http_requests_total", &ready) >= 3.0);
    assert!(
        grew(
            "tacho_http_requests_total",
            &[("route", "/users/v1/me"), ("status", "4xx")]
        ) >= 1.0
    );
    assert!(is_histogram(&after, "tacho_http_request_duration_seconds"));
    assert!(
        grew(
            "tacho_http_request_duration_seconds",
            &[("route", "/health/ready")]
        ) >= 3.0
    );

    assert!(grew("tacho_logins_total", &[("outcome", "success")]) >= 1.0);
    assert!(grew("tacho_logins_total", &[("outcome", "failure")]) >= 1.0);

    assert!(is_histogram(&after, "tacho_analysis_duration_seconds"));
    assert!(
        grew(
            "tacho_analysis_duration_seconds",
            &[("source", "rr_intervals"), ("outcome", "readable")]
        ) >= 1.0
    );

    assert!(is_histogram(&after, "tacho_render_duration_seconds"));
    let measurement_nl = [("template", "measurement"), ("language", "nl")];
    assert!(grew("tacho_render_duration_seconds", &measurement_nl) >= 1.0);
    let cache = |outcome| [("template", "measurement"), ("outcome", outcome)];
    assert!(grew("tacho_render_cache_total", &cache("miss")) >= 1.0);
    assert!(grew("tacho_render_cache_total", &cache("hit")) >= 1.0);

    // The upload's event waited in the queue until the test worked it.
    assert!(value(&waiting, "tacho_jobs_waiting", &[("kind", "notify")]) >= 1.0);
    assert!(grew("tacho_job_attempts_total", &[("kind", "notify")]) >= 1.0);
    assert_eq!(
        value(&after, "tacho_jobs_waiting", &[("kind", "notify")]),
        0.0,
        "this app's queue is empty once worked"
    );

    let max = value(&after, "tacho_db_pool_max_connections", &[]);
    assert!(max >= 8.0, "{max}");
    let in_use = value(&after, "tacho_db_pool_connections", &[("state", "in_use")]);
    let idle = value(&after, "tacho_db_pool_connections", &[("state", "idle")]);
    assert!(in_use + idle >= 1.0 && in_use + idle <= max);
    assert_eq!(value(&after, "tacho_metrics_database_up", &[]), 1.0);
}
