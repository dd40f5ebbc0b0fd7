//! The portal over HTTP: sessions, CSRF, security headers, authorisation, htmx fragments and
//! translations. The cookie is handled by hand so that tests can replay old ones.

use chrono::Datelike;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::json;
use tacho::domain::account::Language;

use crate::helpers::{PASSWORD, TestApp, TestUser, World, spawn_app, spawn_app_with};

/// A response: status, headers and body text.
pub struct Page {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Page {
    /// The `Location` header of a redirect.
    pub fn location(&self) -> &str {
        self.headers
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The value of the first hidden `csrf` input.
    pub fn csrf(&self) -> String {
        let marker = "name=\"csrf\" value=\"";
        let start = self.body.find(marker).expect("a csrf field") + marker.len();
        self.body[start..start + 64].to_owned()
    }
}

/// A browser without JavaScript: one session cookie, sent back by hand.
pub struct Browser<'a> {
    pub app: &'a TestApp,
    /// The session cookie, `tacho_session=…`.
    pub cookie: Option<String>,
    /// The anonymous visitor's CSRF cookie, `tacho_csrf=…`.
    pub csrf_cookie: Option<String>,
    /// Extra headers sent with every request (e.g. `HX-Request`, `Origin`).
    pub headers: Vec<(&'static str, String)>,
}

/// The `name=value` part of the cookie `name` the answer sets.
fn set_cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .map(|v| v.split(';').next().unwrap_or("").to_owned())
}

fn session_cookie(headers: &HeaderMap) -> Option<String> {
    set_cookie(headers, "tacho_session")
}

impl<'a> Browser<'a> {
    pub fn new(app: &'a TestApp) -> Self {
        Browser {
            app,
            cookie: None,
            csrf_cookie: None,
            headers: Vec::new(),
        }
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> Page {
        let mut request = request;
        let cookies: Vec<&str> = [&self.cookie, &self.csrf_cookie]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        if !cookies.is_empty() {
            request = request.header("Cookie", cookies.join("; "));
        }
        for (name, value) in &self.headers {
            request = request.header(*name, value.clone());
        }
        let response = request.send().await.expect("request sent");
        let status = response.status();
        let headers = response.headers().clone();
        if let Some(cookie) = session_cookie(&headers) {
            // An emptied cookie is the server ending the session.
            self.cookie = (cookie != "tacho_session=").then_some(cookie);
        }
        if let Some(cookie) = set_cookie(&headers, "tacho_csrf") {
            self.csrf_cookie = Some(cookie);
        }
        let body = response.text().await.unwrap_or_default();
        Page {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&mut self, path: &str) -> Page {
        let request = self.app.client.get(self.app.url(path));
        self.send(request).await
    }

    /// Posts a form as it is (no token added).
    pub async fn post_raw(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let request = self.app.client.post(self.app.url(path)).form(form);
        self.send(request).await
    }

    /// Posts a form with the CSRF token of the page at `from`.
    pub async fn post(&mut self, from: &str, path: &str, form: &[(&str, &str)]) -> Page {
        let token = self.get(from).await.csrf();
        let mut fields: Vec<(&str, &str)> = vec![("csrf", token.as_str())];
        fields.extend_from_slice(form);
        self.post_raw(path, &fields).await
    }

    /// Logs in through the form.
    pub async fn login(&mut self, email: &str, password: &str) -> Page {
        self.post(
            "/portal/login",
            "/portal/login",
            &[("email", email), ("password", password)],
        )
        .await
    }
}

/// A browser logged in as `user`.
pub async fn logged_in<'a>(app: &'a TestApp, user: &TestUser) -> Browser<'a> {
    let mut browser = Browser::new(app);
    let page = browser.login(&user.email, PASSWORD).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    browser
}

#[tokio::test]
async fn pages_carry_security_headers_and_the_login_redirect() {
    let app = spawn_app().await;
    let mut browser = Browser::new(&app);
    let root = browser.get("/").await;
    assert_eq!(root.status, StatusCode::SEE_OTHER);
    let page = browser.get("/portal/account").await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert!(
        page.location().starts_with("/portal/login"),
        "{}",
        page.location()
    );
    let login = Browser::new(&app).get("/portal/login").await;
    assert_eq!(login.status, 200);
    let csp = login.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"));
    assert!(csp.contains("frame-ancestors 'none'"));
    assert_eq!(login.headers["x-content-type-options"], "nosniff");
    assert_eq!(login.headers["x-frame-options"], "DENY");
    assert!(!login.body.contains("<script>"), "no inline script");
    // An anonymous visitor gets only the CSRF cookie of the login form.
    let cookies: Vec<&str> = login
        .headers
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(cookies.len(), 1, "{cookies:?}");
    assert!(cookies[0].starts_with("tacho_csrf="));
    assert!(cookies[0].contains("HttpOnly") && cookies[0].contains("SameSite=Strict"));
    assert!(!login.headers.contains_key("strict-transport-security"));
    let user = app.user("headers").await;
    let mut member = Browser::new(&app);
    let signed_in = member.login(&user.email, PASSWORD).await;
    let cookie = session_cookie_header(&signed_in);
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"));
    // Served over plain HTTP in tests, so not Secure (browsers would drop it).
    assert!(!cookie.contains("Secure"));
    // Static files are linked by an address naming their content, kept for a year.
    let address = |name: &str| {
        let start = login.body.find(&format!("/static/{name}.")).expect(name);
        let end = start + login.body[start..].find('"').unwrap();
        login.body[start..end].to_owned()
    };
    let htmx = browser.get(&address("htmx")).await;
    assert_eq!(htmx.status, 200);
    assert!(htmx.body.starts_with("var htmx="));
    assert_eq!(
        htmx.headers["cache-control"],
        "public, max-age=31536000, immutable"
    );
    let css = browser.get(&address("portal")).await;
    assert!(
        css.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/")
    );
    // The plain name of an older page still answers, revalidated each time.
    let plain = browser.get("/static/portal.css").await;
    assert_eq!(plain.status, 200);
    assert_eq!(plain.headers["cache-control"], "public, no-cache");
    assert_eq!(browser.get("/static/nothing.js").await.status, 404);
    // The API keeps its JSON 404 outside the portal.
    let api = app
        .client
        .get(app.url("/nothing/here"))
        .send()
        .await
        .unwrap();
    assert_eq!(api.status(), 404);
    assert!(api.text().await.unwrap().contains("\"code\""));
    let portal_404 = browser.get("/portal/nothing/here").await;
    assert_eq!(portal_404.status, 404);
    assert!(portal_404.body.contains("<html"));
}

#[tokio::test]
async fn login_failures_freeze_then_block_and_an_admin_unblocks() {
    let app = spawn_app().await;
    let user = app.user("lock").await;
    let mut browser = Browser::new(&app);
    let unknown = browser.login("nobody@tacho.test", PASSWORD).await;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
    assert!(
        unknown
            .body
            .contains("The e-mail address or password is wrong.")
    );
    for _ in 0..4 {
        let page = browser.login(&user.email, "wrong password").await;
        assert_eq!(page.status, StatusCode::UNAUTHORIZED);
        assert!(page.body.contains("password is wrong"), "{}", page.body);
    }
    let fifth = browser.login(&user.email, "wrong password").await;
    assert!(fifth.body.contains("Too many failed attempts"));
    // Frozen: even the right password is refused until the freeze is over.
    let frozen = browser.login(&user.email, PASSWORD).await;
    assert_eq!(frozen.status, StatusCode::UNAUTHORIZED);
    assert!(frozen.body.contains("Too many failed attempts"));
    app.clock.advance(chrono::Duration::seconds(11));
    let ok = browser.login(&user.email, PASSWORD).await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER);

    // Fifty failures in a row from one network block the account there until an
    // administrator unblocks it (each after the last freeze is over).
    for _ in 0..50 {
        app.clock.advance(chrono::Duration::hours(2));
        let refused = app.password_grant(&user.email, "wrong password").await;
        assert_eq!(refused.status, 400);
    }
    let mut other = Browser::new(&app);
    let blocked = other.login(&user.email, PASSWORD).await;
    assert!(blocked.body.contains("blocked"), "{}", blocked.body);
    let admin = app.admin("boss").await;
    let mut admin_browser = logged_in(&app, &admin).await;
    let users = admin_browser.get("/portal/admin/users").await;
    assert!(users.body.contains("Blocked"));
    let unblocked = admin_browser
        .post(
            "/portal/admin/users",
            &format!("/portal/admin/users/{}/unblock", user.id),
            &[],
        )
        .await;
    assert_eq!(unblocked.status, StatusCode::SEE_OTHER);
    let again = other.login(&user.email, PASSWORD).await;
    assert_eq!(again.status, StatusCode::SEE_OTHER, "{}", again.body);
    let audit = admin_browser.get("/portal/admin/audit").await;
    assert!(audit.body.contains("user.unblock"));
}

#[tokio::test]
async fn state_changes_need_the_session_token_and_this_origin() {
    let app = spawn_app().await;
    let user = app.user("csrf").await;
    let mut browser = logged_in(&app, &user).await;
    let token = browser.get("/portal/account").await.csrf();
    let settings = |csrf: &str| {
        vec![
            ("csrf", csrf.to_owned()),
            ("language", "de".to_owned()),
            ("time_zone", "Europe/Berlin".to_owned()),
        ]
    };

    // No token at all.
    let missing = browser
        .post_raw(
            "/portal/account/settings",
            &[("language", "de"), ("time_zone", "Europe/Berlin")],
        )
        .await;
    assert_eq!(missing.status, StatusCode::FORBIDDEN);
    assert!(missing.body.contains("did not come from this site"));

    // The token of another session.
    let other = app.user("other").await;
    let mut stranger = logged_in(&app, &other).await;
    let foreign = stranger.get("/portal/account").await.csrf();
    assert_ne!(foreign, token);
    let fields = settings(&foreign);
    let refs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let wrong = browser.post_raw("/portal/account/settings", &refs).await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN);

    // The right token from a foreign origin.
    let fields = settings(&token);
    let refs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    browser
        .headers
        .push(("Origin", "https://evil.example".to_owned()));
    let cross = browser.post_raw("/portal/account/settings", &refs).await;
    assert_eq!(cross.status, StatusCode::FORBIDDEN);
    browser.headers.clear();
    let me = app.get("/users/v1/me", &user.token).await;
    assert_eq!(me.body["language"], "EN", "nothing was changed");

    // The right token from this origin, in the htmx header instead of the form.
    browser.headers.push(("Origin", app.address.clone()));
    browser.headers.push(("X-CSRF-Token", token.clone()));
    let ok = browser
        .post_raw(
            "/portal/account/settings",
            &[("language", "de"), ("time_zone", "Europe/Berlin")],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    let me = app.get("/users/v1/me", &user.token).await;
    assert_eq!(me.body["language"], "DE");
    assert_eq!(me.body["time_zone"], "Europe/Berlin");
}

#[tokio::test]
async fn login_renews_the_session_and_logout_ends_it_for_good() {
    let app = spawn_app().await;
    let user = app.user("fixation").await;
    let mut browser = Browser::new(&app);
    let sessions_before = session_rows(&app).await;
    let form = browser.get("/portal/login").await;
    assert!(
        browser.cookie.is_none() && browser.csrf_cookie.is_some(),
        "an anonymous visitor gets a CSRF cookie, not a session: {:?}",
        form.headers
    );
    assert_eq!(
        session_rows(&app).await,
        sessions_before,
        "no session is stored"
    );
    // A session key someone plants before the login is not the one the login gets.
    let planted_key = "tacho_session=planted-before-login".to_owned();
    browser.cookie = Some(planted_key.clone());
    let page = browser.login(&user.email, PASSWORD).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    let after = browser.cookie.clone().expect("a session after login");
    assert_ne!(planted_key, after, "login must issue a new session key");
    assert_eq!(
        session_rows(&app).await,
        sessions_before + 1,
        "the login stores one"
    );

    // A login form posted without the visitor's CSRF cookie is refused.
    let mut forged = Browser::new(&app);
    let token = browser.csrf_cookie.clone().unwrap();
    let token = token.trim_start_matches("tacho_csrf=");
    let page = forged
        .post_raw(
            "/portal/login",
            &[
                ("csrf", token),
                ("email", &user.email),
                ("password", PASSWORD),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::FORBIDDEN);

    assert_eq!(browser.get("/portal/account").await.status, 200);
    let logout = browser.post("/portal/account", "/portal/logout", &[]).await;
    assert_eq!(logout.status, StatusCode::SEE_OTHER);
    assert!(browser.cookie.is_none(), "the cookie is removed");

    // Replaying the logged-out cookie opens nothing.
    let mut replay = Browser::new(&app);
    replay.cookie = Some(after);
    let page = replay.get("/portal/account").await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert!(
        page.location().starts_with("/portal/login"),
        "{}",
        page.location()
    );
}

#[tokio::test]
async fn a_deactivated_user_is_logged_out_at_once() {
    let app = spawn_app().await;
    let admin = app.admin("admin").await;
    let user = app.user("leaver").await;
    let mut browser = logged_in(&app, &user).await;
    assert_eq!(browser.get("/portal/account").await.status, 200);
    let mut admin_browser = logged_in(&app, &admin).await;
    let off = admin_browser
        .post(
            "/portal/admin/users",
            &format!("/portal/admin/users/{}/activation", user.id),
            &[("value", "off")],
        )
        .await;
    assert_eq!(off.status, StatusCode::SEE_OTHER);
    let page = browser.get("/portal/account").await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert!(
        page.location().starts_with("/portal/login"),
        "{}",
        page.location()
    );
    let mut again = Browser::new(&app);
    let refused = again.login(&user.email, PASSWORD).await;
    assert!(refused.body.contains("deactivated"));
}

#[tokio::test]
async fn privilege_actions_ask_first_and_then_say_what_they_did() {
    let app = spawn_app().await;
    let admin = app.admin("admin").await;
    let user = app.user("target").await;
    let mut browser = logged_in(&app, &admin).await;
    let list = browser.get("/portal/admin/users").await;
    let row = list
        .body
        .split(&format!("<tr id=\"user-{}\">", user.id))
        .nth(1)
        .and_then(|rest| rest.split("</tr>").next())
        .expect("the user's row")
        .to_owned();
    assert!(
        row.contains("hx-confirm=\"Deactivate this account?"),
        "{row}"
    );
    assert!(row.contains("hx-confirm=\"Make this user an administrator?"));

    let token = list.csrf();
    browser.headers.push(("HX-Request", "true".to_owned()));
    browser.headers.push(("X-CSRF-Token", token));
    for (path, value, said) in [
        (
            "activation",
            "off",
            "is deactivated; their sessions and tokens have ended.",
        ),
        ("admin", "on", "is now an administrator."),
        ("admin", "off", "is no longer an administrator."),
        ("activation", "on", "is active again."),
    ] {
        let answer = browser
            .post_raw(
                &format!("/portal/admin/users/{}/{path}", user.id),
                &[("value", value)],
            )
            .await;
        assert_eq!(answer.status, 200);
        assert!(answer.body.starts_with("<tr"), "{}", answer.body);
        let notice = answer
            .body
            .split("<p class=\"notice\" role=\"status\">")
            .nth(1)
            .unwrap_or_else(|| panic!("no notice after {path}={value}: {}", answer.body));
        assert!(
            notice.contains(said) && notice.contains("target"),
            "{notice}"
        );
    }
}

#[tokio::test]
async fn an_administrator_ends_a_prescription_after_confirming() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let mut admin = logged_in(&app, &world.admin).await;
    let page = admin.get("/portal/admin/groups").await;
    assert!(
        page.body
            .contains("data-confirm=\"End this prescription now?"),
        "{}",
        page.body
    );
    let ended = admin
        .post(
            "/portal/admin/groups",
            "/portal/admin/enlistments/end",
            &[
                ("patient_id", world.patient.id.as_str()),
                ("group_id", world.group_a.as_str()),
            ],
        )
        .await;
    // Ids that are not ids are refused with a message, never a 5xx.
    for path in [
        "/portal/admin/enlistments/end",
        "/portal/admin/staff/remove",
    ] {
        let odd = admin
            .post(
                "/portal/admin/groups",
                path,
                &[("patient_id", "x"), ("user_id", "x"), ("group_id", "../1")],
            )
            .await;
        assert_eq!(odd.status, 400, "{path}");
        assert!(odd.body.contains("class=\"error-message\""), "{path}");
    }
    assert_eq!(ended.status, 200);
    assert!(ended.body.contains("The prescription has ended."));
    // The group's physician no longer has the patient.
    let reply = app
        .get(
            &format!("/users/v1/{}", world.patient.id),
            &world.staff_a.token,
        )
        .await;
    reply.assert_error(404, 16);
    // A physician cannot end another group's prescription.
    let mut physician = logged_in(&app, &world.staff_b).await;
    let refused = physician
        .post(
            "/portal/account",
            "/portal/admin/enlistments/end",
            &[
                ("patient_id", world.other_patient.id.as_str()),
                ("group_id", world.group_a.as_str()),
            ],
        )
        .await;
    assert!(
        refused.status == 404 || refused.status == 403,
        "{}",
        refused.status
    );
}

#[tokio::test]
async fn the_user_list_names_every_role() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let mut admin = logged_in(&app, &world.admin).await;
    let list = admin.get("/portal/admin/users").await;
    let row = |id: &str| -> String {
        list.body
            .split(&format!("<tr id=\"user-{id}\">"))
            .nth(1)
            .and_then(|rest| rest.split("</tr>").next())
            .unwrap()
            .to_owned()
    };
    let physician = row(&world.staff_a.id);
    assert!(
        physician.contains("Staff of") && physician.contains("Group A"),
        "{physician}"
    );
    assert!(row(&world.admin.id).contains("Administrator"));
}

#[tokio::test]
async fn care_teams_list_their_staff_and_an_administrator_removes_one() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let mut admin = logged_in(&app, &world.admin).await;
    let page = admin.get("/portal/admin/groups").await;
    let group_a = page
        .body
        .split("<td>Group A</td>")
        .nth(1)
        .and_then(|rest| rest.split("</tr>").next())
        .unwrap()
        .to_owned();
    assert!(group_a.contains("staff_a Tester"), "{group_a}");
    assert!(!group_a.contains("staff_b Tester"));
    assert!(group_a.contains("data-confirm=\"Remove this physician from the care team?"));
    app.get(
        &format!("/users/v1/{}", world.patient.id),
        &world.staff_a.token,
    )
    .await
    .assert_ok();

    let removed = admin
        .post(
            "/portal/admin/groups",
            "/portal/admin/staff/remove",
            &[
                ("user_id", world.staff_a.id.as_str()),
                ("group_id", world.group_a.as_str()),
            ],
        )
        .await;
    assert_eq!(removed.status, 200);
    assert!(
        removed
            .body
            .contains("The physician is no longer in the care team.")
    );
    assert!(!removed.body.contains("staff_a Tester"));
    // Out of the team, out of its patients.
    app.get(
        &format!("/users/v1/{}", world.patient.id),
        &world.staff_a.token,
    )
    .await
    .assert_error(404, 16);
    // Only administrators remove staff.
    let mut physician = logged_in(&app, &world.staff_b).await;
    let refused = physician
        .post(
            "/portal/account",
            "/portal/admin/staff/remove",
            &[
                ("user_id", world.staff_b.id.as_str()),
                ("group_id", world.group_b.as_str()),
            ],
        )
        .await;
    assert!(
        refused.status == 403 || refused.status == 404,
        "{}",
        refused.status
    );
    assert!(
        app.store
            .is_staff_of(
                &tacho::domain::id::Id::parse(&world.staff_b.id).unwrap(),
                &tacho::domain::id::Id::parse(&world.group_b).unwrap()
            )
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn physicians_see_their_patients_and_nobody_elses() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let mine = app.measurement_id(&world.patient, "sinus_72").await;
    let theirs = app.measurement_id(&world.patient_b, "sinus_72").await;
    let mut physician = logged_in(&app, &world.staff_a).await;
    let list = physician.get("/portal/patients").await;
    assert_eq!(list.status, 200);
    assert!(list.body.contains("patient Tester") && list.body.contains("other_patient"));
    assert!(!list.body.contains("patient_b"));
    assert!(list.body.contains(&mine), "the last measurement is linked");
    let patient = physician
        .get(&format!("/portal/patients/{}", world.patient.id))
        .await;
    assert_eq!(patient.status, 200);
    assert!(patient.body.contains(&mine));
    for path in [
        format!("/portal/patients/{}", world.patient_b.id),
        format!("/portal/measurements/{theirs}"),
        "/portal/patients/not-an-id".to_owned(),
    ] {
        let page = physician.get(&path).await;
        assert_eq!(page.status, 404, "{path}");
        assert!(page.body.contains("does not exist"));
    }
    let report = physician
        .post(
            &format!("/portal/measurements/{mine}"),
            &format!("/portal/measurements/{theirs}/report"),
            &[],
        )
        .await;
    assert_eq!(report.status, 404);
    // A patient has no patient list and cannot open another patient's measurement.
    let mut patient_b = logged_in(&app, &world.patient_b).await;
    assert_eq!(patient_b.get("/portal/patients").await.status, 403);
    assert_eq!(
        patient_b
            .get(&format!("/portal/measurements/{mine}"))
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn htmx_requests_get_fragments_and_error_toasts() {
    let app = spawn_app().await;
    let user = app.user("htmx").await;
    app.measurement_id(&user, "sinus_72").await;
    let mut browser = logged_in(&app, &user).await;
    let token = browser.get("/portal/profile").await.csrf();
    browser.headers.push(("HX-Request", "true".to_owned()));
    let list = browser.get("/portal/measurements?result=normal").await;
    assert_eq!(list.status, 200);
    assert!(!list.body.contains("<html"), "{}", list.body);
    assert!(list.body.starts_with("<div id=\"measurement-list\">"));
    browser.headers.push(("X-CSRF-Token", token.clone()));
    let saved = browser
        .post_raw("/portal/profile", &[("weight", "72.5"), ("country", "BE")])
        .await;
    assert_eq!(saved.status, 200);
    assert!(!saved.body.contains("<html"));
    assert!(saved.body.contains("id=\"profile-form\"") && saved.body.contains("profile-saved"));
    // The result stands beside the Save button, where the eye is.
    let actions = saved.body.split("class=\"form-actions\"").nth(1).unwrap();
    assert!(actions.contains("id=\"save-profile\"") && actions.contains("id=\"profile-saved\""));
    let refused = browser
        .post_raw(
            "/portal/profile",
            &[("weight", "900"), ("birthday", "2999-01-01")],
        )
        .await;
    assert!(!refused.body.contains("<html"));
    assert!(refused.body.contains("id=\"weight-error\""));
    assert!(refused.body.contains("id=\"birthday-error\""));
    assert!(refused.body.contains("value=\"900\""), "the entry is kept");
    // Each message is tied to its field, listed above the form with a link to it, and the
    // first invalid field (in the form's order) takes the focus.
    assert!(
        refused
            .body
            .contains("aria-invalid=\"true\" aria-describedby=\"birthday-error\" autofocus")
    );
    assert!(
        refused
            .body
            .contains("aria-invalid=\"true\" aria-describedby=\"weight-error\">")
    );
    let summary = refused.body.split("id=\"profile-errors\"").nth(1).unwrap();
    let birthday = summary.find("href=\"#birthday\"").expect("linked");
    let weight = summary.find("href=\"#weight\"").expect("linked");
    assert!(birthday < weight, "in the form's order");
    assert_eq!(refused.body.matches("autofocus").count(), 1);
    let profile = app
        .get(&format!("/profiles/v1/{}", user.id), &user.token)
        .await;
    assert_eq!(
        profile.body["weight"],
        json!(72.5),
        "the refused form changed nothing"
    );
    assert_eq!(profile.body["country"], "BE");
    let missing = browser
        .get("/portal/measurements/5f3c2b1a0d9e8f7a6b5c4d3e")
        .await;
    assert_eq!(missing.status, 404);
    assert!(!missing.body.contains("<html"));
    assert!(missing.body.contains("class=\"toast\""));
    assert_eq!(missing.headers["hx-retarget"], "#toast");
}

#[tokio::test]
async fn an_unknown_page_speaks_the_readers_language_inside_the_usual_chrome() {
    let app = spawn_app().await;
    let user = app.user("lost").await;
    app.set_language(&user, "nl").await;
    let mut browser = logged_in(&app, &user).await;
    let missing = browser.get("/portal/nope").await;
    assert_eq!(missing.status, 404);
    assert!(missing.body.contains("lang=\"nl\""), "{}", missing.body);
    assert!(missing.body.contains("Deze pagina bestaat niet"));
    assert!(
        missing.body.contains("action=\"/portal/logout\""),
        "logout is there"
    );
    assert!(
        missing.body.contains("href=\"/portal/measurements\""),
        "the menu is there"
    );

    // Before login, the browser's language decides.
    let mut visitor = Browser::new(&app);
    visitor
        .headers
        .push(("Accept-Language", "ar,en;q=0.5".to_owned()));
    let page = visitor.get("/portal/nope").await;
    assert_eq!(page.status, 404);
    assert!(page.body.contains("dir=\"rtl\""), "{}", page.body);
    assert!(!page.body.contains("action=\"/portal/logout\""));
}

#[tokio::test]
async fn the_account_page_names_the_language_and_hides_counters() {
    let app = spawn_app().await;
    let user = app.user("named").await;
    app.set_language(&user, "nl").await;
    let mut browser = logged_in(&app, &user).await;
    let page = browser.get("/portal/account").await;
    assert_eq!(page.status, 200);
    let record = page.body.split("</dl>").next().unwrap();
    assert!(record.contains("<dd>Nederlands</dd>"), "{record}");
    assert!(!record.contains("<dd>NL</dd>"));
    assert!(
        !record.contains("Mislukte aanmeldingen"),
        "no internal counter"
    );
}

#[tokio::test]
async fn previous_and_next_step_through_what_the_reader_may_see() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let late = app.user("late").await;
    // Uploaded before the patient joins group A: the group's physician never sees it.
    let before = app.measurement_id(&late, "sinus_72").await;
    app.clock.advance(chrono::Duration::seconds(1));
    app.enlist_patient(&world.admin, &late, &world.group_a)
        .await;
    let mut ids = vec![before];
    for _ in 0..2 {
        app.clock.advance(chrono::Duration::seconds(1));
        ids.push(app.measurement_id(&late, "sinus_72").await);
    }
    let link = |rel: &str, id: &str| format!("rel=\"{rel}\" href=\"/portal/measurements/{id}\"");

    let mut patient = logged_in(&app, &late).await;
    let middle = patient
        .get(&format!("/portal/measurements/{}", ids[1]))
        .await;
    assert!(
        middle.body.contains(&link("prev", &ids[0])),
        "{}",
        middle.body
    );
    assert!(middle.body.contains(&link("next", &ids[2])));
    let first = patient
        .get(&format!("/portal/measurements/{}", ids[0]))
        .await;
    assert!(!first.body.contains("rel=\"prev\""));
    assert!(first.body.contains(&link("next", &ids[1])));

    let mut physician = logged_in(&app, &world.staff_a).await;
    let seen = physician
        .get(&format!("/portal/measurements/{}", ids[1]))
        .await;
    assert_eq!(seen.status, 200);
    assert!(
        !seen.body.contains("rel=\"prev\""),
        "the earlier one is not his to see"
    );
    assert!(seen.body.contains(&link("next", &ids[2])));
    let hidden = physician
        .get(&format!("/portal/measurements/{}", ids[0]))
        .await;
    assert_eq!(hidden.status, 404);
}

#[tokio::test]
async fn what_the_app_writes_is_shown_not_edited_and_a_save_keeps_it() {
    let app = spawn_app().await;
    let user = app.user("phone").await;
    app.put(
        &format!("/profiles/v1?eq(id,{})", user.id),
        &user.token,
        json!({"weight": 70, "service_info": {"device": {"os": "18.0", "model": "Pixel 9"},
            "app": {"version": "4.2.1"}}, "custom_fields": {"ward": "B3"}}),
    )
    .await
    .assert_ok();
    let mut browser = logged_in(&app, &user).await;
    let page = browser.get("/portal/profile").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("<bdi>Pixel 9</bdi>"), "{}", page.body);
    assert!(page.body.contains("<bdi>4.2.1</bdi>") && page.body.contains("<bdi>B3</bdi>"));
    assert!(
        !page.body.contains("name=\"service_info."),
        "no device inputs"
    );
    assert!(
        !page.body.contains("name=\"custom_fields\""),
        "no custom-field input"
    );

    let saved = browser
        .post(
            "/portal/profile",
            "/portal/profile",
            &[("weight", "71"), ("country", "BE")],
        )
        .await;
    assert_eq!(saved.status, 200);
    assert!(
        saved.body.contains("<bdi>Pixel 9</bdi>"),
        "still shown after saving"
    );
    // Countries are offered by name in the reader's language, sorted as it sorts.
    assert!(
        saved
            .body
            .contains("<option value=\"BE\" selected>Belgium</option>"),
        "{}",
        saved.body
    );
    let stored = app
        .get(&format!("/profiles/v1/{}", user.id), &user.token)
        .await;
    let stored = stored.assert_ok();
    assert_eq!(stored["weight"], json!(71.0));
    assert_eq!(stored["service_info"]["device"]["model"], "Pixel 9");
    assert_eq!(stored["service_info"]["app"]["version"], "4.2.1");
    assert_eq!(stored["custom_fields"]["ward"], "B3");
}

#[tokio::test]
async fn the_menu_follows_what_the_user_is() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let menu = |body: &str| -> Vec<&'static str> {
        let nav = body
            .split("<nav aria-label")
            .nth(1)
            .and_then(|rest| rest.split("</nav>").next())
            .unwrap_or("")
            .to_owned();
        [
            "/portal/measurements\"",
            "/portal/profile\"",
            "/portal/reports\"",
            "/portal/patients\"",
            "/portal/admin/users\"",
            "/portal/account\"",
        ]
        .into_iter()
        .filter(|link| nav.contains(&format!("href=\"{link}")))
        .collect()
    };
    let patient = logged_in(&app, &world.patient)
        .await
        .get("/portal/account")
        .await;
    assert_eq!(
        menu(&patient.body),
        [
            "/portal/measurements\"",
            "/portal/profile\"",
            "/portal/reports\"",
            "/portal/account\""
        ]
    );
    let physician = logged_in(&app, &world.staff_a)
        .await
        .get("/portal/account")
        .await;
    assert_eq!(
        menu(&physician.body),
        ["/portal/patients\"", "/portal/account\""],
        "no empty patient pages for a physician"
    );
    let admin = logged_in(&app, &world.admin)
        .await
        .get("/portal/account")
        .await;
    assert_eq!(
        menu(&admin.body),
        [
            "/portal/patients\"",
            "/portal/admin/users\"",
            "/portal/account\""
        ]
    );
    // The account page lists prescriptions to patients and care teams to staff, not "none".
    assert!(patient.body.contains("<h3>Prescriptions</h3>"));
    assert!(!patient.body.contains("<h3>Care teams</h3>"));
    assert!(physician.body.contains("<h3>Care teams</h3>"));
    assert!(!physician.body.contains("<h3>Prescriptions</h3>"));
    // A physician who is also a patient somewhere has both.
    app.enlist_patient(&world.admin, &world.staff_a, &world.group_b)
        .await;
    let both = logged_in(&app, &world.staff_a)
        .await
        .get("/portal/account")
        .await;
    assert_eq!(menu(&both.body).len(), 5);
}

#[tokio::test]
async fn known_tags_are_shown_in_the_readers_words() {
    let app = spawn_app().await;
    let user = app.user("tagged").await;
    app.set_language(&user, "nl").await;
    let mut payload = crate::helpers::fixture("sinus_72");
    payload["tags"] = json!(["afternoon", "symptomatic", "clinic-7"]);
    let id = app.measure(&user, payload).await.id;
    let mut browser = logged_in(&app, &user).await;
    let page = browser.get(&format!("/portal/measurements/{id}")).await;
    assert!(
        page.body.contains("middag, met klachten, clinic-7"),
        "{}",
        page.body
    );
}

#[tokio::test]
async fn the_physician_reads_dates_and_numbers_in_his_language() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    app.put(
        &format!("/profiles/v1?eq(id,{})", world.patient.id),
        &world.patient.token,
        json!({"birthday": "1958-03-14", "weight": 67.5, "length": 165, "country": "DE"}),
    )
    .await
    .assert_ok();
    app.set_language(&world.staff_a, "nl").await;
    let mut physician = logged_in(&app, &world.staff_a).await;
    let page = physician
        .get(&format!("/portal/patients/{}", world.patient.id))
        .await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("14-03-1958"), "{}", page.body);
    assert!(page.body.contains("67,5 kg") && page.body.contains("165 cm"));
    assert!(!page.body.contains("1958-03-14") && !page.body.contains("67.5"));
    // The country is named in the reader's language (CLDR), not given as its code.
    assert!(
        page.body.contains("<dd><bdi>Duitsland</bdi></dd>"),
        "{}",
        page.body
    );
    app.set_language(&world.staff_a, "zh").await;
    let page = physician
        .get(&format!("/portal/patients/{}", world.patient.id))
        .await;
    assert!(
        page.body.contains("<dd><bdi>德国</bdi></dd>"),
        "{}",
        page.body
    );
}

#[tokio::test]
async fn the_report_button_reuses_a_current_report_and_a_review_outdates_it() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let mut patient = logged_in(&app, &world.patient).await;
    let page = format!("/portal/measurements/{id}");
    let detail = patient.get(&page).await;
    assert!(detail.body.contains("No report yet."));
    assert!(detail.body.contains("<svg class=\"chart tachogram\""));
    let first = patient
        .post(&page, &format!("/portal/measurements/{id}/report"), &[])
        .await;
    assert_eq!(first.status, StatusCode::SEE_OTHER);
    let pdf_path = first.location().to_owned();
    assert!(pdf_path.starts_with("/files/v1/"), "{pdf_path}");
    let pdf = app.client.get(app.url(&pdf_path)).send().await.unwrap();
    assert_eq!(pdf.status(), 200);
    assert!(pdf.bytes().await.unwrap().starts_with(b"%PDF"));
    let second = patient
        .post(&page, &format!("/portal/measurements/{id}/report"), &[])
        .await;
    assert_eq!(second.location(), pdf_path, "a current report is reused");
    let documents = app
        .get(
            &format!("/data/v1/measurement-reports/documents?eq(data.measurementId,{id})"),
            &world.patient.token,
        )
        .await;
    assert_eq!(documents.body["page"]["total"], 1, "no second document");

    let mut physician = logged_in(&app, &world.staff_a).await;
    let staff_view = physician.get(&page).await;
    assert!(staff_view.body.contains("The report is up to date."));
    // With no review yet, the form proposes the analysis' own result from the ordered labels.
    assert!(
        staff_view
            .body
            .contains("<option value=\"sinus_rhythm\" selected>Sinus rhythm</option>"),
        "{}",
        staff_view.body
    );
    let options: Vec<&str> = staff_view
        .body
        .match_indices("<option value=\"")
        .map(|(at, _)| {
            let rest = &staff_view.body[at + 15..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    assert_eq!(
        options,
        [
            "sinus_rhythm",
            "extrasystoles_isolated",
            "bradycardia",
            "tachycardia",
            "extrasystoles_frequent",
            "irregular_rhythm",
            "atrial_fibrillation",
            "other"
        ],
        "least to most severe, then a conclusion written out"
    );
    app.clock.advance(chrono::Duration::seconds(5));
    let review = |label: &'static str, other: &'static str| {
        [
            ("label", label),
            ("label_other", other),
            ("note", "Nothing to worry about"),
            ("patient_note", "Your rhythm is regular."),
        ]
    };
    let reviewed = physician
        .post(
            &page,
            &format!("/portal/measurements/{id}/review"),
            &review("sinus_rhythm", ""),
        )
        .await;
    assert_eq!(reviewed.status, StatusCode::SEE_OTHER);
    let after = physician.get(&page).await;
    assert!(after.body.contains("out of date"), "{}", after.body);
    assert!(
        after
            .body
            .contains("<dd id=\"review-label\">Sinus rhythm</dd>")
    );
    // The form keeps what was saved: fixing a typo is an edit.
    assert!(
        after
            .body
            .contains("<option value=\"sinus_rhythm\" selected>"),
        "{}",
        after.body
    );
    assert!(
        after.body.contains(
            "rows=\"3\" aria-describedby=\"note-hint\">Nothing to worry about</textarea>"
        )
    );
    assert!(after.body.contains(">Your rhythm is regular.</textarea>"));
    // The patient reads the conclusion and the note written for them, not the clinical note.
    let patient_view = patient.get(&page).await;
    assert!(
        patient_view
            .body
            .contains("<dd id=\"review-label\">Sinus rhythm</dd>")
    );
    assert!(patient_view.body.contains("Your rhythm is regular."));
    assert!(
        !patient_view.body.contains("Nothing to worry about"),
        "{}",
        patient_view.body
    );
    assert!(!patient_view.body.contains("id=\"save-review\""));
    // A conclusion written out: "Other" needs its text, and the form then keeps it.
    let empty_other = physician
        .post(
            &page,
            &format!("/portal/measurements/{id}/review"),
            &review("other", "  "),
        )
        .await;
    assert_eq!(empty_other.status, StatusCode::BAD_REQUEST);
    // The measurement's page again, the message beside the field, every word kept.
    let refused = &empty_other.body;
    assert!(
        refused.contains("id=\"findings\""),
        "the page, not an error page"
    );
    assert!(refused.contains(
        "<span class=\"field-error\" id=\"label-other-error\" role=\"alert\">Write the conclusion when you choose Other.</span>"
    ));
    assert!(refused.contains("aria-invalid=\"true\" aria-describedby=\"label-other-error\""));
    assert!(refused.contains("<option value=\"other\" selected>"));
    assert!(refused.contains(">Nothing to worry about</textarea>"));
    assert!(refused.contains(">Your rhythm is regular.</textarea>"));
    assert!(!refused.contains("Something went wrong"));
    let written = physician
        .post(
            &page,
            &format!("/portal/measurements/{id}/review"),
            &review("other", "Sinus arrhythmia with breathing"),
        )
        .await;
    assert_eq!(written.status, StatusCode::SEE_OTHER);
    let after = physician.get(&page).await;
    assert!(
        after
            .body
            .contains("<dd id=\"review-label\">Sinus arrhythmia with breathing</dd>")
    );
    assert!(after.body.contains("<option value=\"other\" selected>"));
    assert!(
        after
            .body
            .contains("value=\"Sinus arrhythmia with breathing\"")
    );
    // A shared link is its own grant: the page never shows an app's token to pass on.
    assert!(!after.body.contains(&pdf_path));
    let shared = physician
        .post(
            &page,
            &format!("/portal/measurements/{id}/links"),
            &[("days", "30")],
        )
        .await;
    assert_eq!(shared.status, StatusCode::OK);
    assert!(shared.body.contains("/share/"), "{}", shared.body);
    assert!(shared.body.contains("The report is up to date."));
    // Patients may not review their own measurements.
    let refused = patient
        .post(
            &page,
            &format!("/portal/measurements/{id}/review"),
            &[("label", "fine")],
        )
        .await;
    assert_eq!(refused.status, 403);
}

/// Every page a user of each role can open, in every language: no message is missing, Arabic
/// pages are right to left.
#[tokio::test]
async fn every_page_renders_in_every_language() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let measurement = app.measurement_id(&world.patient, "irregular_af").await;
    let pages_of: Vec<(&TestUser, Vec<String>)> = vec![
        (
            &world.patient,
            vec![
                "/portal/account".into(),
                "/portal/profile".into(),
                "/portal/measurements".into(),
                format!("/portal/measurements/{measurement}"),
                "/portal/reports".into(),
                "/portal/notifications".into(),
                "/portal/notifications/settings".into(),
            ],
        ),
        (
            &world.staff_a,
            vec![
                "/portal/patients".into(),
                format!("/portal/patients/{}", world.patient.id),
                format!("/portal/measurements/{measurement}"),
            ],
        ),
        (
            &world.admin,
            vec![
                "/portal/admin/users".into(),
                "/portal/admin/groups".into(),
                "/portal/admin/jobs".into(),
                "/portal/admin/audit".into(),
                "/portal/admin/notifications".into(),
            ],
        ),
    ];
    for language in Language::ALL {
        for (user, pages) in &pages_of {
            app.put(
                &format!("/users/v1/{}", user.id),
                &user.token,
                json!({"language": language.code()}),
            )
            .await
            .assert_ok();
            let mut browser = logged_in(&app, user).await;
            for path in pages.iter() {
                let page = browser.get(path).await;
                assert_eq!(page.status, 200, "{path} in {}", language.code());
                assert!(
                    !page.body.contains("Unknown localization"),
                    "{path} in {}: {}",
                    language.code(),
                    page.body
                );
                let html_tag = format!(
                    "<html lang=\"{}\" dir=\"{}\">",
                    language.code(),
                    if language == Language::Ar {
                        "rtl"
                    } else {
                        "ltr"
                    }
                );
                assert!(page.body.contains(&html_tag), "{path}: {html_tag}");
                // A skip link to the main content, and every table header says what it heads.
                assert!(
                    page.body.contains("<a class=\"skip-link\" href=\"#main\">")
                        && page.body.contains("<main id=\"main\""),
                    "{path}: skip link"
                );
                assert!(
                    !page.body.contains("<th>") && !page.body.contains("<th class"),
                    "{path}: a table header without scope"
                );
            }
        }
        // Before login the language comes from Accept-Language.
        let mut anonymous = Browser::new(&app);
        anonymous
            .headers
            .push(("Accept-Language", format!("{}, en;q=0.5", language.code())));
        let login = anonymous.get("/portal/login").await;
        assert!(
            login
                .body
                .contains(&format!("<html lang=\"{}\"", language.code()))
        );
        assert!(!login.body.contains("Unknown localization"));
    }
}

#[tokio::test]
async fn the_audit_trail_records_views_downloads_and_changes() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let mut physician = logged_in(&app, &world.staff_a).await;
    let page = format!("/portal/measurements/{id}");
    physician.get(&page).await;
    // The first click makes the report, the second hands the same one out again.
    for _ in 0..2 {
        physician
            .post(&page, &format!("/portal/measurements/{id}/report"), &[])
            .await;
    }
    let mut admin = logged_in(&app, &world.admin).await;
    let audit = admin.get("/portal/admin/audit").await;
    assert!(audit.body.contains("measurement.view"));
    assert!(audit.body.contains("report.create"));
    assert!(audit.body.contains("report.download"));
    assert!(audit.body.contains("staff_a Tester"));
    assert!(
        !audit.body.contains("/files/v1/"),
        "no file tokens in the trail"
    );
    // In words, with links to the people and the measurement that still exist.
    let row = audit
        .body
        .split("<tr>")
        .find(|row| row.contains(r#"data-action="measurement.view""#))
        .expect("the view's row");
    assert!(row.contains("viewed a measurement"), "{row}");
    assert!(
        row.contains(&format!(
            r#"<a href="/portal/admin/users/{}">staff_a Tester</a>"#,
            world.staff_a.id
        )),
        "{row}"
    );
    assert!(
        row.contains(&format!(
            r#"<a href="/portal/patients/{}">"#,
            world.patient.id
        )),
        "{row}"
    );
    assert!(
        row.contains(&format!(r#"<a href="/portal/measurements/{id}">"#)),
        "{row}"
    );
    // "Whose data" takes a name, in any case; a name several people share asks for more.
    let by_name = admin.get("/portal/admin/audit?user=PATIENT+tester").await;
    assert_eq!(by_name.status, 200, "{}", by_name.body);
    assert!(by_name.body.contains(r#"data-action="measurement.view""#));
    let shared = admin.get("/portal/admin/audit?user=Tester").await;
    assert_eq!(shared.status, 400);
    assert!(
        shared.body.contains("Several people have this name"),
        "{}",
        shared.body
    );
    let mut patient = logged_in(&app, &world.patient).await;
    assert_eq!(patient.get("/portal/admin/audit").await.status, 403);
}

#[tokio::test]
async fn admins_create_users_groups_and_prescriptions() {
    let app = spawn_app().await;
    let admin = app.admin("chief").await;
    let mut browser = logged_in(&app, &admin).await;
    let created = browser
        .post(
            "/portal/admin/users",
            "/portal/admin/users",
            &[
                ("first_name", "Nina"),
                ("last_name", "Nieuw"),
                ("email", "nina@tacho.test"),
                ("password", "a good password"),
                ("language", "nl"),
                ("time_zone", "Europe/Amsterdam"),
            ],
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    assert!(created.body.contains("nina@tacho.test"));
    let group = browser
        .post(
            "/portal/admin/groups",
            "/portal/admin/groups",
            &[("name", "Rhythm Utrecht"), ("description", "test team")],
        )
        .await;
    assert!(group.body.contains("Rhythm Utrecht"));
    // A second team of the same name (in any case) could not be told apart: refused, in both
    // doors.
    let twin = browser
        .post(
            "/portal/admin/groups",
            "/portal/admin/groups",
            &[("name", "rhythm UTRECHT"), ("description", "")],
        )
        .await;
    assert_eq!(twin.status, StatusCode::BAD_REQUEST, "{}", twin.body);
    assert!(
        twin.body
            .contains("Another care team already has this name")
    );
    app.post(
        "/groups/v1",
        &admin.token,
        json!({"name": "Rhythm Utrecht"}),
    )
    .await
    .assert_error(400, 15);
    let start = group.body.find("name=\"group_id\"").unwrap();
    let value = group.body[start..].find("value=\"").unwrap() + start + 7;
    let group_id = group.body[value..value + 24].to_owned();
    let until = (chrono::Utc::now() + chrono::Duration::days(20))
        .format("%Y-%m-%d")
        .to_string();
    let enlisted = browser
        .post(
            "/portal/admin/groups",
            "/portal/admin/enlistments",
            &[
                ("email", "nina@tacho.test"),
                ("group_id", &group_id),
                ("kind", "patient"),
                ("until", &until),
            ],
        )
        .await;
    assert_eq!(enlisted.status, 200, "{}", enlisted.body);
    assert!(enlisted.body.contains("Nina Nieuw (nina@tacho.test)"));
    app.password_grant("nina@tacho.test", "a good password")
        .await
        .assert_ok();

    // Roles change in place: htmx gets the user's row back.
    let nina = app
        .store
        .user_by_email(&tacho::store::Service::Operator, "nina@tacho.test")
        .await
        .unwrap()
        .unwrap();
    let token = browser.get("/portal/admin/users").await.csrf();
    browser.headers.push(("HX-Request", "true".to_owned()));
    browser.headers.push(("X-CSRF-Token", token));
    let row = browser
        .post_raw(
            &format!("/portal/admin/users/{}/admin", nina.id),
            &[("value", "on")],
        )
        .await;
    assert_eq!(row.status, 200);
    assert!(
        row.body
            .starts_with(&format!("<tr id=\"user-{}\">", nina.id))
    );
    assert!(row.body.contains("Administrator"));
    let me = app
        .get(&format!("/users/v1/{}", nina.id), &admin.token)
        .await;
    assert_eq!(me.body["roles"], json!(["admin"]));
    // Nobody deactivates or demotes themselves.
    let own = browser
        .post_raw(
            &format!("/portal/admin/users/{}/activation", admin.id),
            &[("value", "off")],
        )
        .await;
    assert_eq!(own.status, 403);
    assert!(own.body.contains("class=\"toast\""));
}

/// A prescription's end moves in the portal (later extends it), and a physician enlisted as a
/// patient is asked about first, the form kept.
#[tokio::test]
async fn prescriptions_are_extended_and_staff_are_enlisted_as_patients_only_when_confirmed() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let mut admin = logged_in(&app, &world.admin).await;
    let day = |days: i64| {
        (chrono::Utc::now() + chrono::Duration::days(days))
            .format("%Y-%m-%d")
            .to_string()
    };
    let page = admin.get("/portal/admin/groups").await;
    assert!(
        page.body
            .contains(r#"action="/portal/admin/enlistments/extend""#)
    );
    let later = day(90);
    let extended = admin
        .post(
            "/portal/admin/groups",
            "/portal/admin/enlistments/extend",
            &[
                ("patient_id", world.patient.id.as_str()),
                ("group_id", world.group_a.as_str()),
                ("until", &later),
            ],
        )
        .await;
    assert_eq!(extended.status, 200, "{}", extended.body);
    assert!(extended.body.contains("last day was changed"));
    assert!(
        extended.body.contains(&format!(r#"value="{later}""#)),
        "the new last day"
    );

    let staff_email = world.staff_b.email.clone();
    let until = day(30);
    let fields = [
        ("email", staff_email.as_str()),
        ("group_id", world.group_a.as_str()),
        ("kind", "patient"),
        ("until", until.as_str()),
    ];
    let asked = admin
        .post("/portal/admin/groups", "/portal/admin/enlistments", &fields)
        .await;
    assert_eq!(asked.status, 400);
    assert!(
        asked
            .body
            .contains("is a member of a care team&#39;s staff"),
        "{}",
        asked.body
    );
    assert!(
        asked.body.contains(&format!(r#"value="{staff_email}""#)),
        "the form is kept"
    );
    assert!(asked.body.contains(r#"id="confirm-staff""#));
    let before = app
        .get(
            &format!("/users/v1/{}", world.staff_b.id),
            &world.admin.token,
        )
        .await;
    assert_eq!(
        before.body["patient_enlistments"],
        json!([]),
        "not enlisted yet"
    );
    let mut confirmed = fields.to_vec();
    confirmed.push(("confirm_staff", "1"));
    let done = admin
        .post(
            "/portal/admin/groups",
            "/portal/admin/enlistments",
            &confirmed,
        )
        .await;
    assert_eq!(done.status, 200, "{}", done.body);
    let after = app
        .get(
            &format!("/users/v1/{}", world.staff_b.id),
            &world.admin.token,
        )
        .await;
    assert_eq!(
        after.body["patient_enlistments"].as_array().unwrap().len(),
        1
    );
}

/// Everyone changes its own name and phone number on the account page, and an administrator
/// anyone's on the user's edit page; a refused form keeps what was typed and says why beside
/// the field.
#[tokio::test]
async fn people_change_their_own_name_and_phone_and_administrators_anyones() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let mut patient = logged_in(&app, &world.patient).await;
    let refused = patient
        .post(
            "/portal/account",
            "/portal/account/settings",
            &[
                ("first_name", "Anne"),
                ("last_name", "Tester"),
                ("phone_number", "call me"),
                ("language", "en"),
                ("time_zone", "Europe/Brussels"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(
        refused
            .body
            .contains(r#"id="first_name" name="first_name" type="text" value="Anne""#),
        "{}",
        refused.body
    );
    assert!(refused.body.contains(r#"value="call me""#));
    let at = refused
        .body
        .find(r#"id="phone_number-error""#)
        .expect("beside the phone");
    assert!(refused.body[at..].contains("Write a phone number"));
    let saved = patient
        .post(
            "/portal/account",
            "/portal/account/settings",
            &[
                ("first_name", "Anne"),
                ("last_name", "Tester"),
                ("phone_number", "+32 470 12 34 56"),
                ("language", "en"),
                ("time_zone", "Europe/Brussels"),
            ],
        )
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let me = app.get("/users/v1/me", &world.patient.token).await;
    assert_eq!(me.body["first_name"], "Anne");
    assert_eq!(me.body["phone_number"], "+32 470 12 34 56");

    let mut admin = logged_in(&app, &world.admin).await;
    let path = format!("/portal/admin/users/{}", world.patient.id);
    let list = admin.get("/portal/admin/users").await;
    assert!(
        list.body.contains(&format!(r#"href="{path}""#)),
        "an edit link per user"
    );
    let form = admin.get(&path).await;
    assert_eq!(form.status, 200);
    assert!(form.body.contains(r#"value="Anne""#));
    let edited = admin
        .post(
            &path,
            &path,
            &[
                ("first_name", "Anne"),
                ("last_name", "Peeters"),
                ("phone_number", ""),
                ("language", "nl"),
                ("time_zone", "Europe/Amsterdam"),
            ],
        )
        .await;
    assert_eq!(edited.status, StatusCode::SEE_OTHER, "{}", edited.body);
    assert_eq!(edited.location(), format!("{path}?saved=1"));
    let me = app.get("/users/v1/me", &world.patient.token).await;
    assert_eq!(me.body["last_name"], "Peeters");
    assert_eq!(me.body["language"], "NL");
    assert_eq!(
        me.body["phone_number"],
        serde_json::Value::Null,
        "an empty number clears it"
    );
    // Staff do not edit their patients' accounts.
    let mut staff = logged_in(&app, &world.staff_a).await;
    assert_eq!(staff.get(&path).await.status, StatusCode::FORBIDDEN);
}

/// A refused "create user" keeps what was typed (never the password) and says beside each
/// refused field what is wrong; the time zone is picked from the grouped list.
#[tokio::test]
async fn a_refused_new_account_keeps_its_fields_and_says_what_is_wrong_beside_each() {
    let app = spawn_app().await;
    let admin = app.admin("chief").await;
    let mut chief = logged_in(&app, &admin).await;
    let form = chief.get("/portal/admin/users").await;
    assert!(
        form.body
            .contains(r#"<select id="new-zone" name="time_zone""#),
        "a list of zones, not free text"
    );
    assert!(form.body.contains("<optgroup label=\"Europe\">"));
    let refused = chief
        .post(
            "/portal/admin/users",
            "/portal/admin/users",
            &[
                ("first_name", "Nina"),
                ("last_name", ""),
                ("email", "nina-at-tacho.test"),
                ("password", "password123"),
                ("language", "nl"),
                ("time_zone", "Asia/Tokyo"),
                ("admin", "on"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let body = &refused.body;
    assert!(body.contains("The account was not created."), "{body}");
    assert!(
        body.contains(r#"name="first_name" type="text" value="Nina""#),
        "{body}"
    );
    assert!(
        body.contains(r#"value="nina-at-tacho.test""#),
        "the address as typed"
    );
    assert!(!body.contains("password123"), "never the password");
    for (id, message) in [
        ("last_name", "Write a name of 1 to 200 characters."),
        ("new-email", "Write a whole e-mail address"),
        ("new-password", "too easy to guess"),
    ] {
        let error = format!(r#"<span class="field-error" id="{id}-error">"#);
        let at = body.find(&error).unwrap_or_else(|| panic!("{id}: {body}"));
        assert!(body[at..].contains(message), "{id}");
        assert!(
            body.contains(&format!(r#"aria-describedby="{id}-error""#)),
            "{id}"
        );
    }
    assert!(
        !body.contains(r#"id="first_name-error""#),
        "a good field is not marked"
    );
    assert!(
        body.contains(r#"<option value="Asia/Tokyo" selected>"#),
        "{body}"
    );
    assert!(body.contains(r#"<option value="nl" selected>"#), "{body}");
    assert!(body.contains(r#"name="admin" value="on" checked"#));
    // An address in use is said beside the address.
    let taken = chief
        .post(
            "/portal/admin/users",
            "/portal/admin/users",
            &[
                ("first_name", "Nina"),
                ("last_name", "Nieuw"),
                ("email", &admin.email),
                ("password", "a good password"),
                ("language", "nl"),
                ("time_zone", "Europe/Amsterdam"),
            ],
        )
        .await;
    assert_eq!(taken.status, StatusCode::BAD_REQUEST);
    let at = taken
        .body
        .find(r#"id="new-email-error""#)
        .expect("beside the address");
    assert!(taken.body[at..].contains("already in use"));
}

/// An account an administrator created has a password someone else chose: its first portal
/// login leads to the password form, every other page (and every htmx request) leads back
/// to it until the user has chosen its own, and then the portal opens as for anyone.
#[tokio::test]
async fn an_account_an_administrator_created_chooses_its_own_password_first() {
    let app = spawn_app().await;
    let admin = app.admin("chief").await;
    let mut chief = logged_in(&app, &admin).await;
    let created = chief
        .post(
            "/portal/admin/users",
            "/portal/admin/users",
            &[
                ("first_name", "Nina"),
                ("last_name", "Nieuw"),
                ("email", "nina@tacho.test"),
                ("password", "a good password"),
                ("language", "nl"),
                ("time_zone", "Europe/Amsterdam"),
            ],
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);

    let mut nina = Browser::new(&app);
    let login = nina.login("nina@tacho.test", "a good password").await;
    assert_eq!(login.status, StatusCode::SEE_OTHER);
    for page in [
        "/portal/measurements",
        "/portal/profile",
        "/portal/notifications",
    ] {
        let sent = nina.get(page).await;
        assert_eq!(sent.status, StatusCode::SEE_OTHER, "{page}");
        assert_eq!(sent.location(), "/portal/account#password", "{page}");
    }
    let form = nina.get("/portal/account").await;
    assert_eq!(form.status, 200);
    assert!(form.body.contains("id=\"password-due\""), "{}", form.body);
    assert!(!form.body.contains("<nav"), "no menu that leads back here");
    // htmx (the bell, a saved form) is sent there whole.
    nina.headers.push(("HX-Request", "true".into()));
    let bell = nina.get("/portal/notifications/bell").await;
    assert_eq!(bell.status, 200);
    assert_eq!(bell.headers["hx-redirect"], "/portal/account#password");
    nina.headers.clear();

    let changed = nina
        .post(
            "/portal/account",
            "/portal/account/password",
            &[
                ("current", "a good password"),
                ("new", "Nina's own 4 words"),
                ("confirm", "Nina's own 4 words"),
            ],
        )
        .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    assert!(!changed.body.contains("password-due"), "{}", changed.body);
    assert!(changed.body.contains("<nav"), "the menu is back");
    assert_eq!(nina.get("/portal/measurements").await.status, 200);
    app.password_grant("nina@tacho.test", "Nina's own 4 words")
        .await
        .assert_ok();
    // Accounts people make themselves are never asked.
    let own = app.user("registered").await;
    let mut browser = logged_in(&app, &own).await;
    assert_eq!(browser.get("/portal/measurements").await.status, 200);
}

#[tokio::test]
async fn periodic_reports_are_made_on_request_listed_and_opened() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    app.measurement_id(&world.patient, "sinus_72").await;
    let patient_page = format!("/portal/patients/{}", world.patient.id);
    let mut physician = logged_in(&app, &world.staff_a).await;
    assert!(
        physician
            .get(&patient_page)
            .await
            .body
            .contains("No periodic reports yet.")
    );
    let made = physician
        .post(
            &patient_page,
            &format!("/portal/patients/{}/reports", world.patient.id),
            &[],
        )
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let page = physician.get(&patient_page).await;
    assert!(page.body.contains("On request"), "{}", page.body);
    let start = page.body.find("class=\"pdf\" href=\"").expect("a PDF link") + 18;
    let link = page.body[start..].split('"').next().unwrap().to_owned();
    assert!(
        link.starts_with("/portal/reports/") && link.ends_with("/pdf"),
        "{link}"
    );

    // The patient sees it in its own list and opens the PDF.
    let mut patient = logged_in(&app, &world.patient).await;
    let list = patient.get("/portal/reports").await;
    assert!(list.body.contains(&link));
    let pdf = patient.get(&link).await;
    assert_eq!(pdf.status, 200);
    assert_eq!(pdf.headers["content-type"], "application/pdf");
    // A patient cannot order one for itself, and another group's physician sees nothing.
    let refused = patient
        .post(
            "/portal/reports",
            &format!("/portal/patients/{}/reports", world.patient.id),
            &[],
        )
        .await;
    assert_eq!(refused.status, 403);
    let mut stranger = logged_in(&app, &world.staff_b).await;
    assert_eq!(stranger.get(&link).await.status, 404);
    let api = app
        .get(
            &format!("/reports/v1?user_id={}", world.patient.id),
            &world.patient.token,
        )
        .await;
    assert_eq!(api.body["page"]["total"], 1);
    assert_eq!(api.body["data"][0]["trigger"], "MANUAL");

    // Any period, from one day to another in the physician's zone (Brussels): the 1st to the
    // 10th of last month covers those ten whole days.
    let brussels = chrono_tz::Europe::Brussels;
    let today = chrono::Utc::now().with_timezone(&brussels).date_naive();
    let first = today.with_day(1).unwrap() - chrono::Months::new(1);
    let tenth = first.with_day(10).unwrap();
    let made = physician
        .post(
            &patient_page,
            &format!("/portal/patients/{}/reports", world.patient.id),
            &[
                ("from", first.format("%Y-%m-%d").to_string().as_str()),
                ("to", tenth.format("%Y-%m-%d").to_string().as_str()),
            ],
        )
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let midnight = |day: chrono::NaiveDate| {
        day.and_hms_opt(0, 0, 0)
            .unwrap()
            .and_local_timezone(brussels)
            .unwrap()
            .timestamp_millis()
    };
    let api = app
        .get(
            &format!(
                "/reports/v1?user_id={}&sort(-creation_timestamp)",
                world.patient.id
            ),
            &world.patient.token,
        )
        .await;
    let newest = &api.body["data"][0];
    assert_eq!(
        newest["period_start_timestamp"],
        midnight(first),
        "{newest}"
    );
    assert_eq!(
        newest["period_end_timestamp"],
        midnight(tenth.succ_opt().unwrap())
    );
    // More than a year is refused in words.
    let long = physician
        .post(
            &patient_page,
            &format!("/portal/patients/{}/reports", world.patient.id),
            &[("from", "2020-01-01"), ("to", "2021-06-30")],
        )
        .await;
    assert_eq!(long.status, StatusCode::BAD_REQUEST);
    // The patient's page again: the days as typed, the reason beside them.
    assert!(
        long.body.contains(r#"id="report-days-error""#),
        "{}",
        long.body
    );
    assert!(long.body.contains("at most a year"), "{}", long.body);
    assert!(
        long.body
            .contains(r#"name="from" type="date" value="2020-01-01""#)
    );
    assert!(
        long.body
            .contains(r#"name="to" type="date" value="2021-06-30""#)
    );
}

/// Logs in on one instance, reads a page on another, logs out there: the first instance no
/// longer knows the session either.
async fn sessions_are_shared_by_instances(app: &TestApp) {
    let user = app.user("roamer").await;
    let other = app.second_instance().await;
    let mut here = logged_in(app, &user).await;
    let mut there = Browser::new(&other);
    there.cookie = here.cookie.clone();
    assert_eq!(there.get("/portal/account").await.status, 200);
    let logout = there.post("/portal/account", "/portal/logout", &[]).await;
    assert_eq!(logout.status, StatusCode::SEE_OTHER);
    let page = here.get("/portal/account").await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert!(
        page.location().starts_with("/portal/login"),
        "{}",
        page.location()
    );
}

#[tokio::test]
async fn database_sessions_are_shared_by_instances() {
    let app = spawn_app().await;
    sessions_are_shared_by_instances(&app).await;
}

/// Runs against the Redis server named by `TEST_REDIS_URL`, by default the local one that
/// `scripts/test` starts. Without a Redis server the test fails: it is never skipped quietly.
#[tokio::test]
async fn redis_sessions_are_shared_by_instances() {
    let url = std::env::var("TEST_REDIS_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "redis://127.0.0.1:6379".into());
    let app = crate::helpers::spawn_app_with(|s| s.redis_url = Some(url.into())).await;
    assert!(app.state.sessions.is_redis());
    sessions_are_shared_by_instances(&app).await;
}

#[tokio::test]
async fn the_scheduler_page_shows_queued_and_failed_jobs() {
    let app = spawn_app().await;
    let admin = app.admin("ops").await;
    let now = app.clock_millis();
    // The second job is not due yet, so the claim takes the first.
    for (key, attempts, due) in [("report:a", 1, now), ("report:b", 3, now + 60_000)] {
        let job = tacho::store::NewJob {
            kind: tacho::store::entities::job::JobKind::PeriodicReport,
            dedupe_key: key.into(),
            payload: "{}".into(),
            run_after: due,
            max_attempts: attempts,
        };
        app.queue_writes(async |tx| tx.enqueue_jobs(vec![job]).await)
            .await;
    }
    let claimed = app
        .queue_writes(async |tx| tx.claim_jobs("w1", 1, 60_000).await)
        .await;
    app.queue_writes(async |tx| {
        tx.fail_job(
            &claimed[0].id,
            "w1",
            "the renderer ran out of patience",
            now,
        )
        .await
    })
    .await;
    let mut browser = logged_in(&app, &admin).await;
    let page = browser.get("/portal/admin/jobs").await;
    assert!(
        page.body.contains("failed: 1") && page.body.contains("queued: 1"),
        "{}",
        page.body
    );
    assert!(page.body.contains("the renderer ran out of patience"));
    let failed = browser.get("/portal/admin/jobs?status=failed").await;
    assert!(failed.body.contains("1/1"));
    assert!(!failed.body.contains("0/3"));
}

/// The scheduler page lists each prescription's next report, marks it once its period has
/// ended, and makes the due ones at once when asked, each once.
#[tokio::test]
async fn the_scheduler_page_shows_the_reports_to_come_and_makes_the_due_ones_now() {
    let app = spawn_app().await;
    let admin = app.admin("ops").await;
    let patient = app.user("anna").await;
    let group = app.group(&admin, "Ghent").await;
    app.enlist_patient(&admin, &patient, &group).await;
    let mut browser = logged_in(&app, &admin).await;

    let page = browser.get("/portal/admin/jobs").await;
    assert_eq!(page.status, StatusCode::OK);
    let row = |body: &str| {
        body.split("<tr")
            .find(|r| r.contains("anna Tester"))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no row of the patient:\n{body}"))
    };
    let first = row(&page.body);
    assert!(
        first.contains("Weekly report") && first.contains("Ghent"),
        "{first}"
    );
    assert!(!first.contains("due now"), "{first}");

    app.clock.advance(chrono::Duration::days(8));
    // The portal session ended with the idle days.
    let mut browser = logged_in(&app, &admin).await;
    let due = row(&browser.get("/portal/admin/jobs").await.body);
    assert!(
        due.contains("Weekly report") && due.contains("due now"),
        "{due}"
    );

    let made = browser
        .post("/portal/admin/jobs", "/portal/admin/jobs/due", &[])
        .await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.body);
    assert!(made.body.contains("One report was queued"), "{}", made.body);
    // The next report is the second week's, not due yet; the first waits in the queue.
    let next = row(&made.body);
    assert!(
        next.contains("Weekly report") && !next.contains("due now"),
        "{next}"
    );
    assert!(made.body.contains("queued: 1"), "{}", made.body);

    let again = browser
        .post("/portal/admin/jobs", "/portal/admin/jobs/due", &[])
        .await;
    assert!(
        again.body.contains("No reports were due."),
        "{}",
        again.body
    );
    assert_eq!(app.work_queue().await.made, 1);
    let token = app.login(&admin.email).await;
    let reply = app.get("/reports/v1", &token).await;
    let reports = reply.assert_ok();
    assert_eq!(
        reports["data"].as_array().map(Vec::len),
        Some(1),
        "{reports}"
    );

    let all = browser.get("/portal/admin/jobs/upcoming").await;
    assert_eq!(all.status, StatusCode::OK);
    assert!(row(&all.body).contains("Weekly report"));
    let trail = browser
        .get("/portal/admin/audit?q=report.enqueue.due")
        .await;
    assert!(
        trail.body.contains("had the due periodic reports made now"),
        "{}",
        trail.body
    );
}

#[tokio::test]
async fn a_password_is_changed_after_checking_the_current_one() {
    let app = spawn_app().await;
    let user = app.user("keys").await;
    let mut elsewhere = logged_in(&app, &user).await;
    let mut browser = logged_in(&app, &user).await;
    let fields = |current: &'static str, new: &'static str, confirm: &'static str| {
        [("current", current), ("new", new), ("confirm", confirm)]
    };
    let wrong = browser
        .post(
            "/portal/account",
            "/portal/account/password",
            &fields("not it", "a new secret", "a new secret"),
        )
        .await;
    // Each refusal sits beside the field it is about, not at the top of the page.
    let beside = |body: &str, field: &str, message: &str| {
        let input = body
            .find(&format!("<input id=\"{field}\""))
            .unwrap_or_else(|| panic!("#{field}"));
        let error = format!(
            "<span class=\"field-error\" id=\"{field}-error\" role=\"alert\">{message}</span>"
        );
        let at = body
            .find(&error)
            .unwrap_or_else(|| panic!("{error} in {body}"));
        assert!(
            at > input && !body[input + 1..at].contains("<input "),
            "{field}: the message follows its own field"
        );
        assert!(body[input..at].contains(&format!("aria-describedby=\"{field}-error\"")));
    };
    beside(&wrong.body, "current", "The current password is wrong.");
    let mismatch = browser
        .post(
            "/portal/account",
            "/portal/account/password",
            &fields(PASSWORD, "a new secret", "another one"),
        )
        .await;
    beside(&mismatch.body, "confirm", "The two new passwords differ.");
    let changed = browser
        .post(
            "/portal/account",
            "/portal/account/password",
            &fields(PASSWORD, "a new secret", "a new secret"),
        )
        .await;
    assert!(changed.body.contains("Your password was changed."));
    // The change ends every other login: the app's tokens and the other browser's session,
    // while the browser that made it goes on.
    app.get("/users/v1/me", &user.token)
        .await
        .assert_error(401, 117);
    let other = elsewhere.get("/portal/account").await;
    assert_eq!(other.status, StatusCode::SEE_OTHER);
    assert!(
        other.location().starts_with("/portal/login"),
        "{}",
        other.location()
    );
    assert_eq!(browser.get("/portal/account").await.status, 200);
    let old = app.password_grant(&user.email, PASSWORD).await;
    assert_eq!(old.status, 400);
    assert_eq!(old.body["exh_error"]["code"], 106);
    app.password_grant(&user.email, "a new secret")
        .await
        .assert_ok();
}

#[tokio::test]
async fn measurement_lists_filter_by_result_and_day_and_page() {
    let app = spawn_app().await;
    let user = app.user("filters").await;
    let now = app.clock_millis();
    let normal = app
        .measure_at(&user, now - 3_600_000, 64.0, "normal", &[])
        .await;
    let irregular = app
        .measure_at(&user, now - 60_000, 96.0, "irregular", &[])
        .await;
    let mut browser = logged_in(&app, &user).await;
    let all = browser.get("/portal/measurements").await;
    assert!(all.body.contains(&normal) && all.body.contains(&irregular));
    // Newest first.
    assert!(all.body.find(&irregular) < all.body.find(&normal));
    assert!(
        all.body
            .contains("data-result=\"possible_atrial_fibrillation\"")
    );
    assert!(all.body.contains("result-red"));
    let only = browser
        .get("/portal/measurements?result=possible_atrial_fibrillation")
        .await;
    assert!(only.body.contains(&irregular) && !only.body.contains(&normal));
    let regular = browser.get("/portal/measurements?result=regular").await;
    assert!(regular.body.contains(&normal) && !regular.body.contains(&irregular));
    let none = browser
        .get("/portal/measurements?from=2099-01-01&to=2099-12-31")
        .await;
    assert!(none.body.contains("No measurements."));
    let bad = browser
        .get("/portal/measurements?result=drop%20table&from=yesterday")
        .await;
    assert_eq!(bad.status, 200, "unknown filters are ignored");
    assert!(bad.body.contains(&normal));
}

/// The page of a measurement shows what the server found, as the PDF does: heart rate, result
/// in its colour, labels, quality, HRV, the tachogram and the pulse strip with its beats.
#[tokio::test]
async fn the_measurement_page_shows_the_analysis_and_its_charts() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let measurement = app
        .measure(&world.patient, crate::helpers::fixture("sinus_72"))
        .await;
    let bpm = measurement.data["analysis"]["heart_rate"]
        .as_f64()
        .expect("a heart rate")
        .round() as i64;
    let mut physician = logged_in(&app, &world.staff_a).await;
    let page = physician
        .get(&format!("/portal/measurements/{}", measurement.id))
        .await;
    assert_eq!(page.status, 200);
    let body = &page.body;
    for expected in [
        format!("<bdi>{bpm} bpm</bdi>"),
        "data-result=\"regular\"".to_owned(),
        "Regular rhythm".to_owned(),
        "Sinus rhythm".to_owned(),
        "id=\"quality\"".to_owned(),
        "Heart-rate variability".to_owned(),
        "RMSSD".to_owned(),
        "<svg class=\"chart tachogram\"".to_owned(),
        "<svg class=\"chart strip\"".to_owned(),
        "<title id=\"tachogram-svg-title\">".to_owned(),
        "<desc id=\"ppg-svg-desc\">".to_owned(),
        "<path class=\"beats\"".to_owned(),
        "not a diagnosis".to_owned(),
    ] {
        assert!(body.contains(&expected), "`{expected}` missing");
    }
    // Each series is one path, however many points it has.
    for class in ["series", "points", "beats"] {
        let paths = body.matches(&format!("<path class=\"{class}\"")).count();
        assert!(paths <= 2, "{paths} paths of class {class}");
    }
    assert!(!body.contains("<circle") && !body.contains("<polyline"));
    // The tachogram's table alternative: the intervals per 10 s of the minute, every interval
    // the chart draws counted once, each with its average as a rate near the heart rate.
    let rr = measurement.data["analysis"]["rr_intervals"]
        .as_array()
        .expect("intervals")
        .len();
    let rows: Vec<&str> = body.split("<tr data-from=").skip(1).collect();
    assert_eq!(rows.len(), 6, "0–10 s … 50–60 s");
    assert!(rows[0].contains("<bdi>0–10 s</bdi>"), "{}", rows[0]);
    let counted: usize = rows
        .iter()
        .map(|row| {
            let cell = row.split("<td>").nth(2).unwrap();
            cell[..cell.find('<').unwrap()].parse::<usize>().unwrap()
        })
        .sum();
    assert!(
        counted <= rr && counted + 2 >= rr,
        "{counted} of {rr} intervals"
    );
    for row in &rows {
        let bpm_at = row.find(" bpm)").expect("an average rate");
        let open = row[..bpm_at].rfind('(').unwrap();
        let rate: i64 = row[open + 1..bpm_at].parse().unwrap();
        assert!((rate - bpm).abs() <= 8, "{rate} against {bpm}");
    }

    let failed = app
        .measure(&world.patient, crate::helpers::fixture("no_heartrate"))
        .await;
    let page = physician
        .get(&format!("/portal/measurements/{}", failed.id))
        .await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("data-result=\"quality_too_low\"")
            || page.body.contains("data-result=\"no_result\"")
    );
    assert!(page.body.contains("class=\"reasons\""));
    assert!(
        page.body
            .contains("Too few beats for heart-rate variability.")
    );
    assert!(!page.body.contains("id=\"tachogram\""));
    assert!(
        !page.body.contains("id=\"report-pdf\""),
        "a PDF needs results, as on the wire (27)"
    );

    // A coarse source held onto the frames (each value kept for four frames, 7.5 Hz): the
    // beats cannot be timed finely enough to judge the rhythm, and the page says so.
    let mut coarse = crate::helpers::fixture("sinus_72");
    for row in coarse["quadrants"].as_array_mut().unwrap() {
        for cell in row.as_array_mut().unwrap() {
            for channel in ["y", "u", "v"] {
                let values = cell[channel].as_array_mut().unwrap();
                for i in 0..values.len() {
                    values[i] = values[i - i % 4].clone();
                }
            }
        }
    }
    let coarse = app.measure(&world.patient, coarse).await;
    assert_eq!(
        coarse.data["analysis"]["quality"]["reason"], "coarse_timing",
        "{}",
        coarse.data["analysis"]
    );
    let page = physician
        .get(&format!("/portal/measurements/{}", coarse.id))
        .await;
    assert!(
        page.body
            .contains("could not be timed finely enough to judge the rhythm"),
        "the quality's reason in words"
    );

    // Weak beats kept by the second pass are drawn apart, with their legend.
    let af = app
        .measure(&world.patient, crate::analysis_stress::weak_beats_payload())
        .await;
    let unsure = af.data["analysis"]["unsure_beats"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(unsure > 0, "{}", af.data["analysis"]);
    let page = physician
        .get(&format!("/portal/measurements/{}", af.id))
        .await;
    assert!(page.body.contains("<path class=\"unsure\""));
    assert!(page.body.contains("Weak beat (unsure)"));

    let mut arabic = logged_in(&app, &world.patient).await;
    app.put(
        &format!("/users/v1/{}", world.patient.id),
        &world.patient.token,
        json!({"language": "ar"}),
    )
    .await
    .assert_ok();
    let page = arabic
        .get(&format!("/portal/measurements/{}", measurement.id))
        .await;
    assert!(page.body.contains("نظم منتظم") && page.body.contains("تقلّب معدل ضربات القلب"));
    assert!(
        page.body.contains(&format!("<bdi>{bpm} bpm</bdi>")),
        "a Latin quantity is isolated"
    );
}

/// Physicians sort and filter their patients by the result of each one's latest measurement,
/// among the patients they may see only.
#[tokio::test]
async fn the_patient_list_sorts_and_filters_by_the_latest_result() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let now = app.clock_millis();
    let hour = 3_600_000;
    // patient: atrial fibrillation last; other_patient: it earlier, regular last; patient_b
    // (another care team): atrial fibrillation.
    app.measure_at(&world.patient, now - 5 * hour, 70.0, "normal", &[])
        .await;
    app.measure_at(&world.patient, now - hour, 92.0, "irregular", &[])
        .await;
    app.measure_at(&world.other_patient, now - 5 * hour, 88.0, "irregular", &[])
        .await;
    app.measure_at(&world.other_patient, now - hour, 66.0, "normal", &[])
        .await;
    app.measure_at(&world.patient_b, now - hour, 90.0, "irregular", &[])
        .await;
    let mut physician = logged_in(&app, &world.staff_a).await;
    let names = |body: &str| -> Vec<&'static str> {
        let mut found: Vec<(usize, &'static str)> =
            ["other_patient Tester", "patient Tester", "patient_b Tester"]
                .into_iter()
                .filter_map(|name| body.find(&format!(">{name}<")).map(|at| (at, name)))
                .collect();
        found.sort();
        found.into_iter().map(|(_, name)| name).collect()
    };
    let by_name = physician.get("/portal/patients").await;
    assert_eq!(
        names(&by_name.body),
        ["other_patient Tester", "patient Tester"]
    );
    let by_result = physician.get("/portal/patients?sort=result").await;
    assert_eq!(by_result.status, 200);
    assert_eq!(
        names(&by_result.body),
        ["patient Tester", "other_patient Tester"]
    );
    assert!(
        by_result
            .body
            .contains("<option value=\"result\" selected>")
    );
    let af = physician
        .get("/portal/patients?result=possible_atrial_fibrillation&sort=result")
        .await;
    assert_eq!(
        names(&af.body),
        ["patient Tester"],
        "the latest result counts, not an older one"
    );
    assert!(
        af.body
            .contains("data-result=\"possible_atrial_fibrillation\"")
    );
    let regular = physician.get("/portal/patients?result=regular").await;
    assert_eq!(names(&regular.body), ["other_patient Tester"]);
    let nobody = physician
        .get("/portal/patients?result=quality_too_low")
        .await;
    assert!(names(&nobody.body).is_empty());
    let ignored = physician
        .get("/portal/patients?result=%27%3Bdrop&sort=%FF&page=0")
        .await;
    assert_eq!(ignored.status, 200, "meaningless values are ignored");
    assert_eq!(
        names(&ignored.body),
        ["other_patient Tester", "patient Tester"]
    );

    // The other care team's physician and the administrator see by the same rules.
    let mut other = logged_in(&app, &world.staff_b).await;
    let theirs = other
        .get("/portal/patients?result=possible_atrial_fibrillation")
        .await;
    assert_eq!(names(&theirs.body), ["patient_b Tester"]);
    let mut admin = logged_in(&app, &world.admin).await;
    let all = admin
        .get("/portal/patients?result=possible_atrial_fibrillation&sort=result")
        .await;
    assert_eq!(names(&all.body), ["patient Tester", "patient_b Tester"]);
    let mut patient = logged_in(&app, &world.patient).await;
    assert_eq!(
        patient.get("/portal/patients?sort=result").await.status,
        403
    );
}

/// The stored portal sessions (the database backend).
async fn session_rows(app: &TestApp) -> u64 {
    use sea_orm::{EntityTrait, PaginatorTrait};
    tacho::store::entities::session::Entity::find()
        .count(app.store.connection())
        .await
        .unwrap()
}

/// The session's `Set-Cookie` header of an answer.
fn session_cookie_header(page: &Page) -> String {
    page.headers
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .find(|v| v.contains("tacho_session="))
        .expect("a session cookie")
}

#[tokio::test]
async fn behind_https_cookies_are_host_only_and_secure_and_hsts_is_sent() {
    let app = spawn_app_with(|s| s.base_url = "https://tacho.example".into()).await;
    let user = app.user("secure").await;
    let form = app
        .client
        .get(app.url("/portal/login"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        form.headers()["strict-transport-security"],
        "max-age=31536000"
    );
    let csrf_cookie = form.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        csrf_cookie.starts_with("__Host-tacho_csrf=")
            && csrf_cookie.contains("; Secure")
            && csrf_cookie.contains("Path=/"),
        "{csrf_cookie}"
    );
    let page = Page {
        status: form.status(),
        headers: form.headers().clone(),
        body: form.text().await.unwrap(),
    };
    let token = page.csrf();
    let signed_in = app
        .client
        .post(app.url("/portal/login"))
        .header("Cookie", csrf_cookie.split(';').next().unwrap())
        .form(&[
            ("csrf", token.as_str()),
            ("email", user.email.as_str()),
            ("password", PASSWORD),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
    let session = signed_in
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .find(|v| v.starts_with("__Host-tacho_session="))
        .expect("a host-only session cookie");
    assert!(
        session.contains("Secure") && session.contains("Path=/"),
        "{session}"
    );
    let me = app.get("/users/v1/me", &user.token).await;
    assert_eq!(me.headers["strict-transport-security"], "max-age=31536000");
}

#[tokio::test]
async fn sign_out_everywhere_ends_every_session_and_token() {
    let app = spawn_app().await;
    let user = app.user("everywhere").await;
    let mut elsewhere = logged_in(&app, &user).await;
    let mut browser = logged_in(&app, &user).await;
    let out = browser
        .post(
            "/portal/account",
            "/portal/account/sign-out-everywhere",
            &[],
        )
        .await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert!(
        out.location().starts_with("/portal/login"),
        "{}",
        out.location()
    );
    for b in [&mut browser, &mut elsewhere] {
        let page = b.get("/portal/account").await;
        assert!(
            page.location().starts_with("/portal/login"),
            "{}",
            page.location()
        );
    }
    app.get("/users/v1/me", &user.token)
        .await
        .assert_error(401, 117);
}

#[tokio::test]
async fn portal_sessions_end_when_idle_and_after_their_lifetime() {
    let app = spawn_app().await;
    let user = app.user("idle").await;
    let mut browser = logged_in(&app, &user).await;
    // Requests keep it going: 25 minutes apart, for well over the idle time.
    for _ in 0..3 {
        app.clock.advance(chrono::Duration::minutes(25));
        assert_eq!(browser.get("/portal/account").await.status, 200);
    }
    // 31 minutes without a request end it.
    app.clock.advance(chrono::Duration::minutes(31));
    let page = browser.get("/portal/account").await;
    assert!(
        page.location().starts_with("/portal/login"),
        "{}",
        page.location()
    );

    // However busy, a session ends 12 hours after its login.
    let mut busy = logged_in(&app, &user).await;
    for _ in 0..(12 * 60 / 20) {
        app.clock.advance(chrono::Duration::minutes(20));
        let page = busy.get("/portal/account").await;
        if page.status != 200 {
            break;
        }
    }
    let page = busy.get("/portal/account").await;
    assert!(
        page.location().starts_with("/portal/login"),
        "{}",
        page.location()
    );
}

#[tokio::test]
async fn the_physicians_work_list_puts_urgent_unreviewed_results_first() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let now = app.clock_millis();
    let hour = 3_600_000;
    let calm = app
        .measure_at(&world.patient, now - hour, 70.0, "normal", &[])
        .await;
    let urgent = app
        .measure_at(&world.other_patient, now - 5 * hour, 92.0, "irregular", &[])
        .await;
    let reviewed = app
        .measure_at(&world.other_patient, now - 2 * hour, 66.0, "normal", &[])
        .await;
    app.review(&world.staff_a, &reviewed).await;
    let elsewhere = app
        .measure_at(&world.patient_b, now - hour, 90.0, "irregular", &[])
        .await;
    // Regular, but slow: older than the calm one, and ranked above it.
    let slow = app
        .measure_at(&world.patient, now - 3 * hour, 44.0, "bradycardia", &[])
        .await;
    let order = |body: &str, ids: &[&String]| -> Vec<String> {
        let mut found: Vec<(usize, String)> = ids
            .iter()
            .filter_map(|id| body.find(id.as_str()).map(|at| (at, (*id).clone())))
            .collect();
        found.sort();
        found.into_iter().map(|(_, id)| id).collect()
    };
    let all = [&calm, &urgent, &reviewed, &elsewhere, &slow];

    // A physician lands on it; the urgent result comes before the newer calm one, the
    // reviewed one and the other team's patient are not on it.
    let mut physician = logged_in(&app, &world.staff_a).await;
    let home = physician.get("/portal/").await;
    assert_eq!(home.status, 303);
    assert_eq!(home.headers["location"], "/portal/worklist");
    let list = physician.get("/portal/worklist").await;
    assert_eq!(list.status, 200);
    assert_eq!(
        order(&list.body, &all),
        [urgent.as_str(), slow.as_str(), calm.as_str()]
    );
    assert!(
        list.body
            .contains(">Regular rhythm · Slow heart rate (bradycardia)</span>"),
        "the orange tag says why in words"
    );
    assert!(list.body.contains("class=\"urgent\""));
    let only_urgent = physician.get("/portal/worklist?reason=urgent").await;
    assert_eq!(order(&only_urgent.body, &all), [urgent.as_str()]);
    assert!(
        only_urgent
            .body
            .contains("<option value=\"urgent\" selected>")
    );
    // The search finds a patient by part of the name, in any case; LIKE's wildcards are
    // taken literally.
    let found = physician.get("/portal/worklist?q=OTHER_pat").await;
    assert_eq!(order(&found.body, &all), [urgent.as_str()]);
    let wildcard = physician.get("/portal/worklist?q=%25").await;
    assert_eq!(order(&wildcard.body, &all), Vec::<String>::new());
    assert!(wildcard.body.contains("No unreviewed measurement matches"));
    let ignored = physician.get("/portal/worklist?reason=%27%3B&page=x").await;
    assert_eq!(
        ignored.status, 400,
        "a page that is not a number is a bad request"
    );
    let ignored = physician.get("/portal/worklist?reason=%27%3B").await;
    assert_eq!(
        order(&ignored.body, &all),
        [urgent.as_str(), slow.as_str(), calm.as_str()]
    );
    // A review takes an entry off.
    app.review(&world.staff_a, &urgent).await;
    let after = physician.get("/portal/worklist").await;
    assert_eq!(order(&after.body, &all), [slow.as_str(), calm.as_str()]);

    // The other team's physician sees its own patient; a patient has no work list.
    let mut other = logged_in(&app, &world.staff_b).await;
    let theirs = other.get("/portal/worklist").await;
    assert_eq!(order(&theirs.body, &all), [elsewhere.as_str()]);
    let mut patient = logged_in(&app, &world.patient).await;
    assert_eq!(patient.get("/portal/worklist").await.status, 403);
}

/// A physician with no patients is told so, not that every measurement has been reviewed.
#[tokio::test]
async fn a_physician_without_patients_is_not_told_everything_is_reviewed() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let group = app.group(&world.admin, "Group C").await;
    let newcomer = app.user("newcomer").await;
    app.enlist_staff(&world.admin, &newcomer, &group).await;
    let mut physician = logged_in(&app, &newcomer).await;
    let empty = physician.get("/portal/worklist").await;
    assert_eq!(empty.status, 200);
    assert!(
        empty.body.contains("You have no patients yet"),
        "{}",
        empty.body
    );
    assert!(!empty.body.contains("has been reviewed"));
    // A physician whose patients' measurements are all reviewed reads that instead.
    let mut reviewed = logged_in(&app, &world.staff_b).await;
    let done = reviewed.get("/portal/worklist").await;
    assert!(
        done.body
            .contains("Every measurement of your patients has been reviewed.")
    );
}

/// The total a portal list's pager shows.
fn pager_total(body: &str) -> u64 {
    let pager = &body[body.find("<nav class=\"pager\"").expect("a pager")..];
    let position = &pager[pager.find("<span>").expect("a position") + 6..];
    let position = &position[..position.find("</span>").unwrap()];
    let digits: String = position[position.rfind('(').expect("a total")..]
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().expect("a number")
}

/// The work list's total of `staff` as its pager shows it, unfiltered (read from the kept
/// tallies), and searched for `@`, which every address holds (counted through the gate
/// measurement by measurement); and the entries its page lists. Each list fits one page.
/// Checks on the way that the patient list's total (counted from the enlistments) is the
/// number of patients it lists.
async fn work_totals(app: &TestApp, staff: &TestUser) -> (u64, u64, usize) {
    let mut physician = logged_in(app, staff).await;
    let total = pager_total;
    let patients = physician.get("/portal/patients").await;
    assert_eq!(patients.status, 200);
    assert_eq!(
        pager_total(&patients.body),
        patients.body.matches("href=\"/portal/patients/").count() as u64,
        "{}'s patient list total and the patients it lists",
        staff.email
    );
    let kept = physician.get("/portal/worklist").await;
    assert_eq!(kept.status, 200);
    let counted = physician.get("/portal/worklist?q=%40").await;
    assert_eq!(counted.status, 200);
    let rows = kept.body.matches("href=\"/portal/measurements/").count();
    (total(&kept.body), total(&counted.body), rows)
}

/// Checks that each staff member's kept work list total is what the gate counts and what its
/// page lists; returns the totals.
async fn assert_work_totals(app: &TestApp, staff: &[&TestUser], step: &str) -> Vec<u64> {
    let mut totals = Vec::new();
    for member in staff {
        let (kept, counted, rows) = work_totals(app, member).await;
        assert_eq!(
            (kept, counted),
            (rows as u64, rows as u64),
            "{step}: {}'s work list total, counted total, and entries listed",
            member.email
        );
        totals.push(kept);
    }
    totals
}

/// The work list's unfiltered total is kept per reader and patient; through uploads, reviews,
/// changes of staff and of prescriptions, an erasure and prescriptions running out, it stays
/// what counting through the gate finds.
#[tokio::test]
async fn the_work_lists_kept_total_is_what_the_gate_counts_through_every_change_of_access() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let staff = [&world.staff_a, &world.staff_b];
    // The patient is in both groups, so what it records is shared with both.
    app.enlist_patient(&world.admin, &world.patient, &world.group_b)
        .await;
    let at = app.clock_millis();
    let mut waiting = Vec::new();
    for i in 0..3 {
        waiting.push(
            app.measure_at(&world.patient, at + i * 1_000, 90.0, "irregular", &[])
                .await,
        );
    }
    app.measure_at(&world.other_patient, at, 70.0, "normal", &[])
        .await;
    app.measure_at(&world.patient_b, at, 44.0, "bradycardia", &[])
        .await;
    // Group B's patient joins group A too: what it recorded before stays group B's alone.
    app.enlist_patient(&world.admin, &world.patient_b, &world.group_a)
        .await;
    let start = assert_work_totals(&app, &staff, "stored").await;
    assert_eq!(start, [4, 4], "A: three and one; B: three and one");
    // An administrator's patient list counts every patient ever enlisted.
    let mut admin = logged_in(&app, &world.admin).await;
    let everyone = admin.get("/portal/patients").await;
    assert_eq!(pager_total(&everyone.body), 3);

    // A review takes an entry off every list it is on.
    app.review(&world.staff_a, &waiting[0]).await;
    assert_eq!(assert_work_totals(&app, &staff, "reviewed").await, [3, 3]);

    // Staff B joins group A: it now sees the other patient's measurement too. Leaving group
    // B, it no longer sees what group B's patient shared with group B alone.
    app.enlist_staff(&world.admin, &world.staff_b, &world.group_a)
        .await;
    assert_eq!(
        assert_work_totals(&app, &staff, "staff B joins group A").await,
        [3, 4]
    );
    let staff_path =
        |user: &TestUser, group: &str| format!("/users/v1/{}/staff_enlistments/{group}", user.id);
    app.delete(
        &staff_path(&world.staff_b, &world.group_b),
        &world.admin.token,
        None,
    )
    .await
    .assert_ok();
    assert_eq!(
        assert_work_totals(&app, &staff, "staff B leaves group B").await,
        [3, 3]
    );

    // The other patient's prescription ends early: no one cares for it, at once; prescribed
    // again, its measurement is back.
    let prescription = format!(
        "/users/v1/{}/patient_enlistments/{}",
        world.other_patient.id, world.group_a
    );
    app.delete(&prescription, &world.admin.token, None)
        .await
        .assert_ok();
    assert_eq!(
        assert_work_totals(&app, &staff, "a prescription ended early").await,
        [2, 2]
    );
    app.enlist_patient(&world.admin, &world.other_patient, &world.group_a)
        .await;
    assert_eq!(
        assert_work_totals(&app, &staff, "prescribed again").await,
        [3, 3]
    );

    // An erasure takes the patient's measurements off every list.
    app.erase(&world.admin, &world.patient).await;
    assert_eq!(
        assert_work_totals(&app, &staff, "the patient erased").await,
        [1, 1]
    );

    // The prescriptions run out: no write, and the lists are empty.
    app.clock.advance(chrono::Duration::days(31));
    assert_eq!(
        assert_work_totals(&app, &staff, "the prescriptions ran out").await,
        [0, 0]
    );
    // The administrator still lists the two patients ever enlisted and not erased.
    let mut admin = logged_in(&app, &world.admin).await;
    let everyone = admin.get("/portal/patients").await;
    assert_eq!(
        (
            pager_total(&everyone.body),
            everyone.body.matches("href=\"/portal/patients/").count()
        ),
        (2, 2)
    );
}

/// Staff joining and leaving a group while its patient records and is reviewed: every change
/// succeeds, and the kept totals count what the last of them left. On PostgreSQL a change of
/// staff takes the staff lock alone, so that it never counts a tally from a measurement
/// another transaction has not committed, nor the other way round.
#[tokio::test]
async fn the_work_lists_kept_total_holds_when_staff_change_while_patients_record() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let staff = [&world.staff_a, &world.staff_b];
    let membership = format!(
        "/users/v1/{}/staff_enlistments/{}",
        world.staff_b.id, world.group_a
    );
    let at = app.clock_millis();
    let mut previous: Option<String> = None;
    for round in 0..8 {
        let step = format!("round {round}");
        let record = app.measure_at(&world.patient, at + round * 1_000, 90.0, "irregular", &[]);
        let review = async {
            if let Some(id) = &previous {
                app.review(&world.staff_a, id).await;
            }
        };
        let recorded = if round % 2 == 0 {
            let (recorded, (), ()) = tokio::join!(
                record,
                review,
                app.enlist_staff(&world.admin, &world.staff_b, &world.group_a)
            );
            recorded
        } else {
            let (recorded, (), left) = tokio::join!(
                record,
                review,
                app.delete(&membership, &world.admin.token, None)
            );
            left.assert_ok();
            recorded
        };
        previous = Some(recorded);
        let totals = assert_work_totals(&app, &staff, &step).await;
        let staff_b = if round % 2 == 0 { 1 } else { 0 };
        assert_eq!(totals, [1, staff_b], "{step}: one waits at a time");
    }
}

#[tokio::test]
async fn administrators_search_users_by_name_or_address() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let mut admin = logged_in(&app, &world.admin).await;
    let found = admin.get("/portal/admin/users?q=OTHER_pat").await;
    assert_eq!(found.status, 200);
    assert!(found.body.contains(&world.other_patient.id));
    assert!(!found.body.contains(&world.patient_b.id));
    assert!(
        found.body.contains("value=\"OTHER_pat\""),
        "the search stays in its field"
    );
    // By address, and `*`, `%` and `_` are no wildcards for a person typing.
    let by_address = admin.get("/portal/admin/users?q=patient_b%40").await;
    assert!(by_address.body.contains(&world.patient_b.id));
    assert!(!by_address.body.contains(&world.other_patient.id));
    for nothing in ["%25", "*", "_x_"] {
        let page = admin
            .get(&format!("/portal/admin/users?q=zz{nothing}zz"))
            .await;
        assert_eq!(page.status, 200, "{nothing}");
        assert!(
            page.body.contains("e-mail address holds this."),
            "{nothing}"
        );
        assert!(!page.body.contains(&world.patient.id), "{nothing}");
    }
    let everyone = admin.get("/portal/admin/users?q=").await;
    assert!(
        everyone.body.contains(&world.patient_b.id)
            && everyone.body.contains(&world.other_patient.id)
    );
    // Sorted by name unless asked otherwise; the newest account first on request.
    app.clock.advance(chrono::Duration::seconds(5));
    let newest = app.user("aaron").await;
    let first_row = |body: &str| -> String {
        let at = body.find("<tr id=\"user-").expect("a row") + "<tr id=\"user-".len();
        body[at..at + 24].to_owned()
    };
    let by_name = admin.get("/portal/admin/users").await;
    let position = |body: &str, id: &str| body.find(&format!("id=\"user-{id}\"")).unwrap();
    assert!(position(&by_name.body, &newest.id) < position(&by_name.body, &world.admin.id));
    let by_age = admin.get("/portal/admin/users?sort=newest").await;
    assert_eq!(first_row(&by_age.body), newest.id);
    assert!(
        by_age
            .body
            .contains("<option value=\"newest\" selected>Newest first</option>")
    );
    let by_email = admin.get("/portal/admin/users?sort=email&q=tacho").await;
    assert!(by_email.body.contains("<option value=\"email\" selected>"));
    assert!(position(&by_email.body, &newest.id) < position(&by_email.body, &world.staff_a.id));
    let odd = admin.get("/portal/admin/users?sort=%27;drop").await;
    assert_eq!(odd.status, 200);
    assert!(odd.body.contains("<option value=\"name\" selected>"));
    // Only administrators have the list.
    let mut physician = logged_in(&app, &world.staff_a).await;
    assert_eq!(physician.get("/portal/admin/users?q=a").await.status, 403);
}

#[tokio::test]
async fn a_time_is_shown_on_the_patients_clock_too_when_the_zones_differ() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    // 2026-11-20 07:07 UTC: 08:07 in Brussels (the physician), 11:07 in Dubai (the patient).
    let at = 1_795_158_420_000;
    app.put(
        &format!("/users/v1/{}", world.patient.id),
        &world.patient.token,
        json!({"time_zone": "Asia/Dubai"}),
    )
    .await
    .assert_ok();
    let id = app
        .measure_at(&world.patient, at, 70.0, "normal", &[])
        .await;
    let mut physician = logged_in(&app, &world.staff_a).await;
    let page = physician.get(&format!("/portal/measurements/{id}")).await;
    assert!(
        page.body.contains("· 20/11/2026 08:07</h1>"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains(
            "Your time: <bdi>20/11/2026 08:07 (Europe/Brussels)</bdi> · Patient&#39;s time: \
             <bdi>20/11/2026 11:07 (Asia/Dubai)</bdi>"
        ),
        "{}",
        page.body
    );
    let note = "Patient: 20/11/2026 11:07 (Asia/Dubai)";
    for list in [
        "/portal/worklist".to_owned(),
        "/portal/patients".to_owned(),
        format!("/portal/patients/{}", world.patient.id),
    ] {
        let page = physician.get(&list).await;
        assert!(page.body.contains(note), "{list}: {}", page.body);
    }
    // The patient reads one clock, their own.
    let mut patient = logged_in(&app, &world.patient).await;
    let own = patient.get(&format!("/portal/measurements/{id}")).await;
    assert!(own.body.contains("· 20/11/2026 11:07</h1>"), "{}", own.body);
    assert!(!own.body.contains("id=\"zones\""));
    assert!(
        !patient
            .get("/portal/measurements")
            .await
            .body
            .contains("patient-time")
    );
    // A zone with the same offset is the same clock: nothing more to say.
    app.put(
        &format!("/users/v1/{}", world.patient.id),
        &world.patient.token,
        json!({"time_zone": "Europe/Amsterdam"}),
    )
    .await
    .assert_ok();
    let page = physician.get(&format!("/portal/measurements/{id}")).await;
    assert!(!page.body.contains("id=\"zones\""));
    assert!(
        !physician
            .get("/portal/worklist")
            .await
            .body
            .contains("patient-time")
    );
}

/// The trend view is the periodic report's own summary, chart and table over the period
/// chosen, of what the reader may see; a report made of that period lists the same.
/// A slow regular rhythm is orange on the trend chart, as in the table and the lists, and a
/// legend says in words what each colour means.
#[tokio::test]
async fn the_trend_chart_colours_a_slow_rhythm_orange_and_says_what_colours_mean() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let now = app.clock_millis();
    app.measure_at(&world.patient, now - 3_600_000, 44.0, "bradycardia", &[])
        .await;
    app.measure_at(&world.patient, now - 7_200_000, 70.0, "normal", &[])
        .await;
    let mut patient = logged_in(&app, &world.patient).await;
    let page = patient.get("/portal/trends").await;
    assert_eq!(page.status, 200);
    let fills: Vec<&str> = page
        .body
        .split("<circle class=\"dot\"")
        .skip(1)
        .filter_map(|dot| dot.split("fill=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(
        fills,
        ["#2e7d32", "#ef6c00"],
        "the normal one green, the slow one orange"
    );
    let legend = &page.body[page.body.find("id=\"trend-legend\"").expect("a legend")..];
    for words in [
        "Regular rhythm",
        "Irregular, or a slow or fast heart rate",
        "Possible atrial fibrillation, or urgent",
        "Unreadable or no result",
    ] {
        assert!(legend.contains(words), "{words}");
    }
    assert!(legend.contains("class=\"swatch swatch-orange\""));
}

#[tokio::test]
async fn trends_show_what_a_report_of_the_same_period_shows() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    // The prescriptions start now; a moment later there is a prescription period to show
    // (and the test's tokens still work).
    app.clock.advance(chrono::Duration::seconds(5));
    let now = app.clock_millis();
    let day = 86_400_000;
    app.measure_at(&world.patient, now - 2 * day, 64.0, "normal", &[])
        .await;
    app.measure_at(&world.patient, now - day, 96.0, "irregular", &[])
        .await;
    app.measure_at(&world.patient, now - 21 * day, 80.0, "normal", &[])
        .await;
    app.measure_at(&world.other_patient, now - day, 70.0, "normal", &[])
        .await;
    let text_of = |body: &str, id: &str| -> String {
        let marker = format!("id=\"{id}\">");
        let start = body
            .find(&marker)
            .unwrap_or_else(|| panic!("#{id} in {body}"))
            + marker.len();
        body[start..start + body[start..].find("</").unwrap()]
            .replace("<bdi>", "")
            .trim()
            .to_owned()
    };

    // The patient's own trends: the last 7 days by default.
    let mut patient = logged_in(&app, &world.patient).await;
    let own = patient.get("/portal/trends").await;
    assert_eq!(own.status, 200, "{}", own.body);
    assert_eq!(text_of(&own.body, "trend-count"), "2");
    assert_eq!(own.body.matches("<circle class=\"dot\"").count(), 2);
    assert!(
        own.body.contains(" · 64 bpm · Regular rhythm\""),
        "{}",
        own.body
    );
    assert!(own.body.contains("<option value=\"prescription\""));
    assert!(own.body.contains("aria-current=\"page\">Trends</a>"));
    assert!(
        !own.body.contains("id=\"make-period-report\""),
        "patients do not order reports"
    );
    // A period that means nothing is the default one.
    let odd = patient.get("/portal/trends?period=decade").await;
    assert_eq!(text_of(&odd.body, "trend-count"), "2");

    // The physician picks the month and makes a report of exactly that period.
    let mut physician = logged_in(&app, &world.staff_a).await;
    let page = format!("/portal/patients/{}/trends?period=month", world.patient.id);
    let month = physician.get(&page).await;
    assert_eq!(text_of(&month.body, "trend-count"), "3");
    let rates = text_of(&month.body, "trend-heart-rate");
    let made = physician
        .post(
            &page,
            &format!("/portal/patients/{}/reports", world.patient.id),
            &[("period", "month")],
        )
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let reports = app
        .get(
            &format!("/reports/v1?user_id={}", world.patient.id),
            &world.patient.token,
        )
        .await
        .assert_ok()["data"][0]
        .clone();
    assert_eq!(reports["data"]["measurements"].as_array().unwrap().len(), 3);
    assert_eq!(
        reports["period_end_timestamp"].as_i64().unwrap()
            - reports["period_start_timestamp"].as_i64().unwrap(),
        30 * day
    );
    let pdf = app
        .client
        .get(app.url(&format!(
            "/reports/v1/{}/pdf?language=en",
            reports["id"].as_str().unwrap()
        )))
        .bearer_auth(&world.patient.token)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let text = crate::helpers::pdf_text(&pdf);
    for figure in rates.trim_end_matches(" bpm").split(" · ") {
        assert!(text.contains(figure), "{figure} of {rates} in {text}");
    }
    let bad = physician
        .post(
            &page,
            &format!("/portal/patients/{}/reports", world.patient.id),
            &[("period", "decade")],
        )
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);

    // Nobody reads the trends of a patient they do not see.
    let mut stranger = logged_in(&app, &world.staff_b).await;
    let hidden = stranger
        .get(&format!("/portal/patients/{}/trends", world.patient.id))
        .await;
    assert_eq!(hidden.status, 404);
    let other = patient
        .get(&format!(
            "/portal/patients/{}/trends",
            world.other_patient.id
        ))
        .await;
    assert_eq!(other.status, 404);
}

/// The SQL statements the store sent for one GET of `path`, and the page.
async fn statements_for(app: &TestApp, browser: &mut Browser<'_>, path: &str) -> (u64, Page) {
    let before = app.store.statements_sent();
    let page = browser.get(path).await;
    assert_eq!(page.status, 200, "{path}: {}", page.body);
    (app.store.statements_sent() - before, page)
}

/// No silent caps: the groups page and the notification settings page list every group a
/// page at a time, and cost the same statements with 1 group as with 200.
#[tokio::test]
async fn group_pages_cost_the_same_with_1_and_200_groups_and_reach_every_group() {
    let app = spawn_app().await;
    let admin = app.admin("pager").await;
    app.group(&admin, "Group 000").await;
    let mut browser = logged_in(&app, &admin).await;
    let pages = ["/portal/admin/groups", "/portal/admin/notifications"];
    let mut with_one = Vec::new();
    for path in pages {
        with_one.push(statements_for(&app, &mut browser, path).await.0);
    }
    let mut last = String::new();
    for i in 1..200 {
        last = app.group(&admin, &format!("Group {i:03}")).await;
    }
    let mut with_many = Vec::new();
    for path in pages {
        with_many.push(statements_for(&app, &mut browser, path).await.0);
    }
    println!("statements per page of {pages:?}: {with_one:?} with 1 group, {with_many:?} with 200");
    assert_eq!(
        with_one, with_many,
        "statements per page with 1 and 200 groups"
    );

    // Where each page lists a group (its forms' choices name every group on every page).
    for (path, listed) in [(pages[0], "<tr><td>Group "), (pages[1], "<legend>Group ")] {
        // Every group is on some page, a page at a time.
        let mut seen = std::collections::BTreeSet::new();
        let mut next = Some(path.to_owned());
        let mut visited = 0;
        while let Some(at) = next {
            let page = browser.get(&at).await;
            visited += 1;
            let mut rest = page.body.as_str();
            while let Some(start) = rest.find(listed) {
                let from = start + listed.len();
                seen.insert(rest[from..from + 3].to_owned());
                rest = &rest[from..];
            }
            next = page.body.find("rel=\"next\" href=\"").map(|start| {
                let from = start + "rel=\"next\" href=\"".len();
                let end = from + page.body[from..].find('"').unwrap();
                format!("{path}{}", page.body[from..end].replace("&amp;", "&"))
            });
        }
        assert_eq!(seen.len(), 200, "{path}");
        assert_eq!(visited, 10, "{path}: 20 groups a page");
    }
    // The last group, on the last page, can be configured.
    let saved = browser
        .post(
            "/portal/admin/notifications",
            &format!("/portal/admin/groups/{last}/notifications"),
            &[("event", "result.urgent")],
        )
        .await;
    assert_eq!(saved.status, 200, "{}", saved.body);
}

/// "Previous" is the measurement taken before, "next" the one taken after, whatever order the
/// phone sent them in (one measured offline arrives later).
#[tokio::test]
async fn previous_and_next_follow_the_time_measured_not_the_upload() {
    let app = spawn_app().await;
    let patient = app.user("offline").await;
    let now = app.clock_millis();
    let day = 86_400_000;
    let newest = app
        .measure_at(&patient, now - day, 70.0, "normal", &[])
        .await;
    let oldest = app
        .measure_at(&patient, now - 3 * day, 72.0, "normal", &[])
        .await;
    let middle = app
        .measure_at(&patient, now - 2 * day, 74.0, "normal", &[])
        .await;
    let mut browser = logged_in(&app, &patient).await;
    let link = |body: &str, id: &str| -> Option<String> {
        let marker = format!("id=\"{id}\"");
        let at = body.find(&marker)?;
        let href = body[at..].split("href=\"/portal/measurements/").nth(1)?;
        Some(href.split('"').next()?.to_owned())
    };
    let page = browser.get(&format!("/portal/measurements/{middle}")).await;
    assert_eq!(
        link(&page.body, "previous-measurement"),
        Some(oldest.clone())
    );
    assert_eq!(link(&page.body, "next-measurement"), Some(newest.clone()));
    let first = browser.get(&format!("/portal/measurements/{oldest}")).await;
    assert_eq!(link(&first.body, "previous-measurement"), None);
    assert_eq!(link(&first.body, "next-measurement"), Some(middle));
}

/// A reviewed measurement leads with the physician's conclusion, in its colour and with who
/// gave it when, in the patient's list, on its page and in the physician's patient list; the
/// analysis' own result stays beneath as the automatic screening.
#[tokio::test]
async fn a_reviewed_measurement_leads_with_the_physicians_conclusion() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let at = app.clock_millis();
    let flagged = app
        .measure_at(&world.patient, at, 90.0, "irregular", &[])
        .await;
    // Reviewed as sinus rhythm (the helper's conclusion) by staff_a.
    app.review(&world.staff_a, &flagged).await;
    let conclusion = r#"class="result result-green conclusion" data-conclusion="sinus_rhythm">Sinus rhythm</span>"#;
    let by = "Reviewed by staff_a Tester on ";
    let screening = r#"Automatic screening: <span data-result="possible_atrial_fibrillation">"#;
    let leads = |body: &str, place: &str| {
        let first = body.find(conclusion);
        assert!(first.is_some(), "{place}: the conclusion in {body}");
        let first = first.unwrap();
        assert!(body[first..].contains(by), "{place}: who and when");
        let beneath = body.find(screening);
        assert!(
            beneath.is_some_and(|b| b > first),
            "{place}: the screening beneath the conclusion"
        );
    };
    let mut patient = logged_in(&app, &world.patient).await;
    leads(&patient.get("/portal/measurements").await.body, "own list");
    let page = patient
        .get(&format!("/portal/measurements/{flagged}"))
        .await;
    let conclusion_at = page.body.find(r#"id="conclusion""#).expect("a headline");
    let result_at = page.body.find(r#"id="result""#).expect("the screening");
    assert!(conclusion_at < result_at, "the conclusion leads the page");
    assert!(page.body.contains(r#"data-conclusion="sinus_rhythm""#));
    assert!(page.body.contains("Automatic screening"));
    // The PDF leads with it too.
    let url = world
        .patient
        .client
        .get_measurement_report_url(&flagged)
        .await
        .unwrap();
    let pdf = app
        .client
        .get(&url)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let text = crate::helpers::pdf_text(&pdf);
    let place = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} in {text}"));
    assert!(
        place("Sinus rhythm") < place("Automatic screening"),
        "{text}"
    );
    assert!(
        place("Automatic screening") < place("Possible atrial fibrillation"),
        "{text}"
    );
    assert!(text.contains("Reviewed by staff_a Tester on "), "{text}");
    let mut staff = logged_in(&app, &world.staff_a).await;
    leads(&staff.get("/portal/patients").await.body, "patient list");
    leads(
        &staff
            .get(&format!("/portal/patients/{}", world.patient.id))
            .await
            .body,
        "patient's page",
    );
    // An unreviewed measurement still leads with its result, and names no conclusion.
    let other = app
        .measure_at(&world.other_patient, at, 70.0, "normal", &[])
        .await;
    let mut other_patient = logged_in(&app, &world.other_patient).await;
    let unreviewed = other_patient
        .get(&format!("/portal/measurements/{other}"))
        .await;
    assert!(!unreviewed.body.contains("id=\"conclusion\""));
    assert!(!unreviewed.body.contains("Automatic screening"));
}

/// A Chinese name is written family name first, without a space, wherever the portal names
/// the person; a Latin one keeps the given name first.
#[tokio::test]
async fn chinese_names_are_written_family_name_first() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    app.put(
        &format!("/users/v1/{}", world.patient.id),
        &world.patient.token,
        json!({"first_name": "伟", "last_name": "陈"}),
    )
    .await
    .assert_ok();
    let mut staff = logged_in(&app, &world.staff_a).await;
    let list = staff.get("/portal/patients").await;
    assert!(list.body.contains("陈伟"), "{}", list.body);
    assert!(!list.body.contains("伟 陈"));
    let page = staff
        .get(&format!("/portal/patients/{}", world.patient.id))
        .await;
    assert!(page.body.contains("陈伟"));
    let mut patient = logged_in(&app, &world.patient).await;
    assert!(patient.get("/portal/account").await.body.contains("陈伟"));
    assert!(
        list.body.contains("staff_a Tester"),
        "a Latin name keeps the given name first"
    );
}

/// Posts the login form of `form` with `next`.
async fn log_in_then<'a>(browser: &mut Browser<'a>, form: &Page, email: &str, next: &str) -> Page {
    let csrf = form.csrf();
    let fields = [
        ("csrf", csrf.as_str()),
        ("email", email),
        ("password", crate::helpers::PASSWORD),
        ("next", next),
    ];
    browser.post_raw("/portal/login", &fields).await
}

/// A link opened while signed out (from a notification e-mail, say) leads back to it after the
/// login; an htmx request whose session ended is sent to the login page whole, not given the
/// login page to put inside the page; and no `next` leads off the portal.
#[tokio::test]
async fn after_the_login_the_page_asked_for_opens() {
    let app = spawn_app().await;
    let patient = app.user("returning").await;
    let id = app
        .measure_at(&patient, app.clock_millis() - 1, 72.0, "normal", &[])
        .await;
    let page = format!("/portal/measurements/{id}");
    let mut browser = Browser::new(&app);
    let asked = browser.get(&format!("{page}?tab=review")).await;
    assert_eq!(asked.status, StatusCode::SEE_OTHER);
    let login = asked.location().to_owned();
    assert!(login.starts_with("/portal/login?next="), "{login}");
    let form = browser.get(&login).await;
    assert!(form.body.contains("name=\"next\""), "{}", form.body);
    let next = format!("{page}?tab=review");
    let done = log_in_then(&mut browser, &form, &patient.email, &next).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    assert_eq!(done.location(), next);
    // Elsewhere is refused: the start page instead.
    for elsewhere in [
        "https://evil.example/portal/",
        "//evil.example/portal/",
        "/portal/\\evil",
        "/api/x",
    ] {
        let mut other = Browser::new(&app);
        let form = other.get("/portal/login").await;
        let done = log_in_then(&mut other, &form, &patient.email, elsewhere).await;
        assert_eq!(done.location(), "/portal/", "{elsewhere}");
    }
    // An htmx request without a session: an empty answer that sends the whole page to the login.
    let mut stale = Browser::new(&app);
    stale.headers.push(("HX-Request", "true".into()));
    stale
        .headers
        .push(("HX-Current-URL", format!("{}/portal/profile", app.url(""))));
    let saved = stale.get("/portal/profile").await;
    assert_eq!(saved.status, StatusCode::OK);
    assert!(saved.body.is_empty(), "{}", saved.body);
    assert_eq!(
        saved.headers["hx-redirect"],
        "/portal/login?next=%2Fportal%2Fprofile"
    );
}
