//! The access matrix, generated from the route table: every operation of the OpenAPI document
//! and every portal route, asked by each relationship a caller can have to one patient, with
//! the status each must get and a check that no answer carries an id, a name or a word of the
//! patient's record that the relationship may not see. A route without a row fails the test.
//!
//! The patient (`quillonpatient`) had a prescription in group "Ended" (measurement `m_ended`,
//! periodic report `r_ended`), which ended, and has one in "Ghent" (measurements `m_ghent`
//! and `m_ghent2`, report `r_ghent`). The relationships:
//! - self: the patient;
//! - current: a physician of Ghent;
//! - ended: a physician of Ended;
//! - other: a physician of Lyon, which never had the patient;
//! - holder: a physician of Lyon who was handed a shared link and an app token of the Ghent
//!   measurement's report (capabilities, which open that PDF and nothing else);
//! - removed: a physician of Ghent who copied an app token and made a shared link, then was
//!   removed from Ghent's staff;
//! - admin: an administrator;
//! - anonymous: no login at all.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestUser, fixture, spawn_app};
use crate::portal::{Browser, logged_in};
use crate::shared_links::{make_link, make_report_link};

/// The relationships, in the order of every expectation array.
const WHO: [&str; 8] = [
    "self",
    "current physician",
    "physician of an ended prescription",
    "physician of another group",
    "physician of another group holding a shared document",
    "removed physician",
    "administrator",
    "anonymous",
];

/// What must not leak: pieces of the patient's record, each seen by some relationships only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Marker {
    /// The patient's name and address (`quillonpatient`, also in the e-mail address).
    Name,
    /// A city only the patient's profile holds.
    City,
    /// The Ghent measurement, its tag, report document and periodic report.
    GhentMeasurement,
    GhentTag,
    GhentDocument,
    GhentReport,
    /// The measurement of the ended prescription, its tag and periodic report.
    EndedMeasurement,
    EndedTag,
    EndedReport,
}

use Marker::*;

/// Which markers relationship `who` (an index into [`WHO`]) may see.
fn sees(who: usize, marker: Marker) -> bool {
    match who {
        // Self and administrators see all of it.
        0 | 6 => true,
        // Ghent's physician: the record and what was shared with Ghent.
        1 => matches!(
            marker,
            Name | City | GhentMeasurement | GhentTag | GhentDocument | GhentReport
        ),
        // Ended's physician: what was shared with Ended, and whose it is.
        2 => matches!(marker, Name | EndedMeasurement | EndedTag | EndedReport),
        // Nobody else sees any of it through a route.
        _ => false,
    }
}

/// The answers' statuses per relationship; `N` marks a request not made (see `Row::only`).
type Expect = [u16; 8];

struct Row {
    /// The route as the table names it: `GET /users/v1/{id}`.
    route: String,
    /// The request: path (with its query), body (JSON for the API, a form for the portal),
    /// per relationship.
    path: Box<dyn Fn(usize) -> String>,
    body: Option<Box<dyn Fn(usize) -> Value>>,
    expect: Expect,
    /// Markers this row's answer may carry for everyone: what a capability itself names.
    granted: &'static [Marker],
    /// Sent without the caller's login: the token endpoints, where the body says who asks.
    public: bool,
}

fn api(method: &str, template: &str, path: impl Fn(usize) -> String + 'static) -> Row {
    Row {
        route: format!("{method} {template}"),
        path: Box::new(path),
        body: None,
        expect: [0; 8],
        granted: &[],
        public: false,
    }
}

impl Row {
    fn body(mut self, body: impl Fn(usize) -> Value + 'static) -> Self {
        self.body = Some(Box::new(body));
        self
    }

    fn expect(mut self, expect: Expect) -> Self {
        self.expect = expect;
        self
    }

    fn granted(mut self, markers: &'static [Marker]) -> Self {
        self.granted = markers;
        self
    }

    fn public(mut self) -> Self {
        self.public = true;
        self
    }
}

/// Everything the rows refer to.
struct Fixture {
    users: Vec<TestUser>,
    patient: TestUser,
    spare_user: TestUser,
    ghent: String,
    spare: String,
    m_ghent: String,
    m_ghent2: String,
    m_ended: String,
    d_ghent: String,
    r_ghent: String,
    r_ended: String,
    old_token: String,
    token: String,
    link: String,
    revoked_link: String,
    /// A link of the Ghent measurement per relationship, for the revocation row.
    links: Vec<String>,
    /// A link of the Ghent report per relationship, for its revocation row.
    report_links: Vec<String>,
    current_entry: String,
    removed_entry: String,
    expiry: i64,
    webhook: String,
    webhooks_to_delete: Vec<String>,
    markers: Vec<(Marker, String)>,
}

/// The id of the first inbox entry of `user` about measurement `id`.
async fn entry_about(app: &TestApp, user: &TestUser, id: &str) -> String {
    let inbox = app.get("/notifications/v1?limit(50)", &user.token).await;
    inbox.assert_ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["measurement_id"] == id)
        .unwrap_or_else(|| panic!("an entry about {id}: {inbox:?}"))["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn build(app: &TestApp) -> Fixture {
    let admin = app.admin("matrixadmin").await;
    let ghent = app.group(&admin, "Ghent").await;
    let ended_group = app.group(&admin, "Ended").await;
    let lyon = app.group(&admin, "Lyon").await;
    let spare = app.group(&admin, "Spare").await;
    let patient = app.user("quillonpatient").await;
    let current = app.user("drcurrent").await;
    let ended = app.user("drended").await;
    let other = app.user("drother").await;
    let holder = app.user("drholder").await;
    let removed = app.user("drremoved").await;
    let spare_user = app.user("spareuser").await;
    let lyon_patient = app.user("lyonpatient").await;
    for (staff, group) in [
        (&current, &ghent),
        (&removed, &ghent),
        (&ended, &ended_group),
        (&other, &lyon),
        (&holder, &lyon),
    ] {
        app.enlist_staff(&admin, staff, group).await;
    }
    app.enlist_patient(&admin, &lyon_patient, &lyon).await;
    app.enlist_patient(&admin, &spare_user, &spare).await;
    app.measurement_id(&lyon_patient, "sinus_72").await;
    app.put(
        &format!("/profiles/v1?id={}", patient.id),
        &patient.token,
        json!({"city": "Zyxwaville"}),
    )
    .await
    .assert_ok();

    // The ended prescription: a measurement and a report of it, then its end.
    app.enlist_patient(&admin, &patient, &ended_group).await;
    let mut payload = fixture("sinus_72");
    payload["tags"] = json!(["tag-zq-ended"]);
    let m_ended = app.measure(&patient, payload).await.id;
    let r_ended = app
        .post("/reports/v1", &admin.token, json!({"user_id": patient.id}))
        .await
        .assert_ok()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    app.delete(
        &format!("/users/v1/{}/patient_enlistments/{ended_group}", patient.id),
        &admin.token,
        None,
    )
    .await
    .assert_ok();

    // The current prescription.
    app.clock.advance(chrono::Duration::minutes(1));
    app.enlist_patient(&admin, &patient, &ghent).await;
    let record = app.get("/users/v1/me", &patient.token).await;
    let expiry = record.assert_ok()["patient_enlistments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["group_id"] == ghent.as_str())
        .unwrap()["expiry_timestamp"]
        .as_i64()
        .unwrap();
    let mut payload = fixture("sinus_72");
    payload["tags"] = json!(["tag-zq-ghent"]);
    let m_ghent = app.measure(&patient, payload).await.id;
    let m_ghent2 = app.measurement_id(&patient, "sinus_72").await;
    app.work_queue().await;
    let document = app.report(&current, &m_ghent, Some("en")).await;
    let d_ghent = document.assert_ok()["id"].as_str().unwrap().to_owned();
    let old_token = document.body["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned();
    app.report(&current, &m_ghent2, Some("en"))
        .await
        .assert_ok();
    let r_ghent = app
        .post(
            "/reports/v1",
            &current.token,
            json!({"user_id": patient.id}),
        )
        .await
        .assert_ok()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let current_entry = entry_about(app, &current, &m_ghent).await;
    let removed_entry = entry_about(app, &removed, &m_ghent).await;

    // The removed physician made a link and holds the app token; then leaves Ghent.
    let mut removed_browser = logged_in(app, &removed).await;
    let (revoked_link, _) = make_link(&mut removed_browser, &m_ghent, "30").await;
    app.delete(
        &format!("/users/v1/{}/staff_enlistments/{ghent}", removed.id),
        &admin.token,
        None,
    )
    .await
    .assert_ok();

    // The holder is handed a link and the app token as they are now.
    let mut current_browser = logged_in(app, &current).await;
    let (link, _) = make_link(&mut current_browser, &m_ghent, "30").await;
    let mut links = Vec::new();
    let mut report_links = Vec::new();
    for _ in WHO {
        links.push(make_link(&mut current_browser, &m_ghent, "30").await.1);
        report_links.push(
            make_report_link(&mut current_browser, &r_ghent, "30")
                .await
                .1,
        );
    }
    let token = app
        .get(
            &format!("/data/v1/measurement-reports/documents/{d_ghent}"),
            &current.token,
        )
        .await
        .assert_ok()["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(token, old_token, "the removal gave the file a new token");

    let webhook = |name: &str| {
        json!({"group_id": spare, "url": format!("https://hooks.example/{name}?token=s3cret"),
               "events": ["measurement.analysed"]})
    };
    let mut webhooks = Vec::new();
    for name in ["kept", "api-delete", "portal-delete"] {
        let made = app.post("/webhooks/v1", &admin.token, webhook(name)).await;
        assert!(made.status.is_success(), "{made:?}");
        webhooks.push(made.body["id"].as_str().unwrap().to_owned());
    }

    let markers = vec![
        (Name, "quillonpatient".to_owned()),
        (City, "Zyxwaville".to_owned()),
        (GhentMeasurement, m_ghent.clone()),
        (GhentTag, "tag-zq-ghent".to_owned()),
        (GhentDocument, d_ghent.clone()),
        (GhentReport, r_ghent.clone()),
        (EndedMeasurement, m_ended.clone()),
        (EndedTag, "tag-zq-ended".to_owned()),
        (EndedReport, r_ended.clone()),
    ];
    Fixture {
        users: vec![
            patient.clone(),
            current,
            ended,
            other,
            holder,
            removed,
            admin,
        ],
        patient,
        spare_user,
        ghent,
        spare,
        m_ghent,
        m_ghent2,
        m_ended,
        d_ghent,
        r_ghent,
        r_ended,
        old_token,
        token,
        link: share_path(&link),
        revoked_link: share_path(&revoked_link),
        links,
        report_links,
        current_entry,
        removed_entry,
        expiry,
        webhook: webhooks[0].clone(),
        webhooks_to_delete: webhooks[1..].to_vec(),
        markers,
    }
}

fn share_path(address: &str) -> String {
    address[address.find("/share/").unwrap()..].to_owned()
}

/// Statuses: seen by self, current and the administrator; hidden from the rest.
const RECORD: Expect = [200, 200, 404, 404, 404, 404, 200, 401];
/// Any authenticated caller (what it gets is its own, or filtered).
const ANY: Expect = [200, 200, 200, 200, 200, 200, 200, 401];
/// Administrators only, refused before anything is looked up.
const ADMIN: Expect = [403, 403, 403, 403, 403, 403, 200, 401];
/// Administrators only, on an account the others do not see.
const ADMIN_HIDDEN: Expect = [404, 404, 404, 404, 404, 404, 200, 401];
/// Everyone, signed in or not.
const PUBLIC: Expect = [200; 8];

fn api_rows(f: &Fixture) -> Vec<Row> {
    let p = f.patient.id.clone();
    let x = f.spare_user.id.clone();
    let (ghent, spare) = (f.ghent.clone(), f.spare.clone());
    let (m_ghent, m_ended) = (f.m_ghent.clone(), f.m_ended.clone());
    let (r_ghent, r_ended, d_ghent) = (f.r_ghent.clone(), f.r_ended.clone(), f.d_ghent.clone());
    let (token, old_token) = (f.token.clone(), f.old_token.clone());
    let (link, revoked_link) = (f.link.clone(), f.revoked_link.clone());
    let (current_entry, removed_entry) = (f.current_entry.clone(), f.removed_entry.clone());
    let (webhook, expiry) = (f.webhook.clone(), f.expiry);
    let deleted = f.webhooks_to_delete[0].clone();
    let at = |s: String| move |_: usize| s.clone();
    vec![
        api("POST", "/auth/v2/oauth2/tokens", at("/auth/v2/oauth2/tokens".into()))
            .body(|_| json!({"grant_type": "password", "username": "nobody@tacho.test", "password": "x"}))
            .public()
            .expect([400; 8]),
        api("POST", "/auth/v2/oauth2/tokens/revoke", at("/auth/v2/oauth2/tokens/revoke".into()))
            .body(|_| json!({"token": "no-such-token"}))
            .public()
            .expect(PUBLIC),
        api("GET", "/consent/v1/current", at("/consent/v1/current".into())).expect(PUBLIC),
        api("GET", "/data/v1/measurement-reports/documents",
            at(format!("/data/v1/measurement-reports/documents?eq(data.measurementId,{m_ghent})")))
            .expect(ANY),
        api("POST", "/data/v1/measurement-reports/documents", at("/data/v1/measurement-reports/documents".into()))
            .body({ let m = m_ghent.clone(); move |_| json!({"measurementId": m, "language": "en"}) })
            .expect(RECORD),
        api("GET", "/data/v1/measurement-reports/documents/{id}",
            at(format!("/data/v1/measurement-reports/documents/{d_ghent}")))
            .expect(RECORD),
        api("GET", "/data/v1/measurements/documents", at("/data/v1/measurements/documents?limit(50)".into()))
            .expect(ANY),
        api("POST", "/data/v1/measurements/documents", at("/data/v1/measurements/documents".into()))
            .body(|_| fixture("sinus_72"))
            .expect(ANY),
        api("GET", "/data/v1/measurements/documents/{id}", at(format!("/data/v1/measurements/documents/{m_ghent}")))
            .expect(RECORD),
        api("GET", "/data/v1/measurements/documents/{id}", at(format!("/data/v1/measurements/documents/{m_ended}")))
            .expect([200, 404, 200, 404, 404, 404, 200, 401]),
        api("PUT", "/data/v1/measurements/documents/{id}", at(format!("/data/v1/measurements/documents/{m_ghent}")))
            .body(|_| json!({"tags": ["tag-zq-ghent"]}))
            .expect(RECORD),
        api("GET", "/files/v1/{token}/details", at(format!("/files/v1/{old_token}/details")))
            .expect([404; 8]),
        api("GET", "/files/v1/{token}/details", at(format!("/files/v1/{token}/details")))
            .expect(PUBLIC)
            .granted(&[GhentMeasurement]),
        api("GET", "/files/v1/{token}/file", at(format!("/files/v1/{old_token}/file")))
            .expect([404; 8]),
        api("GET", "/files/v1/{token}/file", at(format!("/files/v1/{token}/file")))
            .expect(PUBLIC),
        api("GET", "/fhir/R4/metadata", at("/fhir/R4/metadata".into())).expect(PUBLIC),
        api("GET", "/fhir/R4/Patient", at(format!("/fhir/R4/Patient?identifier={p}"))).expect(ANY),
        api("GET", "/fhir/R4/Patient/{id}", at(format!("/fhir/R4/Patient/{p}"))).expect(RECORD),
        api("GET", "/fhir/R4/Patient/{id}/$everything", at(format!("/fhir/R4/Patient/{p}/$everything")))
            .expect(RECORD),
        api("GET", "/fhir/R4/Observation", at(format!("/fhir/R4/Observation?patient={p}"))).expect(RECORD),
        api("GET", "/fhir/R4/Observation/{id}", at(format!("/fhir/R4/Observation/{m_ghent}-heart-rate")))
            .expect(RECORD),
        api("GET", "/fhir/R4/Observation/{id}", at(format!("/fhir/R4/Observation/{m_ended}-rhythm")))
            .expect([200, 404, 200, 404, 404, 404, 200, 401]),
        api("GET", "/fhir/R4/DiagnosticReport", at(format!("/fhir/R4/DiagnosticReport?patient={p}")))
            .expect(RECORD),
        api("GET", "/fhir/R4/DiagnosticReport/{id}", at(format!("/fhir/R4/DiagnosticReport/{d_ghent}")))
            .expect(RECORD),
        api("GET", "/fhir/R4/DiagnosticReport/{id}", at(format!("/fhir/R4/DiagnosticReport/{r_ended}")))
            .expect([200, 404, 200, 404, 404, 404, 200, 401]),
        api("GET", "/fhir/R4/DocumentReference", at(format!("/fhir/R4/DocumentReference?patient={p}")))
            .expect(RECORD),
        api("GET", "/fhir/R4/DocumentReference/{id}", at(format!("/fhir/R4/DocumentReference/{r_ghent}")))
            .expect(RECORD),
        api("GET", "/fhir/R4/Device/{id}", at(format!("/fhir/R4/Device/{m_ghent}-phone"))).expect(RECORD),
        api("GET", "/fhir/R4/Binary/{id}", at(format!("/fhir/R4/Binary/{d_ghent}"))).expect(RECORD),
        api("GET", "/fhir/R4/Binary/{id}", at(format!("/fhir/R4/Binary/{r_ended}")))
            .expect([200, 404, 200, 404, 404, 404, 200, 401]),
        api("GET", "/groups/v1", at("/groups/v1".into())).expect(ANY),
        api("POST", "/groups/v1", at("/groups/v1".into()))
            .body(|who| json!({"name": format!("Made by {who}")}))
            .expect(ADMIN),
        api("GET", "/groups/v1/{id}", at(format!("/groups/v1/{ghent}")))
            .expect([200, 200, 404, 404, 404, 404, 200, 401]),
        api("GET", "/health/live", at("/health/live".into())).expect(PUBLIC),
        api("GET", "/health/ready", at("/health/ready".into())).expect(PUBLIC),
        api("GET", "/notifications/v1", at("/notifications/v1?limit(50)".into())).expect(ANY),
        api("POST", "/notifications/v1/mark_all_read", at("/notifications/v1/mark_all_read".into()))
            .body(|_| json!({}))
            .expect(ANY),
        api("PUT", "/notifications/v1/{id}", at(format!("/notifications/v1/{current_entry}")))
            .body(|_| json!({"read": true}))
            .expect([404, 200, 404, 404, 404, 404, 404, 401]),
        api("PUT", "/notifications/v1/{id}", at(format!("/notifications/v1/{removed_entry}")))
            .body(|_| json!({"read": true}))
            .expect([404, 404, 404, 404, 404, 404, 404, 401]),
        api("GET", "/profiles/v1", at("/profiles/v1".into())).expect(ANY),
        api("PUT", "/profiles/v1", at(format!("/profiles/v1?id={p}")))
            .body(|_| json!({"city": "Zyxwaville"}))
            .expect(ANY),
        api("GET", "/profiles/v1/{id}", at(format!("/profiles/v1/{p}"))).expect(RECORD),
        api("GET", "/reports/v1", at("/reports/v1".into())).expect(ANY),
        api("POST", "/reports/v1", at("/reports/v1".into()))
            .body({ let p = p.clone(); move |_| json!({"user_id": p}) })
            .expect([403, 200, 404, 404, 404, 404, 200, 401]),
        api("GET", "/reports/v1/{id}", at(format!("/reports/v1/{r_ghent}"))).expect(RECORD),
        api("GET", "/reports/v1/{id}", at(format!("/reports/v1/{r_ended}")))
            .expect([200, 404, 200, 404, 404, 404, 200, 401]),
        api("GET", "/reports/v1/{id}/pdf", at(format!("/reports/v1/{r_ghent}/pdf"))).expect(RECORD),
        api("GET", "/reports/v1/{id}/pdf", at(format!("/reports/v1/{r_ended}/pdf")))
            .expect([200, 404, 200, 404, 404, 404, 200, 401]),
        api("GET", "/share/{secret}", at(link.clone())).expect(PUBLIC),
        api("GET", "/share/{secret}", at(revoked_link.clone())).expect([404; 8]),
        api("GET", "/users/v1", at("/users/v1?limit(50)".into())).expect(ANY),
        api("GET", "/users/v1/me", at("/users/v1/me".into())).expect(ANY),
        api("POST", "/users/v1/register", at("/users/v1/register".into()))
            .body(|who| json!({"first_name": "New", "last_name": "Person",
                "email": format!("registered-{who}@tacho.test"), "password": "a long enough phrase",
                "language": "en", "time_zone": "Europe/Brussels"}))
            .expect(PUBLIC),
        api("GET", "/users/v1/{id}", at(format!("/users/v1/{p}"))).expect(RECORD),
        api("GET", "/users/v1/{id}/export", at(format!("/users/v1/{p}/export")))
            .expect([200, 403, 404, 404, 404, 404, 200, 401]),
        api("PUT", "/users/v1/{id}", at(format!("/users/v1/{p}")))
            .body(|_| json!({"last_name": "Tester"}))
            .expect([200, 403, 404, 404, 404, 404, 200, 401]),
        api("GET", "/users/v1/{id}/consents", at(format!("/users/v1/{p}/consents"))).expect(RECORD),
        // The patient never shared with Spare: nothing to withdraw, once the caller may.
        api("POST", "/users/v1/{id}/consents/withdraw", at(format!("/users/v1/{p}/consents/withdraw")))
            .body({ let s = spare.clone(); move |_| json!({"group_id": s}) })
            .expect([404, 403, 404, 404, 404, 404, 404, 401]),
        api("PUT", "/users/v1/{id}/legal_hold", at(format!("/users/v1/{x}/legal_hold")))
            .body(|_| json!({"legal_hold": false}))
            .expect(ADMIN_HIDDEN),
        api("GET", "/users/v1/{id}/erasure", at(format!("/users/v1/{p}/erasure")))
            .expect([403, 403, 404, 404, 404, 404, 200, 401]),
        // A confirmation that names no one: refused, and nothing is erased.
        api("POST", "/users/v1/{id}/erasure", at(format!("/users/v1/{x}/erasure")))
            .body(|_| json!({"confirmation": "nobody in particular"}))
            .expect([404, 404, 404, 404, 404, 404, 400, 401]),
        api("PUT", "/users/v1/{id}/activation", at(format!("/users/v1/{p}/activation")))
            .body(|_| json!({"activation": true}))
            .expect([403, 403, 404, 404, 404, 404, 200, 401]),
        api("POST", "/users/v1/{id}/patient_enlistments", at(format!("/users/v1/{p}/patient_enlistments")))
            .body({ let g = ghent.clone(); move |_| json!({"group_id": g, "expiry_timestamp": expiry}) })
            .expect([403, 200, 404, 404, 404, 404, 200, 401]),
        api("DELETE", "/users/v1/{id}/patient_enlistments/{group_id}",
            at(format!("/users/v1/{x}/patient_enlistments/{spare}")))
            .expect(ADMIN_HIDDEN),
        api("POST", "/users/v1/{id}/roles", at(format!("/users/v1/{x}/roles")))
            .body(|_| json!({"roles": ["admin"]}))
            .expect(ADMIN_HIDDEN),
        api("DELETE", "/users/v1/{id}/roles", at(format!("/users/v1/{x}/roles")))
            .body(|_| json!({"roles": ["admin"]}))
            .expect(ADMIN_HIDDEN),
        api("POST", "/users/v1/{id}/staff_enlistments", at(format!("/users/v1/{x}/staff_enlistments")))
            .body({ let s = spare.clone(); move |_| json!({"group_id": s}) })
            .expect(ADMIN_HIDDEN),
        api("DELETE", "/users/v1/{id}/staff_enlistments/{group_id}",
            at(format!("/users/v1/{x}/staff_enlistments/{spare}")))
            .expect(ADMIN_HIDDEN),
        api("GET", "/webhooks/v1", at("/webhooks/v1".into())).expect(ADMIN),
        api("POST", "/webhooks/v1", at("/webhooks/v1".into()))
            .body({ let s = spare.clone(); move |who| json!({"group_id": s,
                "url": format!("https://hooks.example/made-{who}"), "events": ["measurement.analysed"]}) })
            .expect([403, 403, 403, 403, 403, 403, 201, 401]),
        api("GET", "/webhooks/v1/{id}", at(format!("/webhooks/v1/{webhook}"))).expect(ADMIN),
        api("PUT", "/webhooks/v1/{id}", at(format!("/webhooks/v1/{webhook}")))
            .body(|_| json!({"enabled": true}))
            .expect(ADMIN),
        api("DELETE", "/webhooks/v1/{id}", at(format!("/webhooks/v1/{deleted}")))
            .expect([403, 403, 403, 403, 403, 403, 204, 401]),
    ]
}

/// A portal row: `GET` shows a page, `POST` sends `form` (with the session's CSRF token).
fn portal(method: &str, template: &str, path: impl Fn(usize) -> String + 'static) -> Row {
    api(method, &format!("/portal{template}"), path)
}

fn form(fields: &[(&str, &str)]) -> Value {
    Value::Object(
        fields
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Value::String((*v).to_owned())))
            .collect(),
    )
}

/// Portal pages (and forms answered with their page): shown to every member, the login page
/// to anonymous visitors.
const MEMBER: Expect = [200, 200, 200, 200, 200, 200, 200, 303];
/// A form every member may send, answered by a redirect.
const MEMBER_DONE: Expect = [303, 303, 303, 303, 303, 303, 303, 303];
/// A form every member may send, refused for what it holds (the page again, its field
/// saying why).
const MEMBER_REFUSED: Expect = [400, 400, 400, 400, 400, 400, 400, 303];
/// The portal's administration pages.
const PORTAL_ADMIN: Expect = [403, 403, 403, 403, 403, 403, 200, 303];
const PORTAL_RECORD: Expect = [200, 200, 404, 404, 404, 404, 200, 303];
/// The administration of an account the others do not see.
const PORTAL_ADMIN_HIDDEN: Expect = [404, 404, 404, 404, 404, 404, 303, 303];
/// The administration page of an account the others do not see.
const PORTAL_ADMIN_HIDDEN_PAGE: Expect = [404, 404, 404, 404, 404, 404, 200, 303];

fn portal_rows(f: &Fixture) -> Vec<Row> {
    let p = f.patient.id.clone();
    let x = f.spare_user.id.clone();
    let x_email = f.spare_user.email.clone();
    let (ghent, spare) = (f.ghent.clone(), f.spare.clone());
    let (m_ghent, m_ghent2, m_ended) = (f.m_ghent.clone(), f.m_ghent2.clone(), f.m_ended.clone());
    let (r_ghent, r_ended) = (f.r_ghent.clone(), f.r_ended.clone());
    let (current_entry, removed_entry) = (f.current_entry.clone(), f.removed_entry.clone());
    let webhook = f.webhook.clone();
    let deleted = f.webhooks_to_delete[1].clone();
    let links = f.links.clone();
    let report_links = f.report_links.clone();
    let until = (chrono::Utc::now() + chrono::Duration::days(40))
        .format("%Y-%m-%d")
        .to_string();
    let at = |s: String| move |_: usize| s.clone();
    vec![
        portal("GET", "/", at("/portal/".into())).expect([303; 8]),
        portal("GET", "/login", at("/portal/login".into()))
            .expect([303, 303, 303, 303, 303, 303, 303, 200]),
        portal("POST", "/login", at("/portal/login".into()))
            .body(|_| form(&[("email", "nobody@tacho.test"), ("password", "x")]))
            .expect([401; 8]),
        portal(
            "GET",
            "/password/forgot",
            at("/portal/password/forgot".into()),
        )
        .expect(PUBLIC),
        portal(
            "POST",
            "/password/forgot",
            at("/portal/password/forgot".into()),
        )
        .body(|_| form(&[("email", "nobody@tacho.test")]))
        .expect(PUBLIC),
        portal(
            "GET",
            "/password/reset/{secret}",
            at("/portal/password/reset/no-such-link".into()),
        )
        .expect([410; 8]),
        portal(
            "POST",
            "/password/reset/{secret}",
            at("/portal/password/reset/no-such-link".into()),
        )
        .body(|_| {
            form(&[
                ("new", "a long enough phrase"),
                ("confirm", "a long enough phrase"),
            ])
        })
        .expect([410; 8]),
        portal("GET", "/account", at("/portal/account".into())).expect(MEMBER),
        portal(
            "GET",
            "/account/export",
            at("/portal/account/export".into()),
        )
        .expect(MEMBER),
        portal(
            "POST",
            "/account/settings",
            at("/portal/account/settings".into()),
        )
        .body(|_| form(&[("language", "en"), ("time_zone", "Europe/Brussels")]))
        .expect(MEMBER_DONE),
        portal(
            "POST",
            "/account/password",
            at("/portal/account/password".into()),
        )
        .body(|_| {
            form(&[
                ("current", "not it"),
                ("new", "a long enough phrase"),
                ("confirm", "another phrase"),
            ])
        })
        .expect(MEMBER_REFUSED),
        portal("POST", "/account/email", at("/portal/account/email".into()))
            .body(|_| form(&[("email", "elsewhere@tacho.test"), ("password", "not it")]))
            .expect(MEMBER_REFUSED),
        portal(
            "GET",
            "/account/email/confirm/{secret}",
            at("/portal/account/email/confirm/no-such-link".into()),
        )
        .expect(PUBLIC),
        portal(
            "POST",
            "/account/email/confirm/{secret}",
            at("/portal/account/email/confirm/no-such-link".into()),
        )
        .body(|_| form(&[]))
        .expect([410; 8]),
        portal(
            "GET",
            "/account/email/stop/{secret}",
            at("/portal/account/email/stop/no-such-link".into()),
        )
        .expect([410; 8]),
        portal(
            "POST",
            "/account/email/stop/{secret}",
            at("/portal/account/email/stop/no-such-link".into()),
        )
        .body(|_| form(&[]))
        .expect([410; 8]),
        portal(
            "POST",
            "/admin/users/{id}/password-reset",
            // Not a caller's own account: a reset ends every login of the user. Without
            // e-mail the administrator gets the link to hand over (200).
            at(format!("/portal/admin/users/{x}/password-reset")),
        )
        .body(|_| form(&[]))
        .expect([403, 403, 403, 403, 403, 403, 200, 303]),
        portal("GET", "/notifications", at("/portal/notifications".into())).expect(MEMBER),
        portal(
            "GET",
            "/notifications/bell",
            at("/portal/notifications/bell".into()),
        )
        .expect(MEMBER),
        portal(
            "POST",
            "/notifications/read-all",
            at("/portal/notifications/read-all".into()),
        )
        .body(|_| form(&[]))
        .expect(MEMBER_DONE),
        portal(
            "GET",
            "/notifications/settings",
            at("/portal/notifications/settings".into()),
        )
        .expect(MEMBER),
        portal(
            "POST",
            "/notifications/settings",
            at("/portal/notifications/settings".into()),
        )
        .body(|_| form(&[]))
        .expect(MEMBER),
        portal(
            "POST",
            "/notifications/{id}/read",
            at(format!("/portal/notifications/{current_entry}/read")),
        )
        .body(|_| form(&[]))
        .expect([404, 303, 404, 404, 404, 404, 404, 303]),
        portal(
            "POST",
            "/notifications/{id}/read",
            at(format!("/portal/notifications/{removed_entry}/read")),
        )
        .body(|_| form(&[]))
        .expect([404, 404, 404, 404, 404, 404, 404, 303]),
        portal("GET", "/profile", at("/portal/profile".into())).expect(MEMBER),
        portal("POST", "/profile", at("/portal/profile".into()))
            .body(|_| form(&[]))
            .expect(MEMBER),
        portal("GET", "/measurements", at("/portal/measurements".into())).expect(MEMBER),
        portal(
            "GET",
            "/measurements/{id}",
            at(format!("/portal/measurements/{m_ghent}")),
        )
        .expect(PORTAL_RECORD),
        portal(
            "GET",
            "/measurements/{id}",
            at(format!("/portal/measurements/{m_ended}")),
        )
        .expect([200, 404, 200, 404, 404, 404, 200, 303]),
        portal(
            "POST",
            "/measurements/{id}/report",
            at(format!("/portal/measurements/{m_ghent}/report")),
        )
        .body(|_| form(&[]))
        .expect([303, 303, 404, 404, 404, 404, 303, 303]),
        portal(
            "POST",
            "/measurements/{id}/links",
            at(format!("/portal/measurements/{m_ghent}/links")),
        )
        .body(|_| form(&[("days", "30")]))
        .expect(PORTAL_RECORD),
        portal("POST", "/measurements/{id}/links/{link}/revoke", {
            let m = m_ghent.clone();
            move |who| format!("/portal/measurements/{m}/links/{}/revoke", links[who])
        })
        .body(|_| form(&[]))
        .expect([303, 303, 404, 404, 404, 404, 303, 303]),
        portal(
            "POST",
            "/measurements/{id}/app-tokens/revoke",
            at(format!("/portal/measurements/{m_ghent2}/app-tokens/revoke")),
        )
        .body(|_| form(&[]))
        .expect([303, 303, 404, 404, 404, 404, 303, 303]),
        portal(
            "POST",
            "/measurements/{id}/review",
            at(format!("/portal/measurements/{m_ghent}/review")),
        )
        .body(|_| form(&[("label", "sinus_rhythm"), ("note", "seen")]))
        .expect([403, 303, 404, 404, 404, 404, 303, 303]),
        portal("GET", "/trends", at("/portal/trends".into())).expect(MEMBER),
        portal("GET", "/reports", at("/portal/reports".into())).expect(MEMBER),
        portal(
            "GET",
            "/reports/{id}",
            at(format!("/portal/reports/{r_ghent}")),
        )
        .expect(PORTAL_RECORD),
        portal(
            "GET",
            "/reports/{id}",
            at(format!("/portal/reports/{r_ended}")),
        )
        .expect([200, 404, 200, 404, 404, 404, 200, 303]),
        portal(
            "POST",
            "/reports/{id}/links",
            at(format!("/portal/reports/{r_ghent}/links")),
        )
        .body(|_| form(&[("days", "30")]))
        .expect(PORTAL_RECORD),
        portal("POST", "/reports/{id}/links/{link}/revoke", {
            let r = r_ghent.clone();
            move |who| format!("/portal/reports/{r}/links/{}/revoke", report_links[who])
        })
        .body(|_| form(&[]))
        .expect([303, 303, 404, 404, 404, 404, 303, 303]),
        portal(
            "GET",
            "/reports/{id}/pdf",
            at(format!("/portal/reports/{r_ghent}/pdf")),
        )
        .expect(PORTAL_RECORD),
        portal(
            "GET",
            "/reports/{id}/pdf",
            at(format!("/portal/reports/{r_ended}/pdf")),
        )
        .expect([200, 404, 200, 404, 404, 404, 200, 303]),
        portal("GET", "/worklist", at("/portal/worklist".into()))
            .expect([403, 200, 200, 200, 200, 403, 200, 303]),
        portal("GET", "/patients", at("/portal/patients".into()))
            .expect([403, 200, 200, 200, 200, 403, 200, 303]),
        portal(
            "POST",
            "/patients/{id}/reports",
            at(format!("/portal/patients/{p}/reports")),
        )
        .body(|_| form(&[("period", "week")]))
        .expect([403, 303, 404, 404, 404, 404, 303, 303]),
        portal("GET", "/patients/{id}", at(format!("/portal/patients/{p}"))).expect(PORTAL_RECORD),
        portal(
            "GET",
            "/patients/{id}/trends",
            at(format!("/portal/patients/{p}/trends")),
        )
        .expect(PORTAL_RECORD),
        portal("GET", "/admin/users", at("/portal/admin/users".into())).expect(PORTAL_ADMIN),
        portal("POST", "/admin/users", at("/portal/admin/users".into()))
            .body(|who| {
                form(&[
                    ("first_name", "Made"),
                    ("last_name", "Here"),
                    ("email", &format!("made-{who}@tacho.test")),
                    ("password", "a long enough phrase"),
                    ("language", "en"),
                    ("time_zone", "Europe/Brussels"),
                ])
            })
            .expect(PORTAL_ADMIN),
        portal(
            "GET",
            "/admin/users/{id}",
            at(format!("/portal/admin/users/{x}")),
        )
        .expect(PORTAL_ADMIN_HIDDEN_PAGE),
        portal(
            "GET",
            "/admin/users/{id}/export",
            at(format!("/portal/admin/users/{p}/export")),
        )
        .expect([200, 403, 404, 404, 404, 404, 200, 303]),
        portal(
            "POST",
            "/admin/users/{id}",
            at(format!("/portal/admin/users/{x}")),
        )
        .body(|_| {
            form(&[
                ("first_name", "Renamed"),
                ("language", "en"),
                ("time_zone", "Europe/Brussels"),
            ])
        })
        .expect(PORTAL_ADMIN_HIDDEN),
        portal(
            "POST",
            "/admin/users/{id}/activation",
            at(format!("/portal/admin/users/{x}/activation")),
        )
        .body(|_| form(&[("value", "true")]))
        .expect(PORTAL_ADMIN_HIDDEN),
        portal(
            "GET",
            "/admin/users/{id}/erasure",
            at(format!("/portal/admin/users/{x}/erasure")),
        )
        .expect(PORTAL_ADMIN_HIDDEN_PAGE),
        portal(
            "POST",
            "/admin/users/{id}/legal-hold",
            at(format!("/portal/admin/users/{x}/legal-hold")),
        )
        .body(|_| form(&[]))
        .expect(PORTAL_ADMIN_HIDDEN),
        portal(
            "POST",
            "/admin/users/{id}/erasure",
            at(format!("/portal/admin/users/{x}/erasure")),
        )
        .body(|_| form(&[("confirmation", "nobody in particular")]))
        .expect([404, 404, 404, 404, 404, 404, 400, 303]),
        portal(
            "POST",
            "/admin/users/{id}/unblock",
            at(format!("/portal/admin/users/{x}/unblock")),
        )
        .body(|_| form(&[]))
        .expect(PORTAL_ADMIN_HIDDEN),
        portal(
            "POST",
            "/admin/users/{id}/admin",
            at(format!("/portal/admin/users/{x}/admin")),
        )
        .body(|_| form(&[("value", "false")]))
        .expect(PORTAL_ADMIN_HIDDEN),
        portal("GET", "/admin/groups", at("/portal/admin/groups".into())).expect(PORTAL_ADMIN),
        portal("POST", "/admin/groups", at("/portal/admin/groups".into()))
            .body(|who| form(&[("name", &format!("Portal group {who}"))]))
            .expect(PORTAL_ADMIN),
        portal(
            "POST",
            "/admin/enlistments",
            at("/portal/admin/enlistments".into()),
        )
        .body({
            let (e, s, u) = (x_email.clone(), spare.clone(), until.clone());
            move |_| {
                form(&[
                    ("email", &e),
                    ("group_id", &s),
                    ("kind", "staff"),
                    ("until", &u),
                ])
            }
        })
        .expect(PORTAL_ADMIN),
        portal(
            "POST",
            "/admin/staff/remove",
            at("/portal/admin/staff/remove".into()),
        )
        .body({
            let (x, s) = (x.clone(), spare.clone());
            move |_| form(&[("user_id", &x), ("group_id", &s)])
        })
        .expect([404, 404, 404, 404, 404, 404, 200, 303]),
        portal(
            "POST",
            "/admin/enlistments/end",
            at("/portal/admin/enlistments/end".into()),
        )
        // Ended already, through the API's row.
        .body({
            let (x, s) = (x.clone(), spare.clone());
            move |_| form(&[("patient_id", &x), ("group_id", &s)])
        })
        .expect([404, 404, 404, 404, 404, 404, 404, 303]),
        portal(
            "POST",
            "/admin/enlistments/extend",
            at("/portal/admin/enlistments/extend".into()),
        )
        // A day in the past: refused for the administrator, changing nothing.
        .body({
            let (x, s) = (x.clone(), spare.clone());
            move |_| {
                form(&[
                    ("patient_id", &x),
                    ("group_id", &s),
                    ("until", "2000-01-01"),
                ])
            }
        })
        .expect([404, 404, 404, 404, 404, 404, 400, 303]),
        portal("GET", "/admin/jobs", at("/portal/admin/jobs".into())).expect(PORTAL_ADMIN),
        portal(
            "GET",
            "/admin/jobs/upcoming",
            at("/portal/admin/jobs/upcoming".into()),
        )
        .expect(PORTAL_ADMIN),
        portal(
            "POST",
            "/admin/jobs/due",
            at("/portal/admin/jobs/due".into()),
        )
        .body(|_| form(&[]))
        .expect(PORTAL_ADMIN),
        portal("GET", "/admin/audit", at("/portal/admin/audit".into())).expect(PORTAL_ADMIN),
        portal(
            "GET",
            "/admin/audit/export",
            at("/portal/admin/audit/export".into()),
        )
        .expect(PORTAL_ADMIN),
        portal(
            "GET",
            "/admin/notifications",
            at("/portal/admin/notifications".into()),
        )
        .expect(PORTAL_ADMIN),
        portal(
            "POST",
            "/admin/groups/{id}/notifications",
            at(format!("/portal/admin/groups/{ghent}/notifications")),
        )
        .body(|_| form(&[("event", "measurement.analysed")]))
        .expect(PORTAL_ADMIN),
        portal(
            "POST",
            "/admin/webhooks",
            at("/portal/admin/webhooks".into()),
        )
        .body({
            let s = spare.clone();
            move |who| {
                form(&[
                    ("group_id", &s),
                    ("url", &format!("https://hooks.example/portal-{who}")),
                    ("event", "measurement.analysed"),
                ])
            }
        })
        .expect([403, 403, 403, 403, 403, 403, 200, 303]),
        portal(
            "GET",
            "/admin/webhooks/{id}",
            at(format!("/portal/admin/webhooks/{webhook}")),
        )
        .expect(PORTAL_ADMIN),
        portal(
            "POST",
            "/admin/webhooks/{id}/enabled",
            at(format!("/portal/admin/webhooks/{webhook}/enabled")),
        )
        .body(|_| form(&[("enabled", "1")]))
        .expect([403, 403, 403, 403, 403, 403, 303, 303]),
        portal(
            "POST",
            "/admin/webhooks/{id}/delete",
            at(format!("/portal/admin/webhooks/{deleted}/delete")),
        )
        .body(|_| form(&[]))
        .expect(PORTAL_ADMIN),
        // The patient stops sharing with Ghent, after every row that needs Ghent's physician
        // to see the patient; nobody else has a prescription there to stop.
        portal(
            "POST",
            "/account/consents/withdraw",
            at("/portal/account/consents/withdraw".into()),
        )
        .body({
            let g = ghent.clone();
            move |_| form(&[("group_id", g.as_str())])
        })
        .expect([303, 404, 404, 404, 404, 404, 404, 303]),
        // Last: these end the caller's own sessions.
        portal(
            "POST",
            "/account/sign-out-everywhere",
            at("/portal/account/sign-out-everywhere".into()),
        )
        .body(|_| form(&[]))
        .expect(MEMBER_DONE),
        portal("POST", "/logout", at("/portal/logout".into()))
            .body(|_| form(&[]))
            .expect(MEMBER_DONE),
    ]
}

/// One answer: status, content type and text.
struct Answer {
    status: u16,
    content_type: String,
    text: String,
}

async fn ask_api(
    app: &TestApp,
    token: Option<&str>,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Answer {
    let method = Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = app.client.request(method, app.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request sent");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let bytes = response.bytes().await.unwrap_or_default();
    Answer {
        status,
        content_type,
        text: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

async fn ask_portal(
    browser: &mut Browser<'_>,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Answer {
    let page = match (method, body) {
        ("GET", _) => browser.get(path).await,
        (_, body) => {
            let fields: Vec<(String, String)> = body
                .and_then(|b| b.as_object().cloned())
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, v.as_str().unwrap_or_default().to_owned()))
                .collect();
            let fields: Vec<(&str, &str)> = fields
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            // The session's token, or the login form's once there is no session.
            let account = browser.get("/portal/account").await;
            let from = if account.status == 200 {
                "/portal/account"
            } else {
                "/portal/login"
            };
            browser.post(from, path, &fields).await
        }
    };
    Answer {
        status: page.status.as_u16(),
        content_type: page
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned(),
        text: page.body,
    }
}

/// The routes of the OpenAPI document and of the portal's table, as `METHOD /path`.
fn every_route() -> BTreeSet<String> {
    let document: Value = serde_json::from_str(&tacho::routes::api::openapi::document()).unwrap();
    let mut routes = BTreeSet::new();
    for (path, operations) in document["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            if ["get", "post", "put", "delete", "patch"].contains(&method.as_str()) {
                routes.insert(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    for (method, path) in tacho::routes::web::ROUTES {
        routes.insert(format!("{} /portal{path}", method.to_uppercase()));
    }
    routes
}

#[tokio::test]
async fn every_route_answers_each_relationship_and_leaks_nothing_it_may_not_see() {
    let app = spawn_app().await;
    let f = build(&app).await;
    let api = api_rows(&f);
    let portal = portal_rows(&f);

    // Every route has a row, and every row is a route.
    let covered: BTreeSet<String> = api.iter().chain(&portal).map(|r| r.route.clone()).collect();
    let routes = every_route();
    let missing: Vec<_> = routes.difference(&covered).collect();
    assert!(
        missing.is_empty(),
        "routes without a row in the access matrix: {missing:?}"
    );
    let unknown: Vec<_> = covered.difference(&routes).collect();
    assert!(unknown.is_empty(), "rows for no route: {unknown:?}");

    let mut browsers = Vec::new();
    for user in &f.users {
        browsers.push(logged_in(&app, user).await);
    }
    browsers.push(Browser::new(&app));
    let mut failures = Vec::new();
    for (row, is_portal) in api
        .iter()
        .map(|r| (r, false))
        .chain(portal.iter().map(|r| (r, true)))
    {
        let mut statuses = [0u16; 8];
        for (who, name) in WHO.iter().enumerate() {
            let path = (row.path)(who);
            let body = row.body.as_ref().map(|b| b(who));
            let method = row.route.split(' ').next().unwrap();
            let answer = if is_portal {
                ask_portal(&mut browsers[who], method, &path, body.clone()).await
            } else {
                let token = f
                    .users
                    .get(who)
                    .filter(|_| !row.public)
                    .map(|u| u.token.as_str());
                ask_api(&app, token, method, &path, body.clone()).await
            };
            statuses[who] = answer.status;
            if answer.content_type.starts_with("application/pdf") {
                continue;
            }
            let asked = format!("{path} {}", body.map(|b| b.to_string()).unwrap_or_default());
            for (marker, value) in &f.markers {
                if sees(who, *marker)
                    || row.granted.contains(marker)
                    || asked.contains(value.as_str())
                {
                    continue;
                }
                if answer.text.contains(value.as_str()) {
                    failures.push(format!(
                        "{} ({path}) as {name} carries {marker:?} ({value})",
                        row.route
                    ));
                }
            }
        }
        if statuses != row.expect {
            failures.push(format!(
                "{} ({}) answered {statuses:?} where the matrix says {:?}",
                row.route,
                (row.path)(0),
                row.expect
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
