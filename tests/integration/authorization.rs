//! The authorisation matrix: every endpoint, acted on the patient `patient` (in group A) by
//! the patient itself, another patient of the same group, staff of group A, staff of group B and
//! an administrator. What one may not see is 404; what one sees but may not do is 403.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestUser, World, spawn_app};

/// The five callers, in the order of the expectation arrays below.
fn callers(world: &World) -> [(&'static str, &TestUser); 5] {
    [
        ("patient/self", &world.patient),
        ("patient/other", &world.other_patient),
        ("staff of the group", &world.staff_a),
        ("staff of another group", &world.staff_b),
        ("admin", &world.admin),
    ]
}

struct Case {
    name: &'static str,
    method: Method,
    path: String,
    body: Option<Value>,
    /// Expected status per caller.
    expect: [u16; 5],
}

async fn run(app: &TestApp, world: &World, case: &Case) {
    for ((who, caller), expected) in callers(world).into_iter().zip(case.expect) {
        let reply = app
            .request(
                case.method.clone(),
                &case.path,
                Some(&caller.token),
                case.body.clone(),
            )
            .await;
        assert_eq!(
            reply.status.as_u16(),
            expected,
            "{} as {who}: {}",
            case.name,
            reply.body
        );
        if expected >= 400 {
            let code = if expected == 404 { 16 } else { 10 };
            assert_eq!(reply.body["code"], code, "{} as {who}", case.name);
        }
    }
}

#[tokio::test]
async fn every_endpoint_follows_the_matrix() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = world.patient.id.clone();
    let a = world.group_a.clone();
    let future = app.clock_millis() + 86_400_000;
    let cases = vec![
        Case {
            name: "GET user",
            method: Method::GET,
            path: format!("/users/v1/{id}"),
            body: None,
            expect: [200, 404, 200, 404, 200],
        },
        Case {
            name: "PUT user",
            method: Method::PUT,
            path: format!("/users/v1/{id}"),
            body: Some(json!({"last_name": "Changed"})),
            expect: [200, 404, 403, 404, 200],
        },
        Case {
            name: "GET profile",
            method: Method::GET,
            path: format!("/profiles/v1/{id}"),
            body: None,
            expect: [200, 404, 200, 404, 200],
        },
        Case {
            name: "POST patient enlistment",
            method: Method::POST,
            path: format!("/users/v1/{id}/patient_enlistments"),
            body: Some(json!({"group_id": a, "expiry_timestamp": future})),
            expect: [403, 404, 200, 404, 200],
        },
        Case {
            name: "POST staff enlistment",
            method: Method::POST,
            path: format!("/users/v1/{id}/staff_enlistments"),
            body: Some(json!({"group_id": world.group_b})),
            expect: [403, 404, 403, 404, 200],
        },
        Case {
            name: "DELETE staff enlistment",
            method: Method::DELETE,
            path: format!("/users/v1/{id}/staff_enlistments/{}", world.group_b),
            body: None,
            // The admin removes what it added in the previous case.
            expect: [403, 404, 403, 404, 200],
        },
        Case {
            name: "PUT activation",
            method: Method::PUT,
            path: format!("/users/v1/{id}/activation"),
            body: Some(json!({"activation": true})),
            expect: [403, 404, 403, 404, 200],
        },
        Case {
            name: "GET group A",
            method: Method::GET,
            path: format!("/groups/v1/{a}"),
            body: None,
            expect: [200, 200, 200, 404, 200],
        },
        Case {
            name: "POST group",
            method: Method::POST,
            path: "/groups/v1".into(),
            body: Some(json!({"name": "New"})),
            expect: [403, 403, 403, 403, 200],
        },
        Case {
            name: "GET me",
            method: Method::GET,
            path: "/users/v1/me".into(),
            body: None,
            expect: [200, 200, 200, 200, 200],
        },
        // Roles last: once granted, the patient itself is an administrator.
        Case {
            name: "DELETE roles",
            method: Method::DELETE,
            path: format!("/users/v1/{id}/roles"),
            body: Some(json!({"roles": ["admin"]})),
            expect: [403, 404, 403, 404, 200],
        },
        Case {
            name: "POST roles",
            method: Method::POST,
            path: format!("/users/v1/{id}/roles"),
            body: Some(json!({"roles": ["admin"]})),
            expect: [403, 404, 403, 404, 200],
        },
    ];
    for case in &cases {
        run(&app, &world, case).await;
    }
}

#[tokio::test]
async fn ending_a_prescription_follows_the_matrix() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let path = format!(
        "/users/v1/{}/patient_enlistments/{}",
        world.patient.id, world.group_a
    );
    // Staff of the group ends it; the admin then finds nothing left to end (404 on the
    // enlistment, not on the patient).
    let case = Case {
        name: "DELETE patient enlistment",
        method: Method::DELETE,
        path,
        body: None,
        expect: [403, 404, 200, 404, 404],
    };
    run(&app, &world, &case).await;
}

#[tokio::test]
async fn queries_and_profile_updates_count_only_what_is_visible() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = &world.patient.id;
    let expected_visible = [1, 0, 1, 0, 1];
    for ((who, caller), visible) in callers(&world).into_iter().zip(expected_visible) {
        for path in [
            format!("/users/v1?id={id}"),
            format!("/profiles/v1?id={id}"),
        ] {
            let reply = app.get(&path, &caller.token).await;
            assert_eq!(
                reply.assert_ok()["page"]["total"],
                visible,
                "{path} as {who}"
            );
        }
        let update = app
            .put(
                &format!("/profiles/v1?id={id}"),
                &caller.token,
                json!({"city": who}),
            )
            .await;
        assert_eq!(
            update.assert_ok()["records_affected"],
            visible,
            "profile update as {who}"
        );
    }
    let profile = app
        .get(&format!("/profiles/v1/{id}"), &world.admin.token)
        .await;
    assert_eq!(
        profile.body["city"], "admin",
        "the last permitted writer's value"
    );
}

#[tokio::test]
async fn measurements_and_reports_follow_the_matrix() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let measurement = app
        .measure(&world.patient, crate::helpers::fixture("sinus_72"))
        .await;
    let id = measurement.id;
    let report = app.report(&world.patient, &id, None).await.body;
    let report_id = report["id"].as_str().unwrap().to_owned();
    let cases = vec![
        Case {
            name: "GET measurement",
            method: Method::GET,
            path: format!("/data/v1/measurements/documents/{id}"),
            body: None,
            expect: [200, 404, 200, 404, 200],
        },
        Case {
            name: "PUT measurement",
            method: Method::PUT,
            path: format!("/data/v1/measurements/documents/{id}"),
            body: Some(json!({"tags": ["checked"]})),
            expect: [200, 404, 200, 404, 200],
        },
        Case {
            name: "POST report",
            method: Method::POST,
            path: "/data/v1/measurement-reports/documents".into(),
            body: Some(json!({"measurementId": id})),
            expect: [200, 404, 200, 404, 200],
        },
        Case {
            name: "GET report",
            method: Method::GET,
            path: format!("/data/v1/measurement-reports/documents/{report_id}"),
            body: None,
            expect: [200, 404, 200, 404, 200],
        },
    ];
    for case in &cases {
        run(&app, &world, case).await;
    }
    // Lists never show what the caller may not see.
    let expected_visible = [1, 0, 1, 0, 1];
    for ((who, caller), visible) in callers(&world).into_iter().zip(expected_visible) {
        let measurements = app
            .get(
                &format!("/data/v1/measurements/documents?eq(id,{id})"),
                &caller.token,
            )
            .await;
        assert_eq!(
            measurements.assert_ok()["page"]["total"],
            visible,
            "measurements as {who}"
        );
        let reports = app
            .get(
                &format!(
                    "/data/v1/measurement-reports/documents?eq(data.measurementId,{id})&limit(0)"
                ),
                &caller.token,
            )
            .await;
        let total = reports.assert_ok()["page"]["total"].as_u64().unwrap();
        assert_eq!(total > 0, visible == 1, "reports as {who}");
    }
}

#[tokio::test]
async fn periodic_reports_follow_the_matrix() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = world.patient.id.clone();
    let made = app
        .post("/reports/v1", &world.admin.token, json!({"user_id": id}))
        .await;
    let report_id = made.assert_ok()["id"].as_str().unwrap().to_owned();
    let cases = vec![
        Case {
            name: "POST periodic report",
            method: Method::POST,
            path: "/reports/v1".into(),
            body: Some(json!({"user_id": id})),
            expect: [403, 404, 200, 404, 200],
        },
        Case {
            name: "GET periodic report",
            method: Method::GET,
            path: format!("/reports/v1/{report_id}"),
            body: None,
            expect: [200, 404, 200, 404, 200],
        },
        Case {
            name: "GET periodic report PDF",
            method: Method::GET,
            path: format!("/reports/v1/{report_id}/pdf"),
            body: None,
            expect: [200, 404, 200, 404, 200],
        },
    ];
    for case in &cases {
        run(&app, &world, case).await;
    }
    let expected_visible = [1, 0, 1, 0, 1];
    for ((who, caller), visible) in callers(&world).into_iter().zip(expected_visible) {
        let reports = app
            .get(&format!("/reports/v1?user_id={id}"), &caller.token)
            .await;
        let total = reports.assert_ok()["page"]["total"].as_u64().unwrap();
        assert_eq!(total > 0, visible == 1, "periodic reports as {who}");
    }
}

#[tokio::test]
async fn notifications_and_webhooks_follow_the_matrix() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let at = app.clock_millis();
    app.measure_at(&world.patient, at, 70.0, "normal", &[])
        .await;
    app.work_queue().await;
    let own = app.get("/notifications/v1", &world.patient.token).await;
    let entry = own.assert_ok()["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // An address literal: registration resolves no name.
    let endpoint = json!({"url": "https://203.0.113.5/hooks", "events": ["measurement.analysed"],
        "group_id": world.group_a});
    let made = app
        .post("/webhooks/v1", &world.admin.token, endpoint.clone())
        .await;
    assert_eq!(made.status.as_u16(), 201, "{}", made.body);
    let hook = made.body["id"].as_str().unwrap().to_owned();
    let cases = vec![
        Case {
            name: "GET own notifications",
            method: Method::GET,
            path: "/notifications/v1".into(),
            body: None,
            expect: [200, 200, 200, 200, 200],
        },
        Case {
            name: "PUT the patient's notification",
            method: Method::PUT,
            path: format!("/notifications/v1/{entry}"),
            body: Some(json!({"read": true})),
            expect: [200, 404, 404, 404, 404],
        },
        Case {
            name: "POST mark all read",
            method: Method::POST,
            path: "/notifications/v1/mark_all_read".into(),
            body: Some(json!({})),
            expect: [200, 200, 200, 200, 200],
        },
        Case {
            name: "POST webhook",
            method: Method::POST,
            path: "/webhooks/v1".into(),
            body: Some(endpoint),
            expect: [403, 403, 403, 403, 201],
        },
        Case {
            name: "GET webhooks",
            method: Method::GET,
            path: "/webhooks/v1".into(),
            body: None,
            expect: [403, 403, 403, 403, 200],
        },
        Case {
            name: "GET webhook",
            method: Method::GET,
            path: format!("/webhooks/v1/{hook}"),
            body: None,
            expect: [403, 403, 403, 403, 200],
        },
        Case {
            name: "PUT webhook",
            method: Method::PUT,
            path: format!("/webhooks/v1/{hook}"),
            body: Some(json!({"enabled": false})),
            expect: [403, 403, 403, 403, 200],
        },
        Case {
            name: "DELETE webhook",
            method: Method::DELETE,
            path: format!("/webhooks/v1/{hook}"),
            body: None,
            expect: [403, 403, 403, 403, 204],
        },
    ];
    for case in &cases {
        run(&app, &world, case).await;
    }
}

/// Every caller signs in again (a jump of the clock expires the tokens).
async fn sign_in_again(app: &TestApp, world: &mut World) {
    for user in [
        &mut world.patient,
        &mut world.other_patient,
        &mut world.staff_a,
        &mut world.staff_b,
        &mut world.admin,
    ] {
        user.token = app.login(&user.email).await;
    }
}

/// How many of the patient's measurements with this id a caller's list shows.
async fn listed(app: &TestApp, caller: &TestUser, id: &str) -> i64 {
    app.get(
        &format!("/data/v1/measurements/documents?eq(id,{id})"),
        &caller.token,
    )
    .await
    .assert_ok()["page"]["total"]
        .as_i64()
        .unwrap()
}

#[tokio::test]
async fn access_follows_the_prescription_and_the_documents_groups() {
    let app = spawn_app().await;
    let mut world = World::new(&app).await;
    let id = world.patient.id.clone();
    let before = app.measurement_id(&world.patient, "sinus_72").await;

    // The clock passes the 30-day prescription's end by more than a week.
    app.clock.advance(chrono::Duration::days(40));
    sign_in_again(&app, &mut world).await;
    let after = app.upload_with(&world.patient.token, "sinus_72").await;
    let stored = app
        .get(
            &format!("/data/v1/measurements/documents/{after}"),
            &world.patient.token,
        )
        .await;
    assert_eq!(
        stored.assert_ok()["groupIds"],
        json!([]),
        "made after the end: shared with no group"
    );

    let cases = [
        Case {
            name: "GET the patient's account after the prescription",
            method: Method::GET,
            path: format!("/users/v1/{id}"),
            body: None,
            expect: [200, 404, 404, 404, 200],
        },
        Case {
            name: "GET the patient's profile after the prescription",
            method: Method::GET,
            path: format!("/profiles/v1/{id}"),
            body: None,
            expect: [200, 404, 404, 404, 200],
        },
        Case {
            name: "GET a measurement shared during the prescription",
            method: Method::GET,
            path: format!("/data/v1/measurements/documents/{before}"),
            body: None,
            expect: [200, 404, 200, 404, 200],
        },
        Case {
            name: "GET a measurement made after the prescription",
            method: Method::GET,
            path: format!("/data/v1/measurements/documents/{after}"),
            body: None,
            expect: [200, 404, 404, 404, 200],
        },
        Case {
            name: "report on a measurement made after the prescription",
            method: Method::POST,
            path: "/data/v1/measurement-reports/documents".into(),
            body: Some(json!({"measurementId": after, "language": "en"})),
            expect: [200, 404, 404, 404, 200],
        },
        Case {
            name: "manual report after the prescription",
            method: Method::POST,
            path: "/reports/v1".into(),
            body: Some(json!({"user_id": id})),
            expect: [403, 404, 404, 404, 200],
        },
    ];
    for case in &cases {
        run(&app, &world, case).await;
    }
    assert_eq!(listed(&app, &world.staff_a, &after).await, 0);
    assert_eq!(listed(&app, &world.staff_a, &before).await, 1);
    assert_eq!(listed(&app, &world.admin, &after).await, 1);
    // The administrator's report of the week after the end is not the group's to read.
    let reports = app
        .get(&format!("/reports/v1?user_id={id}"), &world.admin.token)
        .await;
    let report = reports.assert_ok()["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    run(
        &app,
        &world,
        &Case {
            name: "GET a periodic report of a time after the prescription",
            method: Method::GET,
            path: format!("/reports/v1/{report}"),
            body: None,
            expect: [200, 404, 404, 404, 200],
        },
    )
    .await;
}

#[tokio::test]
async fn an_ended_enlistment_shares_nothing_made_after_it() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = &world.other_patient.id;
    app.request(
        Method::DELETE,
        &format!("/users/v1/{id}/patient_enlistments/{}", world.group_a),
        Some(&world.admin.token),
        None,
    )
    .await
    .assert_ok();
    let after = app.measurement_id(&world.other_patient, "sinus_72").await;
    assert_eq!(listed(&app, &world.staff_a, &after).await, 0);
    app.get(
        &format!("/data/v1/measurements/documents/{after}"),
        &world.staff_a.token,
    )
    .await
    .assert_error(404, 16);
    app.get(&format!("/users/v1/{id}"), &world.staff_a.token)
        .await
        .assert_error(404, 16);
}
