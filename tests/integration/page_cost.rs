//! What a page costs the database does not grow with the data: every list of the portal and
//! the API is asked for at two clinic sizes and must run the same number of SQL statements.

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
