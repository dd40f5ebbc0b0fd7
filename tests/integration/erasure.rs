//! Integration tests of the patient's rights over their data: erasure, the legal hold and
//! retention. After an erasure every table, the bucket and the file folder are scanned for
//! the patient's name, address, e-mail, phone, birth date, measurement ids and documents.

use std::process::Command;

use reqwest::StatusCode;
use sea_orm::{ConnectionTrait, DbBackend, Statement};
use serde_json::{Value, json};
use tacho::config::{ExposeSecret, FileStorageKind};
use tacho::scheduler::{Scheduler, SchedulerOptions};

use crate::helpers::{PASSWORD, TestApp, TestUser, files_under, spawn_app, spawn_app_with};
use crate::portal::logged_in;
use crate::shared_links::make_link;
use crate::storage::Moto;

const FIRST: &str = "Zephyrine";
const LAST: &str = "Quarrington";
const EMAIL: &str = "zephyrine.quarrington@erasure.test";
const BIRTHDAY: &str = "1961-07-23";
const CITY: &str = "Zwevezele";

/// Registers the patient whose traces the scan looks for, through the API, and logs it in.
async fn marked_patient(app: &TestApp) -> TestUser {
    let registered = app
        .request(
            reqwest::Method::POST,
            "/users/v1/register",
            None,
            Some(json!({
                "first_name": FIRST, "last_name": LAST, "email": EMAIL, "password": PASSWORD,
                "phone_number": "+32470998877", "language": "EN", "time_zone": "Europe/Brussels"
            })),
        )
        .await;
    let id = registered.assert_ok()["id"].as_str().unwrap().to_owned();
    let client = app.sign_in(EMAIL).await;
    TestUser {
        id,
        email: EMAIL.into(),
        token: client.tokens().access_token,
        client,
    }
}

/// The cast: an administrator, a physician and the marked patient in one group.
struct Cast {
    admin: TestUser,
    staff: TestUser,
    patient: TestUser,
}

/// What the patient left behind, to look for after the erasure.
struct Trace {
    measurements: Vec<String>,
    /// The cache keys of the patient's stored documents.
    file_keys: Vec<String>,
    /// The app token of a measurement report downloaded once (so held in memory).
    token: String,
    phone: String,
}

/// A patient with a profile, measurements (one reviewed), a measurement report downloaded
/// once, a periodic report's PDF, a shared link, and the physician's notifications.
async fn record_of(app: &TestApp) -> (Cast, Trace) {
    let admin = app.admin("admin").await;
    let staff = app.user("staff").await;
    let patient = marked_patient(app).await;
    let group = app.group(&admin, "Group A").await;
    app.enlist_staff(&admin, &staff, &group).await;
    app.enlist_patient(&admin, &patient, &group).await;
    app.put(
        &format!("/profiles/v1?eq(id,{})", patient.id),
        &patient.token,
        json!({"birthday": BIRTHDAY, "city": CITY, "country": "BE"}),
    )
    .await
    .assert_ok();
    let now = app.clock_millis();
    let mut measurements = Vec::new();
    for (hours, rate, kind) in [
        (5, 72.0, "normal"),
        (3, 80.0, "normal"),
        (1, 90.0, "irregular"),
    ] {
        measurements.push(
            app.measure_at(
                &patient,
                now - hours * 3_600_000,
                rate,
                kind,
                &["palpitations"],
            )
            .await,
        );
    }
    app.review(&staff, &measurements[0]).await;
    let token = app
        .report(&patient, &measurements[0], Some("EN"))
        .await
        .assert_ok()["data"]["readFileToken"]
        .as_str()
        .expect("a token")
        .to_owned();
    let (status, _, _) = app.download(&token).await;
    assert_eq!(status, StatusCode::OK);
    let report = app
        .post("/reports/v1", &staff.token, json!({"user_id": patient.id}))
        .await;
    let report = report.assert_ok()["id"].as_str().unwrap().to_owned();
    let pdf = app
        .client
        .get(app.url(&format!("/reports/v1/{report}/pdf")))
        .bearer_auth(&staff.token)
        .send()
        .await
        .unwrap();
    assert_eq!(pdf.status(), StatusCode::OK);
    let mut browser = logged_in(app, &patient).await;
    make_link(&mut browser, &measurements[1], "7").await;
    app.work_queue().await;
    let phone = app
        .get(&format!("/users/v1/{}", patient.id), &admin.token)
        .await
        .assert_ok()["phone_number"]
        .as_str()
        .expect("a phone number")
        .to_owned();
    let file_keys = texts(
        app,
        &format!(
            "SELECT cache_key AS v FROM files WHERE patient_id = '{}'",
            patient.id
        ),
    )
    .await;
    assert_eq!(
        file_keys.len(),
        3,
        "two measurement reports (one for the link) and a periodic report"
    );
    (
        Cast {
            admin,
            staff,
            patient,
        },
        Trace {
            measurements,
            file_keys,
            token,
            phone,
        },
    )
}

/// The first column (`v`) of every row of `sql`.
async fn texts(app: &TestApp, sql: &str) -> Vec<String> {
    let db = app.store.connection();
    db.query_all_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .unwrap()
        .iter()
        .map(|row| row.try_get::<String>("", "v").unwrap())
        .collect()
}

/// Every row of every table, as text, with its table's name.
async fn every_row(app: &TestApp) -> Vec<(String, String)> {
    let db = app.store.connection();
    let backend = db.get_database_backend();
    let tables = match backend {
        DbBackend::Postgres => {
            texts(
                app,
                "SELECT tablename AS v FROM pg_tables WHERE schemaname = current_schema()",
            )
            .await
        }
        _ => {
            texts(
                app,
                "SELECT name AS v FROM sqlite_master WHERE type = 'table' \
                 AND name NOT LIKE 'sqlite_%'",
            )
            .await
        }
    };
    assert!(tables.len() > 25, "every table is listed: {tables:?}");
    let mut rows = Vec::new();
    for table in tables {
        let sql = match backend {
            DbBackend::Postgres => format!("SELECT CAST(t AS text) AS v FROM \"{table}\" t"),
            _ => {
                let columns = texts(
                    app,
                    &format!("SELECT name AS v FROM pragma_table_info('{table}')"),
                )
                .await;
                let parts: Vec<String> = columns
                    .iter()
                    .map(|c| {
                        format!(
                            "CASE WHEN typeof(\"{c}\") = 'blob' THEN hex(\"{c}\") \
                             ELSE COALESCE(CAST(\"{c}\" AS TEXT), '') END"
                        )
                    })
                    .collect();
                format!("SELECT {} AS v FROM \"{table}\"", parts.join(" || '|' || "))
            }
        };
        for row in texts(app, &sql).await {
            rows.push((table.clone(), row));
        }
    }
    rows
}

/// Fails naming the table when any row holds the patient's name, address, e-mail, phone,
/// birth date or documents, or a measurement id anywhere but in the audit trail.
async fn assert_no_trace(app: &TestApp, trace: &Trace) {
    let personal: Vec<String> = [FIRST, LAST, EMAIL, BIRTHDAY, CITY, &trace.phone]
        .iter()
        .map(|s| s.to_lowercase())
        .chain(trace.file_keys.iter().cloned())
        .collect();
    let rows = every_row(app).await;
    assert!(rows.len() > 10);
    for (table, row) in &rows {
        let row = row.to_lowercase();
        for needle in &personal {
            assert!(
                !row.contains(needle),
                "`{needle}` is still in {table}: {row}"
            );
        }
        if table != "audit_events" {
            for id in &trace.measurements {
                assert!(
                    !row.contains(id),
                    "measurement {id} is still in {table}: {row}"
                );
            }
        }
    }
    let audited = rows
        .iter()
        .filter(|(table, row)| table == "audit_events" && row.contains(&trace.measurements[0]))
        .count();
    assert!(audited > 0, "the audit trail keeps the ids it named");
}

/// Asks for the erasure, works the queue, and checks what the administrator and the old
/// tokens see afterwards.
async fn erase(app: &TestApp, cast: &Cast, trace: &Trace) {
    let path = format!("/users/v1/{}/erasure", cast.patient.id);
    let asked = app
        .post(
            &path,
            &cast.admin.token,
            json!({"confirmation": format!("{FIRST} {LAST}")}),
        )
        .await;
    assert_eq!(asked.status, StatusCode::ACCEPTED, "{}", asked.body);
    assert_eq!(asked.body["status"], "queued");
    assert_eq!(
        asked.body["at_start"],
        json!({"measurements": trace.measurements.len(), "reports": 1, "files": 3})
    );
    let locked_out = app.get("/users/v1/me", &cast.patient.token).await;
    assert_eq!(locked_out.status, 401, "the account is deactivated at once");
    let summary = app.work_queue().await;
    assert_eq!(summary.erased, 1, "{summary:?}");
    let progress = app.get(&path, &cast.admin.token).await;
    let progress = progress.assert_ok();
    assert_eq!(progress["status"], "done");
    assert_eq!(progress["percent"], 100);
    assert_eq!(
        progress["left"],
        json!({"measurements": 0, "reports": 0, "files": 0})
    );
    let tombstone = app
        .get(&format!("/users/v1/{}", cast.patient.id), &cast.admin.token)
        .await;
    let tombstone = tombstone.assert_ok();
    assert_eq!(tombstone["first_name"], "");
    assert_eq!(tombstone["phone_number"], Value::Null);
    assert_eq!(
        tombstone["email"],
        format!("erased-{}@erased.invalid", cast.patient.id)
    );
    let (status, _, _) = app.download(&trace.token).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "the file held in memory is not served"
    );
    let again = app
        .post(&path, &cast.admin.token, json!({"confirmation": EMAIL}))
        .await;
    again.assert_error(400, 27);
    let actions = texts(
        app,
        &format!(
            "SELECT action AS v FROM audit_events WHERE patient_id = '{}' \
             AND action LIKE 'user.%' ORDER BY creation_timestamp, action",
            cast.patient.id
        ),
    )
    .await;
    for action in ["user.erase.request", "user.erase"] {
        assert!(
            actions.iter().any(|a| a == action),
            "{action} in {actions:?}"
        );
    }
}

#[tokio::test]
async fn an_erased_patient_leaves_no_trace_in_the_database_or_the_bucket() {
    let Some(moto) = Moto::start().await else {
        return;
    };
    moto.create_bucket("tacho-erasure").await;
    let app = spawn_app_with(|s| moto.configure(s, "tacho-erasure")).await;
    let (cast, trace) = record_of(&app).await;
    let stored = moto.keys("tacho-erasure").await;
    for key in &trace.file_keys {
        assert!(
            stored.iter().any(|k| k.ends_with(key)),
            "{key} in {stored:?}"
        );
    }

    // The legal hold: only administrators set it, and it stops an erasure.
    let hold = format!("/users/v1/{}/legal_hold", cast.patient.id);
    app.put(&hold, &cast.staff.token, json!({"legal_hold": true}))
        .await
        .assert_error(403, 10);
    let held = app
        .put(&hold, &cast.admin.token, json!({"legal_hold": true}))
        .await;
    assert_eq!(held.assert_ok()["legal_hold"], true);
    let path = format!("/users/v1/{}/erasure", cast.patient.id);
    app.post(&path, &cast.admin.token, json!({"confirmation": EMAIL}))
        .await
        .assert_error(400, 27);
    app.put(&hold, &cast.admin.token, json!({"legal_hold": false}))
        .await
        .assert_ok();

    // Only an administrator, who types the patient's name or address.
    app.post(&path, &cast.staff.token, json!({"confirmation": EMAIL}))
        .await
        .assert_error(403, 10);
    app.post(&path, &cast.admin.token, json!({"confirmation": FIRST}))
        .await
        .assert_error(400, 15);
    app.post(&path, &cast.admin.token, json!({}))
        .await
        .assert_error(400, 14);
    let own = format!("/users/v1/{}/erasure", cast.admin.id);
    app.post(
        &own,
        &cast.admin.token,
        json!({"confirmation": "admin@tacho.test"}),
    )
    .await
    .assert_error(403, 10);

    erase(&app, &cast, &trace).await;
    let left = moto.keys("tacho-erasure").await;
    for key in &trace.file_keys {
        assert!(
            !left.iter().any(|k| k.ends_with(key)),
            "{key} is left in {left:?}"
        );
    }
    assert_no_trace(&app, &trace).await;
    let holds = texts(
        &app,
        &format!(
            "SELECT detail AS v FROM audit_events WHERE action = 'user.legal-hold' \
             AND patient_id = '{}' ORDER BY creation_timestamp",
            cast.patient.id
        ),
    )
    .await;
    assert_eq!(holds, ["set", "lifted"]);
}

#[tokio::test]
async fn an_erasure_empties_the_local_file_folder_of_the_patients_documents() {
    let app = spawn_app_with(|s| s.webhook_allow_loopback = true).await;
    let (cast, mut trace) = record_of(&app).await;
    // A webhook of the group that cannot be reached: its deliveries about the patient wait
    // for their next attempt, and the erasure takes them away.
    let groups = app.get("/groups/v1", &cast.admin.token).await;
    let group = groups.assert_ok()["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let hook = app
        .post(
            "/webhooks/v1",
            &cast.admin.token,
            json!({"url": "http://127.0.0.1:9/hook", "events": ["measurement.analysed"], "group_id": group}),
        )
        .await;
    assert_eq!(hook.status, 201, "{:?}", hook.body);
    let now = app.clock_millis();
    trace.measurements.push(
        app.measure_at(&cast.patient, now - 600_000, 70.0, "normal", &[])
            .await,
    );
    app.work_queue().await;
    let pending =
        "SELECT id AS v FROM jobs WHERE kind = 'webhook' AND status IN ('queued', 'running')";
    assert!(
        !texts(&app, pending).await.is_empty(),
        "a delivery waits to be retried"
    );
    let folder = app.settings.data_dir.join("files");
    let named = |keys: &[String]| {
        files_under(&folder)
            .iter()
            .filter(|p| keys.iter().any(|k| p.ends_with(k)))
            .count()
    };
    assert_eq!(named(&trace.file_keys), 3);
    erase(&app, &cast, &trace).await;
    assert!(
        texts(&app, pending).await.is_empty(),
        "no delivery about the patient is left"
    );
    assert_eq!(named(&trace.file_keys), 0, "{:?}", files_under(&folder));
    assert_no_trace(&app, &trace).await;
}

#[tokio::test]
async fn an_erasure_deletes_documents_kept_in_the_database() {
    let app = spawn_app_with(|s| s.file_storage = FileStorageKind::Database).await;
    let (cast, trace) = record_of(&app).await;
    let blobs = texts(&app, "SELECT cache_key AS v FROM file_blobs").await;
    assert!(
        trace.file_keys.iter().all(|k| blobs.contains(k)),
        "{blobs:?}"
    );
    erase(&app, &cast, &trace).await;
    assert_no_trace(&app, &trace).await;
}

#[tokio::test]
async fn a_hold_set_after_the_request_stops_the_erasure_before_the_tombstone() {
    let app = spawn_app().await;
    let (cast, _) = record_of(&app).await;
    let path = format!("/users/v1/{}/erasure", cast.patient.id);
    let asked = app
        .post(&path, &cast.admin.token, json!({"confirmation": EMAIL}))
        .await;
    assert_eq!(asked.status, StatusCode::ACCEPTED);
    app.post(&path, &cast.admin.token, json!({"confirmation": EMAIL}))
        .await
        .assert_error(400, 27);
    app.put(
        &format!("/users/v1/{}/legal_hold", cast.patient.id),
        &cast.admin.token,
        json!({"legal_hold": true}),
    )
    .await
    .assert_ok();
    app.work_queue().await;
    let progress = app.get(&path, &cast.admin.token).await;
    let progress = progress.assert_ok();
    assert_eq!(progress["status"], "stopped");
    assert_eq!(progress["left"]["measurements"], 3, "nothing was erased");
    let account = app
        .get(&format!("/users/v1/{}", cast.patient.id), &cast.admin.token)
        .await;
    assert_eq!(account.assert_ok()["first_name"], FIRST);
}

#[tokio::test]
async fn administrators_erase_from_the_portal_and_watch_it_happen() {
    let app = spawn_app().await;
    let (cast, _) = record_of(&app).await;
    let page = format!("/portal/admin/users/{}/erasure", cast.patient.id);
    let mut physician = logged_in(&app, &cast.staff).await;
    assert_eq!(physician.get(&page).await.status, StatusCode::FORBIDDEN);
    let mut admin = logged_in(&app, &cast.admin).await;
    let edit = admin
        .get(&format!("/portal/admin/users/{}", cast.patient.id))
        .await;
    assert!(edit.body.contains(&page), "the account page links to it");
    let shown = admin.get(&page).await;
    assert_eq!(shown.status, StatusCode::OK);
    assert!(shown.body.contains("id=\"erase\""), "{}", shown.body);

    let held = admin
        .post(&page, &format!("{page}/../legal-hold"), &[("hold", "on")])
        .await;
    assert_eq!(held.status, StatusCode::SEE_OTHER, "{}", held.body);
    let shown = admin.get(&page).await;
    assert!(
        !shown.body.contains("id=\"erase\""),
        "no erasure under a hold"
    );
    admin
        .post(&page, &format!("{page}/../legal-hold"), &[])
        .await;

    let refused = admin
        .post(&page, &page, &[("confirmation", "somebody else")])
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.body.contains("id=\"erase-refusal\""));
    assert!(
        refused.body.contains("somebody else"),
        "what was typed stays"
    );
    let asked = admin.post(&page, &page, &[("confirmation", EMAIL)]).await;
    assert_eq!(asked.status, StatusCode::SEE_OTHER, "{}", asked.body);
    let waiting = admin.get(&page).await;
    assert!(waiting.body.contains("hx-trigger=\"every 2s\""), "it polls");
    assert!(waiting.body.contains("<progress"));

    app.work_queue().await;
    let list = admin.get("/portal/admin/users").await;
    assert!(
        list.body.contains("Erased account"),
        "the list names a tombstone as one"
    );
    admin.headers.push(("HX-Request", "true".into()));
    let fragment = admin.get(&page).await;
    assert!(
        !fragment.body.contains("<html"),
        "htmx gets the progress alone"
    );
    assert!(fragment.body.contains("value=\"100\""), "{}", fragment.body);
    assert!(
        !fragment.body.contains("hx-trigger"),
        "done: it stops polling"
    );
}

#[tokio::test]
async fn retention_erases_what_outlived_the_period_once_a_day_and_spares_held_patients() {
    let app = spawn_app().await;
    let admin = app.admin("admin").await;
    let keeper = app.user("keeper").await;
    let leaver = app.user("leaver").await;
    let held = app.user("held").await;
    let start = app.clock_millis();
    let old = app
        .measure_at(&keeper, start - 3_600_000, 70.0, "normal", &[])
        .await;
    let token = app.report(&keeper, &old, Some("EN")).await.assert_ok()["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned();
    app.measure_at(&leaver, start - 3_600_000, 75.0, "normal", &[])
        .await;
    let held_old = app
        .measure_at(&held, start - 3_600_000, 65.0, "normal", &[])
        .await;
    app.put(
        &format!("/users/v1/{}/activation", leaver.id),
        &admin.token,
        json!({"activation": false}),
    )
    .await
    .assert_ok();
    app.put(
        &format!("/users/v1/{}/legal_hold", held.id),
        &admin.token,
        json!({"legal_hold": true}),
    )
    .await
    .assert_ok();

    app.clock.advance(chrono::Duration::days(31));
    let keeper = again(&app, keeper).await;
    let held = again(&app, held).await;
    let admin = again(&app, admin).await;
    let now = app.clock_millis();
    let new = app
        .measure_at(&keeper, now - 3_600_000, 72.0, "normal", &[])
        .await;

    // Without a period nothing is scheduled.
    assert_eq!(app.work_queue().await.erased, 0);
    let dry = retention_cli(
        &app,
        &["--dry-run", "--days", "30", "--at", &now.to_string()],
    );
    assert!(
        dry.contains("2 measurements, 0 periodic reports, 1 files and 1 accounts would be erased"),
        "{dry}"
    );
    assert!(dry.contains(&format!("account {}", leaver.id)), "{dry}");
    app.get(
        &format!("/data/v1/measurements/documents/{old}"),
        &keeper.token,
    )
    .await
    .assert_ok();

    let scheduler = Scheduler::new(
        app.store.clone(),
        app.operator.notifier.clone(),
        SchedulerOptions {
            retention_days: Some(30),
            ..SchedulerOptions::default()
        },
    );
    assert_eq!(scheduler.run_due(|_| {}).await.unwrap().erased, 1);
    app.get(
        &format!("/data/v1/measurements/documents/{old}"),
        &keeper.token,
    )
    .await
    .assert_error(404, 16);
    app.get(
        &format!("/data/v1/measurements/documents/{new}"),
        &keeper.token,
    )
    .await
    .assert_ok();
    app.get(
        &format!("/data/v1/measurements/documents/{held_old}"),
        &held.token,
    )
    .await
    .assert_ok();
    let (status, _, _) = app.download(&token).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let leaver_now = app
        .get(&format!("/users/v1/{}", leaver.id), &admin.token)
        .await;
    assert_eq!(leaver_now.assert_ok()["first_name"], "");
    let runs = texts(
        &app,
        "SELECT detail AS v FROM audit_events WHERE action = 'retention.erase'",
    )
    .await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(
        runs[0].ends_with("2 measurements, 0 periodic reports, 1 files, 1 accounts"),
        "{runs:?}"
    );

    // Once a day, whichever instances tick.
    assert_eq!(scheduler.run_due(|_| {}).await.unwrap().erased, 0);
    app.clock.advance(chrono::Duration::days(1));
    assert_eq!(scheduler.run_due(|_| {}).await.unwrap().erased, 1);
    let after = retention_cli(
        &app,
        &["--dry-run", "--days", "30", "--at", &now.to_string()],
    );
    assert!(
        after.contains("0 measurements, 0 periodic reports, 0 files and 0 accounts"),
        "{after}"
    );
}

#[test]
fn the_retention_command_needs_a_period() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_tacho"))
        .args(["retention", "--dry-run"])
        .env("TACHO_DATA_DIR", dir.path())
        .env_remove("TACHO_DATABASE_URL")
        .env_remove("TACHO_RETENTION_DAYS")
        .env("TACHO_LOG", "warn")
        .output()
        .expect("tacho runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("TACHO_RETENTION_DAYS"), "{stderr}");
}

/// `user` logged in again (a month later, the old login has ended).
async fn again(app: &TestApp, user: TestUser) -> TestUser {
    let client = app.sign_in(&user.email).await;
    TestUser {
        token: client.tokens().access_token,
        client,
        ..user
    }
}

/// Runs `tacho retention` with `args` on `app`'s database; its output.
fn retention_cli(app: &TestApp, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tacho"))
        .arg("retention")
        .args(args)
        .env(
            "TACHO_DATABASE_URL",
            app.settings.database_url.expose_secret(),
        )
        .env("TACHO_DATA_DIR", &app.settings.data_dir)
        .env("TACHO_LOG", "warn")
        .output()
        .expect("tacho runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
