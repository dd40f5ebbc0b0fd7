//! One test per way past the access rules that a security review found, each reproducing the
//! finding and showing it closed: reports list only what their group sees, the portal's
//! patient list reads through the same gate, access granted by a staff place or a prescription
//! ends with it (app tokens, shared links, inbox entries), and an account's pending links end
//! with every remedy; then the lesser findings: common passwords, private webhook addresses,
//! the login throttle's key, and audited portal lists.

use std::net::IpAddr;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tacho::domain::id::Id;
use tacho::store::AuditFilter;

use crate::accounts::{link_in, mail_to};
use crate::helpers::{PASSWORD, TestApp, TestUser, pdf_text, spawn_app, spawn_app_with};
use crate::notifications::notifying_app;
use crate::portal::{Browser, logged_in};
use crate::shared_links::make_link;

const DAY: i64 = 86_400_000;

/// Two clinics, Ghent and Lyon, each with a physician, and an administrator.
struct Clinics {
    admin: TestUser,
    ghent: String,
    lyon: String,
    ghent_doctor: TestUser,
    lyon_doctor: TestUser,
}

async fn clinics(app: &TestApp) -> Clinics {
    let admin = app.admin("admin").await;
    let ghent = app.group(&admin, "Ghent").await;
    let lyon = app.group(&admin, "Lyon").await;
    let ghent_doctor = app.user("ghentdoctor").await;
    let lyon_doctor = app.user("lyondoctor").await;
    app.enlist_staff(&admin, &ghent_doctor, &ghent).await;
    app.enlist_staff(&admin, &lyon_doctor, &lyon).await;
    Clinics {
        admin,
        ghent,
        lyon,
        ghent_doctor,
        lyon_doctor,
    }
}

fn ids_of(report: &Value) -> Vec<String> {
    report["data"]["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn inbox(app: &TestApp, user: &TestUser) -> Vec<Value> {
    app.get("/notifications/v1?limit(50)", &user.token)
        .await
        .assert_ok()["data"]
        .as_array()
        .unwrap()
        .clone()
}

/// Finding 1: a manual periodic report listed measurements its maker may not see, and was
/// announced to the other clinic.
#[tokio::test]
async fn a_manual_report_lists_only_what_its_maker_and_its_group_see() {
    let app = spawn_app().await;
    let c = clinics(&app).await;
    let patient = app.user("twoclinics").await;
    app.enlist_patient(&c.admin, &patient, &c.lyon).await;
    let now = app.clock_millis();
    // Lyon's measurement: 113 bpm, a figure nothing else in the report prints.
    let in_lyon = app
        .measure_at(&patient, now - 2 * DAY, 113.0, "tachycardia", &[])
        .await;
    app.enlist_patient(&c.admin, &patient, &c.ghent).await;
    app.clock.advance(chrono::Duration::minutes(1));
    let in_both = app
        .measure_at(&patient, now - DAY, 64.0, "normal", &[])
        .await;
    app.work_queue().await;
    app.get(
        &format!("/data/v1/measurements/documents/{in_lyon}"),
        &c.ghent_doctor.token,
    )
    .await
    .assert_error(404, 16);

    let made = app
        .post(
            "/reports/v1",
            &c.ghent_doctor.token,
            json!({"user_id": patient.id, "period_start_timestamp": now - 30 * DAY}),
        )
        .await;
    let report = made.assert_ok().clone();
    assert_eq!(ids_of(&report), std::slice::from_ref(&in_both), "{report}");
    assert_eq!(report["group_id"], c.ghent.as_str());
    let id = report["id"].as_str().unwrap();
    let pdf = app
        .client
        .get(app.url(&format!("/reports/v1/{id}/pdf")))
        .bearer_auth(&c.ghent_doctor.token)
        .send()
        .await
        .unwrap();
    assert_eq!(pdf.headers()["cache-control"], "no-store");
    let text = pdf_text(&pdf.bytes().await.unwrap());
    assert!(text.contains("64"), "{text}");
    assert!(
        !text.contains("113"),
        "the Lyon measurement is not printed: {text}"
    );

    // Announced to the patient and to Ghent's staff; Lyon's physician neither hears of it
    // nor sees it.
    app.work_queue().await;
    let about = |items: &[Value]| items.iter().any(|n| n["report_id"] == id);
    assert!(about(&inbox(&app, &patient).await));
    assert!(!about(&inbox(&app, &c.lyon_doctor).await));
    app.get(&format!("/reports/v1/{id}"), &c.lyon_doctor.token)
        .await
        .assert_error(404, 16);

    // A physician of both clinics names the group; the report lists that group's share.
    let both = app.user("bothdoctor").await;
    app.enlist_staff(&c.admin, &both, &c.ghent).await;
    app.enlist_staff(&c.admin, &both, &c.lyon).await;
    let unnamed = app
        .post("/reports/v1", &both.token, json!({"user_id": patient.id}))
        .await;
    unnamed.assert_error(400, 15);
    assert!(
        unnamed.body["message"]
            .as_str()
            .unwrap()
            .contains("group_id")
    );
    let for_lyon = app
        .post(
            "/reports/v1",
            &both.token,
            json!({"user_id": patient.id, "group_id": c.lyon, "period_start_timestamp": now - 30 * DAY}),
        )
        .await;
    let mut listed = ids_of(for_lyon.assert_ok());
    listed.sort();
    let mut expected = vec![in_lyon, in_both];
    expected.sort();
    assert_eq!(listed, expected);
    // The portal asks the same physician which group, and makes the report for the one chosen.
    let mut portal = logged_in(&app, &both).await;
    let page = portal
        .get(&format!("/portal/patients/{}", patient.id))
        .await;
    assert!(
        page.body.contains("id=\"report-group\""),
        "a choice of group"
    );
    assert!(page.body.contains(&format!("value=\"{}\"", c.lyon)));
    let trends = portal
        .get(&format!(
            "/portal/patients/{}/trends?period=month&group={}",
            patient.id, c.lyon
        ))
        .await;
    assert!(
        trends
            .body
            .contains(&format!("name=\"group\" value=\"{}\"", c.lyon))
    );
    let made = portal
        .post(
            &format!("/portal/patients/{}", patient.id),
            &format!("/portal/patients/{}/reports", patient.id),
            &[("period", "week"), ("group", c.lyon.as_str())],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let unnamed = portal
        .post(
            &format!("/portal/patients/{}", patient.id),
            &format!("/portal/patients/{}/reports", patient.id),
            &[("period", "week")],
        )
        .await;
    assert_eq!(unnamed.status, 400);
    assert!(
        unnamed.body.contains("Choose the group"),
        "{}",
        unnamed.body
    );
    let listed = app
        .get(
            "/reports/v1?sort(-creation_timestamp)&limit(1)",
            &both.token,
        )
        .await;
    assert_eq!(listed.assert_ok()["data"][0]["group_id"], c.lyon.as_str());
    // A group through which the maker does not see the patient is refused.
    let elsewhere = app.group(&c.admin, "Elsewhere").await;
    app.post(
        "/reports/v1",
        &c.ghent_doctor.token,
        json!({"user_id": patient.id, "group_id": elsewhere}),
    )
    .await
    .assert_error(400, 15);
}

/// Finding 2: scheduled reports belonged to the patient, listing every clinic's measurements
/// to every clinic.
#[tokio::test]
async fn a_scheduled_report_belongs_to_its_prescription() {
    let app = spawn_app().await;
    let c = clinics(&app).await;
    let patient = app.user("twoprescriptions").await;
    app.enlist_patient(&c.admin, &patient, &c.lyon).await;
    app.clock.advance(chrono::Duration::minutes(10));
    let lyon_only = app
        .measure_at(&patient, app.clock_millis(), 66.0, "normal", &[])
        .await;
    app.clock.advance(chrono::Duration::minutes(10));
    app.enlist_patient(&c.admin, &patient, &c.ghent).await;
    app.clock.advance(chrono::Duration::minutes(10));
    let shared = app
        .measure_at(&patient, app.clock_millis(), 68.0, "normal", &[])
        .await;
    app.clock.advance(chrono::Duration::days(8));
    app.scheduler().run_due(|_| {}).await.unwrap();
    // A week later, with logins of now.
    let patient = TestUser {
        token: app.login(&patient.email).await,
        ..patient
    };
    let c = Clinics {
        ghent_doctor: TestUser {
            token: app.login(&c.ghent_doctor.email).await,
            ..c.ghent_doctor
        },
        lyon_doctor: TestUser {
            token: app.login(&c.lyon_doctor.email).await,
            ..c.lyon_doctor
        },
        ..c
    };

    let weekly = |reports: &Value, group: &str| -> Vec<Value> {
        reports["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["trigger"] == "PERIOD_DAYS_PASSED_7" && r["group_id"] == group)
            .cloned()
            .collect()
    };
    let mine = app
        .get("/reports/v1?limit(50)", &patient.token)
        .await
        .assert_ok()
        .clone();
    let (lyon_week, ghent_week) = (weekly(&mine, &c.lyon), weekly(&mine, &c.ghent));
    assert_eq!(lyon_week.len(), 1, "{mine}");
    assert_eq!(ghent_week.len(), 1, "{mine}");
    let mut lyon_ids = ids_of(&lyon_week[0]);
    lyon_ids.sort();
    let mut expected = vec![lyon_only.clone(), shared.clone()];
    expected.sort();
    assert_eq!(lyon_ids, expected);
    assert_eq!(ids_of(&ghent_week[0]), [shared]);

    // Each clinic sees its own reports only.
    let ghent_sees = app
        .get("/reports/v1?limit(50)", &c.ghent_doctor.token)
        .await
        .assert_ok()
        .clone();
    let groups: Vec<&Value> = ghent_sees["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["group_id"])
        .collect();
    assert!(!groups.is_empty() && groups.iter().all(|g| **g == c.ghent.as_str()));
    assert!(!ghent_sees.to_string().contains(&lyon_only));
    let lyon_report = lyon_week[0]["id"].as_str().unwrap();
    app.get(&format!("/reports/v1/{lyon_report}"), &c.ghent_doctor.token)
        .await
        .assert_error(404, 16);
    app.get(&format!("/reports/v1/{lyon_report}"), &c.lyon_doctor.token)
        .await
        .assert_ok();
}

/// Finding 3: the portal's patient list showed each patient's latest measurement, whoever
/// could see it, and filtered and sorted by its result.
#[tokio::test]
async fn the_patient_list_shows_only_the_latest_measurement_its_reader_sees() {
    let app = spawn_app().await;
    let c = clinics(&app).await;
    let patient = app.user("listedpatient").await;
    app.enlist_patient(&c.admin, &patient, &c.lyon).await;
    let now = app.clock_millis();
    let in_lyon = app
        .measure_at(&patient, now - DAY, 92.0, "irregular", &[])
        .await;
    app.enlist_patient(&c.admin, &patient, &c.ghent).await;

    let mut ghent = logged_in(&app, &c.ghent_doctor).await;
    let list = ghent.get("/portal/patients").await;
    assert_eq!(list.status, 200);
    assert!(list.body.contains("listedpatient"), "the patient is listed");
    assert!(!list.body.contains(&in_lyon), "{}", list.body);
    let filtered = ghent
        .get("/portal/patients?result=possible_atrial_fibrillation")
        .await;
    assert!(
        !filtered.body.contains("listedpatient"),
        "{}",
        filtered.body
    );
    let mut lyon = logged_in(&app, &c.lyon_doctor).await;
    let theirs = lyon
        .get("/portal/patients?result=possible_atrial_fibrillation")
        .await;
    assert!(theirs.body.contains("listedpatient"));
    assert!(theirs.body.contains(&in_lyon));

    // Sorted by result, Ghent's list ranks the patient as one without measurements.
    let quiet = app.user("quietpatient").await;
    app.enlist_patient(&c.admin, &quiet, &c.ghent).await;
    app.measure_at(&quiet, now - DAY, 70.0, "normal", &[]).await;
    let sorted = ghent.get("/portal/patients?sort=result").await;
    let (first, second) = (
        sorted.body.find("quietpatient").unwrap(),
        sorted.body.find("listedpatient").unwrap(),
    );
    assert!(first < second, "a measured patient first: {}", sorted.body);
}

async fn download(app: &TestApp, path: &str) -> (u16, String) {
    let answer = app.client.get(app.url(path)).send().await.unwrap();
    let cache = answer
        .headers()
        .get("cache-control")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (answer.status().as_u16(), cache)
}

fn share_path(address: &str) -> String {
    address[address.find("/share/").unwrap()..].to_owned()
}

async fn token_of(app: &TestApp, reader: &TestUser, document: &str) -> String {
    app.get(
        &format!("/data/v1/measurement-reports/documents/{document}"),
        &reader.token,
    )
    .await
    .assert_ok()["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Finding 4: an app token or a shared link outlived the access of whoever got it.
#[tokio::test]
async fn app_tokens_and_shared_links_end_with_the_staff_place_and_the_prescription() {
    let app = spawn_app().await;
    let c = clinics(&app).await;
    let patient = app.user("sharedpatient").await;
    app.enlist_patient(&c.admin, &patient, &c.ghent).await;
    let leaving = app.user("leavingdoctor").await;
    app.enlist_staff(&c.admin, &leaving, &c.ghent).await;
    let measurement = app.measurement_id(&patient, "sinus_72").await;
    let document = app.report(&leaving, &measurement, Some("en")).await;
    let document = document.assert_ok()["id"].as_str().unwrap().to_owned();
    let copied = token_of(&app, &leaving, &document).await;
    let file = format!("/files/v1/{copied}/file");
    assert_eq!(download(&app, &file).await, (200, "no-store".into()));
    let mut browser = logged_in(&app, &leaving).await;
    let (address, _) = make_link(&mut browser, &measurement, "365").await;
    let link = share_path(&address);
    assert_eq!(download(&app, &link).await.0, 200);

    // The physician leaves Ghent: its copied token and its link open nothing from now on.
    app.delete(
        &format!("/users/v1/{}/staff_enlistments/{}", leaving.id, c.ghent),
        &c.admin.token,
        None,
    )
    .await
    .assert_ok();
    app.get(
        &format!("/data/v1/measurements/documents/{measurement}"),
        &leaving.token,
    )
    .await
    .assert_error(404, 16);
    assert_eq!(download(&app, &file).await.0, 404);
    assert_eq!(download(&app, &link).await.0, 404);
    // The patient's app reads the document again and finds the token that works now.
    let renewed = token_of(&app, &patient, &document).await;
    assert_ne!(renewed, copied);
    assert_eq!(
        download(&app, &format!("/files/v1/{renewed}/file")).await,
        (200, "no-store".into())
    );

    // Ending the prescription ends what Ghent's staff handed out for the patient.
    let mut ghent = logged_in(&app, &c.ghent_doctor).await;
    let (address, _) = make_link(&mut ghent, &measurement, "30").await;
    let staff_link = share_path(&address);
    let mut own = logged_in(&app, &patient).await;
    let (address, _) = make_link(&mut own, &measurement, "30").await;
    let patients_link = share_path(&address);
    let before_end = token_of(&app, &c.ghent_doctor, &document).await;
    app.delete(
        &format!("/users/v1/{}/patient_enlistments/{}", patient.id, c.ghent),
        &c.ghent_doctor.token,
        None,
    )
    .await
    .assert_ok();
    assert_eq!(download(&app, &staff_link).await.0, 404);
    assert_eq!(
        download(&app, &format!("/files/v1/{before_end}/file"))
            .await
            .0,
        404
    );
    assert_eq!(
        download(&app, &patients_link).await.0,
        200,
        "the patient's own link stays"
    );
    let after_end = token_of(&app, &patient, &document).await;
    assert_eq!(
        download(&app, &format!("/files/v1/{after_end}/file"))
            .await
            .0,
        200
    );

    // Shortening a prescription ends the group's links as ending it does.
    app.enlist_patient(&c.admin, &patient, &c.lyon).await;
    let in_lyon = app.measurement_id(&patient, "sinus_72").await;
    let mut lyon = logged_in(&app, &c.lyon_doctor).await;
    let (address, _) = make_link(&mut lyon, &in_lyon, "30").await;
    let lyon_link = share_path(&address);
    let shorter = app.clock_millis() + DAY;
    app.post(
        &format!("/users/v1/{}/patient_enlistments", patient.id),
        &c.lyon_doctor.token,
        json!({"group_id": c.lyon, "expiry_timestamp": shorter}),
    )
    .await
    .assert_ok();
    assert_eq!(download(&app, &lyon_link).await.0, 404);

    // What ended is in the audit trail.
    let filter = AuditFilter {
        actor: Some(Id::parse(&c.admin.id).unwrap()),
        ..AuditFilter::default()
    };
    let records = crate::audit::records(&app, filter).await;
    assert!(
        records
            .iter()
            .any(|(action, detail)| action == "enlistment.staff.remove"
                && detail.contains("1 shared links revoked")),
        "{records:?}"
    );
}

/// Finding 5: a pending address change survived a password change, a reset and signing out
/// everywhere, and the old address was never told.
#[tokio::test]
async fn a_pending_address_change_ends_with_every_remedy_and_the_old_address_can_stop_it() {
    let (app, mail) = notifying_app().await;
    let admin = app.admin("resetter").await;
    let user = app.user("target").await;
    const STOP: &str = "/portal/account/email/stop/";

    // Someone with the password asks to move the account to their address.
    async fn ask(app: &TestApp, user: &TestUser, to: &str) {
        let mut browser = logged_in(app, user).await;
        let asked = browser
            .post(
                "/portal/account",
                "/portal/account/email",
                &[("email", to), ("password", PASSWORD)],
            )
            .await;
        assert!(asked.status.is_success(), "{}", asked.body);
    }
    async fn confirm_link(mail: &crate::notifications::Inbox, to: &str) -> String {
        let text = mail_to(mail, to, "Tacho: confirm your new e-mail address").await;
        link_in(&text, "/portal/account/email/confirm/").0
    }
    async fn confirmed(app: &TestApp, path: &str) -> StatusCode {
        let mut browser = Browser::new(app);
        browser.post(path, path, &[]).await.status
    }

    // The old address is told, with a way to stop it.
    ask(&app, &user, "thief1@tacho.test").await;
    let notice = mail_to(
        &mail,
        &user.email,
        "Tacho: your e-mail address is being changed",
    )
    .await;
    assert!(notice.contains("thief1@tacho.test"), "{notice}");
    let first = confirm_link(&mail, "thief1@tacho.test").await;

    // Changing the password ends it.
    let mut owner = logged_in(&app, &user).await;
    let changed = owner
        .post(
            "/portal/account",
            "/portal/account/password",
            &[
                ("current", PASSWORD),
                ("new", "a brand new phrase"),
                ("confirm", "a brand new phrase"),
            ],
        )
        .await;
    assert!(
        changed.status.is_success() || changed.status == 303,
        "{}",
        changed.body
    );
    assert_eq!(confirmed(&app, &first).await, StatusCode::GONE);

    // Signing out everywhere ends it.
    mail.received.lock().unwrap().clear();
    ask_with(&app, &user, "thief2@tacho.test", "a brand new phrase").await;
    let second = confirm_link(&mail, "thief2@tacho.test").await;
    let mut owner = Browser::new(&app);
    owner.login(&user.email, "a brand new phrase").await;
    let out = owner
        .post(
            "/portal/account",
            "/portal/account/sign-out-everywhere",
            &[],
        )
        .await;
    assert_eq!(out.status, 303);
    assert_eq!(confirmed(&app, &second).await, StatusCode::GONE);

    // An administrator's reset ends it.
    mail.received.lock().unwrap().clear();
    ask_with(&app, &user, "thief3@tacho.test", "a brand new phrase").await;
    let third = confirm_link(&mail, "thief3@tacho.test").await;
    let mut administrator = logged_in(&app, &admin).await;
    let reset = administrator
        .post(
            "/portal/admin/users",
            &format!("/portal/admin/users/{}/password-reset", user.id),
            &[],
        )
        .await;
    assert!(
        reset.status.is_success() || reset.status == 303,
        "{}",
        reset.body
    );
    assert_eq!(confirmed(&app, &third).await, StatusCode::GONE);

    // Deactivation ends it.
    let other = app.user("second").await;
    mail.received.lock().unwrap().clear();
    ask(&app, &other, "thief4@tacho.test").await;
    let fourth = confirm_link(&mail, "thief4@tacho.test").await;
    app.put(
        &format!("/users/v1/{}/activation", other.id),
        &admin.token,
        json!({"activation": false}),
    )
    .await
    .assert_ok();
    assert_eq!(confirmed(&app, &fourth).await, StatusCode::GONE);

    // The owner stops a change from the old address: the change and every login end.
    let third_user = app.user("third").await;
    mail.received.lock().unwrap().clear();
    let mut session = logged_in(&app, &third_user).await;
    ask(&app, &third_user, "thief5@tacho.test").await;
    let fifth = confirm_link(&mail, "thief5@tacho.test").await;
    let notice = mail_to(
        &mail,
        &third_user.email,
        "Tacho: your e-mail address is being changed",
    )
    .await;
    let (stop, _) = link_in(&notice, STOP);
    let mut stranger = Browser::new(&app);
    let page = stranger.get(&stop).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("id=\"stop-email-change\""));
    let stopped = stranger.post(&stop, &stop, &[]).await;
    assert_eq!(stopped.status, 200, "{}", stopped.body);
    assert!(stopped.body.contains("id=\"email-stopped\""));
    assert_eq!(confirmed(&app, &fifth).await, StatusCode::GONE);
    app.get("/users/v1/me", &third_user.token)
        .await
        .assert_error(401, 117);
    let signed_out = session.get("/portal/account").await;
    assert_eq!(signed_out.status, 303, "the session ended");
    // The link works once.
    assert_eq!(
        stranger.post("/portal/login", &stop, &[]).await.status,
        StatusCode::GONE
    );
}

/// As `ask` in the test above, with another password.
async fn ask_with(app: &TestApp, user: &TestUser, to: &str, password: &str) {
    let mut browser = Browser::new(app);
    browser.login(&user.email, password).await;
    let asked = browser
        .post(
            "/portal/account",
            "/portal/account/email",
            &[("email", to), ("password", password)],
        )
        .await;
    assert!(asked.status.is_success(), "{}", asked.body);
}

/// Finding 6: a notification could be marked read after access ended, and the answer carried
/// the patient's id and the result.
#[tokio::test]
async fn a_notification_is_not_reached_once_access_ended() {
    let app = spawn_app().await;
    let c = clinics(&app).await;
    let patient = app.user("notifiedpatient").await;
    app.enlist_patient(&c.admin, &patient, &c.ghent).await;
    let leaving = app.user("leavingreader").await;
    app.enlist_staff(&c.admin, &leaving, &c.ghent).await;
    let measurement = app.measurement_id(&patient, "sinus_72").await;
    app.work_queue().await;
    let entry = inbox(&app, &leaving)
        .await
        .into_iter()
        .find(|n| n["measurement_id"] == measurement.as_str())
        .expect("the physician was told");
    let entry = entry["id"].as_str().unwrap().to_owned();
    app.delete(
        &format!("/users/v1/{}/staff_enlistments/{}", leaving.id, c.ghent),
        &c.admin.token,
        None,
    )
    .await
    .assert_ok();

    let marked = app
        .put(
            &format!("/notifications/v1/{entry}"),
            &leaving.token,
            json!({"read": true}),
        )
        .await;
    marked.assert_error(404, 16);
    let body = marked.body.to_string();
    assert!(
        !body.contains(&patient.id) && !body.contains(&measurement),
        "{body}"
    );
    assert!(inbox(&app, &leaving).await.is_empty());
    let mut portal = logged_in(&app, &leaving).await;
    let page = portal
        .post(
            "/portal/notifications",
            &format!("/portal/notifications/{entry}/read"),
            &[],
        )
        .await;
    assert_eq!(page.status, 404);
    assert!(!page.body.contains("notifiedpatient"), "{}", page.body);
}

/// Common passwords are refused at registration, on a change and in the administrators' form.
#[tokio::test]
async fn common_passwords_are_refused_at_every_door() {
    let app = spawn_app().await;
    for common in ["password123", "12345678"] {
        let refused = app
            .request(
                reqwest::Method::POST,
                "/users/v1/register",
                None,
                Some(
                    json!({"first_name": "Weak", "last_name": "Choice", "email": "weak@tacho.test",
                       "password": common, "language": "en", "time_zone": "Europe/Brussels"}),
                ),
            )
            .await;
        refused.assert_error(400, 15);
        let message = refused.body["message"].as_str().unwrap();
        assert!(message.contains("too easy to guess"), "{message}");
        assert!(!message.contains(common), "the password is not echoed");
    }
    let user = app.user("changer").await;
    let mut browser = logged_in(&app, &user).await;
    let page = browser
        .post(
            "/portal/account",
            "/portal/account/password",
            &[
                ("current", PASSWORD),
                ("new", "password123"),
                ("confirm", "password123"),
            ],
        )
        .await;
    assert!(page.body.contains("too easy to guess"), "{}", page.body);
    // The password did not change.
    app.password_grant(&user.email, PASSWORD).await.assert_ok();
    let admin = app.admin("creator").await;
    let mut admin_browser = logged_in(&app, &admin).await;
    let page = admin_browser
        .post(
            "/portal/admin/users",
            "/portal/admin/users",
            &[
                ("first_name", "Weak"),
                ("last_name", "Choice"),
                ("email", "weak2@tacho.test"),
                ("password", "12345678"),
                ("language", "en"),
                ("time_zone", "Europe/Brussels"),
            ],
        )
        .await;
    assert!(page.body.contains("too easy to guess"), "{}", page.body);
    let refused = app.password_grant("weak2@tacho.test", "12345678").await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.body["exh_error"]["code"], 106, "no such account");
}

/// Webhooks may not point at private networks unless the operator allows them, and an
/// endpoint's query string (often a receiver's token) stays out of logs, deliveries and the
/// audit trail.
#[tokio::test]
async fn webhooks_to_private_networks_are_refused_and_their_queries_are_not_recorded() {
    let app = spawn_app().await;
    let c = clinics(&app).await;
    async fn register(app: &TestApp, c: &Clinics, url: &str) -> crate::helpers::Reply {
        let body = json!({"group_id": c.ghent, "url": url, "events": ["measurement.analysed"]});
        app.post("/webhooks/v1", &c.admin.token, body).await
    }
    for private in [
        "https://10.1.2.3/in",
        "https://192.168.0.7/in",
        "https://[fd00::7]/in",
        "https://100.64.1.1/in",
    ] {
        let refused = register(&app, &c, private).await;
        refused.assert_error(400, 15);
        assert!(
            refused.body["message"]
                .as_str()
                .unwrap()
                .contains("private network"),
            "{private}: {:?}",
            refused.body
        );
    }
    let allowed = spawn_app_with(|s| s.webhook_allow_private = true).await;
    let c2 = clinics(&allowed).await;
    let made = allowed
        .post(
            "/webhooks/v1",
            &c2.admin.token,
            json!({"group_id": c2.ghent, "url": "https://10.1.2.3/in", "events": ["measurement.analysed"]}),
        )
        .await;
    assert_eq!(made.status, 201, "{:?}", made.body);

    // A name that does not resolve: the delivery fails, and nothing records the query.
    let made = register(&app, &c, "https://hooks.invalid/in?token=s3cret-query").await;
    assert_eq!(made.status, 201, "{:?}", made.body);
    let webhook = made.body["id"].as_str().unwrap().to_owned();
    let patient = app.user("hookedpatient").await;
    app.enlist_patient(&c.admin, &patient, &c.ghent).await;
    app.measurement_id(&patient, "sinus_72").await;
    app.work_queue().await;
    let log = app
        .get(&format!("/webhooks/v1/{webhook}"), &c.admin.token)
        .await
        .assert_ok()
        .clone();
    let deliveries = log["deliveries"].as_array().unwrap();
    assert!(!deliveries.is_empty(), "{log}");
    assert!(deliveries.iter().all(|d| d["error"].is_string()), "{log}");
    assert!(
        !log["deliveries"].to_string().contains("s3cret-query"),
        "{log}"
    );
    let trail = crate::audit::records(&app, AuditFilter::default()).await;
    let registered = trail
        .iter()
        .find(|(action, detail)| action == "webhook.create" && detail.contains("hooks.invalid"))
        .unwrap_or_else(|| panic!("{trail:?}"));
    assert!(!registered.1.contains("s3cret-query"), "{registered:?}");
    assert!(
        trail
            .iter()
            .all(|(_, detail)| !detail.contains("s3cret-query"))
    );
}

/// A client bound to `address` on this machine.
fn client_from(address: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(address.parse::<IpAddr>().unwrap())
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// The login throttle counts a client's network (/24), at the API's token endpoint and at the
/// portal's login form alike.
#[tokio::test]
async fn the_login_throttle_counts_a_network_at_both_doors() {
    let app = spawn_app_with(|s| s.login_rate_per_minute = 3).await;
    let grant =
        json!({"grant_type": "password", "username": "nobody@tacho.test", "password": "wrong"});
    let first = client_from("127.0.0.1");
    for _ in 0..3 {
        let answer = first
            .post(app.url("/auth/v2/oauth2/tokens"))
            .json(&grant)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 400);
    }
    // Another address of the same /24: the same allowance, spent, at either door.
    let neighbour = client_from("127.0.0.2");
    let api = neighbour
        .post(app.url("/auth/v2/oauth2/tokens"))
        .json(&grant)
        .send()
        .await
        .unwrap();
    assert_eq!(api.status(), 429);
    assert!(api.headers().contains_key("retry-after"));
    let login_page = neighbour
        .get(app.url("/portal/login"))
        .send()
        .await
        .unwrap();
    let cookie = login_page
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("tacho_csrf="))
        .map(|v| v.split(';').next().unwrap().to_owned())
        .unwrap();
    let body = login_page.text().await.unwrap();
    let marker = "name=\"csrf\" value=\"";
    let start = body.find(marker).unwrap() + marker.len();
    let csrf = body[start..start + 64].to_owned();
    let portal = neighbour
        .post(app.url("/portal/login"))
        .header("Cookie", cookie)
        .header("Origin", app.address.clone())
        .form(&[
            ("csrf", csrf.as_str()),
            ("email", "nobody@tacho.test"),
            ("password", "wrong"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(portal.status(), 429);
    // Another network is not held back.
    let elsewhere = client_from("127.0.1.1");
    let answer = elsewhere
        .post(app.url("/auth/v2/oauth2/tokens"))
        .json(&grant)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 400);
}

/// Reading the portal's patient list, work list and audit trail leaves a record, as the API's
/// lists of the same data do.
#[tokio::test]
async fn the_portals_patient_list_work_list_and_audit_trail_are_audited() {
    let app = spawn_app().await;
    let c = clinics(&app).await;
    let patient = app.user("auditedpatient").await;
    app.enlist_patient(&c.admin, &patient, &c.ghent).await;
    app.measure_at(&patient, app.clock_millis() - DAY, 92.0, "irregular", &[])
        .await;
    let mut doctor = logged_in(&app, &c.ghent_doctor).await;
    assert_eq!(doctor.get("/portal/patients").await.status, 200);
    assert_eq!(doctor.get("/portal/worklist").await.status, 200);
    let mut admin = logged_in(&app, &c.admin).await;
    let trail = admin
        .get(&format!("/portal/admin/audit?user={}", patient.id))
        .await;
    assert_eq!(trail.status, 200);
    let of_patient = crate::audit::records(
        &app,
        AuditFilter {
            patient: Some(Id::parse(&patient.id).unwrap()),
            ..AuditFilter::default()
        },
    )
    .await;
    let actions: Vec<&str> = of_patient.iter().map(|(a, _)| a.as_str()).collect();
    for action in ["patient.list", "worklist.view", "audit.view"] {
        assert!(actions.contains(&action), "{action} in {actions:?}");
    }
}

/// The migration that gave reports their group moves each report made before it to the group
/// that made it where every measurement it lists was shared with that group, and keeps the
/// others for the patient only; on the database itself, SQLite or PostgreSQL.
#[tokio::test]
async fn existing_reports_move_to_the_group_that_made_them() {
    use migration::{Migrator, MigratorTrait};
    use sea_orm::sea_query::{Alias, Query};
    use sea_orm::{ConnectionTrait, Statement};

    let dir = tempfile::tempdir().unwrap();
    let url = crate::helpers::database_url(dir.path()).await;
    let db = sea_orm::Database::connect(&url).await.unwrap();
    let before = Migrator::migrations()
        .iter()
        .position(|m| m.name().contains("report_groups"))
        .expect("the migration");
    Migrator::up(&db, Some(before as u32)).await.unwrap();

    let id = |n: u8| format!("{n:024x}");
    let (patient, doctor, admin) = (id(1), id(2), id(3));
    let (ghent, lyon) = (id(10), id(11));
    let (m_ghent, m_lyon, m_both) = (id(20), id(21), id(22));
    let insert = |table: &str, columns: &[&str], values: Vec<sea_orm::sea_query::SimpleExpr>| {
        Query::insert()
            .into_table(Alias::new(table))
            .columns(columns.iter().map(|c| Alias::new(*c)))
            .values_panic(values)
            .to_owned()
    };
    let backend = db.get_database_backend();
    let run = |statement: sea_orm::sea_query::InsertStatement| {
        let db = &db;
        async move { db.execute_raw(backend.build(&statement)).await.unwrap() }
    };
    // The accounts, groups and measurements the rows refer to, through the entities of tables
    // the migration leaves as they are.
    {
        use sea_orm::{ActiveValue::Set, EntityTrait, IntoActiveModel};
        use tacho::store::entities::{group, measurement};
        // Users by columns: the entity has columns later migrations add.
        for person in [&patient, &doctor, &admin] {
            run(insert(
                "users",
                &[
                    "id",
                    "email",
                    "password_hash",
                    "first_name",
                    "last_name",
                    "language",
                    "time_zone",
                    "activation",
                    "roles",
                    "failed_count",
                    "creation_timestamp",
                    "update_timestamp",
                ],
                vec![
                    person.as_str().into(),
                    format!("{person}@tacho.test").into(),
                    "".into(),
                    "A".into(),
                    "B".into(),
                    "EN".into(),
                    "UTC".into(),
                    true.into(),
                    json!([]).into(),
                    0.into(),
                    0i64.into(),
                    0i64.into(),
                ],
            ))
            .await;
        }
        for (group_id, name) in [(&ghent, "Ghent"), (&lyon, "Lyon")] {
            group::Entity::insert(
                group::Model {
                    id: Id::parse(group_id).unwrap(),
                    name: name.into(),
                    description: None,
                    creation_timestamp: 0,
                    update_timestamp: 0,
                }
                .into_active_model(),
            )
            .exec_without_returning(&db)
            .await
            .unwrap();
        }
        for m in [&m_ghent, &m_lyon, &m_both] {
            // Only the columns of the schema at this migration: later ones are not there yet.
            measurement::Entity::insert(measurement::ActiveModel {
                id: Set(Id::parse(m).unwrap()),
                creator_id: Set(Id::parse(&patient).unwrap()),
                status: Set(tacho::domain::measurement::Status::Analyzed),
                data: Set("{}".into()),
                measurement_timestamp: Set(Some(150)),
                heartrate: Set(None),
                indicator: Set(None),
                heart_rate: Set(None),
                result: Set(None),
                summary: Set(None),
                creation_timestamp: Set(150),
                update_timestamp: Set(150),
                status_changed_timestamp: Set(150),
                ..Default::default()
            })
            .exec_without_returning(&db)
            .await
            .unwrap();
        }
    }
    // Ghent's prescription from 0, Lyon's from 50; the doctor is Ghent's.
    for (n, group, start) in [(30, &ghent, 0i64), (31, &lyon, 50)] {
        run(insert(
            "patient_enlistments",
            &[
                "id",
                "user_id",
                "group_id",
                "creation_timestamp",
                "expiry_timestamp",
            ],
            vec![
                id(n).into(),
                patient.clone().into(),
                group.clone().into(),
                start.into(),
                1000i64.into(),
            ],
        ))
        .await;
    }
    run(insert(
        "staff_enlistments",
        &[
            "id",
            "user_id",
            "group_id",
            "roles",
            "creation_timestamp",
            "update_timestamp",
        ],
        vec![
            id(40).into(),
            doctor.clone().into(),
            ghent.clone().into(),
            json!(["physician"]).into(),
            0i64.into(),
            0i64.into(),
        ],
    ))
    .await;
    for (measurement, group) in [
        (&m_ghent, &ghent),
        (&m_lyon, &lyon),
        (&m_both, &ghent),
        (&m_both, &lyon),
    ] {
        run(insert(
            "measurement_groups",
            &["measurement_id", "group_id"],
            vec![measurement.clone().into(), group.clone().into()],
        ))
        .await;
    }
    let report = |n: u8, creator: Option<&String>, key: Option<String>, listed: &[&String]| {
        let data =
            json!({"measurements": listed.iter().map(|m| json!({"id": m})).collect::<Vec<_>>()});
        insert(
            "reports",
            &[
                "id",
                "user_id",
                "creator_id",
                "trigger",
                "status",
                "dedupe_key",
                "period_start_timestamp",
                "period_end_timestamp",
                "data",
                "creation_timestamp",
                "update_timestamp",
            ],
            vec![
                id(n).into(),
                patient.clone().into(),
                creator.cloned().into(),
                "MANUAL".into(),
                "COMPLETE".into(),
                key.into(),
                100i64.into(),
                200i64.into(),
                data.to_string().into(),
                0i64.into(),
                0i64.into(),
            ],
        )
    };
    let ghent_key = |trigger: &str| Some(format!("report:{patient}:0:{trigger}:0"));
    // Ghent's scheduled report of Ghent's measurement: Ghent's.
    run(report(
        50,
        None,
        ghent_key("PERIOD_DAYS_PASSED_7"),
        &[&m_ghent],
    ))
    .await;
    // Ghent's scheduled report listing a measurement only Lyon had: the patient's only.
    run(report(
        51,
        None,
        ghent_key("PERIOD_DAYS_PASSED_30"),
        &[&m_ghent, &m_lyon],
    ))
    .await;
    // Made by Ghent's doctor: Ghent's.
    run(report(52, Some(&doctor), None, &[&m_both])).await;
    // Made by an administrator while the patient was in both: no single group made it.
    run(report(53, Some(&admin), None, &[&m_both])).await;

    Migrator::up(&db, None).await.unwrap();
    let rows = db
        .query_all_raw(Statement::from_string(
            backend,
            "SELECT id, group_id FROM reports ORDER BY id",
        ))
        .await
        .unwrap();
    let groups: Vec<(String, Option<String>)> = rows
        .iter()
        .map(|r| {
            (
                r.try_get("", "id").unwrap(),
                r.try_get("", "group_id").unwrap(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        vec![
            (id(50), Some(ghent.clone())),
            (id(51), None),
            (id(52), Some(ghent.clone())),
            (id(53), None),
        ]
    );
    db.close().await.ok();
}
