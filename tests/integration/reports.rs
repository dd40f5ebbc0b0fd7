//! Periodic reports (contract section 8, interface.md 4.4–4.5): the scheduler on an injected
//! clock, manual reports, listing, and PDFs in any language and time zone.

use std::collections::{BTreeMap, HashSet};
use tacho::config::ExposeSecret;

use chrono::{Duration, TimeZone, Utc};
use serde_json::{Value, json};
use tacho::scheduler::RunSummary;

use crate::helpers::{TestApp, TestUser, World, pdf_pages, pdf_text, save_artifact, spawn_app};

const DAY: i64 = 86_400_000;

async fn run_due(app: &TestApp) -> RunSummary {
    app.scheduler()
        .run_due(|_| {})
        .await
        .expect("scheduler runs")
}

/// A fresh token for `user` (tokens expire when the clock jumps ahead).
async fn relogin(app: &TestApp, user: &mut TestUser) {
    user.token = app.login(&user.email).await;
}

async fn reports_of(app: &TestApp, viewer: &TestUser, user_id: &str) -> Vec<Value> {
    let mut all = Vec::new();
    for offset in (0..).step_by(50) {
        let reply = app
            .get(
                &format!(
                    "/reports/v1?sort(-creation_timestamp)&user_id={user_id}&limit(50,{offset})"
                ),
                &viewer.token,
            )
            .await;
        let page = reply.assert_ok()["data"].as_array().unwrap().clone();
        let done = page.len() < 50;
        all.extend(page);
        if done {
            return all;
        }
    }
    unreachable!()
}

fn by_trigger(reports: &[Value]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for r in reports {
        *counts
            .entry(r["trigger"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    counts
}

fn measurement_ids(report: &Value) -> Vec<String> {
    report["data"]["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect()
}

/// A world whose prescriptions (30 days, from `World::new`) started `days_ago` days ago.
async fn world_started(app: &TestApp, days_ago: i64) -> (World, i64) {
    let now = Utc::now();
    app.clock.set(now - Duration::days(days_ago));
    let world = World::new(app).await;
    (world, app.clock_millis())
}

#[tokio::test]
async fn a_thirty_day_prescription_makes_four_weeks_a_month_and_an_end_once() {
    let app = spawn_app().await;
    let (mut world, start) = world_started(&app, 31).await;
    // Measurements on days 0, 3, 8, 15, 22, 29 of the prescription, and one before it.
    let mut taken = Vec::new();
    for (day, indicator) in [
        (0.5, "normal"),
        (3.2, "irregular"),
        (8.0, "normal"),
        (15.4, "tachycardia"),
        (22.9, "normal"),
        (29.1, "bradycardia"),
    ] {
        let at = start + (day * DAY as f64) as i64;
        let id = app
            .measure_at(&world.patient, at, 70.0 + day, indicator, &["palpitations"])
            .await;
        taken.push((at, id));
    }
    app.measure_at(&world.patient, start - DAY, 80.0, "normal", &[])
        .await;

    app.clock.set(Utc::now());
    let summary = run_due(&app).await;
    assert_eq!(summary.failed, 0);
    assert_eq!(summary.made, 18, "six reports for each of three patients");
    relogin(&app, &mut world.patient).await;
    let reports = reports_of(&app, &world.patient, &world.patient.id).await;
    assert_eq!(
        by_trigger(&reports),
        BTreeMap::from([
            ("PERIOD_DAYS_PASSED_30".to_owned(), 1),
            ("PERIOD_DAYS_PASSED_7".to_owned(), 4),
            ("PRESCRIPTION_ENDED".to_owned(), 1),
        ])
    );
    for report in &reports {
        assert_eq!(report["status"], "COMPLETE");
        assert_eq!(report["user_id"], world.patient.id.as_str());
        let (from, to) = (
            report["period_start_timestamp"].as_i64().unwrap(),
            report["period_end_timestamp"].as_i64().unwrap(),
        );
        let expected: Vec<String> = taken
            .iter()
            .filter(|(at, _)| (from..to).contains(at))
            .map(|(_, id)| id.clone())
            .collect();
        assert_eq!(measurement_ids(report), expected, "{report}");
        let first = &report["data"]["measurements"].as_array().unwrap()[0];
        let keys: HashSet<&str> = first
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            keys,
            HashSet::from([
                "id",
                "measurement_timestamp",
                "heartrate",
                "status",
                "indicator",
                "label"
            ])
        );
    }
    let weekly: Vec<&Value> = reports
        .iter()
        .filter(|r| r["trigger"] == "PERIOD_DAYS_PASSED_7")
        .collect();
    let mut starts: Vec<i64> = weekly
        .iter()
        .map(|r| r["period_start_timestamp"].as_i64().unwrap())
        .collect();
    starts.sort();
    assert_eq!(starts[0], start);
    assert_eq!(starts.len(), 4);
    // Newest first.
    let created: Vec<i64> = reports
        .iter()
        .map(|r| r["creation_timestamp"].as_i64().unwrap())
        .collect();
    assert!(created.windows(2).all(|w| w[0] >= w[1]));

    let again = run_due(&app).await;
    assert_eq!(again, RunSummary::default(), "nothing is due twice");
    assert_eq!(
        reports_of(&app, &world.patient, &world.patient.id)
            .await
            .len(),
        6
    );

    // A patient without measurements still gets its reports, which say so.
    relogin(&app, &mut world.other_patient).await;
    let empty = reports_of(&app, &world.other_patient, &world.other_patient.id).await;
    assert_eq!(empty.len(), 6);
    assert!(empty.iter().all(|r| measurement_ids(r).is_empty()));
    let pdf = pdf_of(
        &app,
        &world.other_patient,
        empty[0]["id"].as_str().unwrap(),
        "",
    )
    .await;
    assert!(pdf_text(&pdf).contains("No measurements were made in this period."));
}

#[tokio::test]
async fn missed_periods_are_caught_up_once_and_deactivated_users_get_none() {
    let app = spawn_app().await;
    let (mut world, start) = world_started(&app, 40).await;
    app.clock
        .set(Utc.timestamp_millis_opt(start + 8 * DAY).unwrap());
    assert_eq!(run_due(&app).await.made, 3, "one week for each patient");
    relogin(&app, &mut world.admin).await;
    app.put(
        &format!("/users/v1/{}/activation", world.patient_b.id),
        &world.admin.token,
        json!({"activation": false}),
    )
    .await
    .assert_ok();
    // Down for a month: every period since is made once.
    app.clock.set(Utc::now());
    assert_eq!(
        run_due(&app).await.made,
        10,
        "five more for each active patient"
    );
    assert_eq!(run_due(&app).await.made, 0);
    relogin(&app, &mut world.admin).await;
    for (patient, expected) in [
        (&world.patient, 6),
        (&world.other_patient, 6),
        (&world.patient_b, 1),
    ] {
        let reports = reports_of(&app, &world.admin, &patient.id).await;
        assert_eq!(reports.len(), expected);
        let keys: HashSet<(String, i64)> = reports
            .iter()
            .map(|r| {
                (
                    r["trigger"].as_str().unwrap().to_owned(),
                    r["period_start_timestamp"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(keys.len(), expected, "one report per trigger and period");
    }
}

#[tokio::test]
async fn weeks_across_daylight_saving_changes_have_seven_local_days() {
    let app = spawn_app().await;
    let brussels: chrono_tz::Tz = "Europe/Brussels".parse().unwrap();
    // Summer time ends on 25 October 2026.
    let start = brussels.with_ymd_and_hms(2026, 10, 20, 8, 0, 0).unwrap();
    app.clock.set(start.with_timezone(&Utc));
    let world = World::new(&app).await;
    app.clock.advance(Duration::days(8));
    run_due(&app).await;
    let admin = app.admin("dst_admin").await;
    let reports = reports_of(&app, &admin, &world.patient.id).await;
    assert_eq!(reports.len(), 1);
    let (from, to) = (
        reports[0]["period_start_timestamp"].as_i64().unwrap(),
        reports[0]["period_end_timestamp"].as_i64().unwrap(),
    );
    assert_eq!(from, start.timestamp_millis());
    assert_eq!(
        to,
        brussels
            .with_ymd_and_hms(2026, 10, 27, 8, 0, 0)
            .unwrap()
            .timestamp_millis(),
        "08:00 local time a week later"
    );
    assert_eq!(to - from, 7 * DAY + 3_600_000, "169 hours");
}

#[tokio::test]
async fn a_time_zone_change_mid_prescription_repeats_no_period() {
    let app = spawn_app().await;
    let brussels: chrono_tz::Tz = "Europe/Brussels".parse().unwrap();
    // New York moves to summer time on 8 March 2026, Brussels on 29 March: from then on a
    // week of this prescription starts and ends an hour apart in the two zones.
    let start = brussels.with_ymd_and_hms(2026, 3, 20, 10, 0, 0).unwrap();
    app.clock.set(start.with_timezone(&Utc));
    let mut world = World::new(&app).await;
    let weekly = |reports: &[Value]| {
        by_trigger(reports)
            .get("PERIOD_DAYS_PASSED_7")
            .copied()
            .unwrap_or(0)
    };
    // Three weeks in Brussels; the third runs from 3 April 08:00 UTC to 10 April 08:00 UTC.
    app.clock
        .set(Utc.with_ymd_and_hms(2026, 4, 10, 8, 30, 0).unwrap());
    run_due(&app).await;
    relogin(&app, &mut world.admin).await;
    assert_eq!(
        weekly(&reports_of(&app, &world.admin, &world.patient.id).await),
        3
    );
    // The patient moves to New York, where the third week runs from 09:00 UTC to 09:00 UTC.
    app.put(
        &format!("/users/v1/{}", world.patient.id),
        &world.admin.token,
        json!({"time_zone": "America/New_York"}),
    )
    .await
    .assert_ok();
    app.clock
        .set(Utc.with_ymd_and_hms(2026, 4, 10, 10, 0, 0).unwrap());
    run_due(&app).await;
    relogin(&app, &mut world.admin).await;
    assert_eq!(
        weekly(&reports_of(&app, &world.admin, &world.patient.id).await),
        3,
        "the third week is not made again in the new zone"
    );
    // To the end: four weeks, a month and the end, each once.
    app.clock
        .set(start.with_timezone(&Utc) + Duration::days(31));
    run_due(&app).await;
    relogin(&app, &mut world.admin).await;
    let reports = reports_of(&app, &world.admin, &world.patient.id).await;
    assert_eq!(
        by_trigger(&reports),
        BTreeMap::from([
            ("PERIOD_DAYS_PASSED_30".to_owned(), 1),
            ("PERIOD_DAYS_PASSED_7".to_owned(), 4),
            ("PRESCRIPTION_ENDED".to_owned(), 1),
        ])
    );
}

#[tokio::test]
async fn a_worker_that_dies_loses_nothing() {
    let app = spawn_app().await;
    let (_world, _) = world_started(&app, 31).await;
    app.clock.set(Utc::now());
    let store = &app.store;
    let survivor = app.scheduler();
    assert_eq!(survivor.enqueue_due().await.unwrap(), 18);
    // A process claims a batch and is killed before it finishes any of it.
    let claimed = app
        .queue_writes(async |tx| tx.claim_jobs("killed-worker", 7, 60_000).await)
        .await;
    assert_eq!(claimed.len(), 7);
    assert_eq!(survivor.run_due(|_| {}).await.unwrap().made, 11);
    app.clock.advance(Duration::seconds(61));
    let retaken = survivor.run_due(|_| {}).await.unwrap();
    assert_eq!(
        retaken.made, 7,
        "the dead worker's claims expired and were retaken"
    );
    for job in claimed {
        let job = store.job(&job.id).await.unwrap().unwrap();
        assert_eq!(job.status.as_str(), "done");
        assert_eq!(job.attempts, 2);
    }
}

#[tokio::test]
async fn two_servers_on_one_database_make_each_report_once() {
    let app = crate::helpers::spawn_app_with(|s| {
        s.scheduler_tick = Some(std::time::Duration::from_millis(20));
    })
    .await;
    app.clock.set(Utc::now() - Duration::days(40));
    let admin = app.admin("boss").await;
    let group = app.group(&admin, "Ward").await;
    let mut patients = Vec::new();
    for n in 0..8 {
        let patient = app.user(&format!("p{n}")).await;
        app.enlist_patient(&admin, &patient, &group).await;
        patients.push(patient);
    }
    let second = app.second_instance().await;
    // Both instances tick every 20 ms; time moves on and 48 reports fall due at once.
    app.clock.set(Utc::now());
    let expected = 48;
    for _ in 0..600 {
        if total_reports(&app).await >= expected {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // A few more ticks of both: nothing more appears.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(total_reports(&app).await, expected);
    let watcher = app.admin("watcher").await;
    for patient in &patients {
        let reports = reports_of(&app, &watcher, &patient.id).await;
        let keys: HashSet<(String, i64)> = reports
            .iter()
            .map(|r| {
                (
                    r["trigger"].as_str().unwrap().to_owned(),
                    r["period_start_timestamp"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!((reports.len(), keys.len()), (6, 6));
    }
    drop(second);
}

async fn total_reports(app: &TestApp) -> u64 {
    use sea_orm::{EntityTrait, PaginatorTrait};
    tacho::store::entities::report::Entity::find()
        .count(app.store.connection())
        .await
        .unwrap()
}

#[tokio::test]
async fn staff_and_admins_make_manual_reports_and_patients_cannot() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let now = app.clock_millis();
    let recent = app
        .measure_at(&world.patient, now - 2 * DAY, 64.0, "normal", &[])
        .await;
    app.measure_at(&world.patient, now - 9 * DAY, 66.0, "normal", &[])
        .await;
    let made = app
        .post(
            "/reports/v1",
            &world.staff_a.token,
            json!({"user_id": world.patient.id}),
        )
        .await;
    let report = made.assert_ok();
    assert_eq!(report["trigger"], "MANUAL");
    assert_eq!(report["period_end_timestamp"], now);
    assert_eq!(report["period_start_timestamp"], now - 7 * DAY);
    assert_eq!(measurement_ids(report), vec![recent.clone()]);
    let id = report["id"].as_str().unwrap();
    let fetched = app
        .get(&format!("/reports/v1/{id}"), &world.patient.token)
        .await;
    assert_eq!(fetched.assert_ok()["id"], id);

    let custom = app
        .post(
            "/reports/v1",
            &world.admin.token,
            json!({"user_id": world.patient.id, "period_start_timestamp": now - 10 * DAY, "period_end_timestamp": now}),
        )
        .await;
    assert_eq!(measurement_ids(custom.assert_ok()).len(), 2);

    app.post(
        "/reports/v1",
        &world.patient.token,
        json!({"user_id": world.patient.id}),
    )
    .await
    .assert_error(403, 10);
    app.post(
        "/reports/v1",
        &world.staff_b.token,
        json!({"user_id": world.patient.id}),
    )
    .await
    .assert_error(404, 16);
    app.get(&format!("/reports/v1/{id}"), &world.staff_b.token)
        .await
        .assert_error(404, 16);
    app.get(&format!("/reports/v1/{id}"), &world.other_patient.token)
        .await
        .assert_error(404, 16);
    let p = &world.patient.id;
    for (body, code) in [
        (json!({}), 14),
        (json!({"user_id": "nope"}), 12),
        (
            json!({"user_id": p, "period_start_timestamp": now, "period_end_timestamp": now}),
            15,
        ),
        (json!({"user_id": p, "period_start_timestamp": -5}), 15),
        (
            json!({"user_id": p, "period_start_timestamp": 0, "period_end_timestamp": 400 * DAY}),
            15,
        ),
        (
            json!({"user_id": p, "period_start_timestamp": "yesterday"}),
            15,
        ),
        (json!({"user_id": p, "colour": "red"}), 15),
    ] {
        app.post("/reports/v1", &world.admin.token, body.clone())
            .await
            .assert_error(400, code);
    }
    app.get("/reports/v1/nope", &world.admin.token)
        .await
        .assert_error(400, 12);
    app.get("/reports/v1/0123456789abcdef01234567", &world.admin.token)
        .await
        .assert_error(404, 16);
}

#[tokio::test]
async fn lists_page_filter_and_respect_visibility() {
    let app = spawn_app().await;
    let now = Utc::now();
    app.clock.set(now - Duration::days(400));
    let mut world = World::new(&app).await;
    // A year-long prescription: 52 weeks, 12 months and its end.
    app.post(
        &format!("/users/v1/{}/patient_enlistments", world.patient.id),
        &world.admin.token,
        json!({"group_id": world.group_a, "expiry_timestamp": app.clock_millis() + 365 * DAY}),
    )
    .await
    .assert_ok();
    app.clock.set(now);
    run_due(&app).await;
    for user in [
        &mut world.patient,
        &mut world.patient_b,
        &mut world.staff_a,
        &mut world.staff_b,
        &mut world.admin,
    ] {
        relogin(&app, user).await;
    }
    // The prescription has ended: its staff no longer see the patient's record, so only an
    // administrator can ask for a report of the last days.
    app.post(
        "/reports/v1",
        &world.staff_a.token,
        json!({"user_id": world.patient.id}),
    )
    .await
    .assert_error(404, 16);
    app.post(
        "/reports/v1",
        &world.admin.token,
        json!({"user_id": world.patient.id}),
    )
    .await
    .assert_ok();
    let p = &world.patient.id;
    let listed = app
        .get(
            &format!("/reports/v1?eq(user_id,{p})&out(trigger,MANUAL)&eq(status,COMPLETE)&sort(-creation_timestamp)&limit(20,40)"),
            &world.patient.token,
        )
        .await;
    let body = listed.assert_ok();
    assert_eq!(
        body["page"],
        json!({"total": 65, "offset": 40, "limit": 20})
    );
    assert_eq!(body["data"].as_array().unwrap().len(), 20);
    assert!(
        body["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["trigger"] != "MANUAL")
    );
    let all = app
        .get(
            &format!("/reports/v1?sort(-creation_timestamp)&user_id={p}"),
            &world.patient.token,
        )
        .await;
    assert_eq!(all.assert_ok()["page"]["total"], 66);
    assert_eq!(all.body["data"][0]["trigger"], "MANUAL", "newest first");
    let monthly = app
        .get(
            &format!(
                "/reports/v1?eq(trigger,PERIOD_DAYS_PASSED_30)&user_id={p}&limit(1)&select(trigger)"
            ),
            &world.staff_a.token,
        )
        .await;
    assert_eq!(monthly.assert_ok()["page"]["total"], 12);
    assert_eq!(
        monthly.body["data"][0].as_object().unwrap().len(),
        2,
        "id and trigger"
    );
    for viewer in [&world.staff_b, &world.patient_b] {
        let hidden = app
            .get(&format!("/reports/v1?user_id={p}"), &viewer.token)
            .await;
        assert_eq!(hidden.assert_ok()["page"]["total"], 0);
    }
    for bad in [
        "eq(password,x)",
        "eq(creation_timestamp,soon)",
        "sort(data)",
        "limit((",
    ] {
        app.get(&format!("/reports/v1?{bad}"), &world.admin.token)
            .await
            .assert_error(400, 19);
    }
    app.request(reqwest::Method::GET, "/reports/v1", None, None)
        .await
        .assert_error(401, 104);
}

async fn pdf_of(app: &TestApp, user: &TestUser, id: &str, query: &str) -> Vec<u8> {
    let response = app
        .client
        .get(app.url(&format!("/reports/v1/{id}/pdf{query}")))
        .bearer_auth(&user.token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/pdf");
    response.bytes().await.unwrap().to_vec()
}

/// A patient with a 30-day prescription and a measurement twice a day, reports made.
async fn month_of_measurements(app: &TestApp) -> (World, Value) {
    let (mut world, start) = world_started(app, 31).await;
    let symptoms: [&[&str]; 4] = [&[], &["palpitations"], &[], &["dizziness", "fatigue"]];
    for n in 0..60 {
        let at = start + n * DAY / 2 + 3_600_000;
        let indicator = ["normal", "normal", "irregular", "tachycardia"][n as usize % 4];
        app.measure_at(
            &world.patient,
            at,
            // 60–96 bpm: a regular rhythm in it is sinus rhythm (tachycardia is its own kind).
            60.0 + (n % 13) as f64 * 3.0,
            indicator,
            symptoms[n as usize % 4],
        )
        .await;
    }
    app.clock.set(Utc::now());
    run_due(app).await;
    for user in [&mut world.patient, &mut world.staff_a, &mut world.staff_b] {
        relogin(app, user).await;
    }
    let monthly = app
        .get(
            &format!(
                "/reports/v1?eq(trigger,PERIOD_DAYS_PASSED_30)&user_id={}",
                world.patient.id
            ),
            &world.patient.token,
        )
        .await;
    let report = monthly.assert_ok()["data"][0].clone();
    (world, report)
}

#[tokio::test]
async fn periodic_pdfs_show_the_period_in_any_language_and_zone() {
    let app = spawn_app().await;
    let (world, report) = month_of_measurements(&app).await;
    let id = report["id"].as_str().unwrap();
    assert_eq!(measurement_ids(&report).len(), 60);

    let pdf = pdf_of(&app, &world.patient, id, "").await;
    save_artifact("periodic-monthly-en.pdf", &pdf);
    assert!(
        pdf_pages(&pdf) <= 2,
        "30 days of twice-daily measurements fit two pages"
    );
    let text = pdf_text(&pdf);
    for expected in [
        "Periodic heart rhythm report",
        "Monthly report",
        "patient Tester",
        "Europe/Brussels",
        "Regular rhythm",
        "Possible atrial fibrillation",
        "Regular rhythm · Tachycardia",
        "Irregular measurements",
        // A quarter of the month's measurements are irregular: 15 of 60.
        "25 %",
        "Spread (SD)",
        "Palpitations",
        "Without symptoms",
        "Heart rate over the period",
        "Morning (06–12)",
        "All measurements",
        "not a diagnosis",
    ] {
        assert!(
            text.contains(expected),
            "`{expected}` missing from:\n{text}"
        );
    }
    let renders = app.operator.reports.renders();
    let again = pdf_of(&app, &world.staff_a, id, "/").await;
    assert_eq!(
        again, pdf,
        "a trailing slash and another viewer get the cached PDF"
    );
    assert_eq!(
        app.operator.reports.renders(),
        renders,
        "served from the cache"
    );

    let german = pdf_text(
        &pdf_of(
            &app,
            &world.patient,
            id,
            "?language=DE&time_zone=America/New_York",
        )
        .await,
    );
    assert!(german.contains("America/New_York"), "{german}");
    assert!(!german.contains("Periodic heart rhythm report"));
    let unknown = pdf_text(&pdf_of(&app, &world.patient, id, "?language=xx").await);
    assert!(
        unknown.contains("Periodic heart rhythm report"),
        "unsupported languages give English"
    );

    for (query, code) in [("?time_zone=Mars/Olympus", 26), ("?time_zone=%FF", 26)] {
        let reply = app
            .get(
                &format!("/reports/v1/{id}/pdf{query}"),
                &world.patient.token,
            )
            .await;
        reply.assert_error(400, code);
        assert!(!reply.body["message"].as_str().unwrap().contains("token"));
    }
    app.get(&format!("/reports/v1/{id}/pdf"), &world.staff_b.token)
        .await
        .assert_error(404, 16);

    // The patient's name is on the PDF: a change makes a new one.
    app.put(
        &format!("/users/v1/{}", world.patient.id),
        &world.patient.token,
        json!({"last_name": "Renamed"}),
    )
    .await
    .assert_ok();
    let renamed = pdf_text(&pdf_of(&app, &world.patient, id, "").await);
    assert!(renamed.contains("patient Renamed"), "{renamed}");
}

#[tokio::test]
async fn every_language_renders_its_periodic_report() {
    let app = spawn_app().await;
    let (world, report) = month_of_measurements(&app).await;
    let id = report["id"].as_str().unwrap();
    for (language, title) in [
        ("en", "Periodic heart rhythm report"),
        ("de", "Herzrhythmus"),
        ("es", "ritmo card"),
        ("fr", "rythme cardiaque"),
        ("it", "ritmo cardiaco"),
        ("nl", "hartritme"),
        ("ar", "القلب"),
        ("zh", "心律"),
    ] {
        let pdf = pdf_of(&app, &world.patient, id, &format!("?language={language}")).await;
        save_artifact(&format!("periodic-monthly-{language}.pdf"), &pdf);
        let text = pdf_text(&pdf);
        assert!(
            text.contains(title),
            "{language}: `{title}` missing from\n{text}"
        );
        assert!(pdf_pages(&pdf) <= 2, "{language} fits two pages");
        // The widest labels of each language stay inside their cells.
        crate::helpers::assert_no_overlapping_words(&pdf, &format!("periodic, {language}"));
    }
}

#[tokio::test]
async fn a_long_period_is_summed_up_per_day_with_its_flagged_results_listed() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let now = app.clock_millis();
    for n in 0..150 {
        app.measure_at(&world.patient, now - 1 - n * DAY / 3, 72.0, "normal", &[])
            .await;
    }
    // Over a hundred measurements: the table becomes a line per day, and the one in
    // possible atrial fibrillation stays listed.
    app.measure_at(
        &world.patient,
        now - 1 - DAY / 2,
        131.0,
        "irregular",
        &["palpitations"],
    )
    .await;
    let made = app
        .post(
            "/reports/v1",
            &world.admin.token,
            json!({"user_id": world.patient.id, "period_start_timestamp": now - 60 * DAY}),
        )
        .await;
    let id = made.assert_ok()["id"].as_str().unwrap().to_owned();
    let pdf = pdf_of(&app, &world.patient, &id, "").await;
    save_artifact("periodic-digest-en.pdf", &pdf);
    let text = pdf_text(&pdf);
    assert!(text.contains("Measurements per day"), "{text}");
    assert!(text.contains("151 measurements are too many"), "{text}");
    assert!(
        text.contains("1 in this period, each listed below."),
        "{text}"
    );
    assert!(
        text.contains("Palpitations"),
        "the flagged one is listed:\n{text}"
    );
    assert!(
        text.matches("Regular rhythm").count() < 150,
        "not listed one by one"
    );
    assert!(pdf_pages(&pdf) <= 3, "{} pages", pdf_pages(&pdf));
    let arabic = pdf_of(&app, &world.patient, &id, "?language=ar").await;
    save_artifact("periodic-digest-ar.pdf", &arabic);
    assert!(pdf_text(&arabic).contains("أسبوع") || pdf_text(&arabic).contains("يوم"));
}

/// `tacho` run against the test's database.
pub(crate) fn tacho_on(app: &TestApp, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tacho"))
        .args(args)
        .env(
            "TACHO_DATABASE_URL",
            app.settings.database_url.expose_secret(),
        )
        .env("TACHO_LOG", "warn")
        .output()
        .expect("tacho runs")
}

#[tokio::test]
async fn run_due_and_create_work_from_the_command_line() {
    let app = spawn_app().await;
    let (world, start) = world_started(&app, 31).await;
    app.measure_at(&world.patient, start + DAY, 71.0, "normal", &[])
        .await;
    // The command runs on the real clock, 31 days after the prescriptions began.
    let run = tacho_on(&app, &["reports", "run-due"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("18 reports made, 0 skipped, 0 failed"),
        "{stdout}"
    );
    assert!(
        stderr.contains("run-due: 18 reports to make"),
        "plain progress: {stderr}"
    );
    assert!(stderr.contains("run-due: 18/18 (100%)"), "{stderr}");
    let again = tacho_on(&app, &["reports", "run-due"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("0 reports made"));
    assert_eq!(total_reports(&app).await, 18);

    let day = Utc
        .timestamp_millis_opt(start)
        .unwrap()
        .format("%Y-%m-%d")
        .to_string();
    let made = tacho_on(
        &app,
        &[
            "reports",
            "create",
            "--user",
            &world.patient.email,
            "--from",
            &day,
        ],
    );
    let stdout = String::from_utf8_lossy(&made.stdout);
    assert!(
        made.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&made.stderr)
    );
    assert!(
        stdout.contains("for patient Tester: 1 measurements"),
        "{stdout}"
    );
    assert_eq!(total_reports(&app).await, 19);
    for (args, complaint) in [
        (vec!["--user", "nobody@tacho.test"], "no user"),
        (vec!["--user", "zz"], "--user"),
        (
            vec!["--user", &world.patient.id, "--from", "2026-13-01"],
            "neither YYYY-MM-DD",
        ),
        (
            vec![
                "--user",
                &world.patient.id,
                "--from",
                "2026-01-01",
                "--to",
                "2025-01-01",
            ],
            "after",
        ),
    ] {
        let mut all = vec!["reports", "create"];
        all.extend(args);
        let failed = tacho_on(&app, &all);
        assert!(!failed.status.success());
        let stderr = String::from_utf8_lossy(&failed.stderr);
        assert!(stderr.contains(complaint), "{stderr}");
    }
}

#[tokio::test]
async fn two_serve_processes_make_each_report_once() {
    use std::process::{Command, Stdio};
    let app = spawn_app().await;
    let (_world, _) = world_started(&app, 40).await;
    let dir = tempfile::tempdir().unwrap();
    let serve = || {
        Command::new(env!("CARGO_BIN_EXE_tacho"))
            .args(["serve", "--no-migrate"])
            .env(
                "TACHO_DATABASE_URL",
                app.settings.database_url.expose_secret(),
            )
            .env("TACHO_DATA_DIR", dir.path())
            .env("TACHO_ADDR", "127.0.0.1:0")
            .env("TACHO_SCHEDULER_TICK", "1")
            .env("TACHO_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tacho serve starts")
    };
    let mut servers = [serve(), serve()];
    for _ in 0..600 {
        if total_reports(&app).await >= 18 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Two more ticks of each: nothing more appears.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    for server in &mut servers {
        server.kill().ok();
        server.wait().ok();
    }
    assert_eq!(total_reports(&app).await, 18);
}

/// A stored report that cannot be read is a fault, said as such at every door: never a
/// report of no measurements.
#[tokio::test]
async fn a_stored_report_that_cannot_be_read_is_an_error_not_an_empty_table() {
    use sea_orm::{ConnectionTrait, Statement};
    let app = spawn_app().await;
    let world = World::new(&app).await;
    app.measurement_id(&world.patient, "sinus_72").await;
    let made = app
        .post(
            "/reports/v1",
            &world.staff_a.token,
            json!({"user_id": world.patient.id}),
        )
        .await;
    let id = made.assert_ok()["id"].as_str().unwrap().to_owned();
    let db = app.store.connection();
    db.execute_raw(Statement::from_string(
        db.get_database_backend(),
        format!("UPDATE reports SET data = '{{\"measure' WHERE id = '{id}'"),
    ))
    .await
    .unwrap();
    for path in [
        format!("/reports/v1/{id}"),
        format!("/reports/v1/{id}/pdf"),
        "/reports/v1".to_owned(),
    ] {
        let answer = app.get(&path, &world.staff_a.token).await;
        answer.assert_error(500, 1);
        assert!(
            !answer.body.to_string().contains("measure"),
            "a generic body"
        );
    }
    let mut portal = crate::portal::logged_in(&app, &world.staff_a).await;
    let page = portal
        .get(&format!("/portal/patients/{}", world.patient.id))
        .await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("cannot be read"), "{}", page.body);
    let pdf = portal.get(&format!("/portal/reports/{id}/pdf")).await;
    assert_eq!(pdf.status, 500);
}
