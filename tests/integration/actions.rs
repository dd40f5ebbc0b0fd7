//! One action, two doors: every action that both the JSON API and the portal offer is taken
//! through each, and both must give the same outcome and leave the same audit record (`src/
//! actions/`). Then the defects the actions layer fixed: one rule per field, the report the
//! portal hands out, sessions ended wherever they live.

use reqwest::Method;
use serde_json::{Value, json};
use tacho::domain::id::Id;
use tacho::store::Viewer;

use crate::helpers::{TestApp, TestUser, World, spawn_app, spawn_app_with};
use crate::portal::{Browser, logged_in};

/// An audit record without its id and time: what both doors must agree on. `object` is left
/// out for actions that create their object (each door creates its own).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    actor: String,
    action: String,
    patient: Option<String>,
    kind: String,
    object: Option<String>,
    detail: String,
}

/// The records appended since `seen` records were there, oldest first.
async fn records_since(app: &TestApp, seen: u64) -> (Vec<Record>, u64) {
    let admin = Viewer {
        user_id: Id::generate(),
        admin: true,
    };
    let (events, total) = app
        .store
        .audit_page(&admin, &Default::default(), 0, 1000)
        .await
        .expect("the audit trail");
    let fresh = events.len().min((total - seen) as usize);
    let mut records: Vec<Record> = events[..fresh]
        .iter()
        .map(|e| Record {
            actor: e.actor_id.to_string(),
            action: e.action.clone(),
            patient: e.patient_id.map(|id| id.to_string()),
            kind: e.object_kind.clone(),
            object: e.object_id.map(|id| id.to_string()),
            detail: e.detail.clone(),
        })
        .collect();
    records.reverse();
    (records, total)
}

async fn audit_total(app: &TestApp) -> u64 {
    let admin = Viewer {
        user_id: Id::generate(),
        admin: true,
    };
    let (_, total) = app
        .store
        .audit_page(&admin, &Default::default(), 0, 0)
        .await
        .unwrap();
    total
}

/// One action through the API and then through the portal.
struct Twin<'a> {
    name: &'a str,
    api: (Method, String, Option<Value>),
    /// The portal's page the form sits on, the form's target and its fields; no form means a
    /// page read (GET of `target`).
    portal: (&'a str, String, Option<Vec<(&'a str, String)>>),
    /// Whether the action creates its object (the two records then name different objects,
    /// and their details differ as those do: two groups cannot share a name).
    creates: bool,
    /// Whether the portal goes first (its report button hands out the document the API
    /// made, so it makes one only when it is first).
    portal_first: bool,
}

/// Takes `twin` through both doors as `user`, checks both succeeded, and returns each door's
/// records.
async fn both_doors(
    app: &TestApp,
    user: &TestUser,
    browser: &mut Browser<'_>,
    twin: &Twin<'_>,
) -> (Vec<Record>, Vec<Record>) {
    let (method, path, body) = &twin.api;
    let (from, target, form) = &twin.portal;
    let mut records = Vec::new();
    let doors = if twin.portal_first {
        [false, true]
    } else {
        [true, false]
    };
    for api_door in doors {
        let before = audit_total(app).await;
        if api_door {
            let api = app
                .request(method.clone(), path, Some(&user.token), body.clone())
                .await;
            assert_eq!(api.status, 200, "API: {}: {}", twin.name, api.body);
        } else {
            let page = match form {
                None => browser.get(target).await,
                Some(fields) => {
                    let fields: Vec<(&str, &str)> =
                        fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
                    browser.post(from, target, &fields).await
                }
            };
            assert!(
                [200, 303].contains(&page.status.as_u16()),
                "portal: {}: {} {}",
                twin.name,
                page.status,
                page.body
            );
        }
        records.push((api_door, records_since(app, before).await.0));
    }
    records.sort_by_key(|(api_door, _)| !api_door);
    let [(_, api_records), (_, portal_records)] = <[_; 2]>::try_from(records).expect("two doors");
    let strip = |records: Vec<Record>| -> Vec<Record> {
        records
            .into_iter()
            .map(|r| Record {
                object: if twin.creates { None } else { r.object },
                detail: if twin.creates {
                    String::new()
                } else {
                    r.detail
                },
                ..r
            })
            .collect()
    };
    (strip(api_records), strip(portal_records))
}

fn form(fields: &[(&'static str, &str)]) -> Option<Vec<(&'static str, String)>> {
    Some(fields.iter().map(|(k, v)| (*k, (*v).to_owned())).collect())
}

#[tokio::test]
async fn every_action_of_both_doors_has_one_outcome_and_one_audit_record() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let patient = world.patient.id.clone();
    let other = world.other_patient.id.clone();
    let staff_b = world.staff_b.id.clone();
    let measurement = app.measurement_id(&world.patient, "sinus_72").await;
    let mut staff = logged_in(&app, &world.staff_a).await;
    let mut admin = logged_in(&app, &world.admin).await;
    let mut own = logged_in(&app, &world.patient).await;
    let report = app
        .post(
            "/reports/v1",
            &world.admin.token,
            json!({"user_id": patient}),
        )
        .await
        .assert_ok_id();

    let staff_twins = [
        Twin {
            name: "measurement report",
            api: (
                Method::POST,
                "/data/v1/measurement-reports/documents".into(),
                Some(json!({"measurementId": measurement, "language": "en"})),
            ),
            portal: (
                "/portal/patients",
                format!("/portal/measurements/{measurement}/report"),
                form(&[("then", "share")]),
            ),
            creates: false,
            portal_first: true,
        },
        Twin {
            name: "read a measurement",
            api: (
                Method::GET,
                format!("/data/v1/measurements/documents/{measurement}"),
                None,
            ),
            portal: ("", format!("/portal/measurements/{measurement}"), None),
            creates: false,
            portal_first: false,
        },
        Twin {
            name: "read a patient's profile",
            api: (Method::GET, format!("/profiles/v1/{patient}"), None),
            portal: ("", format!("/portal/patients/{patient}"), None),
            creates: false,
            portal_first: false,
        },
        Twin {
            name: "review",
            api: (
                Method::PUT,
                format!("/data/v1/measurements/documents/{measurement}"),
                Some(json!({"label": "sinus", "diagnosis": "checked"})),
            ),
            portal: (
                "/portal/patients",
                format!("/portal/measurements/{measurement}/review"),
                form(&[("label", "sinus"), ("note", "checked")]),
            ),
            creates: false,
            portal_first: false,
        },
        Twin {
            name: "manual periodic report",
            api: (
                Method::POST,
                "/reports/v1".into(),
                Some(json!({"user_id": patient})),
            ),
            portal: (
                "/portal/patients",
                format!("/portal/patients/{patient}/reports"),
                form(&[]),
            ),
            creates: true,
            portal_first: false,
        },
        Twin {
            name: "periodic report PDF",
            api: (
                Method::GET,
                format!("/reports/v1/{report}/pdf?language=en"),
                None,
            ),
            portal: ("", format!("/portal/reports/{report}/pdf"), None),
            creates: false,
            portal_first: false,
        },
    ];
    let admin_twins = [
        Twin {
            name: "deactivate",
            api: (
                Method::PUT,
                format!("/users/v1/{other}/activation"),
                Some(json!({"activation": false})),
            ),
            portal: (
                "/portal/admin/users",
                format!("/portal/admin/users/{other}/activation"),
                form(&[("value", "off")]),
            ),
            creates: false,
            portal_first: false,
        },
        Twin {
            name: "activate",
            api: (
                Method::PUT,
                format!("/users/v1/{other}/activation"),
                Some(json!({"activation": true})),
            ),
            portal: (
                "/portal/admin/users",
                format!("/portal/admin/users/{other}/activation"),
                form(&[("value", "on")]),
            ),
            creates: false,
            portal_first: false,
        },
        Twin {
            name: "grant admin",
            api: (
                Method::POST,
                format!("/users/v1/{staff_b}/roles"),
                Some(json!({"roles": ["admin"]})),
            ),
            portal: (
                "/portal/admin/users",
                format!("/portal/admin/users/{staff_b}/admin"),
                form(&[("value", "on")]),
            ),
            creates: false,
            portal_first: false,
        },
        Twin {
            name: "revoke admin",
            api: (
                Method::DELETE,
                format!("/users/v1/{staff_b}/roles"),
                Some(json!({"roles": ["admin"]})),
            ),
            portal: (
                "/portal/admin/users",
                format!("/portal/admin/users/{staff_b}/admin"),
                form(&[("value", "off")]),
            ),
            creates: false,
            portal_first: false,
        },
        Twin {
            name: "create group",
            api: (
                Method::POST,
                "/groups/v1".into(),
                Some(json!({"name": "Night team", "description": "after hours"})),
            ),
            portal: (
                "/portal/admin/groups",
                "/portal/admin/groups".into(),
                // Another name: a group's name is its own.
                form(&[("name", "Evening team"), ("description", "after hours")]),
            ),
            creates: true,
            portal_first: false,
        },
        Twin {
            name: "staff enlistment",
            api: (
                Method::POST,
                format!("/users/v1/{other}/staff_enlistments"),
                Some(json!({"group_id": world.group_b})),
            ),
            portal: (
                "/portal/admin/groups",
                "/portal/admin/enlistments".into(),
                form(&[
                    ("email", &world.other_patient.email),
                    ("group_id", &world.group_b),
                    ("kind", "staff"),
                    ("until", ""),
                ]),
            ),
            creates: false,
            portal_first: false,
        },
    ];
    let own_twins = [Twin {
        name: "account settings",
        api: (
            Method::PUT,
            format!("/users/v1/{patient}"),
            Some(json!({"language": "DE", "time_zone": "Europe/Berlin"})),
        ),
        portal: (
            "/portal/account",
            "/portal/account/settings".into(),
            form(&[("language", "DE"), ("time_zone", "Europe/Berlin")]),
        ),
        creates: false,
        portal_first: false,
    }];

    let mut checked = Vec::new();
    for (user, browser, twins) in [
        (&world.staff_a, &mut staff, &staff_twins[..]),
        (&world.admin, &mut admin, &admin_twins[..]),
        (&world.patient, &mut own, &own_twins[..]),
    ] {
        for twin in twins {
            let (api, portal) = both_doors(&app, user, browser, twin).await;
            // A portal page may show more than the one object (the patient page shows the
            // account, the measurements and the reports besides the profile), and records
            // each read; the action's own record is the same through both doors.
            let portal: Vec<Record> = portal
                .into_iter()
                .filter(|r| api.iter().any(|a| a.action == r.action))
                .collect();
            assert!(
                !api.is_empty(),
                "{}: the API left no audit record",
                twin.name
            );
            assert_eq!(api, portal, "{}: the two doors' audit records", twin.name);
            assert!(
                api.iter().all(|r| r.actor == user.id),
                "{}: {api:?}",
                twin.name
            );
            checked.push((twin.name, api[0].action.clone()));
        }
    }
    let actions: Vec<&str> = checked.iter().map(|(_, a)| a.as_str()).collect();
    assert_eq!(
        actions,
        [
            "report.create",
            "measurement.view",
            "profile.view",
            "measurement.review",
            "report.create",
            "report.download",
            "user.deactivate",
            "user.activate",
            "user.roles",
            "user.roles",
            "group.create",
            "enlistment.staff",
            "account.update",
        ]
    );
}

/// Takes a prescription through both doors: the portal's form names the last day in the
/// administrator's zone, the API the instant it ends; the same end gives the same record.
#[tokio::test]
async fn a_prescription_has_one_outcome_and_one_record_through_both_doors() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let patient_b = world.patient_b.id.clone();
    let mut admin = logged_in(&app, &world.admin).await;
    let before = audit_total(&app).await;
    let page = admin
        .post(
            "/portal/admin/groups",
            "/portal/admin/enlistments",
            &[
                ("email", &world.patient_b.email),
                ("group_id", &world.group_a),
                ("kind", "patient"),
                ("until", "2031-01-31"),
            ],
        )
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    let (portal, middle) = records_since(&app, before).await;
    // The prescription that starts records the patient's consent to sharing with the group;
    // the API's call below, to the same end, extends it and asks for no new consent.
    let (consent, portal): (Vec<Record>, Vec<Record>) =
        portal.into_iter().partition(|r| r.action == "consent.give");
    assert_eq!(consent.len(), 1, "{consent:?}");
    let record = app
        .get(&format!("/users/v1/{patient_b}"), &world.admin.token)
        .await;
    let expiry = record.assert_ok()["patient_enlistments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["group_id"] == world.group_a.as_str())
        .expect("the prescription")["expiry_timestamp"]
        .as_i64()
        .unwrap();
    // The last day runs to midnight in Brussels, the administrator's zone (UTC+1 in winter).
    assert_eq!(expiry, 1_927_666_800_000);
    app.post(
        &format!("/users/v1/{patient_b}/patient_enlistments"),
        &world.admin.token,
        json!({"group_id": world.group_a, "expiry_timestamp": expiry}),
    )
    .await
    .assert_ok();
    let (api, _) = records_since(&app, middle).await;
    let api: Vec<Record> = api
        .into_iter()
        .filter(|r| r.action != "user.view")
        .collect();
    assert_eq!(portal, api);
    assert_eq!(portal[0].action, "enlistment.patient");
    assert_eq!(portal[0].patient.as_deref(), Some(patient_b.as_str()));
    // Shown as ending on its last day, not on the midnight after it.
    let groups = admin.get("/portal/admin/groups").await;
    assert!(groups.body.contains("31/01/2031"), "{}", groups.body);
    assert!(!groups.body.contains("01/02/2031"), "{}", groups.body);
    let account = logged_in(&app, &world.patient_b)
        .await
        .get("/portal/account")
        .await;
    assert!(account.body.contains("31/01/2031"), "{}", account.body);
    assert!(!account.body.contains("01/02/2031"), "{}", account.body);
}

#[tokio::test]
async fn a_group_description_follows_one_rule_in_both_doors() {
    let app = spawn_app().await;
    let admin = app.admin("admin").await;
    let mut browser = logged_in(&app, &admin).await;
    let long = "d".repeat(1500);
    let created = browser
        .post(
            "/portal/admin/groups",
            "/portal/admin/groups",
            &[("name", "Long story"), ("description", &long)],
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let groups = app
        .get("/groups/v1?eq(name,Long%20story)", &admin.token)
        .await;
    assert_eq!(
        groups.assert_ok()["data"][0]["description"],
        long.as_str(),
        "the portal keeps the whole description, as the API does"
    );
    let too_long = "d".repeat(2001);
    let refused = browser
        .post(
            "/portal/admin/groups",
            "/portal/admin/groups",
            &[("name", "Too long"), ("description", &too_long)],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    app.post(
        "/groups/v1",
        &admin.token,
        json!({"name": "Too long", "description": too_long}),
    )
    .await
    .assert_error(400, 15);
    let none = app
        .get("/groups/v1?eq(name,Too%20long)", &admin.token)
        .await;
    assert_eq!(none.assert_ok()["data"], json!([]));
}

#[tokio::test]
async fn the_latest_birthday_is_the_same_for_both_doors() {
    let app = spawn_app().await;
    let user = app.user("birthday").await;
    // Late on 1 March in UTC, it is already 2 March on the Line Islands (UTC+14).
    app.clock.set(
        chrono::DateTime::parse_from_rfc3339("2026-03-01T20:00:00Z")
            .unwrap()
            .to_utc(),
    );
    let path = format!("/profiles/v1?id={}", user.id);
    app.put(&path, &user.token, json!({"birthday": "2026-03-02"}))
        .await
        .assert_ok();
    app.put(&path, &user.token, json!({"birthday": "2026-03-03"}))
        .await
        .assert_error(400, 15);
    let mut browser = logged_in(&app, &user).await;
    for (day, accepted) in [("2026-03-02", true), ("2026-03-03", false)] {
        let page = browser
            .post("/portal/profile", "/portal/profile", &[("birthday", day)])
            .await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert_eq!(
            !page.body.contains("id=\"birthday-error\""),
            accepted,
            "{day}: {}",
            page.body
        );
    }
}

#[tokio::test]
async fn the_portal_hands_out_a_report_only_in_the_readers_language() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let measurement = app.measurement_id(&world.patient, "sinus_72").await;
    let mut staff = logged_in(&app, &world.staff_a).await;
    let report_of = |page: &crate::portal::Page| page.location().to_owned();
    let path = format!("/portal/measurements/{measurement}/report");
    let first = staff.post("/portal/patients", &path, &[]).await;
    let again = staff.post("/portal/patients", &path, &[]).await;
    assert_eq!(
        report_of(&first),
        report_of(&again),
        "reused in the same language"
    );
    // The physician now reads in French: the English report is not handed out.
    app.put(
        &format!("/users/v1/{}", world.staff_a.id),
        &world.staff_a.token,
        json!({"language": "FR"}),
    )
    .await
    .assert_ok();
    let french = staff.post("/portal/patients", &path, &[]).await;
    assert_ne!(report_of(&first), report_of(&french));
    let documents = app
        .get(
            &format!(
                "/data/v1/measurement-reports/documents?sort(-id)&eq(data.measurementId,{measurement})"
            ),
            &world.staff_a.token,
        )
        .await;
    let languages: Vec<&str> = documents.assert_ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["data"]["language"].as_str().unwrap())
        .collect();
    assert_eq!(languages, ["fr", "en"]);
}

#[tokio::test]
async fn a_concurrent_change_is_explained_by_both_doors() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let measurement = app.measurement_id(&world.patient, "sinus_72").await;
    // A measurement without results cannot be reviewed: the same refusal through both doors.
    let bare = app
        .post(
            "/data/v1/measurements/documents",
            &world.patient.token,
            json!({"measurement_timestamp": 1_700_000_000_000_i64}),
        )
        .await;
    let bare = bare.assert_ok()["id"].as_str().unwrap().to_owned();
    app.put(
        &format!("/data/v1/measurements/documents/{bare}"),
        &world.staff_a.token,
        json!({"label": "sinus"}),
    )
    .await
    .assert_error(400, 27);
    let mut staff = logged_in(&app, &world.staff_a).await;
    let page = staff
        .post(
            "/portal/patients",
            &format!("/portal/measurements/{bare}/review"),
            &[("label", "sinus"), ("note", "")],
        )
        .await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("no results"), "{}", page.body);
    // A change that lost a race: the store says so, and neither door calls it "not found".
    let err = tacho::store::StoreError::Changed;
    let api: tacho::routes::api::error::ApiError = err.into();
    assert_eq!(
        api.to_string(),
        "the object changed meanwhile; read it again and retry"
    );
    let web: tacho::routes::web::error::WebError = tacho::store::StoreError::Changed.into();
    assert_eq!(web.message_key(), "error-changed-meanwhile");
    assert_eq!(
        actix_web::ResponseError::status_code(&web).as_u16(),
        409,
        "{measurement}"
    );
}

/// Deactivation ends the user's portal sessions wherever they live: the `sessions` table, or
/// Redis (`TEST_REDIS_URL`, by default the local server, which `scripts/test` starts).
#[tokio::test]
async fn deactivation_ends_portal_sessions_in_the_database_and_in_redis() {
    let url = std::env::var("TEST_REDIS_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "redis://127.0.0.1:6379".into());
    for redis in [None, Some(url)] {
        let app = spawn_app_with(|s| s.redis_url = redis.clone().map(Into::into)).await;
        assert_eq!(app.state.sessions.is_redis(), redis.is_some());
        let admin = app.admin("admin").await;
        let user = app.user("leaver").await;
        let mut browser = logged_in(&app, &user).await;
        assert_eq!(browser.get("/portal/account").await.status, 200);
        for active in [false, true] {
            app.put(
                &format!("/users/v1/{}/activation", user.id),
                &admin.token,
                json!({"activation": active}),
            )
            .await
            .assert_ok();
        }
        // Active again, but the session that was open is gone: log in anew.
        let page = browser.get("/portal/account").await;
        assert_eq!(page.status, 303, "redis: {redis:?}");
        assert!(
            page.location().contains("/portal/login"),
            "{}",
            page.location()
        );
    }
}

trait OkId {
    fn assert_ok_id(&self) -> String;
}

impl OkId for crate::helpers::Reply {
    fn assert_ok_id(&self) -> String {
        self.assert_ok()["id"].as_str().unwrap().to_owned()
    }
}

#[tokio::test]
async fn a_login_is_recorded_alike_through_both_doors() {
    let app = spawn_app().await;
    let user = app.user("visitor").await;
    let before = audit_total(&app).await;
    app.password_grant(&user.email, crate::helpers::PASSWORD)
        .await
        .assert_ok();
    let (api, middle) = records_since(&app, before).await;
    let mut browser = Browser::new(&app);
    let page = browser.login(&user.email, crate::helpers::PASSWORD).await;
    assert_eq!(page.status, 303, "{}", page.body);
    let (portal, _) = records_since(&app, middle).await;
    assert_eq!(api, portal);
    assert_eq!(api.len(), 1);
    assert_eq!(
        (api[0].action.as_str(), api[0].actor.as_str()),
        ("session.login", user.id.as_str())
    );
    assert_eq!(api[0].detail, "from 127.0.0.0/24");
    // A refused login is recorded alike through either door: by no one, about the account,
    // with the client's network and never the address typed.
    let before = audit_total(&app).await;
    app.password_grant(&user.email, "not the password").await;
    let (api, middle) = records_since(&app, before).await;
    Browser::new(&app)
        .login(&user.email, "not the password")
        .await;
    let (portal, _) = records_since(&app, middle).await;
    assert_eq!(api.len(), 1);
    assert_eq!(api[0].action, portal[0].action);
    assert_eq!(api[0].patient, portal[0].patient);
    assert_eq!(
        (
            api[0].action.as_str(),
            api[0].actor.as_str(),
            api[0].patient.as_deref(),
            api[0].detail.as_str()
        ),
        (
            "session.login.failed",
            "000000000000000000000000",
            Some(user.id.as_str()),
            "from 127.0.0.0/24: invalid credentials"
        )
    );
    // An address no account has is recorded without one.
    let before = audit_total(&app).await;
    app.password_grant("nobody@example.com", "whatever it is")
        .await;
    let (unknown, _) = records_since(&app, before).await;
    assert_eq!(unknown.len(), 1);
    assert_eq!(unknown[0].patient, None);
    assert!(!format!("{unknown:?}").contains("nobody"));
}
