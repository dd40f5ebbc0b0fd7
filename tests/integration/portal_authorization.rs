//! The portal's authorisation matrix: every page and action on the patient `patient` (in group
//! A), by the same five users as the API's matrix (`authorization.rs`). What one may not see is
//! 404; what one sees but may not do is 403. Where the portal and the API offer the same action,
//! both are asked and must give the same answer: there is one set of rules, in the store.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{TestApp, World, spawn_app};
use crate::portal::{Browser, logged_in};

/// What a caller gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Done or shown: 200, or a 303 onwards after a form.
    Ok,
    /// 403.
    Denied,
    /// 404.
    Hidden,
    /// 400: the form was read and its values refused, which only a caller allowed to act sees.
    Refused,
}

use Outcome::{Denied, Hidden, Ok, Refused};

/// The five callers' names, in the order of the expectation arrays below.
const WHO: [&str; 5] = [
    "patient/self",
    "patient/other",
    "staff of the group",
    "staff of another group",
    "admin",
];

/// The outcome a status means; `done` lists the statuses of success (a form's 303 counts in
/// the portal, not in the API).
fn outcome(status: u16, done: &[u16]) -> Option<Outcome> {
    match status {
        403 => Some(Denied),
        404 => Some(Hidden),
        400 => Some(Refused),
        status if done.contains(&status) => Some(Ok),
        _ => None,
    }
}

/// The same action through the JSON API.
struct ApiTwin {
    method: Method,
    path: String,
    body: Option<Value>,
}

struct Case {
    name: &'static str,
    /// `None` for a page (GET), else the form posted.
    form: Option<Vec<(&'static str, String)>>,
    path: String,
    twin: Option<ApiTwin>,
    expect: [Outcome; 5],
}

fn page(name: &'static str, path: String, expect: [Outcome; 5]) -> Case {
    Case {
        name,
        form: None,
        path,
        twin: None,
        expect,
    }
}

fn action(
    name: &'static str,
    path: String,
    form: &[(&'static str, &str)],
    twin: Option<ApiTwin>,
    expect: [Outcome; 5],
) -> Case {
    Case {
        name,
        form: Some(form.iter().map(|(k, v)| (*k, (*v).to_owned())).collect()),
        path,
        twin,
        expect,
    }
}

async fn run(app: &TestApp, world: &World, browsers: &mut [Browser<'_>], case: &Case) {
    let tokens = [
        &world.patient.token,
        &world.other_patient.token,
        &world.staff_a.token,
        &world.staff_b.token,
        &world.admin.token,
    ];
    for (i, browser) in browsers.iter_mut().enumerate() {
        let who = WHO[i];
        let reply = match &case.form {
            None => browser.get(&case.path).await,
            Some(form) => {
                let fields: Vec<(&str, &str)> =
                    form.iter().map(|(k, v)| (*k, v.as_str())).collect();
                browser.post("/portal/account", &case.path, &fields).await
            }
        };
        let status = reply.status.as_u16();
        assert_eq!(
            outcome(status, &[200, 303]),
            Some(case.expect[i]),
            "portal: {} as {who} answered {status}",
            case.name
        );
        if status == 403 || status == 404 {
            assert!(
                reply.body.contains("class=\"error\"") || reply.body.contains("class=\"toast\""),
                "portal: {} as {who} explains the refusal: {}",
                case.name,
                reply.body
            );
        }
        if let Some(twin) = &case.twin {
            let api = app
                .request(
                    twin.method.clone(),
                    &twin.path,
                    Some(tokens[i]),
                    twin.body.clone(),
                )
                .await;
            assert_eq!(
                outcome(api.status.as_u16(), &[200]),
                Some(case.expect[i]),
                "API twin of {} as {who}: {}",
                case.name,
                api.body
            );
        }
    }
}

#[tokio::test]
async fn every_portal_page_and_action_follows_the_matrix() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = world.patient.id.clone();
    let measurement = app.measurement_id(&world.patient, "sinus_72").await;
    let made = app
        .post("/reports/v1", &world.admin.token, json!({"user_id": id}))
        .await;
    let report = made.assert_ok()["id"].as_str().unwrap().to_owned();
    let mut browsers = Vec::new();
    for user in [
        &world.patient,
        &world.other_patient,
        &world.staff_a,
        &world.staff_b,
        &world.admin,
    ] {
        browsers.push(logged_in(&app, user).await);
    }
    let everyone = [Ok; 5];
    let seers = [Ok, Hidden, Ok, Hidden, Ok];
    let admins_of_seen = [Denied, Hidden, Denied, Hidden, Ok];
    let admins = [Denied, Denied, Denied, Denied, Ok];
    let cases = vec![
        page("account", "/portal/account".into(), everyone),
        page("profile", "/portal/profile".into(), everyone),
        page("own measurements", "/portal/measurements".into(), everyone),
        page("own reports", "/portal/reports".into(), everyone),
        page("own trends", "/portal/trends".into(), everyone),
        page(
            "measurement",
            format!("/portal/measurements/{measurement}"),
            seers,
        ),
        page(
            "periodic report PDF",
            format!("/portal/reports/{report}/pdf"),
            seers,
        ),
        page(
            "patients",
            "/portal/patients".into(),
            [Denied, Denied, Ok, Ok, Ok],
        ),
        page(
            "patients by latest result",
            "/portal/patients?result=possible_atrial_fibrillation&sort=result".into(),
            [Denied, Denied, Ok, Ok, Ok],
        ),
        page(
            "work list",
            "/portal/worklist?reason=urgent&q=a".into(),
            [Denied, Denied, Ok, Ok, Ok],
        ),
        page("patient", format!("/portal/patients/{id}"), seers),
        page(
            "patient's trends",
            format!("/portal/patients/{id}/trends"),
            seers,
        ),
        page("admin: users", "/portal/admin/users".into(), admins),
        page("admin: groups", "/portal/admin/groups".into(), admins),
        page("admin: jobs", "/portal/admin/jobs".into(), admins),
        page("admin: audit trail", "/portal/admin/audit".into(), admins),
        action(
            "measurement report",
            format!("/portal/measurements/{measurement}/report"),
            &[],
            Some(ApiTwin {
                method: Method::POST,
                path: "/data/v1/measurement-reports/documents".into(),
                body: Some(json!({"measurementId": measurement})),
            }),
            seers,
        ),
        action(
            "make a shared link",
            format!("/portal/measurements/{measurement}/links"),
            &[("days", "30")],
            None,
            seers,
        ),
        action(
            "review",
            format!("/portal/measurements/{measurement}/review"),
            &[("label", "sinus"), ("note", "checked")],
            Some(ApiTwin {
                method: Method::PUT,
                path: format!("/data/v1/measurements/documents/{measurement}"),
                body: Some(json!({"label": "sinus", "diagnosis": "checked"})),
            }),
            [Denied, Hidden, Ok, Hidden, Ok],
        ),
        action(
            "periodic report now",
            format!("/portal/patients/{id}/reports"),
            &[],
            Some(ApiTwin {
                method: Method::POST,
                path: "/reports/v1".into(),
                body: Some(json!({"user_id": id})),
            }),
            [Denied, Hidden, Ok, Hidden, Ok],
        ),
        action(
            "activate",
            format!("/portal/admin/users/{id}/activation"),
            &[("value", "on")],
            Some(ApiTwin {
                method: Method::PUT,
                path: format!("/users/v1/{id}/activation"),
                body: Some(json!({"activation": true})),
            }),
            admins_of_seen,
        ),
        action(
            "unblock",
            format!("/portal/admin/users/{id}/unblock"),
            &[],
            None,
            admins_of_seen,
        ),
        action(
            "revoke admin",
            format!("/portal/admin/users/{id}/admin"),
            &[("value", "off")],
            Some(ApiTwin {
                method: Method::DELETE,
                path: format!("/users/v1/{id}/roles"),
                body: Some(json!({"roles": ["admin"]})),
            }),
            admins_of_seen,
        ),
        action(
            "create group",
            "/portal/admin/groups".into(),
            &[("name", "Portal group"), ("description", "")],
            Some(ApiTwin {
                method: Method::POST,
                path: "/groups/v1".into(),
                body: Some(json!({"name": "API group"})),
            }),
            admins,
        ),
        action(
            "create user",
            "/portal/admin/users".into(),
            &[
                ("first_name", "New"),
                ("last_name", "User"),
                ("email", "new.user@example.com"),
                ("password", "a long enough password 1"),
                ("language", "EN"),
                ("time_zone", "Europe/Brussels"),
            ],
            None,
            admins,
        ),
        action(
            "enlist",
            "/portal/admin/enlistments".into(),
            &[
                ("email", world.patient.email.as_str()),
                ("group_id", world.group_b.as_str()),
                ("kind", "staff"),
                ("until", ""),
            ],
            None,
            admins,
        ),
    ];
    for case in &cases {
        run(&app, &world, &mut browsers, case).await;
    }

    // Forms whose values are refused: the access rule is asked before the values are judged,
    // so only an administrator learns what was wrong with them.
    let refused = [Denied, Denied, Denied, Denied, Refused];
    let invalid = [
        action(
            "create group without a name",
            "/portal/admin/groups".into(),
            &[("name", " "), ("description", "")],
            None,
            refused,
        ),
        action(
            "create user with a short password",
            "/portal/admin/users".into(),
            &[
                ("first_name", "New"),
                ("last_name", "User"),
                ("email", "short.password@example.com"),
                ("password", "short"),
                ("language", "EN"),
                ("time_zone", "Europe/Brussels"),
            ],
            None,
            refused,
        ),
        action(
            "enlist an unknown address",
            "/portal/admin/enlistments".into(),
            &[
                ("email", "nobody@example.com"),
                ("group_id", world.group_b.as_str()),
                ("kind", "staff"),
                ("until", ""),
            ],
            None,
            refused,
        ),
    ];
    for case in &invalid {
        run(&app, &world, &mut browsers, case).await;
    }
}

#[tokio::test]
async fn administrators_cannot_lock_themselves_out_anywhere() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let admin = &world.admin;
    let mut browser = logged_in(&app, admin).await;
    for (path, value) in [
        (
            format!("/portal/admin/users/{}/activation", admin.id),
            "off",
        ),
        (format!("/portal/admin/users/{}/admin", admin.id), "off"),
        (
            format!("/portal/admin/users/{}/password-reset", admin.id),
            "",
        ),
    ] {
        let page = browser
            .post("/portal/admin/users", &path, &[("value", value)])
            .await;
        assert_eq!(page.status, 403, "{path}: {}", page.body);
        assert!(page.body.contains("your own account"), "{}", page.body);
    }
    let deactivate = app
        .put(
            &format!("/users/v1/{}/activation", admin.id),
            &admin.token,
            json!({"activation": false}),
        )
        .await;
    deactivate.assert_error(403, 10);
    let demote = app
        .request(
            Method::DELETE,
            &format!("/users/v1/{}/roles", admin.id),
            Some(&admin.token),
            Some(json!({"roles": ["admin"]})),
        )
        .await;
    demote.assert_error(403, 10);
    // Still an administrator, still active.
    let me = app.get("/users/v1/me", &admin.token).await;
    assert_eq!(me.assert_ok()["roles"], json!(["admin"]));
    assert_eq!(me.body["activation"], true);
}

#[tokio::test]
async fn portal_access_follows_the_prescription_and_the_documents_groups() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = world.patient.id.clone();
    let before = app.measurement_id(&world.patient, "sinus_72").await;
    // The clock passes the 30-day prescription's end; everyone signs in again.
    app.clock.advance(chrono::Duration::days(31));
    let mut browsers = Vec::new();
    for user in [
        &world.patient,
        &world.other_patient,
        &world.staff_a,
        &world.staff_b,
        &world.admin,
    ] {
        browsers.push(logged_in(&app, user).await);
    }
    let token = app.login(&world.patient.email).await;
    let after = app.upload_with(&token, "sinus_72").await;
    let only_self_and_admin = [Ok, Hidden, Hidden, Hidden, Ok];
    let cases = [
        page(
            "patient after the prescription",
            format!("/portal/patients/{id}"),
            only_self_and_admin,
        ),
        page(
            "measurement shared during the prescription",
            format!("/portal/measurements/{before}"),
            [Ok, Hidden, Ok, Hidden, Ok],
        ),
        page(
            "measurement made after the prescription",
            format!("/portal/measurements/{after}"),
            only_self_and_admin,
        ),
    ];
    for case in &cases {
        run(&app, &world, &mut browsers, case).await;
    }
}
