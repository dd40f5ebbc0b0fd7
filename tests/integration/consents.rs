//! Integration tests of the patient's rights over their data: consents.
//!
//! Consent to the processing of health data is given by registering through the API, at the
//! version `GET /consent/v1/current` states; consent to sharing with a group when a
//! prescription there starts. A patient withdraws sharing in the portal or through the API,
//! which ends the group's access as ending the prescription does.

use reqwest::StatusCode;
use serde_json::{Value, json};
use tacho::domain::clock::Clock;
use tacho::domain::consent::{GROUP_SHARING_VERSION, HEALTH_DATA_VERSION};
use tacho::domain::id::Id;
use tacho::store::{AuditFilter, Service};

use crate::audit::records;
use crate::helpers::{PASSWORD, TestApp, TestUser, spawn_app};
use crate::portal::{Browser, logged_in};
use crate::shared_links::make_link;

/// A patient's consents as `reader` gets them through the API.
async fn history(app: &TestApp, reader: &TestUser, patient: &str) -> Vec<Value> {
    let reply = app
        .get(&format!("/users/v1/{patient}/consents"), &reader.token)
        .await;
    reply.assert_ok()["data"].as_array().unwrap().clone()
}

/// The audit trail's actions about `patient` done by `actor`, oldest first.
async fn actions_of(app: &TestApp, actor: &str, patient: &str) -> Vec<(String, String)> {
    let filter = AuditFilter {
        patient: Some(Id::parse(patient).unwrap()),
        actor: Some(Id::parse(actor).unwrap()),
        ..AuditFilter::default()
    };
    records(app, filter).await
}

/// The status of an anonymous GET of `path` (a shared link, a file's token).
async fn anonymous_status(app: &TestApp, path: &str) -> u16 {
    let response = app.client.get(app.url(path)).send().await.unwrap();
    response.status().as_u16()
}

/// A report document's file token as `reader` sees it now.
async fn file_token(app: &TestApp, reader: &TestUser, document: &str) -> String {
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

/// The ids of `patient`'s measurements in `reader`'s API list.
async fn listed_measurements(app: &TestApp, reader: &TestUser, patient: &str) -> Vec<String> {
    let reply = app
        .get(
            &format!("/data/v1/measurements/documents?eq(creatorId,{patient})&limit(50)"),
            &reader.token,
        )
        .await;
    let mut ids: Vec<String> = reply.assert_ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn registering_through_the_api_consents_to_the_version_the_server_states() {
    let app = spawn_app().await;
    let current = app
        .request(reqwest::Method::GET, "/consent/v1/current", None, None)
        .await;
    assert_eq!(
        current.assert_ok(),
        &json!({"health_data": HEALTH_DATA_VERSION, "group_sharing": GROUP_SHARING_VERSION})
    );
    let stated = current.body["health_data"].as_str().unwrap().to_owned();

    let registered = app
        .request(
            reqwest::Method::POST,
            "/users/v1/register",
            None,
            Some(json!({"first_name": "Ada", "last_name": "Consenting",
                "email": "ada@tacho.test", "password": PASSWORD,
                "language": "en", "time_zone": "Europe/Brussels"})),
        )
        .await;
    let id = registered.assert_ok()["id"].as_str().unwrap().to_owned();
    let client = app.sign_in("ada@tacho.test").await;
    let patient = TestUser {
        id: id.clone(),
        email: "ada@tacho.test".into(),
        token: client.tokens().access_token,
        client,
    };

    let consents = history(&app, &patient, &id).await;
    assert_eq!(consents.len(), 1, "{consents:?}");
    let consent = &consents[0];
    assert_eq!(consent["user_id"], id.as_str());
    assert_eq!(consent["kind"], "health_data");
    assert_eq!(consent["group_id"], Value::Null);
    assert_eq!(consent["text_version"], stated.as_str());
    assert_eq!(consent["door"], "api");
    assert_eq!(consent["given"], true);
    assert_eq!(consent["actor_id"], id.as_str());
    assert_eq!(consent["in_force"], true);
    assert_eq!(
        consent["creation_timestamp"].as_i64(),
        Some(app.clock_millis())
    );
    let trail = actions_of(&app, &id, &id).await;
    let given: Vec<_> = trail.iter().filter(|(a, _)| a == "consent.give").collect();
    assert_eq!(given.len(), 1, "{trail:?}");
    assert!(
        given[0].1.contains(&stated) && given[0].1.contains("api"),
        "{given:?}"
    );
}

#[tokio::test]
async fn an_account_an_administrator_creates_records_no_consent() {
    let app = spawn_app().await;
    let admin = app.admin("consentadmin").await;
    let mut browser = logged_in(&app, &admin).await;
    let made = browser
        .post(
            "/portal/admin/users",
            "/portal/admin/users",
            &[
                ("email", "made@tacho.test"),
                ("first_name", "Made"),
                ("last_name", "ByAdmin"),
                ("password", "a long enough phrase"),
                ("language", "en"),
                ("time_zone", "Europe/Brussels"),
            ],
        )
        .await;
    assert!(
        made.status.is_success() || made.status.is_redirection(),
        "{}",
        made.body
    );
    let made = app
        .store
        .user_by_email(&Service::Operator, "made@tacho.test")
        .await
        .unwrap()
        .expect("the account was made");
    assert!(history(&app, &admin, &made.id.to_string()).await.is_empty());
}

#[tokio::test]
async fn starting_a_prescription_records_consent_to_sharing_through_its_door() {
    let app = spawn_app().await;
    let admin = app.admin("admin").await;
    let ghent = app.group(&admin, "Ghent").await;
    let bruges = app.group(&admin, "Bruges").await;
    let physician = app.user("physician").await;
    app.enlist_staff(&admin, &physician, &ghent).await;
    app.enlist_staff(&admin, &physician, &bruges).await;
    let patient = app.user("patient").await;
    // The test users are made in the store: no consent yet.
    assert!(history(&app, &patient, &patient.id).await.is_empty());

    // An administrator starts a prescription in Ghent, then Ghent's physician, who now sees
    // the patient, one in Bruges: each records its consent, by whoever started it.
    app.enlist_patient(&admin, &patient, &ghent).await;
    app.enlist_patient(&physician, &patient, &bruges).await;
    let consents = history(&app, &patient, &patient.id).await;
    assert_eq!(consents.len(), 2, "{consents:?}");
    for (given, group, actor) in [
        (&consents[0], &ghent, &admin),
        (&consents[1], &bruges, &physician),
    ] {
        assert_eq!(given["kind"], "group_sharing");
        assert_eq!(given["group_id"], group.as_str());
        assert_eq!(given["text_version"], GROUP_SHARING_VERSION);
        assert_eq!(given["door"], "api");
        assert_eq!(given["given"], true);
        assert_eq!(given["actor_id"], actor.id.as_str());
        // Each group's consent is in force on its own.
        assert_eq!(given["in_force"], true);
    }
    let trail = actions_of(&app, &physician.id, &patient.id).await;
    let actions: Vec<&str> = trail.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(actions, ["enlistment.patient", "consent.give"]);
    assert!(trail[1].1.contains(&bruges), "{trail:?}");

    // Extending a running prescription asks for nothing new.
    app.enlist_patient(&physician, &patient, &bruges).await;
    assert_eq!(history(&app, &patient, &patient.id).await.len(), 2);

    // Ended, then started again in the portal: a consent through the portal.
    app.delete(
        &format!("/users/v1/{}/patient_enlistments/{bruges}", patient.id),
        &admin.token,
        None,
    )
    .await
    .assert_ok();
    let until = (app.clock.now() + chrono::Duration::days(30))
        .format("%Y-%m-%d")
        .to_string();
    let mut browser = logged_in(&app, &admin).await;
    let enlisted = browser
        .post(
            "/portal/admin/groups",
            "/portal/admin/enlistments",
            &[
                ("email", patient.email.as_str()),
                ("group_id", bruges.as_str()),
                ("kind", "patient"),
                ("until", until.as_str()),
            ],
        )
        .await;
    assert_eq!(enlisted.status, StatusCode::OK, "{}", enlisted.body);
    let consents = history(&app, &admin, &patient.id).await;
    assert_eq!(consents.len(), 3, "{consents:?}");
    assert_eq!(consents[2]["group_id"], bruges.as_str());
    assert_eq!(consents[2]["door"], "portal");
    assert_eq!(consents[2]["actor_id"], admin.id.as_str());
    assert_eq!(consents[2]["given"], true);
    let in_force: Vec<_> = consents.iter().map(|c| c["in_force"].clone()).collect();
    assert_eq!(in_force, [json!(true), json!(false), json!(true)]);
}

/// A group with a physician and two patients, each with a measurement shared with the group,
/// a report of it made by the physician and a link the physician shared.
struct Clinic {
    admin: TestUser,
    group: String,
    physician: TestUser,
    patients: [Sharing; 2],
}

/// What a group's physician holds of one patient.
struct Sharing {
    patient: TestUser,
    measurement: String,
    document: String,
    /// The physician's copy of the report's file token.
    token: String,
    /// The path of the physician's shared link.
    link: String,
}

async fn clinic(app: &TestApp) -> Clinic {
    let admin = app.admin("admin").await;
    let group = app.group(&admin, "Ghent").await;
    let physician = app.user("drghent").await;
    app.enlist_staff(&admin, &physician, &group).await;
    let mut browser = logged_in(app, &physician).await;
    let mut patients = Vec::new();
    for name in ["withdrawing", "ended"] {
        let patient = app.user(name).await;
        app.enlist_patient(&admin, &patient, &group).await;
        let measurement = app.measurement_id(&patient, "sinus_72").await;
        let document = app.report(&physician, &measurement, Some("en")).await;
        let document = document.assert_ok()["id"].as_str().unwrap().to_owned();
        let token = file_token(app, &physician, &document).await;
        let (address, _) = make_link(&mut browser, &measurement, "30").await;
        let link = address[address.find("/share/").unwrap()..].to_owned();
        assert_eq!(anonymous_status(app, &link).await, 200);
        assert_eq!(
            anonymous_status(app, &format!("/files/v1/{token}/file")).await,
            200
        );
        patients.push(Sharing {
            patient,
            measurement,
            document,
            token,
            link,
        });
    }
    Clinic {
        admin,
        group,
        physician,
        patients: patients.try_into().ok().unwrap(),
    }
}

/// What the group's physician has of `sharing`'s patient after the access ended, and of a
/// measurement the patient made afterwards: everything that could differ between an ended
/// prescription and a withdrawn consent.
async fn physicians_view(
    app: &TestApp,
    physician: &TestUser,
    browser: &mut Browser<'_>,
    sharing: &Sharing,
    after: &str,
) -> Vec<String> {
    let id = &sharing.patient.id;
    let record = app.get(&format!("/users/v1/{id}"), &physician.token).await;
    let page = browser.get(&format!("/portal/patients/{id}")).await;
    let list = browser.get("/portal/patients").await;
    let before_listed = listed_measurements(app, physician, id)
        .await
        .contains(&sharing.measurement);
    let after_listed = listed_measurements(app, physician, id)
        .await
        .contains(&after.to_owned());
    let file = format!("/files/v1/{}/file", sharing.token);
    vec![
        format!("record {}", record.status.as_u16()),
        format!("patient page {}", page.status.as_u16()),
        format!(
            "in the patient list {}",
            list.body.contains(&format!("/portal/patients/{id}"))
        ),
        format!("earlier measurement listed {before_listed}"),
        format!("later measurement listed {after_listed}"),
        format!("shared link {}", anonymous_status(app, &sharing.link).await),
        format!("copied file token {}", anonymous_status(app, &file).await),
    ]
}

#[tokio::test]
async fn withdrawing_in_the_portal_ends_the_groups_access_as_ending_the_prescription_does() {
    let app = spawn_app().await;
    let c = clinic(&app).await;
    let [withdrawing, ended] = &c.patients;
    let mut doctor = logged_in(&app, &c.physician).await;
    let patients = doctor.get("/portal/patients").await;
    for sharing in &c.patients {
        let id = &sharing.patient.id;
        assert!(patients.body.contains(&format!("/portal/patients/{id}")));
    }

    // The patient's account lists the group, since when and at which text, to stop.
    let mut browser = logged_in(&app, &withdrawing.patient).await;
    let account = browser.get("/portal/account").await;
    assert_eq!(account.status, StatusCode::OK);
    assert!(account.body.contains("id=\"sharing\""), "{}", account.body);
    assert!(account.body.contains("Ghent") && account.body.contains(GROUP_SHARING_VERSION));
    let form = format!("name=\"group_id\" value=\"{}\"", c.group);
    assert!(account.body.contains(&form), "{}", account.body);
    assert!(account.body.contains("data-confirm="));

    let stopped = browser
        .post(
            "/portal/account",
            "/portal/account/consents/withdraw",
            &[("group_id", c.group.as_str())],
        )
        .await;
    assert_eq!(stopped.status, StatusCode::SEE_OTHER, "{}", stopped.body);
    assert_eq!(stopped.location(), "/portal/account?withdrawn=1#sharing");
    let account = browser.get("/portal/account?withdrawn=1").await;
    assert!(account.body.contains("You stopped sharing your data"));
    assert!(
        !account.body.contains(&form),
        "no prescription left to stop"
    );

    // The other patient's prescription ends the usual way, by the group's physician.
    app.delete(
        &format!(
            "/users/v1/{}/patient_enlistments/{}",
            ended.patient.id, c.group
        ),
        &c.physician.token,
        None,
    )
    .await
    .assert_ok();

    let mut views = Vec::new();
    for sharing in &c.patients {
        let after = app.measurement_id(&sharing.patient, "sinus_72").await;
        views.push(physicians_view(&app, &c.physician, &mut doctor, sharing, &after).await);
    }
    assert_eq!(
        views[0], views[1],
        "a withdrawal ends access as an ended prescription"
    );
    assert_eq!(
        views[0],
        [
            "record 404",
            "patient page 404",
            "in the patient list false",
            // What was shared during the prescription stays with the group, as after an end.
            "earlier measurement listed true",
            "later measurement listed false",
            "shared link 404",
            "copied file token 404",
        ]
    );
    // The patient's app finds the report's file under its new token.
    let renewed = file_token(&app, &withdrawing.patient, &withdrawing.document).await;
    assert_ne!(renewed, withdrawing.token);
    assert_eq!(
        anonymous_status(&app, &format!("/files/v1/{renewed}/file")).await,
        200
    );

    // Both records, by the patient, in the withdrawal's transaction.
    let id = &withdrawing.patient.id;
    let trail: Vec<_> = actions_of(&app, id, id)
        .await
        .into_iter()
        .filter(|(a, _)| a.starts_with("enlistment.") || a.starts_with("consent."))
        .collect();
    let actions: Vec<&str> = trail.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(
        actions,
        ["enlistment.patient.end", "consent.withdraw"],
        "{trail:?}"
    );
    assert!(
        trail[0]
            .1
            .contains("1 shared links revoked, 1 report files given new tokens"),
        "{trail:?}"
    );
    assert!(trail[1].1.contains("portal"), "{trail:?}");
    let consents = history(&app, &withdrawing.patient, id).await;
    let last = consents.last().unwrap();
    assert_eq!(last["kind"], "group_sharing");
    assert_eq!(last["group_id"], c.group.as_str());
    assert_eq!(last["given"], false);
    assert_eq!(last["door"], "portal");
    assert_eq!(last["actor_id"], id.as_str());
    assert_eq!(last["text_version"], GROUP_SHARING_VERSION);
    assert_eq!(last["in_force"], true);

    // Nothing runs there any more: a second withdrawal finds nothing.
    let again = browser
        .post(
            "/portal/account",
            "/portal/account/consents/withdraw",
            &[("group_id", c.group.as_str())],
        )
        .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    assert!(again.body.contains("href=\"/portal/\""), "a way back");
}

#[tokio::test]
async fn a_patient_or_an_administrator_withdraws_through_the_api() {
    let app = spawn_app().await;
    let c = clinic(&app).await;
    let [own, on_behalf] = &c.patients;
    let path = |sharing: &Sharing| format!("/users/v1/{}/consents/withdraw", sharing.patient.id);
    let body = json!({"group_id": c.group});

    // The group's physician sees the patient but does not decide for them.
    app.post(&path(own), &c.physician.token, body.clone())
        .await
        .assert_error(403, 10);
    // Malformed input is the error envelope.
    app.post(&path(own), &own.patient.token, json!({"group_id": "nope"}))
        .await
        .assert_error(400, 12);
    let missing = app.post(&path(own), &own.patient.token, json!({})).await;
    assert_eq!(
        missing.status,
        StatusCode::BAD_REQUEST,
        "{:?}",
        missing.body
    );
    assert!(missing.body["code"].is_i64(), "{:?}", missing.body);

    let withdrawn = app.post(&path(own), &own.patient.token, body.clone()).await;
    let withdrawn = withdrawn.assert_ok();
    assert_eq!(withdrawn["given"], false);
    assert_eq!(withdrawn["door"], "api");
    assert_eq!(withdrawn["actor_id"], own.patient.id.as_str());
    assert_eq!(withdrawn["group_id"], c.group.as_str());
    app.get(&format!("/users/v1/{}", own.patient.id), &c.physician.token)
        .await
        .assert_error(404, 16);
    assert_eq!(anonymous_status(&app, &own.link).await, 404);
    app.post(&path(own), &own.patient.token, body.clone())
        .await
        .assert_error(404, 16);

    let withdrawn = app.post(&path(on_behalf), &c.admin.token, body).await;
    assert_eq!(withdrawn.assert_ok()["actor_id"], c.admin.id.as_str());
    app.get(
        &format!("/users/v1/{}", on_behalf.patient.id),
        &c.physician.token,
    )
    .await
    .assert_error(404, 16);
    let id = &on_behalf.patient.id;
    let trail = actions_of(&app, &c.admin.id, id).await;
    let actions: Vec<&str> = trail.iter().map(|(a, _)| a.as_str()).collect();
    assert!(
        actions.ends_with(&["enlistment.patient.end", "consent.withdraw"]),
        "{trail:?}"
    );
}

#[tokio::test]
async fn a_patient_cannot_withdraw_for_another() {
    let app = spawn_app().await;
    let c = clinic(&app).await;
    let [victim, other] = &c.patients;
    app.post(
        &format!("/users/v1/{}/consents/withdraw", victim.patient.id),
        &other.patient.token,
        json!({"group_id": c.group}),
    )
    .await
    .assert_error(404, 16);
    // The portal's form withdraws only its member's own consent: a group the member shares
    // nothing with is not found.
    let stranger = app.user("stranger").await;
    let mut browser = logged_in(&app, &stranger).await;
    let refused = browser
        .post(
            "/portal/account",
            "/portal/account/consents/withdraw",
            &[("group_id", c.group.as_str())],
        )
        .await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
    let malformed = browser
        .post(
            "/portal/account",
            "/portal/account/consents/withdraw",
            &[("group_id", "../admin")],
        )
        .await;
    assert_eq!(malformed.status, StatusCode::NOT_FOUND);
    // The victim's sharing runs on.
    app.get(
        &format!("/users/v1/{}", victim.patient.id),
        &c.physician.token,
    )
    .await
    .assert_ok();
    assert_eq!(anonymous_status(&app, &victim.link).await, 200);
    let consents = history(&app, &victim.patient, &victim.patient.id).await;
    assert!(consents.iter().all(|c| c["given"] == true), "{consents:?}");
}

#[tokio::test]
async fn the_history_is_read_by_the_patient_administrators_and_the_patients_staff() {
    let app = spawn_app().await;
    let c = clinic(&app).await;
    let [patient, other] = &c.patients;
    let id = &patient.patient.id;
    let elsewhere = app.group(&c.admin, "Lyon").await;
    let stranger = app.user("drlyon").await;
    app.enlist_staff(&c.admin, &stranger, &elsewhere).await;

    for reader in [&patient.patient, &c.admin, &c.physician] {
        let consents = history(&app, reader, id).await;
        assert_eq!(consents.len(), 1, "{consents:?}");
        assert_eq!(consents[0]["user_id"], id.as_str());
    }
    for reader in [&other.patient, &stranger] {
        app.get(&format!("/users/v1/{id}/consents"), &reader.token)
            .await
            .assert_error(404, 16);
    }
    app.request(
        reqwest::Method::GET,
        &format!("/users/v1/{id}/consents"),
        None,
        None,
    )
    .await
    .assert_error(401, 104);
    app.get(
        &format!("/users/v1/{}/consents", Id::generate()),
        &c.admin.token,
    )
    .await
    .assert_error(404, 16);

    // Once the patient withdraws, the group's physician no longer reads it; they still do.
    app.post(
        &format!("/users/v1/{id}/consents/withdraw"),
        &patient.patient.token,
        json!({"group_id": c.group}),
    )
    .await
    .assert_ok();
    app.get(&format!("/users/v1/{id}/consents"), &c.physician.token)
        .await
        .assert_error(404, 16);
    for reader in [&patient.patient, &c.admin] {
        let consents = history(&app, reader, id).await;
        let given: Vec<_> = consents.iter().map(|c| c["given"].clone()).collect();
        assert_eq!(given, [json!(true), json!(false)]);
        let in_force: Vec<_> = consents.iter().map(|c| c["in_force"].clone()).collect();
        assert_eq!(in_force, [json!(false), json!(true)]);
    }
}
