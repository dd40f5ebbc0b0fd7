//! What a page costs the database does not grow with the data: every list of the portal and
//! the API is asked for at two clinic sizes and must run the same number of SQL statements;
//! and a lookup by id or by a secret's hash searches its index on either database.

use std::time::Duration;

use tacho::demo::{
    DEMO_PASSWORD,
    clinic::{Size, build},
};

use crate::helpers::{PASSWORD, TestApp, spawn_app};
use crate::portal::Browser;

/// How a page is asked for: by the portal session or by a bearer token, as one of the people
/// of the clinic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Door {
    Portal,
    Api,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Physician,
    Patient,
    Administrator,
}

/// The lists, each as the person who reads it. `{patient}` is the first patient's id.
const PAGES: &[(Who, Door, &str)] = &[
    (Who::Physician, Door::Portal, "/portal/worklist"),
    (Who::Physician, Door::Portal, "/portal/patients"),
    (Who::Physician, Door::Portal, "/portal/patients?sort=result"),
    (Who::Physician, Door::Portal, "/portal/patients/{patient}"),
    (Who::Physician, Door::Portal, "/portal/notifications"),
    (Who::Physician, Door::Portal, "/portal/reports"),
    (
        Who::Physician,
        Door::Api,
        "/data/v1/measurements/documents?limit(50)&sort(-id)",
    ),
    (Who::Physician, Door::Api, "/notifications/v1"),
    (Who::Physician, Door::Api, "/reports/v1"),
    (Who::Physician, Door::Api, "/users/v1?limit(50)"),
    (Who::Patient, Door::Portal, "/portal/measurements"),
    (Who::Patient, Door::Portal, "/portal/notifications"),
    (
        Who::Patient,
        Door::Api,
        "/data/v1/measurements/documents?limit(50)&sort(-id)",
    ),
    (Who::Administrator, Door::Portal, "/portal/admin/users"),
    (Who::Administrator, Door::Portal, "/portal/admin/audit"),
    (Who::Administrator, Door::Portal, "/portal/admin/groups"),
    (Who::Administrator, Door::Portal, "/portal/admin/jobs"),
    (
        Who::Administrator,
        Door::Portal,
        "/portal/admin/jobs/upcoming",
    ),
    (Who::Administrator, Door::Api, "/users/v1?limit(50)"),
    (
        Who::Administrator,
        Door::Api,
        "/data/v1/measurements/documents?limit(50)&sort(-id)",
    ),
    (Who::Administrator, Door::Api, "/reports/v1"),
];

/// The statements each page of [`PAGES`] runs in a clinic of `size` (one group, so that its
/// physician sees every patient), the fewest of three asks so that a worker's poll in the
/// background does not count.
async fn statements_per_page(size: Size) -> Vec<u64> {
    let app = spawn_app().await;
    build(
        &app.store,
        app.operator.auth.hasher(),
        &app.operator.notifier,
        size,
        |_, _| {},
    )
    .await
    .expect("clinic built");
    settle(&app).await;

    let admin = app.admin("cost").await;
    let mut sessions = Vec::new();
    let mut tokens = Vec::new();
    for (email, password) in [
        ("dr1.1@clinic.test", DEMO_PASSWORD),
        ("patient1@clinic.test", DEMO_PASSWORD),
        (admin.email.as_str(), PASSWORD),
    ] {
        let mut browser = Browser::new(&app);
        let login = browser.login(email, password).await;
        assert_eq!(login.status, 303, "{email} logs in: {}", login.body);
        sessions.push(browser);
        let grant = app.password_grant(email, password).await;
        tokens.push(
            grant.assert_ok()["access_token"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let patient = app
        .get("/users/v1?email=patient1@clinic.test", &tokens[2])
        .await;
    let patient = patient.assert_ok()["data"][0]["id"]
        .as_str()
        .expect("the first patient")
        .to_owned();

    let mut counts = Vec::new();
    for (who, door, path) in PAGES {
        let path = path.replace("{patient}", &patient);
        let index = *who as usize;
        let mut fewest = u64::MAX;
        for _ in 0..3 {
            let before = app.store.statements_run();
            let status = match door {
                Door::Portal => sessions[index].get(&path).await.status.as_u16(),
                Door::Api => app.get(&path, &tokens[index]).await.status.as_u16(),
            };
            let ran = app.store.statements_run() - before;
            assert_eq!(status, 200, "{who:?} {path}");
            fewest = fewest.min(ran);
        }
        counts.push(fewest);
    }
    counts
}

/// Waits until the notifier has fanned out every event the clinic's build wrote, so that the
/// pages are counted on a quiet server.
async fn settle(app: &TestApp) {
    for _ in 0..600 {
        let (waiting, _) = app.store.events_waiting().await.unwrap();
        if waiting == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the notifier did not fan out the clinic's events within 30 s");
}

#[tokio::test]
async fn each_page_runs_as_many_statements_for_a_large_clinic_as_for_a_small_one() {
    // The small clinic fills no page; the large one fills every page of the portal (20 rows)
    // and of the API (50).
    let small = statements_per_page(Size {
        patients: 2,
        measurements: 2,
        patients_per_group: 2,
    })
    .await;
    let large = statements_per_page(Size {
        patients: 30,
        measurements: 4,
        patients_per_group: 30,
    })
    .await;
    let mut grown = Vec::new();
    for (((who, door, path), small), large) in PAGES.iter().zip(&small).zip(&large) {
        println!("{who:?} {door:?} {path}: {small} → {large} statements");
        assert!(*small > 0, "{path} ran no statement: it was not counted");
        if small != large {
            grown.push(format!("{who:?} {path}: {small} → {large}"));
        }
    }
    assert!(
        grown.is_empty(),
        "statements grew with the data: {grown:#?}"
    );
}

/// The plan of `sql` with `value` bound as text, as Tacho binds ids and hashes. On PostgreSQL
/// sequential scans are priced out first, so that the plan uses an index whenever one can
/// serve the comparison (on an empty test table a scan would otherwise win anyway).
async fn plan_with_text(app: &TestApp, sql: &str, value: &str) -> String {
    use sea_orm::{ConnectionTrait, DbBackend, Statement, TransactionTrait};
    let db = app.store.connection();
    let backend = db.get_database_backend();
    let tx = db.begin().await.unwrap();
    let explain = match backend {
        DbBackend::Postgres => {
            tx.execute_unprepared("SET LOCAL enable_seqscan = off")
                .await
                .unwrap();
            "EXPLAIN"
        }
        _ => "EXPLAIN QUERY PLAN",
    };
    let rows = tx
        .query_all_raw(Statement::from_sql_and_values(
            backend,
            format!("{explain} {sql}"),
            [sea_orm::Value::String(Some(value.to_owned()))],
        ))
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    rows.iter()
        .map(|row| {
            let column = match backend {
                DbBackend::Postgres => "QUERY PLAN",
                _ => "detail",
            };
            row.try_get::<String>("", column).unwrap()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn lookups_by_id_and_by_hash_use_their_index() {
    let app = spawn_app().await;
    let id = "6b0a5757f9ecc0b79a5e85d7";
    let hash = "0".repeat(64);
    for (sql, value) in [
        ("SELECT id FROM measurements WHERE id = $1", id),
        ("SELECT id FROM measurements WHERE creator_id = $1", id),
        ("SELECT id FROM notifications WHERE user_id = $1", id),
        (
            "SELECT id FROM shared_links WHERE secret_hash = $1",
            hash.as_str(),
        ),
        (
            "SELECT id FROM access_tokens WHERE token_hash = $1",
            hash.as_str(),
        ),
    ] {
        let plan = plan_with_text(&app, sql, value).await;
        let indexed = match app.store.backend() {
            // An index searched for the value, not read whole with the comparison as a filter.
            sea_orm::DbBackend::Postgres => {
                plan.contains("Index Cond") && !plan.contains("Seq Scan")
            }
            _ => plan.contains("SEARCH") && !plan.contains("SCAN"),
        };
        assert!(indexed, "{sql}:\n{plan}");
    }
    if app.store.backend() == sea_orm::DbBackend::Postgres {
        // No column compares as `character`, which a text parameter would cast past its index.
        use sea_orm::{ConnectionTrait, Statement};
        let db = app.store.connection();
        let fixed = db
            .query_all_raw(Statement::from_string(
                db.get_database_backend(),
                "SELECT table_name || '.' || column_name AS c FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND data_type = 'character'",
            ))
            .await
            .unwrap();
        let fixed: Vec<String> = fixed
            .iter()
            .map(|row| row.try_get::<String>("", "c").unwrap())
            .collect();
        assert!(fixed.is_empty(), "{fixed:?}");
    }
}
