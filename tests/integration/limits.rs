//! Bounded cost: the length bounds of a measurement's signal, the render deadline and the
//! one-render-per-reader rule.

use std::time::Duration;

use sea_orm::{ConnectionTrait, Statement};
use serde_json::{Value, json};
use tacho::domain::id::Id;
use tacho::domain::measurement::{NewMeasurement, Status, analyse, write_analysis};
use tacho::domain::recording_limits::{MAX_FRAMES, MAX_RR_INTERVALS};

use crate::helpers::{TestApp, World, spawn_app, spawn_app_with};

const MEASUREMENTS: &str = "/data/v1/measurements/documents";

/// `n` frame times at 250 Hz.
fn times(n: usize) -> Value {
    (0..n).map(|i| i * 4).collect()
}

/// `n` values of a slow wave, so that the analysis has something to read.
fn wave(n: usize) -> Value {
    (0..n)
        .map(|i| (128.0 + 10.0 * (i as f64 * 0.025).sin()).round())
        .collect()
}

/// A camera payload of one cell and motion data, `frames` long, with `change` applied.
fn camera(frames: usize, change: impl FnOnce(&mut Value)) -> Value {
    let mut payload = json!({
        "measurement_timestamp": 1,
        "time": times(frames),
        "quadrants": [[{"y": wave(frames), "u": wave(frames), "v": wave(frames)}]],
        "acc": {"x": wave(frames), "y": wave(frames), "z": wave(frames)},
        "gyro": {"x": wave(frames), "y": wave(frames), "z": wave(frames)},
    });
    change(&mut payload);
    payload
}

/// A regular series of `n` intervals around 800 ms, with a little jitter as real beats have.
fn jittered(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 800.0 + [0.0, 6.0, -4.0, 3.0, -5.0][i % 5])
        .collect()
}

async fn row_count(app: &TestApp, table: &str) -> i64 {
    let db = app.store.connection();
    let row = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            format!("SELECT COUNT(*) AS n FROM {table}"),
        ))
        .await
        .unwrap()
        .unwrap();
    row.try_get("", "n").unwrap()
}

#[tokio::test]
async fn every_signal_array_has_a_bound_named_in_its_error() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    let over = MAX_FRAMES + 1;
    let cases: Vec<(&str, usize, Value)> = vec![
        (
            "rr_intervals",
            MAX_RR_INTERVALS,
            json!({"measurement_timestamp": 1, "rr_intervals": vec![800; MAX_RR_INTERVALS + 1]}),
        ),
        ("time", MAX_FRAMES, camera(3, |p| p["time"] = times(over))),
        (
            "quadrants[0][0].y",
            MAX_FRAMES,
            camera(3, |p| p["quadrants"][0][0]["y"] = wave(over)),
        ),
        (
            "quadrants[0][0].u",
            MAX_FRAMES,
            camera(3, |p| p["quadrants"][0][0]["u"] = wave(over)),
        ),
        (
            "quadrants[0][0].v",
            MAX_FRAMES,
            camera(3, |p| p["quadrants"][0][0]["v"] = wave(over)),
        ),
        (
            "quadrants",
            4,
            camera(3, |p| p["quadrants"] = json!([[], [], [], [], []])),
        ),
        (
            "quadrants[0]",
            4,
            camera(3, |p| {
                let cell = p["quadrants"][0][0].clone();
                p["quadrants"][0] = json!([cell, cell, cell, cell, cell]);
            }),
        ),
        (
            "acc.x",
            MAX_FRAMES,
            camera(3, |p| p["acc"]["x"] = wave(over)),
        ),
        (
            "gyro.z",
            MAX_FRAMES,
            camera(3, |p| p["gyro"]["z"] = wave(over)),
        ),
    ];
    for (field, limit, payload) in cases {
        let reply = app.post(MEASUREMENTS, &user.token, payload).await;
        reply.assert_error(400, 15);
        let message = reply.body["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("`{field}` may hold at most {limit} values")),
            "{field}: {message}"
        );
    }

    // Exactly at every bound: stored and analysed.
    let rr = app
        .post(
            MEASUREMENTS,
            &user.token,
            json!({"measurement_timestamp": 1, "rr_intervals": jittered(MAX_RR_INTERVALS)}),
        )
        .await;
    assert_eq!(rr.assert_ok()["status"], "analyzed");
    let full = app
        .post(MEASUREMENTS, &user.token, camera(MAX_FRAMES, |_| {}))
        .await;
    let stored = full.assert_ok();
    assert!(
        ["analyzed", "analysis_failed"].contains(&stored["status"].as_str().unwrap()),
        "{}",
        stored["status"]
    );
    assert_eq!(stored["data"]["time"].as_array().unwrap().len(), MAX_FRAMES);
    assert_eq!(
        stored["data"]["quadrants"][0][0]["v"]
            .as_array()
            .unwrap()
            .len(),
        MAX_FRAMES
    );

    // Updates cannot carry signal at all.
    let id = rr.body["id"].as_str().unwrap();
    let reply = app
        .put(
            &format!("{MEASUREMENTS}/{id}"),
            &user.token,
            json!({"rr_intervals": [800]}),
        )
        .await;
    reply.assert_error(400, 15);
}

#[tokio::test]
async fn measurements_stored_beyond_the_bounds_still_read_list_and_render() {
    // Rows from before the bounds: written by the store directly, as they were then. The
    // render deadline is generous here: this test is about reading, not speed.
    let app = spawn_app_with(|s| s.render_deadline = Duration::from_secs(300)).await;
    let world = World::new(&app).await;
    let rr = jittered(MAX_RR_INTERVALS + 500);
    let mut data = json!({"measurement_timestamp": 1_700_000_000_000_i64, "rr_intervals": rr})
        .as_object()
        .cloned()
        .unwrap();
    assert!(NewMeasurement::parse(Value::Object(data.clone())).is_err());
    let (analysis, run) = analyse(&data);
    write_analysis(&mut data, &analysis);
    let old = NewMeasurement {
        data,
        measurement_timestamp: 1_700_000_000_000,
        heartrate: None,
        indicator: Some("normal".into()),
        tags: vec![],
        status: Status::Analyzed,
        run,
    };
    let patient = Id::parse(&world.patient.id).unwrap();
    let record = app
        .operator_writes(async |tx| tx.create_measurement(&patient, old).await)
        .await;
    let id = record.measurement.id;

    let one = app
        .get(&format!("{MEASUREMENTS}/{id}"), &world.patient.token)
        .await;
    assert_eq!(
        one.assert_ok()["data"]["rr_intervals"]
            .as_array()
            .unwrap()
            .len(),
        MAX_RR_INTERVALS + 500
    );
    let list = app.get(MEASUREMENTS, &world.staff_a.token).await;
    let list = list.assert_ok();
    assert_eq!(list["page"]["total"], 1);
    assert_eq!(
        list["data"][0], one.body,
        "the list shows what the document shows"
    );
    app.report(&world.patient, &id.to_string(), Some("en"))
        .await
        .assert_ok();
}

#[tokio::test]
async fn a_render_past_the_deadline_answers_503_and_stores_nothing() {
    let app = spawn_app_with(|s| s.render_deadline = Duration::from_millis(1)).await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;

    let reply = app
        .report(&world.patient, &id.to_string(), Some("en"))
        .await;
    reply.assert_error(503, 503);
    assert_eq!(reply.body["name"], "RENDER_TIMEOUT_EXCEPTION");
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("render deadline of 1 ms"),
        "{}",
        reply.body
    );
    // The physician's request for the same PDF is abandoned the same way.
    app.report(&world.staff_a, &id, Some("en"))
        .await
        .assert_error(503, 503);
    // So is a periodic report's PDF.
    let created = app
        .post(
            "/reports/v1",
            &world.staff_a.token,
            json!({"user_id": world.patient.id}),
        )
        .await;
    let report_id = created.assert_ok()["id"].as_str().unwrap().to_owned();
    app.get(
        &format!("/reports/v1/{report_id}/pdf"),
        &world.staff_a.token,
    )
    .await
    .assert_error(503, 503);
    assert!(app.operator.reports.abandoned() >= 3);

    // The abandoned threads finish in the background; their results are dropped.
    for _ in 0..600 {
        if app.operator.reports.readers_rendering() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(app.operator.reports.readers_rendering(), 0);
    assert_eq!(app.operator.reports.renders(), 0);
    assert_eq!(row_count(&app, "files").await, 0, "no file");
    assert_eq!(
        row_count(&app, "measurement_reports").await,
        0,
        "no document"
    );
    let documents = app
        .get(
            "/data/v1/measurement-reports/documents",
            &world.patient.token,
        )
        .await;
    assert_eq!(documents.assert_ok()["page"]["total"], 0);
}

#[tokio::test]
async fn one_readers_renders_take_turns_and_leave_no_trace() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    // Eight languages: eight distinct PDFs, one reader. Each waits its turn and all arrive.
    let languages = ["en", "nl", "fr", "de", "es", "it", "ar", "zh"];
    let replies = futures_util::future::join_all(
        languages
            .iter()
            .map(|language| app.report(&world.staff_a, &id, Some(language))),
    )
    .await;
    for reply in &replies {
        reply.assert_ok();
    }
    assert_eq!(app.operator.reports.renders(), 8);
    assert_eq!(
        app.operator.reports.readers_rendering(),
        0,
        "no turn is kept once its renders are done"
    );
    assert_eq!(app.operator.reports.abandoned(), 0);
}
