//! The server's rhythm analysis on the wire: what an upload gets in `data`, the fields only
//! the server writes, and camera traces that cannot be analysed (stored, never refused).

use sea_orm::EntityTrait;
use serde_json::{Map, Value, json};
use tacho::domain::id::Id;
use tacho::store::entities::measurement;

use crate::helpers::{TestApp, TestUser, World, fixture, regular_rr, spawn_app};

const SERVER_FIELDS: [&str; 4] = ["indicator", "mostSevereLabel", "af", "analysis"];

/// Posts `payload` as `user` over raw HTTP and returns the stored document.
async fn upload(app: &TestApp, user: &TestUser, payload: &Value) -> Value {
    app.post(
        "/data/v1/measurements/documents",
        &user.token,
        payload.clone(),
    )
    .await
    .assert_ok()
    .clone()
}

/// `data` without the server's fields: what the client sent.
fn sent_part(document: &Value) -> Value {
    let mut data = document["data"].as_object().cloned().unwrap_or_default();
    for field in SERVER_FIELDS {
        assert!(data.shift_remove(field).is_some(), "`{field}` is written");
    }
    Value::Object(data)
}

/// The stored row, for the columns the wire does not show.
async fn row(app: &TestApp, id: &str) -> measurement::Model {
    measurement::Entity::find_by_id(Id::parse(id).expect("an id"))
        .one(app.store.connection())
        .await
        .unwrap()
        .expect("stored")
}

fn labels(document: &Value) -> Vec<&str> {
    document["data"]["analysis"]["rhythm"]["labels"]
        .as_array()
        .expect("labels")
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn uploads_get_the_servers_result_for_each_rhythm() {
    let app = spawn_app().await;
    let world = World::new(&app).await;

    let sinus = upload(&app, &world.patient, &fixture("sinus_72")).await;
    assert_eq!(sinus["status"], "analyzed");
    assert_eq!(sinus["data"]["indicator"], "normal");
    assert_eq!(
        sinus["data"]["mostSevereLabel"],
        json!({"key": "regular", "color": "green"})
    );
    assert_eq!(sinus["data"]["af"], 0);
    let analysis = &sinus["data"]["analysis"];
    assert_eq!(analysis["version"], tacho::analysis::VERSION);
    assert_eq!(analysis["source"], "camera");
    let bpm = analysis["heart_rate"].as_f64().unwrap();
    assert!((bpm - 72.0).abs() <= 3.0, "{bpm} bpm");
    assert!(labels(&sinus).contains(&"sinus_rhythm"), "{analysis}");
    assert!(analysis["abnormalities"].as_array().unwrap().is_empty());
    assert_eq!(sinus["data"]["heartrate"], 72, "the phone's value, as sent");
    for field in ["sdnn", "rmssd", "pnn50", "sd1", "sd2"] {
        assert!(analysis["hrv"][field].is_number(), "hrv.{field}");
    }
    let pnn50 = analysis["hrv"]["pnn50"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&pnn50), "pNN50 is a fraction");
    assert!(analysis["quality"]["score"].is_number());
    assert!(analysis["beats"].as_array().unwrap().len() > 60);

    let stored = row(&app, sinus["id"].as_str().unwrap()).await;
    assert_eq!(stored.heartrate, Some(72.0), "the phone's column");
    assert_eq!(stored.heart_rate, Some(bpm), "the server's column");
    assert_eq!(stored.result.as_deref(), Some("regular"));
    assert_eq!(stored.indicator.as_deref(), Some("normal"));
    let summary = stored.summary();
    assert_eq!(summary.heart_rate, Some(bpm));
    assert_eq!(summary.result.as_deref(), Some("regular"));
    assert_eq!(
        summary.quality,
        analysis["quality"]["class"].as_str().unwrap()
    );
    assert!(summary.labels.contains(&"sinus_rhythm".to_owned()));

    let af = upload(&app, &world.patient, &fixture("irregular_af")).await;
    assert_eq!(af["status"], "analyzed");
    assert_eq!(af["data"]["indicator"], "urgent");
    assert_eq!(
        af["data"]["mostSevereLabel"],
        json!({"key": "possible_atrial_fibrillation", "color": "red"})
    );
    assert_eq!(af["data"]["af"], 1);
    assert!(labels(&af).contains(&"atrial_fibrillation"));
    assert_eq!(af["data"]["analysis"]["rhythm"]["irregular"], true);

    let slow = upload(&app, &world.patient, &fixture("bradycardia_48")).await;
    assert_eq!(slow["status"], "analyzed");
    assert_eq!(slow["data"]["indicator"], "warning");
    assert_eq!(slow["data"]["mostSevereLabel"]["key"], "regular");
    assert_eq!(slow["data"]["mostSevereLabel"]["color"], "orange");
    assert_eq!(slow["data"]["af"], 0);
    assert!(labels(&slow).contains(&"bradycardia"));

    let none = upload(&app, &world.patient, &fixture("no_heartrate")).await;
    assert_eq!(none["status"], "analysis_failed");
    assert_eq!(none["data"]["indicator"], "quality");
    assert_eq!(none["data"]["mostSevereLabel"]["color"], "grey");
    assert_eq!(none["data"]["af"], 0);
    assert!(
        !none["data"]["analysis"]["abnormalities"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(none["data"]["analysis"]["heart_rate"].is_null());
    let stored = row(&app, none["id"].as_str().unwrap()).await;
    assert_eq!(
        (stored.heart_rate, stored.indicator.as_deref()),
        (None, Some("quality"))
    );

    // GET answers the stored document: the same data, server fields included.
    for document in [&sinus, &af, &slow, &none] {
        let path = format!(
            "/data/v1/measurements/documents/{}",
            document["id"].as_str().unwrap()
        );
        let fetched = app.get(&path, &world.staff_a.token).await;
        assert_eq!(fetched.assert_ok()["data"], document["data"]);
        assert_eq!(fetched.body["status"], document["status"]);
    }
}

#[tokio::test]
async fn intervals_alone_are_analysed_as_intervals() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    let payload =
        json!({"measurement_timestamp": 1_795_217_400_000_i64, "rr_intervals": regular_rr(60.0)});
    let document = upload(&app, &user, &payload).await;
    assert_eq!(document["status"], "analyzed");
    let analysis = &document["data"]["analysis"];
    assert_eq!(analysis["source"], "rr_intervals");
    let bpm = analysis["heart_rate"].as_f64().unwrap();
    assert!((bpm - 60.0).abs() < 1.0, "{bpm}");
    assert_eq!(document["data"]["indicator"], "normal");
    assert_eq!(sent_part(&document), payload);

    // The client SDK reads the same result.
    let irregular = json!({
        "measurement_timestamp": 1_795_217_500_000_i64,
        "rr_intervals": crate::helpers::irregular_rr(80.0, 11),
    });
    let measurement = app.measure(&user, irregular).await;
    let result = measurement.result().expect("analysed");
    assert_eq!(result.indicator, tacho_client::Indicator::Urgent);
    assert_eq!(
        result.key,
        tacho_client::ResultKey::PossibleAtrialFibrillation
    );
    assert_eq!((result.color.as_str(), result.af), ("red", true));
    assert!(result.labels.contains(&"atrial_fibrillation".to_owned()));
    assert!(result.abnormalities.is_empty());
    let bpm = result.heart_rate.expect("a heart rate");
    assert!((bpm - 80.0).abs() < 8.0, "{bpm}");
}

#[tokio::test]
async fn server_fields_are_refused_on_upload_and_update() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = upload(&app, &world.patient, &fixture("sinus_72")).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/data/v1/measurements/documents/{id}");
    let values = [
        json!("normal"),
        json!({"key": "regular", "color": "green"}),
        json!(0),
        json!({"version": "0"}),
    ];
    for (field, value) in SERVER_FIELDS.iter().zip(values) {
        let mut payload = fixture("sinus_72");
        payload[*field] = value.clone();
        let reply = app
            .post(
                "/data/v1/measurements/documents",
                &world.patient.token,
                payload,
            )
            .await;
        reply.assert_error(400, 15);
        assert_eq!(
            reply.body["message"],
            format!("`{field}` is written by the server")
        );
        for user in [&world.patient, &world.staff_a] {
            let reply = app.put(&path, &user.token, json!({ *field: value })).await;
            reply.assert_error(400, 15);
            assert_eq!(
                reply.body["message"],
                format!("`{field}` is written by the server")
            );
        }
    }
    let list = app
        .get("/data/v1/measurements/documents", &world.patient.token)
        .await;
    assert_eq!(list.body["page"]["total"], 1, "nothing refused was stored");
    // A review still works, and leaves the server's result alone.
    let review = app
        .put(
            &path,
            &world.staff_a.token,
            json!({"label": "normal", "diagnosis": "sinus"}),
        )
        .await;
    assert_eq!(review.assert_ok()["affectedRecords"], 1);
    let after = app.get(&path, &world.patient.token).await;
    assert_eq!(after.body["status"], "reviewed");
    assert_eq!(after.body["data"]["indicator"], "normal");
}

/// The fixture's camera traces, each cell's channels changed by `change`.
fn with_cells(mut payload: Value, change: impl Fn(&mut Map<String, Value>)) -> Value {
    for row in payload["quadrants"].as_array_mut().unwrap() {
        for cell in row.as_array_mut().unwrap() {
            change(cell.as_object_mut().unwrap());
        }
    }
    payload
}

fn constant(value: i64) -> Value {
    Value::from(vec![value; 1800])
}

#[tokio::test]
async fn traces_that_cannot_be_analysed_are_stored_as_failed_with_a_reason() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    let sinus = fixture("sinus_72");
    let frames = sinus["time"].as_array().unwrap().len();
    assert_eq!(frames, 1800);
    let times = |f: &dyn Fn(f64) -> Value| -> Value {
        let mut payload = sinus.clone();
        let time: Vec<Value> = payload["time"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| f(t.as_f64().unwrap()))
            .collect();
        payload["time"] = Value::from(time);
        payload
    };
    let mut cases: Vec<(&str, Value, Option<&str>)> = Vec::new();

    let mut payload = sinus.clone();
    payload["time"][900] = json!("x");
    cases.push((
        "a string among the frame times",
        payload,
        Some("bad_signal_quality"),
    ));
    let mut payload = sinus.clone();
    payload["quadrants"][2][1]["y"][300] = json!("bright");
    cases.push(("a string in a trace", payload, Some("bad_signal_quality")));
    let mut payload = sinus.clone();
    payload["quadrants"][1][1]["u"]
        .as_array_mut()
        .unwrap()
        .truncate(frames - 100);
    cases.push((
        "traces of unequal lengths",
        payload,
        Some("bad_signal_quality"),
    ));
    let mut payload = sinus.clone();
    payload["time"].as_array_mut().unwrap().reverse();
    cases.push((
        "time running backwards",
        payload,
        Some("bad_signal_quality"),
    ));
    let payload = with_cells(sinus.clone(), |cell| {
        cell.insert("y".into(), constant(120));
        cell.insert("u".into(), constant(110));
        cell.insert("v".into(), constant(160));
    });
    cases.push(("a constant signal", payload, Some("pulse_not_found")));
    // A fingertip over-exposed: luma and red at the top of their range, blue at the bottom.
    let payload = with_cells(sinus.clone(), |cell| {
        cell.insert("y".into(), constant(255));
        cell.insert("u".into(), constant(0));
        cell.insert("v".into(), constant(255));
    });
    cases.push(("a saturated signal", payload, Some("saturated")));
    let mut payload = with_cells(sinus.clone(), |cell| {
        for channel in ["y", "u", "v"] {
            cell[channel].as_array_mut().unwrap().truncate(30);
        }
    });
    payload["time"].as_array_mut().unwrap().truncate(30);
    cases.push(("a one-second recording", payload, Some("too_short")));
    cases.push((
        "frame times in seconds (30 kHz over 60 ms)",
        times(&|t| json!(t / 1000.0)),
        None,
    ));
    cases.push((
        "a frame every 33 seconds",
        times(&|t| json!(t * 1000.0)),
        None,
    ));
    cases.push((
        "frame times beyond any clock, 1e300 ms",
        times(&|t| json!(1e300 + t)),
        None,
    ));

    for (case, payload, reason) in cases {
        let document = upload(&app, &user, &payload).await;
        assert_eq!(document["status"], "analysis_failed", "{case}");
        assert_eq!(document["data"]["indicator"], "quality", "{case}");
        let abnormalities = document["data"]["analysis"]["abnormalities"]
            .as_array()
            .unwrap();
        assert!(!abnormalities.is_empty(), "{case}: a reason is given");
        if let Some(reason) = reason {
            assert!(
                abnormalities.contains(&json!(reason)),
                "{case}: {abnormalities:?}"
            );
        }
        assert_eq!(sent_part(&document), payload, "{case}: the payload is kept");
        let path = format!(
            "/data/v1/measurements/documents/{}",
            document["id"].as_str().unwrap()
        );
        let fetched = app.get(&path, &user.token).await;
        assert_eq!(fetched.assert_ok()["data"], document["data"], "{case}");
    }
}

#[tokio::test]
async fn a_stored_status_that_is_no_status_is_a_server_fault_not_a_default() {
    use sea_orm::{ConnectionTrait, Statement};
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let stored = upload(&app, &world.patient, &fixture("sinus_72")).await;
    let id = stored["id"].as_str().unwrap();
    let db = app.store.connection();
    db.execute_raw(Statement::from_string(
        db.get_database_backend(),
        format!("UPDATE measurements SET status = 'sideways' WHERE id = '{id}'"),
    ))
    .await
    .unwrap();

    let path = format!("/data/v1/measurements/documents/{id}");
    let reply = app.get(&path, &world.patient.token).await;
    reply.assert_error(500, 1);
    assert!(
        !reply.body.to_string().contains("sideways"),
        "the fault is logged, not shown: {}",
        reply.body
    );
    assert!(
        measurement::Entity::find_by_id(Id::parse(id).unwrap())
            .one(db)
            .await
            .is_err(),
        "the row is refused when read, never read as `measured`"
    );
}
