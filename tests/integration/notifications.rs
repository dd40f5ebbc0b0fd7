//! Notifications end to end: events fanned out to inboxes, e-mail through a real SMTP server
//! on loopback (`mailin-embedded`), and webhooks to a real HTTP receiver on loopback, checked
//! with the Standard Webhooks reference library. The job queue is worked by a scheduler on
//! the test's clock.

use std::collections::VecDeque;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use chrono::Duration;
use mail_parser::MessageParser;
use serde_json::{Value, json};
use tacho::scheduler::RunSummary;

use crate::helpers::{TestApp, TestUser, World, spawn_app, spawn_app_with};
use crate::portal::logged_in;

// ---------------------------------------------------------------------------------------
// A real SMTP server on loopback.

/// One message as the SMTP server received it.
#[derive(Debug, Clone)]
pub(crate) struct Mail {
    from: String,
    pub(crate) to: Vec<String>,
    data: Vec<u8>,
}

impl Mail {
    pub(crate) fn parsed(&self) -> mail_parser::Message<'_> {
        MessageParser::default()
            .parse(&self.data)
            .expect("a MIME message")
    }
}

#[derive(Clone, Default)]
pub(crate) struct Inbox {
    pub(crate) received: Arc<Mutex<Vec<Mail>>>,
    /// How many of the next messages to refuse with a temporary failure (451).
    refuse: Arc<Mutex<usize>>,
}

/// One SMTP session's handler (mailin-embedded clones it per connection).
#[derive(Clone)]
struct SmtpHandler {
    inbox: Inbox,
    current: Option<Mail>,
}

impl mailin_embedded::Handler for SmtpHandler {
    fn data_start(
        &mut self,
        _domain: &str,
        from: &str,
        _is8bit: bool,
        to: &[String],
    ) -> mailin_embedded::Response {
        // Refused here rather than at the end of DATA: after an error there, mailin stays
        // in its DATA state and never answers the client's QUIT.
        let mut refuse = self.inbox.refuse.lock().unwrap();
        if *refuse > 0 {
            *refuse -= 1;
            return mailin_embedded::response::INTERNAL_ERROR;
        }
        self.current = Some(Mail {
            from: from.to_owned(),
            to: to.to_vec(),
            data: Vec::new(),
        });
        mailin_embedded::response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if let Some(mail) = &mut self.current {
            mail.data.extend_from_slice(buf);
        }
        Ok(())
    }

    fn data_end(&mut self) -> mailin_embedded::Response {
        if let Some(mail) = self.current.take() {
            self.inbox.received.lock().unwrap().push(mail);
        }
        mailin_embedded::response::OK
    }
}

/// Starts an SMTP server on a free loopback port; returns its URL and what it receives.
fn smtp_server() -> (String, Inbox) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let inbox = Inbox::default();
    let mut server = mailin_embedded::Server::new(SmtpHandler {
        inbox: inbox.clone(),
        current: None,
    });
    server
        .with_name("mail.test")
        .with_ssl(mailin_embedded::SslConfig::None)
        .unwrap()
        .with_tcp_listener(listener)
        // One thread per session; the service keeps a pool of connections open.
        .with_num_threads(32);
    std::thread::spawn(move || {
        server.serve().ok();
    });
    (format!("smtp://127.0.0.1:{port}"), inbox)
}

impl Inbox {
    fn to(&self, user: &TestUser) -> Vec<Mail> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m.to.iter().any(|t| t == &user.email))
            .cloned()
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// A real HTTP receiver on loopback.

/// One request as the receiver saw it.
#[derive(Debug, Clone)]
struct Hook {
    headers: http::HeaderMap,
    body: String,
}

#[derive(Clone, Default)]
struct Receiver {
    received: Arc<Mutex<Vec<Hook>>>,
    /// The statuses to answer, in order; 200 once they run out.
    answers: Arc<Mutex<VecDeque<u16>>>,
    /// While set, requests wait here before they are answered.
    gate: Arc<Mutex<Option<Arc<tokio::sync::Semaphore>>>>,
}

async fn receive(
    receiver: actix_web::web::Data<Receiver>,
    request: actix_web::HttpRequest,
    body: String,
) -> actix_web::HttpResponse {
    let mut headers = http::HeaderMap::new();
    for (name, value) in request.headers() {
        headers.insert(
            http::HeaderName::from_bytes(name.as_str().as_bytes()).unwrap(),
            http::HeaderValue::from_bytes(value.as_bytes()).unwrap(),
        );
    }
    receiver
        .received
        .lock()
        .unwrap()
        .push(Hook { headers, body });
    let gate = receiver.gate.lock().unwrap().clone();
    if let Some(gate) = gate {
        let _ = gate.acquire().await;
    }
    let status = receiver.answers.lock().unwrap().pop_front().unwrap_or(200);
    actix_web::HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap()).finish()
}

/// Starts an HTTP receiver on a free loopback port; returns its URL.
fn webhook_receiver() -> (String, Receiver) {
    let receiver = Receiver::default();
    let data = actix_web::web::Data::new(receiver.clone());
    let server = actix_web::HttpServer::new(move || {
        actix_web::App::new()
            .app_data(data.clone())
            .route("/hooks", actix_web::web::post().to(receive))
    })
    .workers(1)
    .bind(("127.0.0.1", 0))
    .unwrap();
    let port = server.addrs()[0].port();
    tokio::spawn(server.run());
    (format!("http://127.0.0.1:{port}/hooks"), receiver)
}

impl Receiver {
    fn hooks(&self) -> Vec<Hook> {
        self.received.lock().unwrap().clone()
    }
}

/// A server whose e-mail goes to a fresh SMTP server and whose webhooks may call loopback.
pub(crate) async fn notifying_app() -> (TestApp, Inbox) {
    let (smtp_url, inbox) = smtp_server();
    let app = spawn_app_with(|s| {
        s.smtp_url = Some(smtp_url.into());
        s.mail_from = "Tacho <noreply@clinic.test>".into();
        // Plain http: the portal's cookies are `Secure` under https, and the test client
        // speaks http.
        s.base_url = "http://tacho.clinic.test".into();
        s.webhook_allow_loopback = true;
    })
    .await;
    (app, inbox)
}

async fn notifications(app: &TestApp, user: &TestUser) -> Vec<Value> {
    app.get("/notifications/v1", &user.token).await.assert_ok()["data"]
        .as_array()
        .unwrap()
        .clone()
}

fn kinds(items: &[Value]) -> Vec<&str> {
    let mut kinds: Vec<&str> = items.iter().map(|n| n["kind"].as_str().unwrap()).collect();
    kinds.sort();
    kinds
}

#[tokio::test]
async fn a_patient_and_the_physicians_are_told_of_a_result_by_inbox_and_email() {
    let (app, mail) = notifying_app().await;
    let world = World::new(&app).await;
    app.set_language(&world.patient, "NL").await;
    let at = app.clock_millis();
    let measurement = app
        .measure_at(&world.patient, at, 90.0, "irregular", &[])
        .await;
    let summary = app.work_queue().await;
    assert_eq!((summary.failed, summary.notify_failed), (0, 0));

    // The patient: the analysed result, not the staff's urgent flag.
    let own = notifications(&app, &world.patient).await;
    assert_eq!(kinds(&own), ["measurement.analysed"]);
    assert_eq!(own[0]["measurement_id"], measurement.as_str());
    assert_eq!(own[0]["patient_id"], world.patient.id.as_str());
    assert_eq!(own[0]["read"], false);
    // The physician of the patient's group: once, as urgent; the other group's and other
    // patients: none.
    let staff = notifications(&app, &world.staff_a).await;
    assert_eq!(kinds(&staff), ["result.urgent"]);
    assert_eq!(staff[0]["measurement_id"], measurement.as_str());
    assert!(notifications(&app, &world.staff_b).await.is_empty());
    assert!(notifications(&app, &world.other_patient).await.is_empty());
    assert!(notifications(&app, &world.patient_b).await.is_empty());

    // E-mail: one to the patient in Dutch, one to the physician in English.
    let to_patient = mail.to(&world.patient);
    assert_eq!(to_patient.len(), 1, "{to_patient:?}");
    let message = &to_patient[0];
    assert_eq!(message.from, "noreply@clinic.test");
    assert_eq!(message.to, std::slice::from_ref(&world.patient.email));
    let parsed = message.parsed();
    assert_eq!(
        parsed.subject(),
        Some("Tacho: er is een nieuwe meetuitslag")
    );
    assert_eq!(
        parsed.header_raw("Content-Language").map(str::trim),
        Some("nl")
    );
    let event_id = own[0]["event_id"].as_str().unwrap();
    assert_eq!(
        parsed.header_raw("X-Tacho-Event-Id").map(str::trim),
        Some(event_id)
    );
    assert!(
        parsed
            .message_id()
            .is_some_and(|id| id.starts_with(event_id)),
        "{:?}",
        parsed.message_id()
    );
    let text = parsed.body_text(0).unwrap();
    let html = parsed.body_html(0).unwrap();
    let link = format!("http://tacho.clinic.test/portal/measurements/{measurement}");
    assert!(text.contains(&link), "{text}");
    assert!(html.contains(&link), "{html}");
    assert!(text.starts_with("Beste patient,"), "{text}");
    // Nothing of the result, the rhythm or the rate leaves the portal.
    for secret in ["atrial", "fibrill", "boezem", "urgent", "bpm", "tester"] {
        assert!(
            !text.to_lowercase().contains(secret),
            "`{secret}` in {text}"
        );
        assert!(
            !html.to_lowercase().contains(secret),
            "`{secret}` in {html}"
        );
    }
    assert_eq!(parsed.attachment_count(), 0);
    let to_staff = mail.to(&world.staff_a);
    let mut subjects: Vec<String> = to_staff
        .iter()
        .map(|m| m.parsed().subject().unwrap().to_owned())
        .collect();
    subjects.sort();
    assert_eq!(subjects, ["Tacho: a measurement needs your review"]);
    assert!(mail.to(&world.staff_b).is_empty());

    // Delivering again sends nothing twice.
    assert_eq!(app.work_queue().await, RunSummary::default());
    assert_eq!(mail.received.lock().unwrap().len(), 2);

    // Read marks: one's own only.
    let id = own[0]["id"].as_str().unwrap();
    let marked = app
        .put(
            &format!("/notifications/v1/{id}"),
            &world.patient.token,
            json!({"read": true}),
        )
        .await;
    assert_eq!(marked.assert_ok()["read"], true);
    app.put(
        &format!("/notifications/v1/{id}"),
        &world.staff_a.token,
        json!({"read": true}),
    )
    .await
    .assert_error(404, 16);
    app.put(
        &format!("/notifications/v1/{id}"),
        &world.patient.token,
        json!({"read": "yes"}),
    )
    .await
    .assert_error(400, 15);
    let unread = app
        .get("/notifications/v1?read=false", &world.staff_a.token)
        .await;
    assert_eq!(unread.assert_ok()["data"].as_array().unwrap().len(), 1);
    let all = app
        .post(
            "/notifications/v1/mark_all_read",
            &world.staff_a.token,
            json!({}),
        )
        .await;
    assert_eq!(all.assert_ok()["affected_records"], 1);
}

#[tokio::test]
async fn a_review_and_a_report_reach_the_patient_and_the_group_chooses_what_its_staff_get() {
    let (app, mail) = notifying_app().await;
    let world = World::new(&app).await;
    // Group A's physicians receive reviews only.
    let admin = logged_in(&app, &world.admin).await;
    let mut admin = admin;
    let saved = admin
        .post(
            "/portal/admin/notifications",
            &format!("/portal/admin/groups/{}/notifications", world.group_a),
            &[("event", "measurement.reviewed")],
        )
        .await;
    assert_eq!(saved.status, 200, "{}", saved.body);
    let at = app.clock_millis();
    let measurement = app
        .measure_at(&world.patient, at, 70.0, "normal", &[])
        .await;
    app.work_queue().await;
    assert!(notifications(&app, &world.staff_a).await.is_empty());
    // The physician reviews; the patient is told, the reviewer is not.
    app.review(&world.staff_a, &measurement).await;
    app.work_queue().await;
    let own = notifications(&app, &world.patient).await;
    assert_eq!(
        kinds(&own),
        ["measurement.analysed", "measurement.reviewed"]
    );
    assert!(notifications(&app, &world.staff_a).await.is_empty());
    // The physician asks for the PDF: the patient hears it is ready.
    app.post(
        "/data/v1/measurement-reports/documents",
        &world.staff_a.token,
        json!({"measurementId": measurement, "language": "en"}),
    )
    .await
    .assert_ok();
    app.work_queue().await;
    let own = notifications(&app, &world.patient).await;
    assert_eq!(
        kinds(&own),
        [
            "measurement.analysed",
            "measurement.report_ready",
            "measurement.reviewed"
        ]
    );
    let subjects: Vec<String> = mail
        .to(&world.patient)
        .iter()
        .map(|m| m.parsed().subject().unwrap().to_owned())
        .collect();
    assert_eq!(subjects.len(), 3, "{subjects:?}");
    assert!(subjects.contains(&"Tacho: a new report is ready".to_owned()));
}

#[tokio::test]
async fn preferences_mute_a_channel_and_a_digest_gathers_a_day_into_one_email() {
    let (app, mail) = notifying_app().await;
    let world = World::new(&app).await;
    let mut patient = logged_in(&app, &world.patient).await;
    // E-mail off for results, and a daily digest for the rest.
    let saved = patient
        .post(
            "/portal/notifications/settings",
            "/portal/notifications/settings",
            &[
                ("on", "measurement.analysed:inbox"),
                ("on", "measurement.reviewed:inbox"),
                ("on", "measurement.reviewed:email"),
                ("daily_digest", "1"),
            ],
        )
        .await;
    assert_eq!(saved.status, 200, "{}", saved.body);
    assert!(saved.body.contains("notification settings are saved"));
    let at = app.clock_millis();
    let first = app
        .measure_at(&world.patient, at, 70.0, "normal", &[])
        .await;
    let second = app
        .measure_at(&world.patient, at + 1000, 72.0, "normal", &[])
        .await;
    app.review(&world.staff_a, &first).await;
    app.review(&world.staff_a, &second).await;
    app.work_queue().await;
    assert_eq!(
        notifications(&app, &world.patient).await.len(),
        4,
        "the inbox has everything"
    );
    assert!(mail.to(&world.patient).is_empty(), "no single e-mails");
    // The next morning, one digest with the two reviews (results were muted for e-mail).
    app.clock.advance(Duration::hours(32));
    app.work_queue().await;
    let digests = mail.to(&world.patient);
    assert_eq!(digests.len(), 1);
    let parsed = digests[0].parsed();
    assert_eq!(parsed.subject(), Some("Tacho: 2 updates are ready"));
    let text = parsed.body_text(0).unwrap();
    assert_eq!(
        text.matches("Measurement reviewed by your physician")
            .count(),
        2,
        "{text}"
    );
    // A digest is sent once.
    app.clock.advance(Duration::days(1));
    app.work_queue().await;
    assert_eq!(mail.to(&world.patient).len(), 1);
}

#[tokio::test]
async fn a_failing_relay_is_retried_with_backoff_and_the_last_failure_is_shown_to_admins() {
    let (app, mail) = notifying_app().await;
    let world = World::new(&app).await;
    *mail.refuse.lock().unwrap() = 2;
    let at = app.clock_millis();
    app.measure_at(&world.patient, at, 70.0, "normal", &[])
        .await;
    let first = app.work_queue().await;
    assert!(first.notify_failed >= 1, "{first:?}");
    assert!(mail.to(&world.patient).is_empty());
    // Not before its time: the first retry waits a minute.
    assert_eq!(app.work_queue().await.handled(), 0);
    app.clock.advance(Duration::seconds(61));
    app.work_queue().await;
    app.clock.advance(Duration::minutes(6));
    app.work_queue().await;
    assert_eq!(
        mail.to(&world.patient).len(),
        1,
        "delivered on the third attempt"
    );

    // A relay that never takes it: after the sixth attempt the job is failed, on the jobs page.
    *mail.refuse.lock().unwrap() = usize::MAX;
    app.review(&world.staff_a, &{
        let list = notifications(&app, &world.patient).await;
        list[0]["measurement_id"].as_str().unwrap().to_owned()
    })
    .await;
    for wait in [0, 61, 301, 1801, 7201, 21601, 60] {
        app.clock.advance(Duration::seconds(wait));
        app.work_queue().await;
    }
    let mut admin = logged_in(&app, &world.admin).await;
    let page = admin.get("/portal/admin/jobs?status=failed").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("<td>email</td>"), "{}", page.body);
    assert!(page.body.contains("SMTP"), "the relay's refusal is shown");
}

#[tokio::test]
async fn without_an_smtp_url_only_the_inbox_is_used() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let at = app.clock_millis();
    app.measure_at(&world.patient, at, 70.0, "normal", &[])
        .await;
    let summary = app.work_queue().await;
    assert_eq!(
        summary.notified, 1,
        "one fan-out and no e-mail: {summary:?}"
    );
    assert_eq!(notifications(&app, &world.patient).await.len(), 1);
}

async fn register(app: &TestApp, admin: &TestUser, url: &str, group: &str, events: Value) -> Value {
    let reply = app
        .post(
            "/webhooks/v1",
            &admin.token,
            json!({"url": url, "events": events, "group_id": group}),
        )
        .await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    reply.body
}

fn verify(hook: &Hook, secret: &str) {
    standardwebhooks::Webhook::new(secret)
        .unwrap()
        .verify(hook.body.as_bytes(), &hook.headers)
        .expect("the signature verifies with the reference library");
}

#[tokio::test]
async fn webhooks_are_signed_retried_in_order_and_logged() {
    let (app, _) = notifying_app().await;
    let world = World::new(&app).await;
    let (url, receiver) = webhook_receiver();
    receiver.answers.lock().unwrap().extend([500, 503]);
    let endpoint = register(
        &app,
        &world.admin,
        &url,
        &world.group_a,
        json!(["measurement.analysed", "result.urgent"]),
    )
    .await;
    let secret = endpoint["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"));
    let id = endpoint["id"].as_str().unwrap();
    // The secret is shown once.
    let listed = app.get("/webhooks/v1", &world.admin.token).await;
    assert!(listed.assert_ok()[0].get("secret").is_none());

    let at = app.clock_millis();
    let measurement = app
        .measure_at(&world.patient, at, 70.0, "normal", &[])
        .await;
    app.work_queue().await;
    assert_eq!(receiver.hooks().len(), 1, "first attempt answered 500");
    app.clock.advance(Duration::seconds(4));
    app.work_queue().await;
    assert_eq!(receiver.hooks().len(), 1, "the retry waits 5 s");
    app.clock.advance(Duration::seconds(2));
    app.work_queue().await;
    assert_eq!(receiver.hooks().len(), 2, "second attempt answered 503");
    app.clock.advance(Duration::seconds(301));
    app.work_queue().await;
    let hooks = receiver.hooks();
    assert_eq!(hooks.len(), 3, "third attempt delivered");
    for hook in &hooks {
        verify(hook, secret);
        let body: Value = serde_json::from_str(&hook.body).unwrap();
        assert_eq!(body["type"], "measurement.analysed");
        assert_eq!(body["data"]["measurement_id"], measurement.as_str());
        assert_eq!(body["data"]["group_id"], world.group_a.as_str());
        assert_eq!(
            body["data"]["links"]["api"],
            format!("http://tacho.clinic.test/data/v1/measurements/documents/{measurement}")
        );
        assert!(body["data"].get("heartrate").is_none());
    }
    let ids: Vec<&str> = hooks
        .iter()
        .map(|h| h.headers["webhook-id"].to_str().unwrap())
        .collect();
    assert!(
        ids.iter().all(|i| *i == ids[0]),
        "one event id on every retry"
    );
    // A signature under another secret does not verify.
    let forged = standardwebhooks::Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        .unwrap()
        .verify(hooks[0].body.as_bytes(), &hooks[0].headers);
    assert!(forged.is_err());

    let log = app
        .get(&format!("/webhooks/v1/{id}"), &world.admin.token)
        .await;
    let deliveries = log.assert_ok()["deliveries"].as_array().unwrap().clone();
    let seen: Vec<(i64, &str, i64)> = deliveries
        .iter()
        .rev()
        .map(|d| {
            (
                d["attempt"].as_i64().unwrap(),
                d["outcome"].as_str().unwrap(),
                d["status_code"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (1, "failed", 500),
            (2, "failed", 503),
            (3, "delivered", 200)
        ]
    );
    // The portal shows the same log.
    let mut admin = logged_in(&app, &world.admin).await;
    let page = admin.get(&format!("/portal/admin/webhooks/{id}")).await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.body.matches("class=\"failed\"").count(),
        2,
        "{}",
        page.body
    );
    assert_eq!(page.body.matches("class=\"delivered\"").count(), 1);
}

#[tokio::test]
async fn webhook_registration_is_for_administrators_and_refuses_unsafe_addresses() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let body = |url: &str| json!({"url": url, "events": ["measurement.analysed"], "group_id": world.group_a});
    app.post(
        "/webhooks/v1",
        &world.staff_a.token,
        body("https://clinic.test/h"),
    )
    .await
    .assert_error(403, 10);
    for url in [
        "http://clinic.test/hooks",
        "http://127.0.0.1:9/hooks",
        "https://169.254.169.254/latest/meta-data",
        "https://[fd00:ec2::254]/",
        "ftp://clinic.test/",
        "not a url",
    ] {
        let reply = app
            .post("/webhooks/v1", &world.admin.token, body(url))
            .await;
        reply.assert_error(400, 15);
    }
    // A host name is resolved at registration: one that names this machine is refused. The
    // machine's own name resolves to loopback in the hosts file of many machines.
    use std::net::ToSocketAddrs;
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let name = name.trim();
    let addresses: Vec<_> = (name, 443)
        .to_socket_addrs()
        .map(|a| a.collect())
        .unwrap_or_default();
    if !name.is_empty() && !addresses.is_empty() && addresses.iter().all(|a| a.ip().is_loopback()) {
        let reply = app
            .post(
                "/webhooks/v1",
                &world.admin.token,
                body(&format!("https://{name}/h")),
            )
            .await;
        reply.assert_error(400, 15);
        let message = reply.body["message"].as_str().unwrap();
        assert!(message.contains("this machine"), "{message}");
    } else {
        eprintln!(
            "{name:?} does not resolve to loopback here: the resolution check is not exercised"
        );
    }
    let unknown = app
        .post(
            "/webhooks/v1",
            &world.admin.token,
            json!({"url": "https://clinic.test/h", "events": ["measurement.deleted"], "group_id": world.group_a}),
        )
        .await;
    unknown.assert_error(400, 15);
    assert!(
        unknown.body["message"]
            .as_str()
            .unwrap()
            .contains("measurement.deleted")
    );
    let no_group = app
        .post(
            "/webhooks/v1",
            &world.admin.token,
            json!({"url": "https://clinic.test/h", "events": ["measurement.analysed"], "group_id": "5f0c3f6b2a1e4d3c2b1a0f9e"}),
        )
        .await;
    no_group.assert_error(404, 16);
    let made = register(
        &app,
        &world.admin,
        "https://clinic.test/h",
        &world.group_a,
        json!(["result.urgent"]),
    )
    .await;
    let id = made["id"].as_str().unwrap();
    app.get(&format!("/webhooks/v1/{id}"), &world.staff_a.token)
        .await
        .assert_error(403, 10);
    app.delete(&format!("/webhooks/v1/{id}"), &world.admin.token, None)
        .await;
    app.get(&format!("/webhooks/v1/{id}"), &world.admin.token)
        .await
        .assert_error(404, 16);
}

#[tokio::test]
async fn an_endpoint_that_keeps_failing_is_disabled_and_the_administrators_are_told() {
    let (app, mail) = notifying_app().await;
    let mut world = World::new(&app).await;
    let (url, receiver) = webhook_receiver();
    receiver.answers.lock().unwrap().extend([500; 20]);
    let endpoint = register(
        &app,
        &world.admin,
        &url,
        &world.group_a,
        json!(["measurement.analysed"]),
    )
    .await;
    let id = endpoint["id"].as_str().unwrap().to_owned();
    let at = app.clock_millis();
    app.measure_at(&world.patient, at, 70.0, "normal", &[])
        .await;
    app.work_queue().await;
    for wait in [5, 300, 1_800, 7_200, 18_000, 36_000] {
        app.clock.advance(Duration::seconds(wait + 1));
        app.work_queue().await;
    }
    assert_eq!(receiver.hooks().len(), 7, "the whole schedule was tried");
    world.admin.token = app.login(&world.admin.email).await;
    let now = app
        .get(&format!("/webhooks/v1/{id}"), &world.admin.token)
        .await;
    let now = now.assert_ok();
    assert_eq!(now["enabled"], false);
    assert!(now["disabled_reason"].as_str().unwrap().contains("500"));
    let told = notifications(&app, &world.admin).await;
    assert_eq!(kinds(&told), ["webhook.disabled"]);
    assert_eq!(told[0]["report_id"], id.as_str());
    assert_eq!(mail.to(&world.admin).len(), 1);
    // Disabled, it receives nothing more; enabled again, it does.
    app.measure_at(&world.patient, app.clock_millis(), 71.0, "normal", &[])
        .await;
    app.work_queue().await;
    assert_eq!(receiver.hooks().len(), 7);
    app.put(
        &format!("/webhooks/v1/{id}"),
        &world.admin.token,
        json!({"enabled": true}),
    )
    .await
    .assert_ok();
    receiver.answers.lock().unwrap().clear();
    app.measure_at(&world.patient, app.clock_millis(), 72.0, "normal", &[])
        .await;
    app.work_queue().await;
    assert_eq!(receiver.hooks().len(), 8);
}

#[tokio::test]
async fn a_worker_killed_mid_delivery_loses_nothing() {
    let (app, _) = notifying_app().await;
    let world = World::new(&app).await;
    let (url, receiver) = webhook_receiver();
    let endpoint = register(
        &app,
        &world.admin,
        &url,
        &world.group_a,
        json!(["measurement.analysed"]),
    )
    .await;
    let secret = endpoint["secret"].as_str().unwrap().to_owned();
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    *receiver.gate.lock().unwrap() = Some(gate.clone());
    let at = app.clock_millis();
    app.measure_at(&world.patient, at, 70.0, "normal", &[])
        .await;
    // A worker takes the delivery and is killed while the receiver holds the request.
    let doomed = app.scheduler();
    let worker = tokio::spawn(async move { doomed.work(|_| {}).await });
    for _ in 0..200 {
        if !receiver.hooks().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(receiver.hooks().len(), 1, "the delivery is in flight");
    worker.abort();
    assert!(worker.await.unwrap_err().is_cancelled());
    *receiver.gate.lock().unwrap() = None;
    gate.add_permits(10);
    // Its lease runs out; another worker delivers the same event again.
    assert_eq!(
        app.work_queue().await.notified,
        0,
        "still leased to the dead worker"
    );
    app.clock.advance(Duration::seconds(301));
    app.work_queue().await;
    let hooks = receiver.hooks();
    assert_eq!(hooks.len(), 2);
    assert_eq!(
        hooks[0].headers["webhook-id"], hooks[1].headers["webhook-id"],
        "the receiver can drop the second copy by its id"
    );
    verify(&hooks[1], &secret);
    // The inbox entry was written once.
    assert_eq!(notifications(&app, &world.patient).await.len(), 1);
}

#[tokio::test]
async fn the_portal_shows_a_bell_an_inbox_that_polls_and_marks_entries_read() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    app.set_language(&world.staff_a, "AR").await;
    let at = app.clock_millis();
    let measurement = app
        .measure_at(&world.patient, at, 90.0, "irregular", &[])
        .await;
    app.work_queue().await;
    let mut staff = logged_in(&app, &world.staff_a).await;
    let bell = staff.get("/portal/notifications/bell").await;
    assert_eq!(bell.status, 200);
    assert!(
        bell.body
            .contains("<span class=\"count\" aria-hidden=\"true\">1</span>"),
        "one entry for the urgent result: {}",
        bell.body
    );
    assert!(bell.body.contains("hx-trigger=\"every 20s"));
    let inbox = staff.get("/portal/notifications").await;
    assert!(inbox.body.contains("<html lang=\"ar\" dir=\"rtl\">"));
    assert!(
        inbox
            .body
            .contains(&format!("/portal/measurements/{measurement}"))
    );
    assert!(
        inbox.body.contains("patient Tester"),
        "the patient is named"
    );
    assert!(
        inbox.body.contains("hx-trigger=\"every 20s\""),
        "the list polls"
    );
    // A new event appears in the polled fragment without a reload.
    app.measure_at(&world.patient, at + 1000, 91.0, "irregular", &[])
        .await;
    app.work_queue().await;
    staff.headers.push(("HX-Request", "true".into()));
    let fragment = staff.get("/portal/notifications").await;
    assert!(!fragment.body.contains("<html"), "a fragment");
    assert_eq!(
        fragment.body.matches("class=\"notification unread").count(),
        2
    );
    // Mark one read (htmx: the row comes back, and the bell is told).
    let entry = notifications(&app, &world.staff_a).await[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let marked = staff
        .post(
            "/portal/notifications",
            &format!("/portal/notifications/{entry}/read"),
            &[],
        )
        .await;
    assert_eq!(marked.status, 200, "{}", marked.body);
    assert_eq!(marked.headers["hx-trigger"], "notifications-changed");
    assert!(
        marked.body.starts_with("<section id=\"inbox\""),
        "the inbox comes back"
    );
    assert_eq!(
        marked.body.matches("class=\"notification unread").count(),
        1,
        "the other measurement's row is still unread"
    );
    // Another reader's entry is not found.
    let mut patient = logged_in(&app, &world.patient).await;
    let refused = patient
        .post(
            "/portal/notifications",
            &format!("/portal/notifications/{entry}/read"),
            &[],
        )
        .await;
    assert_eq!(refused.status, 404);
    staff.headers.clear();
    let all = staff
        .post(
            "/portal/notifications",
            "/portal/notifications/read-all",
            &[],
        )
        .await;
    assert_eq!(all.status, 303);
    let bell = staff.get("/portal/notifications/bell").await;
    assert!(!bell.body.contains("class=\"count\""));
}

/// The inbox says what happened to which measurement: one row per measurement (its result,
/// then its review), when it was taken in the reader's zone, its rate and its result with the
/// physician's conclusion first; marking the row read marks all of its entries read.
#[tokio::test]
async fn the_inbox_gives_one_row_per_measurement_with_its_time_and_result() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    app.put(
        &format!("/users/v1/{}", world.patient.id),
        &world.patient.token,
        json!({"time_zone": "Asia/Tokyo"}),
    )
    .await
    .assert_ok();
    let at = app.clock_millis() - 3 * 3_600_000;
    let reviewed = app
        .measure_at(&world.patient, at, 90.0, "irregular", &[])
        .await;
    let other = app
        .measure_at(&world.patient, at + 60_000, 64.0, "normal", &[])
        .await;
    app.work_queue().await;
    app.review(&world.staff_a, &reviewed).await;
    app.work_queue().await;
    let entries = notifications(&app, &world.patient).await;
    let about = |id: &str| entries.iter().filter(|e| e["measurement_id"] == id).count();
    assert_eq!((about(&reviewed), about(&other)), (2, 1), "{entries:?}");

    let mut patient = logged_in(&app, &world.patient).await;
    let inbox = patient.get("/portal/notifications").await;
    assert_eq!(inbox.status, 200);
    let rows: Vec<&str> = inbox.body.split("<li id=\"notification-").skip(1).collect();
    assert_eq!(rows.len(), 2, "one row per measurement: {}", inbox.body);
    let row_of = |id: &str| {
        *rows
            .iter()
            .find(|row| row.contains(&format!("/portal/measurements/{id}")))
            .unwrap_or_else(|| panic!("a row for {id}: {}", inbox.body))
    };
    let tokyo = |millis: i64| {
        chrono::DateTime::from_timestamp_millis(millis)
            .unwrap()
            .with_timezone(&chrono_tz::Asia::Tokyo)
            .format("%H:%M")
            .to_string()
    };
    let row = row_of(&reviewed);
    assert!(
        row.contains(">Measurement reviewed by your physician</a>"),
        "newest first: {row}"
    );
    assert!(row.contains("Earlier: New measurement result"), "{row}");
    assert!(
        row.contains(&format!("{}</span>", tokyo(at))),
        "taken at {} in Tokyo: {row}",
        tokyo(at)
    );
    assert!(row.contains(" bpm</span>"), "the server's rate: {row}");
    assert!(
        row.contains("data-conclusion=\"sinus_rhythm\"")
            && row.contains("data-result=\"possible_atrial_fibrillation\""),
        "the conclusion leads, the screening beneath: {row}"
    );
    let row = row_of(&other);
    assert!(
        row.contains(&format!("{}</span>", tokyo(at + 60_000))),
        "{row}"
    );
    assert!(
        row.contains("64 bpm") && !row.contains("data-conclusion"),
        "{row}"
    );

    // Marking the reviewed measurement's row read marks both of its entries.
    let lead = entries
        .iter()
        .find(|e| e["measurement_id"] == reviewed.as_str() && e["kind"] == "measurement.reviewed")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    patient.headers.push(("HX-Request", "true".into()));
    let marked = patient
        .post(
            "/portal/notifications",
            &format!("/portal/notifications/{lead}/read"),
            &[],
        )
        .await;
    assert_eq!(marked.status, 200, "{}", marked.body);
    let after = notifications(&app, &world.patient).await;
    let unread: Vec<&Value> = after.iter().filter(|e| e["read"] == false).collect();
    assert_eq!(unread.len(), 1, "{after:?}");
    assert_eq!(unread[0]["measurement_id"], other.as_str());

    // The care team reads a review in its own words, not the patient's.
    let mut staff = logged_in(&app, &world.staff_a).await;
    let settings = staff.get("/portal/notifications/settings").await;
    assert!(
        settings
            .body
            .contains("Measurement reviewed by a colleague"),
        "{}",
        settings.body
    );
    assert!(
        !settings.body.contains("by your physician"),
        "{}",
        settings.body
    );
    patient.headers.clear();
    let own = patient.get("/portal/notifications/settings").await;
    assert!(
        own.body.contains("Measurement reviewed by your physician"),
        "{}",
        own.body
    );
}

/// Opening a measurement marks what the inbox said about it read, for the reader only, and
/// nothing about other measurements.
#[tokio::test]
async fn opening_a_measurement_marks_its_notifications_read() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let colleague = app.user("colleague").await;
    app.enlist_staff(&world.admin, &colleague, &world.group_a)
        .await;
    let at = app.clock_millis();
    let opened = app
        .measure_at(&world.patient, at, 90.0, "irregular", &[])
        .await;
    app.measure_at(&world.patient, at + 1000, 91.0, "irregular", &[])
        .await;
    app.work_queue().await;
    let unread_about = |entries: &[serde_json::Value], id: &str| {
        entries
            .iter()
            .filter(|e| e["measurement_id"] == id && e["read"] == false)
            .count()
    };
    let before = notifications(&app, &world.staff_a).await;
    assert!(unread_about(&before, &opened) > 0, "{before:?}");
    let others_before =
        before.iter().filter(|e| e["read"] == false).count() - unread_about(&before, &opened);
    let mut staff = logged_in(&app, &world.staff_a).await;
    let page = staff.get(&format!("/portal/measurements/{opened}")).await;
    assert_eq!(page.status, 200);
    let after = notifications(&app, &world.staff_a).await;
    assert_eq!(unread_about(&after, &opened), 0, "{after:?}");
    let others_after = after.iter().filter(|e| e["read"] == false).count();
    assert_eq!(
        others_after, others_before,
        "the other measurement's stay unread"
    );
    // Another reader's entries about it are untouched.
    let theirs = notifications(&app, &colleague).await;
    assert!(unread_about(&theirs, &opened) > 0, "{theirs:?}");
}

#[tokio::test]
async fn only_administrators_manage_notifications_in_the_portal() {
    let app = spawn_app_with(|s| s.webhook_allow_loopback = true).await;
    let world = World::new(&app).await;
    let mut staff = logged_in(&app, &world.staff_a).await;
    assert_eq!(staff.get("/portal/admin/notifications").await.status, 403);
    let refused = staff
        .post(
            "/portal/notifications",
            &format!("/portal/admin/groups/{}/notifications", world.group_a),
            &[("event", "result.urgent")],
        )
        .await;
    assert_eq!(refused.status, 403);
    let mut admin = logged_in(&app, &world.admin).await;
    let page = admin.get("/portal/admin/notifications").await;
    assert_eq!(page.status, 200);
    let made = admin
        .post(
            "/portal/admin/notifications",
            "/portal/admin/webhooks",
            &[
                ("url", "http://127.0.0.1:9/hooks"),
                ("group_id", world.group_a.as_str()),
                ("event", "result.urgent"),
            ],
        )
        .await;
    assert_eq!(made.status, 200, "{}", made.body);
    assert!(
        made.body.contains("id=\"webhook-secret\">whsec_"),
        "{}",
        made.body
    );
    let refused = admin
        .post(
            "/portal/admin/notifications",
            "/portal/admin/webhooks",
            &[
                ("url", "https://169.254.169.254/"),
                ("group_id", world.group_a.as_str()),
                ("event", "result.urgent"),
            ],
        )
        .await;
    assert_eq!(refused.status, 400);
    assert!(
        refused.body.contains("a reserved network address"),
        "{}",
        refused.body
    );
    // An address without its scheme is told so in words, not in the URL parser's.
    let refused = admin
        .post(
            "/portal/admin/notifications",
            "/portal/admin/webhooks",
            &[
                ("url", "clinic.example/hooks"),
                ("group_id", world.group_a.as_str()),
                ("event", "result.urgent"),
            ],
        )
        .await;
    assert_eq!(refused.status, 400);
    assert!(
        refused
            .body
            .contains("This is not a web address. Write it whole, starting with https://"),
        "{}",
        refused.body
    );
    assert!(!refused.body.contains("relative URL"), "{}", refused.body);
}

#[tokio::test]
async fn the_server_delivers_as_soon_as_an_event_commits() {
    // The scheduler runs inside the server, as in `tacho serve`; its tick is a minute away,
    // so an entry within seconds can only come from the commit waking the worker.
    let app = spawn_app_with(|s| s.scheduler_tick = Some(std::time::Duration::from_secs(60))).await;
    let world = World::new(&app).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let at = app.clock_millis();
    app.measure_at(&world.patient, at, 70.0, "normal", &[])
        .await;
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen = notifications(&app, &world.patient).await;
        if !seen.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(kinds(&seen), ["measurement.analysed"]);
    assert_eq!(
        kinds(&notifications(&app, &world.staff_a).await),
        ["measurement.analysed"]
    );
}

#[tokio::test]
async fn a_physician_who_leaves_the_group_no_longer_reads_of_its_patients() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let at = app.clock_millis();
    app.measure_at(&world.patient, at, 90.0, "irregular", &[])
        .await;
    app.work_queue().await;
    assert_eq!(notifications(&app, &world.staff_a).await.len(), 1);
    let mut staff = logged_in(&app, &world.staff_a).await;
    let bell = staff.get("/portal/notifications/bell").await;
    assert!(bell.body.contains(">1</span>"), "{}", bell.body);

    app.request(
        reqwest::Method::DELETE,
        &format!(
            "/users/v1/{}/staff_enlistments/{}",
            world.staff_a.id, world.group_a
        ),
        Some(&world.admin.token),
        None,
    )
    .await
    .assert_ok();
    assert!(notifications(&app, &world.staff_a).await.is_empty());
    let bell = staff.get("/portal/notifications/bell").await;
    assert!(!bell.body.contains("class=\"count\""), "{}", bell.body);
    let inbox = staff.get("/portal/notifications").await;
    assert!(!inbox.body.contains("notification-"), "{}", inbox.body);
    // The patient still reads its own.
    assert_eq!(notifications(&app, &world.patient).await.len(), 1);
}

#[tokio::test]
async fn a_review_settles_the_staffs_notifications_about_its_measurement() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let at = app.clock_millis();
    let urgent = app
        .measure_at(&world.patient, at, 90.0, "irregular", &[])
        .await;
    let other = app
        .measure_at(&world.patient, at + 1_000, 90.0, "irregular", &[])
        .await;
    app.work_queue().await;
    let unread = |entries: Vec<Value>| -> Vec<String> {
        entries
            .into_iter()
            .filter(|e| e["read"] == false)
            .map(|e| e["measurement_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        unread(notifications(&app, &world.staff_a).await).len(),
        2,
        "one urgent entry for each"
    );
    app.review(&world.staff_a, &urgent).await;
    app.work_queue().await;
    assert_eq!(
        unread(notifications(&app, &world.staff_a).await),
        std::slice::from_ref(&other),
        "the reviewed one is settled, the other still waits"
    );
    // The patient's own entries stay unread: it has not seen them yet.
    let own = unread(notifications(&app, &world.patient).await);
    assert!(own.contains(&urgent) && own.contains(&other), "{own:?}");
}

#[tokio::test]
async fn events_wait_in_the_outbox_and_two_workers_fan_each_out_once() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let at = app.clock_millis();
    for n in 0..5 {
        app.measure_at(&world.patient, at + n, 70.0, "normal", &[])
            .await;
    }
    // Committed with the uploads, read by nobody until a worker fans them out.
    assert!(notifications(&app, &world.patient).await.is_empty());
    let listed = app.store.waiting_events(10).await.unwrap();
    assert_eq!(listed.len(), 5);
    assert_eq!(app.store.waiting_among(&listed).await.unwrap(), listed);
    let (one, two) = (app.scheduler(), app.scheduler());
    let (one, two) = tokio::join!(one.work(|_| {}), two.work(|_| {}));
    let (one, two) = (one.unwrap(), two.unwrap());
    assert_eq!(one.notified + two.notified, 5, "{one:?} {two:?}");
    let entries = notifications(&app, &world.patient).await;
    assert_eq!(entries.len(), 5);
    let measurements: std::collections::BTreeSet<&str> = entries
        .iter()
        .map(|e| e["measurement_id"].as_str().unwrap())
        .collect();
    assert_eq!(measurements.len(), 5, "one entry per event");
    assert_eq!(notifications(&app, &world.staff_a).await.len(), 5);
    // Nothing waits any more: a worker that listed these events before (to fan them out one
    // by one after its batch failed) takes none of them again.
    assert_eq!(app.work_queue().await.notified, 0);
    assert!(app.store.waiting_among(&listed).await.unwrap().is_empty());
}

/// A prescription ended, and made again, while its patient's events fan out: both succeed,
/// and the staff's kept totals count what the end of care left, not what a fan-out counted
/// from before it. On PostgreSQL both count the same tallies again at once unless they take
/// turns; without the tallies' locks, ending the prescription failed as a deadlock in six of
/// six runs.
#[tokio::test]
async fn kept_care_holds_when_a_prescription_changes_while_events_fan_out() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let staff_a = (world.staff_a.email.clone(), world.staff_a.token.clone());
    let prescription = format!(
        "/users/v1/{}/patient_enlistments/{}",
        world.other_patient.id, world.group_a
    );
    let at = app.clock_millis();
    for round in 0..16 {
        let step = format!("round {round}");
        app.measure_at(
            &world.other_patient,
            at + round * 1_000,
            90.0,
            "irregular",
            &[],
        )
        .await;
        if round % 2 == 0 {
            let (_, ended) = tokio::join!(
                app.work_queue(),
                app.delete(&prescription, &world.admin.token, None)
            );
            ended.assert_ok();
        } else {
            tokio::join!(
                app.work_queue(),
                app.enlist_patient(&world.admin, &world.other_patient, &world.group_a)
            );
        }
        assert_total_is_listed(&app, &staff_a, &step).await;
    }
}

/// Checks that the inbox total of `who` (signed in with `token`) is the number of entries its
/// pages list, and the number a filtered total counts through the gate entry by entry;
/// returns it.
async fn assert_total_is_listed(app: &TestApp, (who, token): &(String, String), step: &str) -> u64 {
    let total = app.get("/notifications/v1?limit(50)", token).await;
    let total = total.assert_ok()["page"]["total"].as_u64().unwrap();
    let mut listed = 0;
    loop {
        let path = format!("/notifications/v1?limit(50,{listed})&skipCount()");
        let page = app.get(&path, token).await;
        let entries = page.assert_ok()["data"].as_array().unwrap().len() as u64;
        if entries == 0 {
            break;
        }
        listed += entries;
    }
    let filtered = app
        .get("/notifications/v1?ge(creation_timestamp,0)", token)
        .await;
    let filtered = filtered.assert_ok()["page"]["total"].as_u64().unwrap();
    assert_eq!(
        (total, filtered),
        (listed, listed),
        "{step}: {who}'s total, its filtered total, and what its pages list"
    );
    total
}

/// Checks that the measurement list total of `who` (kept per group) is what a filtered total
/// counts through the gate; returns it.
async fn assert_measurement_total_is_counted(
    app: &TestApp,
    (who, token): &(String, String),
    step: &str,
) -> u64 {
    let path = "/data/v1/measurements/documents";
    let total = app.get(&format!("{path}?limit(1)"), token).await;
    let total = total.assert_ok()["page"]["total"].as_u64().unwrap();
    let filtered = app
        .get(&format!("{path}?ge(creationTimestamp,0)&limit(1)"), token)
        .await;
    let filtered = filtered.assert_ok()["page"]["total"].as_u64().unwrap();
    assert_eq!(total, filtered, "{step}: {who}'s measurement total");
    total
}

/// Each reader's inbox total, checked as [`assert_total_is_listed`] and
/// [`assert_measurement_total_is_counted`] do.
async fn kept_totals(app: &TestApp, readers: &[(String, String)], step: &str) -> Vec<u64> {
    let mut totals = Vec::new();
    for reader in readers {
        totals.push(assert_total_is_listed(app, reader, step).await);
        assert_measurement_total_is_counted(app, reader, step).await;
    }
    totals
}

#[tokio::test]
async fn kept_totals_are_what_the_pages_list_through_every_change_of_access() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    // The patient is in both groups, so what it records is shared with both.
    app.enlist_patient(&world.admin, &world.patient, &world.group_b)
        .await;
    let at = app.clock_millis();
    for i in 0..3 {
        app.measure_at(&world.patient, at + i * 1_000, 90.0, "irregular", &[])
            .await;
    }
    app.measure_at(&world.other_patient, at, 70.0, "normal", &[])
        .await;
    app.measure_at(&world.patient_b, at, 70.0, "normal", &[])
        .await;
    app.post(
        "/reports/v1",
        &world.staff_a.token,
        json!({"user_id": world.patient.id}),
    )
    .await
    .assert_ok();
    app.work_queue().await;
    // Group B's patient joins group A too: what it recorded before stays group B's alone.
    app.enlist_patient(&world.admin, &world.patient_b, &world.group_a)
        .await;
    let signed_in = |users: &[&TestUser]| -> Vec<(String, String)> {
        users
            .iter()
            .map(|u| (u.email.clone(), u.token.clone()))
            .collect()
    };
    let mut readers = signed_in(&[
        &world.staff_a,
        &world.staff_b,
        &world.other_patient,
        &world.patient_b,
        &world.admin,
        &world.patient,
    ]);
    let start = kept_totals(&app, &readers, "delivered").await;
    assert!(start[0] > 0 && start[1] > 0, "{start:?}");
    let staff_a = &readers[0];
    assert_eq!(
        assert_measurement_total_is_counted(&app, staff_a, "delivered").await,
        4,
        "the patient's three and the other patient's one"
    );

    let staff =
        |user: &TestUser, group: &str| format!("/users/v1/{}/staff_enlistments/{group}", user.id);
    // Joining group A, staff B reads nothing new (its entries were delivered through B).
    // Leaving group B, it no longer reads what group B's patient shared with group B alone,
    // though it still cares for the patient through group A.
    app.enlist_staff(&world.admin, &world.staff_b, &world.group_a)
        .await;
    assert_eq!(
        kept_totals(&app, &readers, "staff B joins group A").await,
        start
    );
    app.delete(
        &staff(&world.staff_b, &world.group_b),
        &world.admin.token,
        None,
    )
    .await
    .assert_ok();
    let left = kept_totals(&app, &readers, "staff B leaves group B").await;
    assert!(left[1] < start[1], "{left:?} against {start:?}");
    // Staff A leaves its only group and comes back.
    app.delete(
        &staff(&world.staff_a, &world.group_a),
        &world.admin.token,
        None,
    )
    .await
    .assert_ok();
    assert_eq!(
        kept_totals(&app, &readers, "staff A leaves group A").await[0],
        0
    );
    app.enlist_staff(&world.admin, &world.staff_a, &world.group_a)
        .await;
    let back = kept_totals(&app, &readers, "staff A is back").await;
    assert_eq!(back[0], start[0]);

    // The other patient's prescription ends early: staff A no longer cares for it, at once;
    // prescribed again, it does.
    app.delete(
        &format!(
            "/users/v1/{}/patient_enlistments/{}",
            world.other_patient.id, world.group_a
        ),
        &world.admin.token,
        None,
    )
    .await
    .assert_ok();
    let ended_early = kept_totals(&app, &readers, "a prescription ended early").await;
    assert!(ended_early[0] < back[0], "{ended_early:?} against {back:?}");
    assert_eq!(ended_early[2], back[2], "the patient still reads its own");
    app.enlist_patient(&world.admin, &world.other_patient, &world.group_a)
        .await;
    assert_eq!(kept_totals(&app, &readers, "prescribed again").await, back);

    // An erasure deletes the patient's entries from every inbox.
    app.erase(&world.admin, &world.patient).await;
    readers.pop();
    let erased = kept_totals(&app, &readers, "the patient erased").await;
    assert!(erased[0] < start[0], "{erased:?} against {start:?}");
    assert_eq!(
        assert_measurement_total_is_counted(&app, &readers[0], "erased").await,
        1,
        "the other patient's"
    );

    // The prescriptions run out: no write, and the staff read nothing of the patients.
    app.clock.advance(Duration::days(31));
    for (email, token) in &mut readers {
        *token = app.login(email).await;
    }
    let ended = kept_totals(&app, &readers, "the prescriptions ran out").await;
    assert_eq!((ended[0], ended[1]), (0, 0), "{ended:?}");
    assert!(ended[2] > 0, "a patient still reads its own: {ended:?}");
}
