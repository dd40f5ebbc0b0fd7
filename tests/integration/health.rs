//! Probes, the OpenAPI document and the interactive docs.

use reqwest::Method;

use crate::helpers::spawn_app;

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
