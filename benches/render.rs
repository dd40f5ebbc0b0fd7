//! Rendering a 60-second measurement's report: warm renders with changing data, cold renders
//! (a fresh process each: font parsing, library set-up and the first layout), and fetching the
//! cached PDF over HTTP from the real server. Then reports of RR-only uploads of 71, 2,200
//! (30 minutes) and 400,000 intervals, whose cost should not grow with the series (the render
//! alone, the render data's build and hash alone, and both). Last, a periodic report of 3,000
//! measurements in a month, summed up per day.
//!
//! `cargo bench --bench render` (all), `cargo bench --bench render -- "RR intervals"` (the
//! series lengths only)

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use criterion::Criterion;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tacho::domain::account::Language;
use tacho::domain::id::Id;
use tacho::domain::measurement::Status;
use tacho::pdf::{Engine, RenderMeta, Template};
use tacho::reports::cache_key;
use tacho::reports::measurement::{MeasurementReportData, MeasurementReportInput, build};
use tacho::reports::periodic::{self, PeriodicReportInput};
use tacho::store::entities::{measurement, profile, report, user};

const COLD: &str = "TACHO_BENCH_COLD_RENDER";

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Render data for the `n`-th variant of a measurement, so warm renders see new data.
fn data(payload: &Value, n: i64, language: Language) -> (MeasurementReportData, RenderMeta) {
    // Every variant gets a different signal too, so no layout can be reused from memo caches.
    let mut payload = payload.clone();
    if let Some(rr) = payload
        .get_mut("rr_intervals")
        .and_then(Value::as_array_mut)
    {
        for (i, interval) in rr.iter_mut().enumerate() {
            let shift = ((n + i as i64) % 17) - 8;
            *interval = json!(interval.as_i64().unwrap_or(800) + shift);
        }
    }
    if let Some(time) = payload.get_mut("time").and_then(Value::as_array_mut) {
        let shift = n % 5;
        for t in time.iter_mut() {
            *t = json!(t.as_i64().unwrap_or(0) + shift);
        }
    }
    let payload = &payload;
    let measurement = measurement::Model {
        id: Id::parse("6740a0000000000000000001").expect("an id"),
        creator_id: Id::parse("6740a0000000000000000002").expect("an id"),
        status: Status::Analyzed,
        data: payload.to_string(),
        measurement_timestamp: payload["measurement_timestamp"].as_i64(),
        heartrate: payload["heartrate"].as_f64().map(|hr| hr + (n % 7) as f64),
        indicator: Some("normal".into()),
        heart_rate: None,
        result: None,
        summary: None,
        review_label: None,
        reviewer_id: None,
        review_timestamp: None,
        creation_timestamp: 1_795_217_460_000,
        update_timestamp: 1_795_217_460_000 + n,
        status_changed_timestamp: 1_795_217_460_000,
    };
    report_data(&measurement, n, language)
}

/// The `n`-th variant of the patient.
fn patient(n: i64) -> user::Model {
    user::Model {
        id: Id::parse("6740a0000000000000000002").expect("an id"),
        email: "anna@tacho.test".into(),
        password_hash: String::new(),
        first_name: format!("Anna {n}"),
        last_name: "Janssens".into(),
        phone_number: None,
        language: "NL".into(),
        time_zone: "Europe/Brussels".into(),
        activation: true,
        roles: json!([]),
        profile_image: None,
        failed_count: 0,
        last_failed_timestamp: None,
        password_change_due: false,
        legal_hold: false,
        erased_timestamp: None,
        deactivation_timestamp: None,
        creation_timestamp: 0,
        update_timestamp: 0,
    }
}

/// The render data of `measurement` for the `n`-th patient variant, as the server builds it.
fn report_data(
    measurement: &measurement::Model,
    n: i64,
    language: Language,
) -> (MeasurementReportData, RenderMeta) {
    let patient = patient(n);
    let profile = profile::Model {
        id: patient.id,
        data: json!({"birthday": "1958-03-14", "gender": 2, "comorbidities": ["HYPERTENSION"], "smoker": false,
            "activity": "MODERATELY_ACTIVE", "weight": 68, "length": 165, "physician": "Dr. Jan Peeters"}),
        country: None,
        city: None,
        physician: None,
        gender: Some(2),
        creation_timestamp: 0,
        update_timestamp: 0,
    };
    let input = MeasurementReportInput {
        measurement,
        patient: &patient,
        profile: Some(&profile),
        language,
        time_zone: chrono_tz::Europe::Brussels,
        reviewer: None,
    };
    let built = build(&input);
    let meta = RenderMeta {
        title: "Tacho".into(),
        ident: format!("bench-{n}"),
        timestamp: Utc.timestamp_millis_opt(1_795_217_460_000).unwrap(),
        language: language.code().into(),
    };
    (built.data, meta)
}

/// An RR-only measurement of `count` intervals, analysed as an upload is, as stored. The
/// series is the kind the peers' harness makes for its 30-minute reports: sinus rhythm with
/// drift and respiration, alternating with 300-beat stretches of irregular rhythm, plus one
/// premature beat; `variant` seeds it, so every variant is new to typst's caches.
fn rr_measurement(count: usize, variant: u64) -> measurement::Model {
    let mut rng = StdRng::seed_from_u64(variant);
    let base: f64 = rng.random_range(780.0..860.0);
    let mut drift = 0.0;
    let mut rr: Vec<f64> = (0..count)
        .map(|i| {
            drift = 0.98 * drift + rng.random_range(-14.0..14.0);
            let v = if (i / 300) % 2 == 1 {
                base * rng.random_range(0.55..1.35)
            } else {
                base + drift + 30.0 * (i as f64 / 4.0).sin()
            };
            (v + rng.random_range(-17.0..17.0)).round()
        })
        .collect();
    if count > 40 {
        let at = count / 2;
        rr[at] = (base * 0.6).round();
        rr[at + 1] = (base * 1.4).round();
    }
    let payload = json!({
        "measurement_timestamp": 1_795_217_400_000_i64,
        "heartrate": (60_000.0 * rr.len() as f64 / rr.iter().sum::<f64>()).round(),
        "rr_intervals": rr,
        "context": {"symptoms": [], "activity": "resting"},
        "tags": ["bench"],
    });
    let mut data = payload.as_object().cloned().unwrap();
    let (analysis, _) = tacho::domain::measurement::analyse(&data);
    tacho::domain::measurement::write_analysis(&mut data, &analysis);
    measurement::Model {
        id: Id::parse("6740a0000000000000000001").expect("an id"),
        creator_id: Id::parse("6740a0000000000000000002").expect("an id"),
        status: Status::Analyzed,
        data: Value::Object(data).to_string(),
        measurement_timestamp: Some(1_795_217_400_000),
        heartrate: payload["heartrate"].as_f64(),
        indicator: Some("normal".into()),
        heart_rate: analysis.heart_rate,
        result: None,
        summary: None,
        review_label: None,
        reviewer_id: None,
        review_timestamp: None,
        creation_timestamp: 1_795_217_460_000,
        update_timestamp: 1_795_217_460_000 + variant as i64,
        status_changed_timestamp: 1_795_217_460_000,
    }
}

/// Reports of RR-only uploads of growing length: the render alone (data built beforehand), and
/// everything the server does for a first request short of the database and the file store
/// (reading the stored measurement into render data, hashing it, rendering).
fn series_lengths(c: &mut Criterion) {
    let engine = Engine::new();
    let mut group = c.benchmark_group("RR intervals");
    // Flat: as many iterations in every sample, so a slow case still finishes.
    group
        .sample_size(20)
        .sampling_mode(criterion::SamplingMode::Flat)
        .measurement_time(Duration::from_secs(10));
    // Every iteration gets a new series, so typst's caches reuse nothing.
    let mut variant = 0;
    let mut next = |count| {
        variant += 1;
        (rr_measurement(count, variant), variant as i64)
    };
    for count in [71, 2_200, 400_000] {
        group.bench_function(format!("warm render, {count} RR intervals"), |b| {
            b.iter_batched(
                || {
                    let (m, n) = next(count);
                    report_data(&m, n, Language::En)
                },
                |(data, meta)| {
                    black_box(engine.render(Template::Measurement, &data, &meta).unwrap())
                },
                criterion::BatchSize::PerIteration,
            )
        });
        group.bench_function(format!("build and hash, {count} RR intervals"), |b| {
            b.iter_batched(
                || next(count),
                |(m, n)| {
                    let (data, _) = report_data(&m, n, Language::En);
                    black_box(cache_key(Template::Measurement, &data))
                },
                criterion::BatchSize::PerIteration,
            )
        });
        group.bench_function(
            format!("build, hash and render, {count} RR intervals"),
            |b| {
                b.iter_batched(
                    || next(count),
                    |(m, n)| {
                        let (data, meta) = report_data(&m, n, Language::En);
                        black_box(cache_key(Template::Measurement, &data));
                        black_box(engine.render(Template::Measurement, &data, &meta).unwrap())
                    },
                    criterion::BatchSize::PerIteration,
                )
            },
        );
    }
    group.finish();
}

fn warm(c: &mut Criterion) {
    let engine = Engine::new();
    let payload = fixture("sinus_72");
    let ppg = fixture("ppg_only");
    let mut n = 0;
    let mut group = c.benchmark_group("measurement report");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(10));
    for (name, payload, language) in [
        ("warm, tachogram, en", &payload, Language::En),
        ("warm, tachogram, ar", &payload, Language::Ar),
        ("warm, 1800-point PPG, zh", &ppg, Language::Zh),
    ] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    n += 1;
                    data(payload, n, language)
                },
                |(data, meta)| {
                    black_box(engine.render(Template::Measurement, &data, &meta).unwrap())
                },
                criterion::BatchSize::SmallInput,
            )
        });
    }
    group.bench_function("cold: new process, first render", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let output = Command::new(std::env::current_exe().unwrap())
                    .env(COLD, "1")
                    .output()
                    .unwrap();
                let nanos: u64 = String::from_utf8_lossy(&output.stdout)
                    .trim()
                    .parse()
                    .expect("the child prints nanoseconds");
                total += Duration::from_nanos(nanos);
            }
            total
        })
    });
    group.finish();
}

/// The real server on a temporary SQLite database, serving one rendered report.
fn cached_fetch(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = reqwest::Client::new();
    let url = runtime.block_on(async {
        let data_dir = dir.path().display().to_string();
        let settings = tacho::config::Settings::from_lookup(|key| match key {
            "TACHO_DATA_DIR" => Some(data_dir.clone()),
            "TACHO_ADDR" => Some("127.0.0.1:0".into()),
            _ => None,
        })
        .unwrap();
        let app = tacho::startup::Application::build(settings, Default::default()).await.unwrap();
        let base = format!("http://127.0.0.1:{}", app.port());
        let operator = app.operator();
        tokio::spawn(app.run_until_stopped());
        tacho::demo::seed(&operator.store, operator.auth.hasher()).await.unwrap();
        let login: Value = client
            .post(format!("{base}/auth/v2/oauth2/tokens"))
            .json(&json!({"grant_type": "password", "username": "anna@tacho.test", "password": tacho::demo::DEMO_PASSWORD}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let token = login["access_token"].as_str().unwrap().to_owned();
        let measurement: Value = client
            .post(format!("{base}/data/v1/measurements/documents"))
            .bearer_auth(&token)
            .json(&fixture("sinus_72"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let report: Value = client
            .post(format!("{base}/data/v1/measurement-reports/documents"))
            .bearer_auth(&token)
            .json(&json!({"measurementId": measurement["id"], "language": "en"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        format!("{base}/files/v1/{}/file", report["data"]["readFileToken"].as_str().unwrap())
    });
    c.bench_function("cached fetch over HTTP: GET /files/v1/<token>/file", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let response = client.get(&url).send().await.unwrap();
                assert_eq!(response.status(), 200);
                black_box(response.bytes().await.unwrap())
            })
        })
    });
}

/// A month of a patient measuring a hundred times a day: 3,000 measurements, one in twenty a
/// possible atrial fibrillation (150, of which the report lists the 60 most recent), one in
/// twenty possibly irregular, one in twenty unreadable. `variant` moves every heart rate, so
/// no layout is reused.
fn busy_month(variant: i64) -> report::Model {
    let start = 1_795_217_400_000_i64;
    let items: Vec<Value> = (0..3_000_i64)
        .map(|i| {
            let (result, indicator) = match i % 20 {
                7 => ("possible_atrial_fibrillation", "urgent"),
                13 => ("possibly_irregular", "warning"),
                17 => ("quality_too_low", "quality"),
                _ => ("regular", "normal"),
            };
            json!({
                "id": format!("m{i}"),
                "measurement_timestamp": start + i * 864_000,
                "heart_rate": 58.0 + ((i + variant) % 61) as f64,
                "result": result,
                "indicator": indicator,
                "labels": [],
                "status": if i % 9 == 0 { "reviewed" } else { "analyzed" },
                "label": null,
                "symptoms": if i % 50 == 0 { json!(["dizziness"]) } else { json!([]) },
                "quality": "good",
            })
        })
        .collect();
    report::Model {
        id: Id::parse("6740a0000000000000000009").expect("an id"),
        user_id: Id::parse("6740a0000000000000000002").expect("an id"),
        creator_id: None,
        group_id: None,
        trigger: tacho::domain::periods::Trigger::PeriodDaysPassed30,
        status: report::ReportStatus::Complete,
        dedupe_key: None,
        period_start_timestamp: start,
        period_end_timestamp: start + 30 * 86_400_000,
        data: json!({ "measurements": items }).to_string(),
        creation_timestamp: start,
        update_timestamp: start + variant,
    }
}

/// A periodic report of 3,000 measurements in a month, as a first request makes it short of
/// the database and the file store: the stored items read into render data, hashed, rendered.
fn periodic_month(c: &mut Criterion) {
    let engine = Engine::new();
    let patient = patient(0);
    let mut group = c.benchmark_group("periodic report, 3000 measurements");
    group
        .sample_size(20)
        .sampling_mode(criterion::SamplingMode::Flat)
        .measurement_time(Duration::from_secs(10));
    let mut variant = 0;
    for language in [Language::En, Language::Ar, Language::Zh] {
        group.bench_function(
            format!("build, hash and render, {}", language.code()),
            |b| {
                b.iter_batched(
                    || {
                        variant += 1;
                        busy_month(variant)
                    },
                    |report| {
                        let built = periodic::build(&PeriodicReportInput {
                            report: &report,
                            patient: &patient,
                            profile: None,
                            language,
                            time_zone: chrono_tz::Europe::Brussels,
                        })
                        .unwrap();
                        let meta = RenderMeta {
                            title: "Tacho".into(),
                            ident: cache_key(Template::Periodic, &built.data),
                            timestamp: built.as_of,
                            language: language.code().into(),
                        };
                        black_box(
                            engine
                                .render(Template::Periodic, &built.data, &meta)
                                .unwrap(),
                        )
                    },
                    criterion::BatchSize::PerIteration,
                )
            },
        );
    }
    group.finish();
}

fn main() {
    if std::env::var_os(COLD).is_some() {
        // The child of the cold benchmark: everything a fresh server does for its first PDF.
        let payload = fixture("sinus_72");
        let (data, meta) = data(&payload, 0, Language::En);
        let started = Instant::now();
        let engine = Engine::new();
        black_box(engine.render(Template::Measurement, &data, &meta).unwrap());
        println!("{}", started.elapsed().as_nanos());
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    warm(&mut criterion);
    cached_fetch(&mut criterion);
    series_lengths(&mut criterion);
    periodic_month(&mut criterion);
    criterion.final_summary();
}
