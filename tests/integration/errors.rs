//! Bad input never yields a 5xx: each kind answers its documented envelope (contract section 1).

use reqwest::Method;
use serde_json::json;

use crate::helpers::{World, spawn_app};

#[tokio::test]
async fn unknown_routes_and_methods_are_404_envelopes() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    app.request(Method::GET, "/nothing/here", None, None)
        .await
        .assert_error(404, 16);
    app.request(Method::DELETE, "/users/v1/me", Some(&user.token), None)
        .await
        .assert_error(404, 16);
    app.request(Method::PATCH, "/profiles/v1", Some(&user.token), None)
        .await
        .assert_error(404, 16);
    let reply = app
        .request(Method::GET, "/users/v2/me", Some(&user.token), None)
        .await;
    reply.assert_error(404, 16);
    assert_eq!(reply.headers["content-type"], "application/json");
    assert_eq!(reply.headers["x-content-type-options"], "nosniff");
}

/// The route table and the OpenAPI document come from the same declarations; this keeps them
/// from drifting apart all the same (a `#[utoipa::path(path = ...)]` naming another path than
/// the handler's route, an operation documented but registered by hand elsewhere, or not at all).
#[tokio::test]
async fn every_documented_operation_is_routed() {
    let app = spawn_app().await;
    let unknown = app
        .request(Method::GET, "/no/such/endpoint", None, None)
        .await;
    unknown.assert_error(404, 16);
    let document = app.request(Method::GET, "/openapi.json", None, None).await;
    let paths = document.assert_ok()["paths"].as_object().unwrap().clone();
    let mut operations = 0;
    for (path, item) in &paths {
        // Every path parameter is an id or a token: a well-formed id fills them all.
        let concrete = path
            .split('/')
            .map(|segment| match segment.starts_with('{') {
                true => "0123456789abcdef01234567",
                false => segment,
            })
            .collect::<Vec<_>>()
            .join("/");
        for method in item.as_object().unwrap().keys() {
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            // Without a token: the protected operations answer 401 before they look for the id.
            let reply = app.request(method.clone(), &concrete, None, None).await;
            assert!(
                !(reply.status == 404 && reply.body == unknown.body),
                "{method} {path} is documented but answers as an unknown route"
            );
            operations += 1;
        }
    }
    assert!(operations >= 34, "{operations} operations documented");
}

/// A trailing slash is accepted where the platform's SDK sends one, and nowhere else.
#[tokio::test]
async fn trailing_slashes_answer_only_where_they_always_have() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    let id = "0123456789abcdef01234567";
    for (method, path) in [
        (Method::GET, "/users/v1/".to_owned()),
        (Method::GET, "/profiles/v1/".to_owned()),
        (Method::PUT, "/profiles/v1/".to_owned()),
        (Method::GET, "/groups/v1/".to_owned()),
        (Method::GET, "/reports/v1/".to_owned()),
        (Method::POST, "/reports/v1/".to_owned()),
        (Method::GET, format!("/reports/v1/{id}/pdf/")),
    ] {
        app.request(method.clone(), &path, None, None)
            .await
            .assert_error(401, 104);
        let plain = app
            .request(
                method.clone(),
                path.trim_end_matches('/'),
                Some(&user.token),
                None,
            )
            .await;
        let slashed = app.request(method, &path, Some(&user.token), None).await;
        assert_eq!(
            (slashed.status, slashed.body),
            (plain.status, plain.body),
            "{path}"
        );
    }
    let listed = app
        .request(
            Method::GET,
            "/reports/v1/?sort(-creation_timestamp)",
            Some(&user.token),
            None,
        )
        .await;
    listed.assert_ok();
    for (method, path) in [
        (Method::POST, "/groups/v1/".to_owned()),
        (Method::GET, "/users/v1/me/".to_owned()),
        (Method::GET, format!("/users/v1/{id}/")),
        (Method::GET, format!("/reports/v1/{id}/")),
        (Method::GET, "/reports/v1//".to_owned()),
        (Method::GET, "/health/live/".to_owned()),
        (Method::GET, "/data/v1/measurements/documents/".to_owned()),
        (Method::GET, "/files/v1/x/details/".to_owned()),
    ] {
        app.request(method, &path, Some(&user.token), None)
            .await
            .assert_error(404, 16);
    }
}

#[tokio::test]
async fn malformed_bodies_answer_13_22_14_15() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    let path = format!("/users/v1/{}", user.id);
    let put_raw = |content_type: &'static str, body: &'static str| {
        let request = app
            .client
            .put(app.url(&path))
            .bearer_auth(&user.token)
            .header("Content-Type", content_type)
            .body(body);
        async move { crate::helpers::read(request.send().await.unwrap()).await }
    };
    put_raw("application/json", "").await.assert_error(400, 13);
    put_raw("application/json", "   ")
        .await
        .assert_error(400, 13);
    put_raw("application/json", "{\"first_name\":")
        .await
        .assert_error(400, 22);
    put_raw("application/json", "not json")
        .await
        .assert_error(400, 22);
    put_raw("text/plain", "{\"first_name\":\"A\"}")
        .await
        .assert_error(400, 22);
    put_raw("application/json", "[1,2]")
        .await
        .assert_error(400, 15);
    put_raw("application/json", "{\"first_name\": 5}")
        .await
        .assert_error(400, 15);
    put_raw("application/json", "{\"unknown\": 5}")
        .await
        .assert_error(400, 15);
    put_raw(
        "application/json; charset=utf-8",
        "{\"first_name\":\"Ann\"}",
    )
    .await
    .assert_ok();
    let register = app
        .post_raw("/users/v1/register", None, "application/json", "{}")
        .await;
    register.assert_error(400, 14);
}

#[tokio::test]
async fn huge_bodies_answer_413() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    let big = format!("{{\"city\":\"{}\"}}", "x".repeat(200_000));
    let reply = app
        .client
        .put(app.url(&format!("/profiles/v1?id={}", user.id)))
        .bearer_auth(&user.token)
        .header("Content-Type", "application/json")
        .body(big.clone())
        .send()
        .await
        .unwrap();
    let reply = crate::helpers::read(reply).await;
    reply.assert_error(413, 413);
    // Without a Content-Length (chunked), the limit still holds while reading.
    let stream =
        futures_util::stream::iter((0..40).map(|_| Ok::<_, std::io::Error>(vec![b' '; 4096])));
    let chunked = app
        .client
        .post(app.url("/users/v1/register"))
        .header("Content-Type", "application/json")
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await
        .unwrap();
    crate::helpers::read(chunked).await.assert_error(413, 413);
    let token = app
        .post_raw("/auth/v2/oauth2/tokens", None, "application/json", big)
        .await;
    assert_eq!(token.status, 413);
}

#[tokio::test]
async fn malformed_ids_answer_12() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let token = &world.admin.token;
    for path in [
        "/users/v1/nope",
        "/users/v1/5f3c2b1a0d9e8f7a6b5c4d3",
        "/users/v1/zz3c2b1a0d9e8f7a6b5c4d3e",
        "/profiles/v1/x",
        "/groups/v1/1",
    ] {
        app.get(path, token).await.assert_error(400, 12);
    }
    app.put("/users/v1/nope", token, json!({"first_name": "A"}))
        .await
        .assert_error(400, 12);
    app.delete(
        &format!("/users/v1/{}/patient_enlistments/bad", world.patient.id),
        token,
        None,
    )
    .await
    .assert_error(400, 12);
    app.get("/users/v1/0123456789abcdef01234567", token)
        .await
        .assert_error(404, 16);
    for path in [
        "/data/v1/measurements/documents/nope",
        "/data/v1/measurement-reports/documents/x1",
        "/reports/v1/nope",
        "/reports/v1/nope/pdf",
    ] {
        app.get(path, token).await.assert_error(400, 12);
    }
    for path in [
        "/data/v1/measurements/documents/0123456789abcdef01234567",
        "/data/v1/measurement-reports/documents/0123456789abcdef01234567",
        "/reports/v1/0123456789abcdef01234567",
        "/reports/v1/0123456789abcdef01234567/pdf",
    ] {
        app.get(path, token).await.assert_error(404, 16);
    }
}

#[tokio::test]
async fn hostile_input_never_yields_a_5xx() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let token = world.patient.token.clone();
    let queries = [
        "%",
        "%%%",
        "%zz",
        "eq(",
        "eq(id,%ff%fe)",
        "(((((",
        ")))",
        "&&&|||",
        "sort(",
        "limit(-1)",
        "limit(99999999999999999999999)",
        "select()",
        "eq(email,\u{0}x)",
        "eq(%C3%28,1)",
        "like(email,%25%5F)",
        "in(id,(",
        "eq(id,)",
        "=x",
        "a==b",
        "a=gt=",
    ];
    for query in queries {
        for resource in [
            "/users/v1",
            "/profiles/v1",
            "/groups/v1",
            "/data/v1/measurements/documents",
            "/data/v1/measurement-reports/documents",
            "/reports/v1",
            "/notifications/v1",
        ] {
            let url = format!("{}{resource}?{query}", app.address);
            let reply = crate::helpers::read(
                app.client
                    .get(&url)
                    .bearer_auth(&token)
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            assert!(
                reply.status.as_u16() < 500,
                "{resource}?{query}: {}",
                reply.status
            );
            if reply.status != 200 {
                assert!(
                    reply.body["code"].is_i64(),
                    "{resource}?{query}: {:?}",
                    reply.body
                );
            }
        }
    }
    let bodies = [
        "null",
        "true",
        "\"text\"",
        "1e999",
        "{\"a\":",
        "{\"birthday\":{\"year\":1e30}}",
        "{\"weight\":-0}",
        "{\"custom_fields\":[]}",
        "\u{feff}{}",
        "{\"city\":\"a\\u0000b\"}",
        "{\"custom_fields\":{\"k\\u0000\":\"v\"}}",
    ];
    for body in bodies {
        let request = app
            .client
            .put(app.url(&format!("/profiles/v1?id={}", world.patient.id)))
            .bearer_auth(&token)
            .header("Content-Type", "application/json")
            .body(body);
        let reply = crate::helpers::read(request.send().await.unwrap()).await;
        assert!(
            reply.status.is_client_error() || reply.status == 200,
            "{body}: {}",
            reply.status
        );
    }
    let nul_json = app.password_grant("ann\u{0}@tacho.test", "whatever").await;
    assert_eq!(
        (
            nul_json.status.as_u16(),
            &nul_json.body["exh_error"]["code"]
        ),
        (400, &json!(15))
    );
    let form = "grant_type=password&username=ann%00%40tacho.test&password=whatever";
    let nul_form = app
        .post_raw(
            "/auth/v2/oauth2/tokens",
            None,
            "application/x-www-form-urlencoded",
            form,
        )
        .await;
    assert_eq!(nul_form.body["error"], "invalid_grant");
    let nul_register = app
        .request(
            Method::POST,
            "/users/v1/register",
            None,
            Some(json!({"email": "a\u{0}@b.c"})),
        )
        .await;
    nul_register.assert_error(400, 15);
}
