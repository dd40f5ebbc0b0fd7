//! The token endpoint and bearer authentication (contract section 3).

use chrono::Duration;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{PASSWORD, TestApp, spawn_app, spawn_app_with};

#[tokio::test]
async fn password_grant_issues_opaque_tokens() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    let reply = app.password_grant("ANN@tacho.test", PASSWORD).await;
    let body = reply.assert_ok();
    assert_eq!(body["token_type"], "bearer");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body["user_id"], user.id.as_str());
    let access = body["access_token"].as_str().unwrap();
    let refresh = body["refresh_token"].as_str().unwrap();
    assert!(
        access.len() >= 43 && refresh.len() >= 43,
        "at least 256 bits, base64"
    );
    assert_ne!(access, refresh);
    assert_eq!(reply.headers["cache-control"], "no-store");
    app.get("/users/v1/me", access).await.assert_ok();
}

#[tokio::test]
async fn wrong_password_and_unknown_user_answer_alike() {
    let app = spawn_app().await;
    app.user("ann").await;
    let wrong = app
        .password_grant("ann@tacho.test", "not the password")
        .await;
    let unknown = app
        .password_grant("nobody@tacho.test", "not the password")
        .await;
    for reply in [&wrong, &unknown] {
        assert_eq!(reply.status, 400);
        assert_eq!(reply.body["error"], "invalid_grant");
        assert_eq!(reply.body["exh_error"]["code"], 106);
        assert_eq!(reply.body["exh_error"]["name"], "AUTHENTICATION_EXCEPTION");
    }
    assert_eq!(wrong.body, unknown.body);
}

#[tokio::test]
async fn form_bodies_and_client_credentials_are_accepted() {
    let app = spawn_app().await;
    app.user("ann").await;
    let form = format!(
        "grant_type=password&username=ann%40tacho.test&password={}&client_id=app",
        PASSWORD.replace(' ', "+")
    );
    let reply = app
        .post_raw(
            "/auth/v2/oauth2/tokens",
            None,
            "application/x-www-form-urlencoded",
            form.clone(),
        )
        .await;
    reply.assert_ok();
    let with_basic = app
        .client
        .post(app.url("/auth/v2/oauth2/tokens"))
        .basic_auth("app", Some("secret"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(with_basic.status(), 200);
    let bad_client = app
        .client
        .post(app.url("/auth/v2/oauth2/tokens"))
        .header("Authorization", "Basic !!!notbase64")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap();
    assert_eq!(bad_client.status(), 401);
    let body: serde_json::Value = bad_client.json().await.unwrap();
    assert_eq!(body["error"], "invalid_client");
}

#[tokio::test]
async fn malformed_token_requests_are_oauth_errors() {
    let app = spawn_app().await;
    let cases = [
        (
            json!({"username": "a@b.c", "password": "x"}),
            "invalid_request",
            14,
        ),
        (
            json!({"grant_type": "password", "password": "x"}),
            "invalid_request",
            14,
        ),
        (
            json!({"grant_type": "refresh_token"}),
            "invalid_request",
            14,
        ),
        (
            json!({"grant_type": "client_credentials"}),
            "unsupported_grant_type",
            15,
        ),
        (json!({"grant_type": 5}), "invalid_request", 15),
    ];
    for (body, error, code) in cases {
        let reply = app
            .request(
                Method::POST,
                "/auth/v2/oauth2/tokens",
                None,
                Some(body.clone()),
            )
            .await;
        assert_eq!(reply.status, 400, "{body}");
        assert_eq!(reply.body["error"], error, "{body}");
        assert_eq!(reply.body["exh_error"]["code"], code, "{body}");
    }
    let not_json = app
        .post_raw("/auth/v2/oauth2/tokens", None, "application/json", "{grant")
        .await;
    assert_eq!(
        (
            not_json.status.as_u16(),
            &not_json.body["exh_error"]["code"]
        ),
        (400, &json!(22))
    );
    let xml = app
        .post_raw("/auth/v2/oauth2/tokens", None, "text/xml", "<a/>")
        .await;
    assert_eq!(xml.body["error"], "invalid_request");
    let empty = app
        .post_raw("/auth/v2/oauth2/tokens", None, "application/json", "")
        .await;
    assert_eq!(empty.body["exh_error"]["code"], 13);
}

#[tokio::test]
async fn refresh_tokens_rotate_and_reuse_revokes_the_login() {
    let app = spawn_app().await;
    app.user("ann").await;
    let first = app.password_grant("ann@tacho.test", PASSWORD).await.body;
    let refresh = |token: &str| {
        let body = json!({"grant_type": "refresh_token", "refresh_token": token});
        app.request(Method::POST, "/auth/v2/oauth2/tokens", None, Some(body))
    };
    let second = refresh(first["refresh_token"].as_str().unwrap()).await;
    let second = second.assert_ok().clone();
    assert_ne!(second["refresh_token"], first["refresh_token"]);
    assert_ne!(second["access_token"], first["access_token"]);
    app.get("/users/v1/me", second["access_token"].as_str().unwrap())
        .await
        .assert_ok();

    // The first refresh token was rotated: presenting it again revokes the whole family.
    let reuse = refresh(first["refresh_token"].as_str().unwrap()).await;
    assert_eq!(reuse.body["error"], "invalid_grant");
    app.get("/users/v1/me", second["access_token"].as_str().unwrap())
        .await
        .assert_error(401, 117);
    app.get("/users/v1/me", first["access_token"].as_str().unwrap())
        .await
        .assert_error(401, 117);
    let after = refresh(second["refresh_token"].as_str().unwrap()).await;
    assert_eq!(after.body["error"], "invalid_grant");

    // Another login of the same user is a different family and is unaffected.
    let other = app.password_grant("ann@tacho.test", PASSWORD).await.body;
    app.get("/users/v1/me", other["access_token"].as_str().unwrap())
        .await
        .assert_ok();
    let unknown = refresh("not-a-token").await;
    assert_eq!(unknown.body["error"], "invalid_grant");
}

#[tokio::test]
async fn concurrent_use_of_one_refresh_token_rotates_once() {
    let app = spawn_app().await;
    app.user("ann").await;
    let login = app.password_grant("ann@tacho.test", PASSWORD).await.body;
    let body = json!({"grant_type": "refresh_token", "refresh_token": login["refresh_token"]});
    let attempts = (0..6).map(|_| {
        app.request(
            Method::POST,
            "/auth/v2/oauth2/tokens",
            None,
            Some(body.clone()),
        )
    });
    let replies = futures_util::future::join_all(attempts).await;
    let granted = replies.iter().filter(|r| r.status == 200).count();
    assert!(granted <= 1, "at most one rotation wins, got {granted}");
}

#[tokio::test]
async fn bearer_errors_are_104_117_118() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    app.request(Method::GET, "/users/v1/me", None, None)
        .await
        .assert_error(401, 104);
    let basic = app
        .client
        .get(app.url("/users/v1/me"))
        .basic_auth("a", Some("b"))
        .send()
        .await
        .unwrap();
    assert_eq!(crate::helpers::read(basic).await.body["code"], 104);
    app.get("/users/v1/me", "garbage")
        .await
        .assert_error(401, 117);
    app.get("/users/v1/me", &"x".repeat(2000))
        .await
        .assert_error(401, 117);
    app.clock.advance(Duration::seconds(3601));
    app.get("/users/v1/me", &user.token)
        .await
        .assert_error(401, 118);
}

#[tokio::test]
async fn failed_logins_freeze_then_block_the_account() {
    let app = spawn_app().await;
    let admin = app.admin("root").await;
    let user = app.user("ann").await;
    for attempt in 1..=4 {
        let reply = app.password_grant(&user.email, "wrong password").await;
        assert_eq!(reply.body["exh_error"]["code"], 106, "attempt {attempt}");
    }
    let me = app.get("/users/v1/me", &user.token).await;
    assert_eq!(me.body["failed_count"], 4);
    assert!(me.body["last_failed_timestamp"].is_i64());

    let fifth = app.password_grant(&user.email, "wrong password").await;
    assert_eq!(
        fifth.body["exh_error"]["code"], 212,
        "the fifth failure freezes"
    );
    // While frozen even the right password is refused, without being checked.
    let frozen = app.password_grant(&user.email, PASSWORD).await;
    assert_eq!(frozen.body["exh_error"]["code"], 211);
    assert_eq!(frozen.body["exh_error"]["name"], "LOGIN_TIMEOUT_EXCEPTION");
    assert!(frozen.headers.contains_key("retry-after"));

    // After the freeze the right password works and resets the count.
    app.clock.advance(Duration::seconds(11));
    app.password_grant(&user.email, PASSWORD).await.assert_ok();
    let token = app.login(&user.email).await;
    assert_eq!(
        app.get("/users/v1/me", &token).await.body["failed_count"],
        0
    );

    // Fifty failures in a row block the account until an admin activates it again.
    for _ in 0..50 {
        app.password_grant(&user.email, "wrong password").await;
        app.clock.advance(Duration::hours(2));
    }
    let blocked = app.password_grant(&user.email, PASSWORD).await;
    assert_eq!(blocked.body["exh_error"]["code"], 213);
    app.clock.advance(Duration::days(30));
    assert_eq!(
        app.password_grant(&user.email, PASSWORD).await.body["exh_error"]["code"],
        213
    );
    let path = format!("/users/v1/{}/activation", user.id);
    let admin_token = app.login(&admin.email).await;
    app.put(&path, &admin_token, json!({"activation": true}))
        .await
        .assert_ok();
    app.password_grant(&user.email, PASSWORD).await.assert_ok();
}

#[tokio::test]
async fn deactivation_stops_tokens_and_logins() {
    let app = spawn_app().await;
    let admin = app.admin("root").await;
    let user = app.user("ann").await;
    let login = app.password_grant(&user.email, PASSWORD).await.body;
    let path = format!("/users/v1/{}/activation", user.id);
    let reply = app
        .put(&path, &admin.token, json!({"activation": false}))
        .await;
    assert_eq!(reply.assert_ok()["activation"], false);
    app.get("/users/v1/me", &user.token)
        .await
        .assert_error(401, 117);
    let refresh = json!({"grant_type": "refresh_token", "refresh_token": login["refresh_token"]});
    let refreshed = app
        .request(Method::POST, "/auth/v2/oauth2/tokens", None, Some(refresh))
        .await;
    assert_eq!(refreshed.body["error"], "invalid_grant");
    let denied = app.password_grant(&user.email, PASSWORD).await;
    assert_eq!(denied.body["error"], "invalid_grant");
    app.put(&path, &admin.token, json!({"activation": true}))
        .await
        .assert_ok();
    app.password_grant(&user.email, PASSWORD).await.assert_ok();
}

#[tokio::test]
async fn token_requests_are_throttled_per_address() {
    let app = spawn_app_with(|settings| settings.login_rate_per_minute = 3).await;
    app.user("ann").await;
    for _ in 0..2 {
        app.password_grant("ann@tacho.test", "wrong password").await;
    }
    let throttled = app.password_grant("ann@tacho.test", PASSWORD).await;
    assert_eq!(throttled.status, 429);
    assert_eq!(throttled.body["exh_error"]["code"], 429);
    assert_eq!(
        throttled.body["exh_error"]["name"],
        "TOO_MANY_REQUESTS_EXCEPTION"
    );
    let retry_after: u64 = throttled.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=20).contains(&retry_after), "{retry_after}");
}

#[tokio::test]
async fn a_deactivation_reaches_other_instances_within_the_cache_ttl() {
    let ttl = std::time::Duration::from_millis(300);
    let first = spawn_app_with(|settings| settings.cache_ttl = ttl).await;
    let second = first.second_instance().await;
    let admin = first.admin("root").await;
    let user = first.user("ann").await;
    // Both instances have now served (and cached) the token.
    first.get("/users/v1/me", &user.token).await.assert_ok();
    second.get("/users/v1/me", &user.token).await.assert_ok();
    let path = format!("/users/v1/{}/activation", user.id);
    first
        .put(&path, &admin.token, json!({"activation": false}))
        .await
        .assert_ok();
    // The instance that made the change knows at once; the other within the TTL.
    first
        .get("/users/v1/me", &user.token)
        .await
        .assert_error(401, 117);
    tokio::time::sleep(ttl + std::time::Duration::from_millis(100)).await;
    second
        .get("/users/v1/me", &user.token)
        .await
        .assert_error(401, 117);
}

/// Posts an RFC 7009 revocation of `token` as a form, as OAuth2 clients do.
async fn revoke(app: &TestApp, token: &str) -> reqwest::Response {
    app.client
        .post(app.url("/auth/v2/oauth2/tokens/revoke"))
        .form(&[("token", token), ("token_type_hint", "refresh_token")])
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_revoked_token_ends_its_whole_login_and_nothing_else() {
    let app = spawn_app().await;
    let user = app.user("revoker").await;
    let grant = |body| app.request(Method::POST, "/auth/v2/oauth2/tokens", None, Some(body));
    let first =
        grant(json!({"grant_type": "password", "username": user.email, "password": PASSWORD}))
            .await;
    let first = first.assert_ok().clone();
    let other = app.login(&user.email).await;

    // Revoking the refresh token ends the access token of the same login too.
    let answer = revoke(&app, first["refresh_token"].as_str().unwrap()).await;
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["cache-control"], "no-store");
    assert!(answer.text().await.unwrap().is_empty());
    app.get("/users/v1/me", first["access_token"].as_str().unwrap())
        .await
        .assert_error(401, 117);
    let refused =
        grant(json!({"grant_type": "refresh_token", "refresh_token": first["refresh_token"]}))
            .await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.body["exh_error"]["code"], 106);
    // Another login of the same user goes on.
    app.get("/users/v1/me", &other).await.assert_ok();

    // Unknown and already revoked tokens get the same answer (RFC 7009 2.2).
    for token in ["not-a-token", first["access_token"].as_str().unwrap()] {
        let answer = revoke(&app, token).await;
        assert_eq!(answer.status(), 200);
    }
    // A request without a token is malformed.
    let missing = app
        .client
        .post(app.url("/auth/v2/oauth2/tokens/revoke"))
        .form(&[("token_type_hint", "access_token")])
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 400);
}

#[tokio::test]
async fn a_login_ends_90_days_after_its_password_grant_however_often_it_is_refreshed() {
    let app = spawn_app().await;
    let user = app.user("long").await;
    let grant = |body| app.request(Method::POST, "/auth/v2/oauth2/tokens", None, Some(body));
    let mut tokens =
        grant(json!({"grant_type": "password", "username": user.email, "password": PASSWORD}))
            .await
            .assert_ok()
            .clone();
    // A refresh every 20 days keeps the login for 80 days ...
    for _ in 0..4 {
        app.clock.advance(Duration::days(20));
        tokens =
            grant(json!({"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}))
                .await
                .assert_ok()
                .clone();
    }
    // ... whose tokens never outlive day 90: 10 days left, so the refresh token is refused
    // on day 90 although it was issued 10 days before and rotated tokens last 30.
    app.clock.advance(Duration::days(10));
    let refused =
        grant(json!({"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}))
            .await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.body["exh_error"]["code"], 106);
}

#[tokio::test]
async fn json_answers_with_personal_data_are_not_stored_by_caches() {
    let app = spawn_app().await;
    let user = app.user("cache").await;
    let me = app.get("/users/v1/me", &user.token).await;
    assert_eq!(me.headers["cache-control"], "no-store");
    let missing = app
        .get("/users/v1/0123456789abcdef01234567", &user.token)
        .await;
    assert_eq!(missing.headers["cache-control"], "no-store");
}

/// A client whose connections come from `source` (any 127.x.y.z is this machine).
fn client_from(source: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(source.parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap()
}

/// A password grant from `client`: its status and the platform's error code, if any.
async fn grant_from(
    app: &TestApp,
    client: &reqwest::Client,
    email: &str,
    password: &str,
) -> (u16, Option<i64>) {
    let reply = client
        .post(app.url("/auth/v2/oauth2/tokens"))
        .json(&json!({"grant_type": "password", "username": email, "password": password}))
        .send()
        .await
        .unwrap();
    let status = reply.status().as_u16();
    let body: serde_json::Value = reply.json().await.unwrap_or_default();
    (status, body["exh_error"]["code"].as_i64())
}

#[tokio::test]
async fn a_burst_of_wrong_passwords_reaches_the_password_check_five_times_at_most() {
    let app = spawn_app().await;
    let user = app.user("burst").await;
    let client = client_from("127.0.0.1");
    let before = app.operator.auth.hasher().checks();
    let burst = (0..20).map(|_| grant_from(&app, &client, &user.email, "a wrong guess"));
    let answers = futures_util::future::join_all(burst).await;
    let checked = app.operator.auth.hasher().checks() - before;
    assert!(checked <= 5, "{checked} checks for 20 parallel attempts");
    let codes: Vec<Option<i64>> = answers.iter().map(|a| a.1).collect();
    assert_eq!(
        codes.iter().filter(|c| **c == Some(211)).count() as u64,
        20 - checked,
        "the rest were refused unchecked: {codes:?}"
    );
}

#[tokio::test]
async fn an_attackers_failures_do_not_lock_the_owner_out_of_another_network() {
    let app = spawn_app().await;
    let user = app.user("owner").await;
    let attacker = client_from("127.0.0.1");
    let owner = client_from("127.0.1.1");
    for _ in 0..6 {
        grant_from(&app, &attacker, &user.email, "guess").await;
    }
    let (status, code) = grant_from(&app, &attacker, &user.email, PASSWORD).await;
    assert_eq!(
        (status, code),
        (400, Some(211)),
        "frozen for the attacker's network"
    );
    let (status, _) = grant_from(&app, &owner, &user.email, PASSWORD).await;
    assert_eq!(status, 200, "the owner's network is open");
    // The account shows its worst network's count.
    let me = app.get("/users/v1/me", &user.token).await;
    assert_eq!(
        me.assert_ok()["failed_count"],
        5,
        "five were checked; the sixth was refused unchecked"
    );
}

#[tokio::test]
async fn an_unknown_address_is_answered_exactly_as_a_known_one() {
    let app = spawn_app().await;
    let user = app.user("known").await;
    let client = client_from("127.0.0.1");
    let mut known = Vec::new();
    let mut unknown = Vec::new();
    for _ in 0..7 {
        known.push(grant_from(&app, &client, &user.email, "guess").await);
        unknown.push(grant_from(&app, &client, "nobody@tacho.test", "guess").await);
    }
    assert_eq!(known, unknown);
    assert_eq!(
        known.iter().map(|a| a.1).collect::<Vec<_>>(),
        [
            Some(106),
            Some(106),
            Some(106),
            Some(106),
            Some(212),
            Some(211),
            Some(211)
        ]
    );
}

#[tokio::test]
async fn a_registration_flood_is_refused_and_logins_go_on() {
    let app = spawn_app_with(|s| s.registration_rate_per_hour = 3).await;
    let user = app.user("regular").await;
    let flood_client = client_from("127.0.0.1");
    let flood = (0..30).map(|i| {
        flood_client
            .post(app.url("/users/v1/register"))
            .json(&json!({
                "first_name": "Flood",
                "last_name": format!("N{i}"),
                "email": format!("flood{i}@example.com"),
                "password": "a long enough password",
                "language": "EN",
                "time_zone": "Europe/Brussels",
            }))
            .send()
    });
    let elsewhere = client_from("127.0.1.1");
    let login = grant_from(&app, &elsewhere, &user.email, PASSWORD);
    let (flooded, login) = tokio::join!(futures_util::future::join_all(flood), login);
    let statuses: Vec<u16> = flooded
        .into_iter()
        .map(|r| r.unwrap().status().as_u16())
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        3,
        "{statuses:?}"
    );
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 27);
    assert_eq!(login.0, 200, "a login from another network goes on");
    // Another network may still register.
    let other = client_from("127.0.2.1")
        .post(app.url("/users/v1/register"))
        .json(&json!({
            "first_name": "Other",
            "last_name": "Network",
            "email": "other@example.com",
            "password": "a long enough password",
            "language": "EN",
            "time_zone": "Europe/Brussels",
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);
}
