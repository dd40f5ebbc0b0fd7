//! Measurements (contract section 5).

use serde_json::{Value, json};

use tacho_client::{MeasurementStatus, MeasurementUpdate};

use crate::helpers::{World, assert_refused, fixture, spawn_app, spawn_app_with};

fn is_rfc3339_millis(value: &Value) -> bool {
    value.as_str().is_some_and(|s| {
        s.len() == 24 && s.ends_with('Z') && chrono::DateTime::parse_from_rfc3339(s).is_ok()
    })
}

#[tokio::test]
async fn measurements_are_stored_verbatim_with_a_server_envelope() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let payload = fixture("sinus_72");
    // Raw HTTP here: this test is about the bytes on the wire.
    let document = app
        .post(
            "/data/v1/measurements/documents",
            &world.patient.token,
            payload.clone(),
        )
        .await
        .assert_ok()
        .clone();
    // The payload comes back as sent, key order included, followed by the server's result.
    let mut data = document["data"].as_object().unwrap().clone();
    let server: Vec<(String, Value)> = ["indicator", "mostSevereLabel", "af", "analysis"]
        .iter()
        .map(|k| (k.to_string(), data.shift_remove(*k).expect(k)))
        .collect();
    assert_eq!(
        Value::Object(data.clone()),
        payload,
        "data comes back as sent"
    );
    assert_eq!(
        serde_json::to_string(&data).unwrap(),
        serde_json::to_string(&payload).unwrap(),
        "key order is kept too"
    );
    let keys: Vec<&String> = document["data"].as_object().unwrap().keys().collect();
    let server_keys: Vec<&String> = server.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys[keys.len() - 4..],
        server_keys[..],
        "appended after the payload"
    );
    assert_eq!(document["status"], "analyzed");
    assert_eq!(document["data"]["indicator"], "normal");
    assert_eq!(document["creatorId"], world.patient.id.as_str());
    assert_eq!(document["userIds"], json!([world.patient.id]));
    assert_eq!(document["groupIds"], json!([world.group_a]));
    for key in [
        "creationTimestamp",
        "updateTimestamp",
        "statusChangedTimestamp",
    ] {
        assert!(
            is_rfc3339_millis(&document[key]),
            "{key}: {}",
            document[key]
        );
    }
    let failed = app.measure(&world.patient, fixture("no_heartrate")).await;
    assert_eq!(failed.status, MeasurementStatus::AnalysisFailed);
    let id = document["id"].as_str().unwrap();
    let fetched = world.staff_a.client.get_measurement(id).await.unwrap();
    assert_eq!(fetched.data["heartrate"], 72);
    assert_eq!(fetched.creator_id, world.patient.id);
}

#[tokio::test]
async fn bad_payloads_answer_their_codes() {
    let app = spawn_app_with(|s| s.max_measurement_bytes = 200_000).await;
    let user = app.user("ann").await;
    let post = |body: Value| app.post("/data/v1/measurements/documents", &user.token, body);
    post(json!({"heartrate": 70})).await.assert_error(400, 14);
    post(json!({"measurement_timestamp": "yesterday"}))
        .await
        .assert_error(400, 15);
    post(json!({"measurement_timestamp": 1, "heartrate": "fast"}))
        .await
        .assert_error(400, 15);
    for field in ["review", "indicator", "mostSevereLabel", "af", "analysis"] {
        let reply = post(json!({"measurement_timestamp": 1, field: {"label": "fine"}})).await;
        reply.assert_error(400, 15);
        assert_eq!(
            reply.body["message"],
            format!("`{field}` is written by the server")
        );
    }
    post(json!({"measurement_timestamp": 1, "rr_intervals": [800, "810"]}))
        .await
        .assert_error(400, 15);
    post(json!([1, 2])).await.assert_error(400, 15);
    post(fixture("sinus_72")).await.assert_error(413, 413);
    let raw = app
        .post_raw(
            "/data/v1/measurements/documents",
            Some(&user.token),
            "application/json",
            "{\"measurement_timestamp\":",
        )
        .await;
    raw.assert_error(400, 22);
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

#[tokio::test]
async fn gzipped_uploads_are_read_and_limited_by_their_unpacked_size() {
    // The platform's SDK gzips large documents (`Content-Encoding: gzip`).
    let app = spawn_app_with(|s| s.max_measurement_bytes = 1_000_000).await;
    let user = app.user("ann").await;
    let payload = fixture("sinus_72");
    let plain = serde_json::to_vec(&payload).unwrap();
    let send = |body: Vec<u8>| {
        app.client
            .post(app.url("/data/v1/measurements/documents"))
            .bearer_auth(&user.token)
            .header("Content-Type", "application/json")
            .header("Content-Encoding", "gzip")
            .body(body)
            .send()
    };
    let stored = crate::helpers::read(send(gzip(&plain)).await.unwrap()).await;
    let data = stored.assert_ok()["data"].as_object().unwrap();
    assert!(
        payload
            .as_object()
            .unwrap()
            .iter()
            .all(|(k, v)| data[k] == *v)
    );
    assert_eq!(data["indicator"], "normal", "analysed like any upload");

    // Two megabytes of spaces pack into a few kilobytes: the limit holds for the unpacked body.
    let mut bomb = b"{\"measurement_timestamp\": 1".to_vec();
    bomb.extend(std::iter::repeat_n(b' ', 2_000_000));
    bomb.push(b'}');
    let packed = gzip(&bomb);
    assert!(packed.len() < 10_000);
    crate::helpers::read(send(packed).await.unwrap())
        .await
        .assert_error(413, 413);
    let garbage = crate::helpers::read(send(b"not gzip at all".to_vec()).await.unwrap()).await;
    garbage.assert_error(400, 22);
}

#[tokio::test]
async fn measurements_are_queried_with_rql_on_indexed_fields() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let mut ids = std::collections::HashMap::new();
    for name in [
        "sinus_72",
        "irregular_af",
        "bradycardia_48",
        "ppg_only",
        "no_heartrate",
    ] {
        let document = app.measure(&world.patient, fixture(name)).await;
        ids.insert(name, document.id);
    }
    app.measure(&world.patient_b, fixture("sinus_72")).await;
    let (app_ref, token) = (&app, world.patient.token.clone());
    let list = |query: &str| {
        let path = format!("/data/v1/measurements/documents?{query}");
        let token = token.clone();
        async move { app_ref.get(&path, &token).await }
    };
    let names = |reply: crate::helpers::Reply| -> Vec<String> {
        let body = reply.assert_ok().clone();
        body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                ids.iter()
                    .find(|(_, id)| **id == m["id"])
                    .map(|(n, _)| n.to_string())
                    .unwrap_or_default()
            })
            .collect()
    };
    assert_eq!(
        list("").await.body["page"]["total"],
        5,
        "only the caller's own"
    );
    assert_eq!(names(list("eq(data.heartrate,72)").await), vec!["sinus_72"]);
    assert_eq!(
        names(list("gt(data.heartrate,100)").await),
        vec!["irregular_af"]
    );
    assert_eq!(
        names(list("eq(status,analysis_failed)").await),
        vec!["no_heartrate"]
    );
    // `data.indicator` is the server's.
    assert_eq!(
        names(list("eq(data.indicator,urgent)").await),
        vec!["irregular_af"]
    );
    assert_eq!(
        names(list("eq(data.indicator,quality)").await),
        vec!["no_heartrate"]
    );
    assert_eq!(
        names(list("sort(-data.measurement_timestamp)&lt(data.measurement_timestamp,2026-11-23T00:00:00.000Z)").await),
        vec!["irregular_af", "bradycardia_48", "sinus_72"]
    );
    let tags = fixture("irregular_af")["tags"][0]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        names(list(&format!("eq(data.tags,{tags})")).await).contains(&"irregular_af".to_owned())
    );
    assert_eq!(
        list(&format!("eq(userIds,{})", world.patient.id))
            .await
            .body["page"]["total"],
        5
    );
    assert_eq!(
        list(&format!("eq(groupIds,{})", world.group_a)).await.body["page"]["total"],
        5
    );
    assert_eq!(
        list(&format!("eq(groupIds,{})", world.group_b)).await.body["page"]["total"],
        0
    );
    let selected = list("select(data.heartrate)&eq(data.heartrate,72)").await;
    assert_eq!(
        selected.body["data"][0],
        json!({"id": ids["sinus_72"], "data": {"heartrate": 72}})
    );
    list("eq(data.quadrants,1)").await.assert_error(400, 19);
    list("gt(data.heartrate,fast)").await.assert_error(400, 19);
    let staff = app
        .get(
            "/data/v1/measurements/documents?skipCount()",
            &world.staff_a.token,
        )
        .await;
    assert_eq!(
        staff.body["data"].as_array().unwrap().len(),
        5,
        "staff see their group's patients"
    );
    let other = app
        .get("/data/v1/measurements/documents", &world.staff_b.token)
        .await;
    assert_eq!(other.body["page"]["total"], 1);
}

#[tokio::test]
async fn patients_annotate_and_staff_review() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let (patient, staff) = (&world.patient.client, &world.staff_a.client);
    let document = app.measure(&world.patient, fixture("sinus_72")).await;
    let id = document.id.as_str();
    app.clock.advance(chrono::Duration::seconds(5));
    let ask_review = MeasurementUpdate {
        tags: Some(vec!["after coffee".into()]),
        review_requested: Some(true),
        ..MeasurementUpdate::default()
    };
    assert_eq!(
        patient.update_measurement(id, &ask_review).await.unwrap(),
        1
    );
    let after = patient.get_measurement(id).await.unwrap();
    assert_eq!(after.status, MeasurementStatus::PendingReview);
    assert_eq!(after.data["tags"], json!(["after coffee"]));
    assert!(after.update_timestamp > document.update_timestamp);

    let diagnosis = MeasurementUpdate {
        diagnosis: Some("all fine".into()),
        ..MeasurementUpdate::default()
    };
    assert_refused(patient.update_measurement(id, &diagnosis).await, 403, 10);
    let mut heartrate = MeasurementUpdate::default();
    heartrate.other.insert("heartrate".into(), json!(50));
    assert_refused(patient.update_measurement(id, &heartrate).await, 400, 15);
    let tags = MeasurementUpdate {
        tags: Some(Vec::new()),
        ..MeasurementUpdate::default()
    };
    let other_patient = &world.other_patient.client;
    assert_refused(other_patient.update_measurement(id, &tags).await, 404, 16);
    let label = MeasurementUpdate {
        label: Some("x".into()),
        ..MeasurementUpdate::default()
    };
    let staff_b = &world.staff_b.client;
    assert_refused(staff_b.update_measurement(id, &label).await, 404, 16);

    let review = MeasurementUpdate {
        diagnosis: Some("Sinus rhythm".into()),
        label: Some("normal".into()),
        ..MeasurementUpdate::default()
    };
    assert_eq!(staff.update_measurement(id, &review).await.unwrap(), 1);
    let after = patient.get_measurement(id).await.unwrap();
    assert_eq!(after.status, MeasurementStatus::Reviewed);
    assert_eq!(after.data["review"]["diagnosis"], "Sinus rhythm");
    assert_eq!(
        after.data["review"]["reviewer_id"],
        world.staff_a.id.as_str()
    );

    let failed = app.measure(&world.patient, fixture("no_heartrate")).await;
    assert_refused(staff.update_measurement(&failed.id, &label).await, 400, 27);
    assert_refused(staff.update_measurement("nope", &label).await, 400, 12);
}
