//! Probes, the OpenAPI document and the interactive docs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use reqwest::Method;

use crate::helpers::{fixture, spawn_app, spawn_app_with};

#[tokio::test]
async fn probes_answer() {
    let app = spawn_app().await;
    let live = app.request(Method::GET, "/health/live", None, None).await;
    assert_eq!(live.assert_ok()["status"], "ok");
    let ready = app.request(Method::GET, "/health/ready", None, None).await;
    assert_eq!(ready.assert_ok()["database"], "ok");
    assert!(ready.headers.contains_key("x-request-id"));
    let echoed = app
        .client
        .get(app.url("/health/live"))
        .header("X-Request-Id", "abc-123")
        .send()
        .await
        .unwrap();
    assert_eq!(echoed.headers()["x-request-id"], "abc-123");
}

#[tokio::test]
async fn openapi_document_lists_the_wire_api_and_docs_work_offline() {
    let app = spawn_app().await;
    let doc = app.request(Method::GET, "/openapi.json", None, None).await;
    let doc = doc.assert_ok();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/auth/v2/oauth2/tokens",
        "/users/v1/register",
        "/users/v1/me",
        "/users/v1",
        "/users/v1/{id}",
        "/users/v1/{id}/patient_enlistments",
        "/users/v1/{id}/patient_enlistments/{group_id}",
        "/users/v1/{id}/staff_enlistments",
        "/users/v1/{id}/staff_enlistments/{group_id}",
        "/users/v1/{id}/roles",
        "/users/v1/{id}/activation",
        "/profiles/v1",
        "/profiles/v1/{id}",
        "/groups/v1",
        "/groups/v1/{id}",
        "/health/live",
        "/health/ready",
    ] {
        assert!(
            paths.contains_key(path),
            "{path} missing from the OpenAPI document"
        );
    }
    let redirect = app.client.get(app.url("/docs")).send().await.unwrap();
    assert!(redirect.status().is_redirection());
    let page = app.client.get(app.url("/docs/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("swagger-ui"), "the Swagger UI page");
    assert!(
        !html.contains("cdn.") && !html.contains("unpkg.com"),
        "served without a CDN"
    );
    let script = app
        .client
        .get(app.url("/docs/swagger-ui-bundle.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        script.status(),
        200,
        "Swagger UI's script is served locally"
    );
}

#[test]
fn the_committed_openapi_document_is_current() {
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/openapi.json"))
            .expect("docs/openapi.json");
    let generated = tacho::routes::api::openapi::document();
    assert!(
        committed.trim_end() == generated.trim_end(),
        "docs/openapi.json is stale: run `cargo run -- openapi > docs/openapi.json`"
    );
}

/// The file storage goes away (its folder is replaced by a file, which no write can pass):
/// readiness answers 503 with `Retry-After` and says which part is missing, and 200 again
/// once the folder is back, without a restart.
#[tokio::test]
async fn readiness_follows_the_file_storage() {
    let app = spawn_app().await;
    app.request(Method::GET, "/health/ready", None, None)
        .await
        .assert_ok();
    let files = app.settings.data_dir.join("files");
    let _ = std::fs::remove_dir_all(&files);
    std::fs::write(&files, b"not a folder").unwrap();
    let down = app.request(Method::GET, "/health/ready", None, None).await;
    down.assert_error(503, 503);
    assert_eq!(down.body["name"], "SERVICE_UNAVAILABLE_EXCEPTION");
    assert_eq!(down.body["storage"], "unavailable");
    assert_eq!(down.body["database"], "ok");
    assert_eq!(down.headers["retry-after"], "5");
    std::fs::remove_file(&files).unwrap();
    let back = app.request(Method::GET, "/health/ready", None, None).await;
    assert_eq!(back.assert_ok()["storage"], "ok");
}

/// A TCP relay between the server and PostgreSQL that the test can cut: an outage of the
/// database as the server sees it (its connections dropped, new ones refused), without
/// stopping the PostgreSQL that the other tests share.
struct Relay {
    port: u16,
    cut: Arc<AtomicBool>,
    links: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Relay {
    async fn to(upstream: String) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let links: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>> = Arc::default();
        let (cut_flag, all_links) = (cut.clone(), links.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if cut_flag.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is closed at once
                }
                let upstream = upstream.clone();
                let link = tokio::spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                all_links.lock().unwrap().push(link);
            }
        });
        Relay { port, cut, links }
    }

    /// Drops every open connection and refuses new ones.
    fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

/// PostgreSQL goes away under a running server: requests answer 503 with the error envelope
/// and `Retry-After` (never a 500, never a hang: the client gives up after 15 s), readiness
/// says so, and once the database is back the server serves again by itself, with every
/// upload that was answered 200 stored and none that was answered 503.
#[tokio::test]
async fn a_database_outage_answers_503_and_the_server_recovers_without_a_restart() {
    // A relay stands between the server and PostgreSQL, on either pass of the suite.
    let Some(server) = crate::helpers::postgres_server() else {
        return;
    };
    let direct = crate::helpers::fresh_postgres_database(&server).await;
    let (before_host, after_host) = direct.split_once('@').expect("user@host in the URL");
    let (host_port, path) = after_host.split_once('/').expect("a database name");
    let relay = Relay::to(host_port.to_owned()).await;
    let relayed = format!("{before_host}@127.0.0.1:{}/{path}", relay.port);
    let app = spawn_app_with(|s| s.database_url = relayed.clone().into()).await;
    let patient = app.user("outage-patient").await;
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(15))
        .build()
        .unwrap();
    let upload = || {
        client
            .post(app.url("/data/v1/measurements/documents"))
            .bearer_auth(&patient.token)
            .json(&fixture("ppg_only"))
            .send()
    };
    assert_eq!(upload().await.unwrap().status(), 200);

    relay.cut();
    let mut refused = 0;
    for _ in 0..3 {
        let asked = std::time::Instant::now();
        let answer = upload().await.expect("an answer, not a hang");
        eprintln!("outage: 503 after {:?}", asked.elapsed());
        assert_eq!(answer.status(), 503);
        assert_eq!(answer.headers()["retry-after"], "5");
        let body: serde_json::Value = answer.json().await.unwrap();
        assert_eq!(body["code"], 503, "{body}");
        assert_eq!(body["name"], "SERVICE_UNAVAILABLE_EXCEPTION");
        assert!(!body["message"].as_str().unwrap().contains("postgres"));
        refused += 1;
    }
    let ready = client.get(app.url("/health/ready")).send().await.unwrap();
    assert_eq!(ready.status(), 503);
    let page = client.get(app.url("/portal/login")).send().await.unwrap();
    assert_ne!(page.status(), 500);

    relay.restore();
    let restored = std::time::Instant::now();
    let mut waited = 0;
    loop {
        let ready = client.get(app.url("/health/ready")).send().await.unwrap();
        if ready.status() == 200 {
            eprintln!(
                "outage: ready again {:?} after the database came back",
                restored.elapsed()
            );
            break;
        }
        waited += 1;
        assert!(waited < 100, "the server came back within 10 s");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(upload().await.unwrap().status(), 200);
    let listed = app
        .get("/data/v1/measurements/documents", &patient.token)
        .await;
    let stored = listed.assert_ok()["data"].as_array().unwrap().len();
    assert_eq!(
        stored, 2,
        "the two uploads answered 200, none of the {refused} answered 503"
    );
}
