//! The Rust client SDK (`client/`) against the real server: tokens, errors, report links,
//! periodic reports.

use chrono::Utc;
use futures_util::future::join_all;
use serde_json::json;
use tacho_client::{Client, Error, Tokens, codes};

use crate::helpers::{
    PASSWORD, TestApp, World, assert_refused, fixture, pdf_text, spawn_app, spawn_app_with,
};

#[tokio::test]
async fn tokens_are_refreshed_before_expiry_and_when_refused() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    let login = Client::login(&format!("{}/", app.address), &user.email, PASSWORD)
        .await
        .unwrap();
    let first = login.tokens();
    assert_eq!(first.user_id, user.id);
    let expires_at = first.expires_at.expect("expires_in is answered");
    assert!(expires_at > Utc::now() + chrono::Duration::minutes(59));

    // Before expiry: the server still accepts the token (its clock has not moved), so a
    // changed token can only come from the client's own look at the expiry.
    let nearly_expired = Tokens {
        expires_at: Some(Utc::now() + chrono::Duration::seconds(5)),
        ..first.clone()
    };
    let client = Client::with_tokens(&app.address, nearly_expired);
    assert_eq!(client.me().await.unwrap().id, user.id);
    let second = client.tokens();
    assert_ne!(second.access_token, first.access_token);
    assert_ne!(
        second.refresh_token, first.refresh_token,
        "rotated and kept"
    );
    assert!(second.expires_at.unwrap() > Utc::now() + chrono::Duration::minutes(59));

    // The server says 118 (expired): eight concurrent calls share one refresh. Had two of
    // them spent the same refresh token, the server would have revoked the whole login.
    let persisted = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let store = persisted.clone();
    client.on_tokens_refreshed(move |tokens| store.lock().unwrap().push(tokens.clone()));
    app.clock.advance(chrono::Duration::seconds(3601));
    let calls = join_all((0..8).map(|_| client.me())).await;
    assert!(calls.iter().all(Result::is_ok), "{calls:?}");
    let third = client.tokens();
    assert_ne!(third.access_token, second.access_token);
    assert_eq!(
        *persisted.lock().unwrap(),
        vec![third.clone()],
        "one refresh, announced"
    );
    app.get("/users/v1/me", &second.access_token)
        .await
        .assert_error(401, 118);

    // The server says 117 (unknown): the refresh token still buys a new access token.
    let unknown = Tokens {
        access_token: "not-a-token".into(),
        ..third.clone()
    };
    let resumed = Client::with_tokens(&app.address, unknown);
    resumed.me().await.unwrap();
    let fourth = resumed.tokens();
    assert_ne!(fourth.refresh_token, third.refresh_token);

    // Tokens persist as JSON and resume a login.
    let saved = serde_json::to_string(&fourth).unwrap();
    let restored: Tokens = serde_json::from_str(&saved).unwrap();
    assert_eq!(restored, fourth);
    let again = Client::with_tokens(&app.address, restored);
    assert_eq!(again.me().await.unwrap().email, user.email);

    // The rotated refresh token, presented again, revokes the login; the client then reports
    // the server's refusal instead of looping.
    let replayed = Tokens {
        access_token: "not-a-token".into(),
        ..third
    };
    let replay = Client::with_tokens(&app.address, replayed).me().await;
    let revoked = |result: Result<tacho_client::User, Error>| match result {
        Err(Error::Api(refused)) => {
            assert_eq!(refused.oauth_error.as_deref(), Some("invalid_grant"));
            assert_eq!(refused.status, 400);
        }
        other => panic!("expected invalid_grant, got {other:?}"),
    };
    revoked(replay);
    revoked(again.me().await);
}

#[tokio::test]
async fn failures_are_typed_envelopes_or_transport_errors() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    match Client::login(&app.address, &user.email, "wrong password").await {
        Err(Error::Api(refused)) => {
            assert_eq!(refused.code, codes::AUTHENTICATION);
            assert_eq!(refused.name, "AUTHENTICATION_EXCEPTION");
            assert_eq!(refused.oauth_error.as_deref(), Some("invalid_grant"));
        }
        other => panic!("expected code 106, got {other:?}"),
    }
    assert_refused(
        user.client
            .get_measurement("0123456789abcdef01234567")
            .await,
        404,
        codes::RESOURCE_UNKNOWN,
    );
    assert_refused(
        user.client.get_measurement("a/../../users/v1/me").await,
        400,
        codes::ID_FORMAT,
    );

    // Nothing listens on a port that was just freed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let offline = Client::login(&format!("http://127.0.0.1:{port}"), &user.email, PASSWORD).await;
    assert!(matches!(offline, Err(Error::Transport(_))), "{offline:?}");
    assert_eq!(offline.unwrap_err().code(), None);
}

/// The file at an absolute URL the client made, fetched without authentication.
async fn public_file(app: &TestApp, url: &str) -> Vec<u8> {
    let response = app.client.get(url).send().await.unwrap();
    assert_eq!(response.status(), 200, "public, no authentication: {url}");
    response.bytes().await.unwrap().to_vec()
}

#[tokio::test]
async fn the_report_url_is_made_when_needed_and_reused_while_current() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let patient = &world.patient.client;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let reports = format!("/data/v1/measurement-reports/documents?eq(data.measurementId,{id})");
    let count =
        || async { app.get(&reports, &world.patient.token).await.body["page"]["total"].clone() };

    let url = patient.get_measurement_report_url(&id).await.unwrap();
    assert!(
        url.starts_with(&format!("{}/files/v1/", app.address)),
        "{url}"
    );
    let pdf = public_file(&app, &url).await;
    assert!(pdf_text(&pdf).contains("Heart rhythm measurement report"));
    assert_eq!(count().await, 1);

    // Current: the latest report is reused, no new document.
    assert_eq!(patient.get_measurement_report_url(&id).await.unwrap(), url);
    assert_eq!(count().await, 1);

    // Rule 3.1: after an update the latest report is out of date and a new one is made.
    app.review(&world.staff_a, &id).await;
    let fresh_url = patient.get_measurement_report_url(&id).await.unwrap();
    assert_ne!(fresh_url, url);
    assert_eq!(count().await, 2);
    let report = patient
        .latest_measurement_report(&id)
        .await
        .unwrap()
        .unwrap();
    let measurement = patient.get_measurement(&id).await.unwrap();
    assert_eq!(
        report.data.for_measurement_updated_timestamp,
        Some(measurement.update_timestamp.timestamp_millis())
    );
    let pdf = public_file(&app, &fresh_url).await;
    assert!(pdf_text(&pdf).contains("Sinus rhythm, no pauses"));

    // The report follows the user's language: after a change, a Dutch one is made.
    let path = format!("/users/v1/{}", world.patient.id);
    app.put(&path, &world.patient.token, json!({"language": "NL"}))
        .await
        .assert_ok();
    let dutch = patient.measurement_report(&id).await.unwrap();
    assert_eq!(dutch.data.language.as_deref(), Some("nl"));
    assert_eq!(count().await, 3);
    let dutch_url = patient.file_url(dutch.data.read_file_token.as_deref().unwrap());
    let pdf = public_file(&app, &dutch_url).await;
    assert!(pdf_text(&pdf).contains("hartritme"));

    // Staff of the group may ask too; others and measurements without results are refused.
    world
        .staff_a
        .client
        .get_measurement_report_url(&id)
        .await
        .unwrap();
    assert_refused(
        world.staff_b.client.get_measurement_report_url(&id).await,
        404,
        codes::RESOURCE_UNKNOWN,
    );
    let failed = app.measurement_id(&world.patient, "no_heartrate").await;
    assert_refused(
        patient.get_measurement_report_url(&failed).await,
        400,
        codes::ILLEGAL_STATE,
    );
}

#[tokio::test]
async fn periodic_reports_page_newest_first_and_render_for_the_user() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let patient = &world.patient.client;
    let measurement = app.measure(&world.patient, fixture("sinus_72")).await;
    let at = measurement.data["measurement_timestamp"].as_i64().unwrap();
    let day = 24 * 3600 * 1000;
    let mut made = Vec::new();
    for _ in 0..3 {
        let body = json!({"user_id": world.patient.id, "period_start_timestamp": at - day, "period_end_timestamp": at + day});
        let reply = app.post("/reports/v1", &world.staff_a.token, body).await;
        made.push(reply.assert_ok()["id"].as_str().unwrap().to_owned());
        app.clock.advance(chrono::Duration::minutes(1));
    }
    let body = json!({"user_id": world.patient_b.id});
    app.post("/reports/v1", &world.staff_b.token, body)
        .await
        .assert_ok();

    let ids = |page: &tacho_client::Page<tacho_client::PeriodicReport>| -> Vec<String> {
        page.items.iter().map(|r| r.id.clone()).collect()
    };
    let first = patient.get_periodic_reports_by(2).await.unwrap();
    assert_eq!(first.total, 3, "only the user's own");
    assert_eq!(
        ids(&first),
        vec![made[2].clone(), made[1].clone()],
        "newest first"
    );
    assert!(first.has_next() && !first.has_previous());
    assert!(first.previous().await.unwrap().is_none());
    let latest = &first.items[0];
    assert_eq!(latest.user_id, world.patient.id);
    assert_eq!(latest.trigger, tacho_client::Trigger::Manual);
    assert_eq!(latest.data.measurements.len(), 1);
    assert_eq!(latest.data.measurements[0].id, measurement.id);
    let second = first.next().await.unwrap().expect("a second page");
    assert_eq!(ids(&second), vec![made[0].clone()]);
    assert!(second.next().await.unwrap().is_none());
    let back = second
        .previous()
        .await
        .unwrap()
        .expect("the first page again");
    assert_eq!(ids(&back), ids(&first));
    let all = patient.get_periodic_reports().await.unwrap();
    assert_eq!(all.items.len(), 3);

    // The PDF follows the signed-in user's language and zone.
    let english = pdf_text(&patient.get_periodic_report_pdf(&made[2]).await.unwrap());
    assert!(
        english.contains("Periodic heart rhythm report"),
        "{english}"
    );
    assert!(english.contains("Europe/Brussels"), "{english}");
    let path = format!("/users/v1/{}", world.patient.id);
    app.put(
        &path,
        &world.patient.token,
        json!({"language": "NL", "time_zone": "Asia/Tokyo"}),
    )
    .await
    .assert_ok();
    let dutch = pdf_text(&patient.get_periodic_report_pdf(&made[2]).await.unwrap());
    assert!(
        dutch.contains("hartritme") && dutch.contains("Asia/Tokyo"),
        "{dutch}"
    );
    assert!(!dutch.contains("Periodic heart rhythm report"));
    let theirs = world.patient_b.client.get_periodic_reports().await.unwrap();
    assert_refused(
        patient.get_periodic_report_pdf(&theirs.items[0].id).await,
        404,
        codes::RESOURCE_UNKNOWN,
    );
}

#[tokio::test]
async fn localhost_answers_on_both_loopback_addresses() {
    let app = spawn_app_with(|settings| settings.addr = "localhost:0".into()).await;
    let port = app.address.rsplit(':').next().unwrap().to_owned();
    for host in ["127.0.0.1", "[::1]", "localhost"] {
        let reply = app
            .client
            .get(format!("http://{host}:{port}/health/live"))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{host}: {e}"));
        assert_eq!(reply.status(), 200, "{host}");
    }
    let user = app.user("ann").await;
    let client = Client::login(&format!("http://[::1]:{port}"), &user.email, PASSWORD)
        .await
        .unwrap();
    assert_eq!(client.me().await.unwrap().id, user.id);
}
