//! Account links by e-mail, through a real SMTP server on loopback: a forgotten password, an
//! address change confirmed from the new address, and an administrator's password reset. Each
//! link works once, expires, and only its hash is stored.

use std::time::Duration;

use reqwest::StatusCode;
use sea_orm::{ConnectionTrait, Statement};

use crate::helpers::{PASSWORD, TestApp, spawn_app};
use crate::notifications::{Inbox, notifying_app};
use crate::portal::{Browser, Page, logged_in};

/// The one message to `address` whose subject is `subject`, waited for (account mail leaves in
/// the background); returns its plain text.
pub async fn mail_to(inbox: &Inbox, address: &str, subject: &str) -> String {
    for _ in 0..200 {
        let found: Vec<String> = inbox
            .received
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m.to.iter().any(|t| t == address))
            .filter_map(|m| {
                let parsed = m.parsed();
                (parsed.subject() == Some(subject))
                    .then(|| parsed.body_text(0).unwrap().into_owned())
            })
            .collect();
        match found.as_slice() {
            [] => tokio::time::sleep(Duration::from_millis(50)).await,
            [text] => return text.clone(),
            more => panic!("{} messages \"{subject}\" to {address}", more.len()),
        }
    }
    panic!("no message \"{subject}\" to {address}");
}

/// The path of the portal link in a mail's text, and the secret at its end.
pub fn link_in(text: &str, prefix: &str) -> (String, String) {
    let start = text
        .find(prefix)
        .unwrap_or_else(|| panic!("{prefix} in {text}"));
    let path: String = text[start..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    let secret = path.trim_start_matches(prefix).to_owned();
    (path, secret)
}

async fn stored_hashes(app: &TestApp) -> Vec<String> {
    let db = app.store.connection();
    db.query_all_raw(Statement::from_string(
        db.get_database_backend(),
        "SELECT secret_hash FROM account_links",
    ))
    .await
    .unwrap()
    .iter()
    .map(|row| row.try_get("", "secret_hash").unwrap())
    .collect()
}

/// Posts the forgotten-password form for `email`.
async fn ask_for_reset(visitor: &mut Browser<'_>, email: &str) -> Page {
    let form = "/portal/password/forgot";
    visitor.post(form, form, &[("email", email)]).await
}

const RESET: &str = "/portal/password/reset/";
const CONFIRM: &str = "/portal/account/email/confirm/";

#[tokio::test]
async fn a_forgotten_password_is_reset_once_through_an_emailed_link() {
    let (app, inbox) = notifying_app().await;
    let user = app.user("forgetful").await;
    let mut visitor = Browser::new(&app);
    let login = visitor.get("/portal/login").await;
    assert!(login.body.contains("href=\"/portal/password/forgot\""));

    // The answer is the same for an address with an account and one without.
    let known = ask_for_reset(&mut visitor, &user.email).await;
    let unknown = ask_for_reset(&mut visitor, "nobody@tacho.test").await;
    assert_eq!(known.status, StatusCode::OK);
    assert_eq!(unknown.status, StatusCode::OK);
    let notice =
        |body: &str| body[body.find("id=\"forgot-sent\"").expect("the notice")..].to_owned();
    assert_eq!(notice(&known.body), notice(&unknown.body));

    let text = mail_to(&inbox, &user.email, "Tacho: set a new password").await;
    assert!(text.contains("works once, for one hour"), "{text}");
    assert!(text.contains("If you did not ask for this"), "{text}");
    let (path, secret) = link_in(&text, RESET);
    // Only the hash of the secret is stored.
    assert_eq!(
        stored_hashes(&app).await,
        [tacho::auth::token::hash(&secret)]
    );
    assert_eq!(
        inbox.received.lock().unwrap().len(),
        1,
        "no mail for the unknown address"
    );

    let form = visitor.get(&path).await;
    assert_eq!(form.status, StatusCode::OK);
    assert!(form.body.contains("id=\"reset-password\""));
    let mismatch = visitor
        .post(
            &path,
            &path,
            &[("new", "a new secret 1"), ("confirm", "a new secret 2")],
        )
        .await;
    assert_eq!(mismatch.status, StatusCode::BAD_REQUEST);
    assert!(mismatch.body.contains("id=\"reset-error\""));
    let done = visitor
        .post(
            &path,
            &path,
            &[("new", "a new secret 1"), ("confirm", "a new secret 1")],
        )
        .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert!(done.body.contains("id=\"reset-done\""));

    // Every earlier login has ended; the old password opens nothing, the new one does.
    let me = format!("/users/v1/{}", user.id);
    assert_eq!(app.get(&me, &user.token).await.status, 401);
    let old = Browser::new(&app).login(&user.email, PASSWORD).await;
    assert_eq!(old.status, StatusCode::UNAUTHORIZED);
    let new = Browser::new(&app)
        .login(&user.email, "a new secret 1")
        .await;
    assert_eq!(new.status, StatusCode::SEE_OTHER);

    // The link worked once.
    let again = visitor.get(&path).await;
    assert_eq!(again.status, StatusCode::GONE);
    assert!(again.body.contains("id=\"reset-closed\""));
    let replay = visitor
        .post(
            "/portal/password/forgot",
            &path,
            &[("new", "a third secret"), ("confirm", "a third secret")],
        )
        .await;
    assert_eq!(replay.status, StatusCode::GONE);

    // Asking again within a minute makes no link and sends nothing (the answer is the same).
    let links_before = stored_hashes(&app).await.len();
    let again = ask_for_reset(&mut visitor, &user.email).await;
    assert_eq!(notice(&again.body), notice(&known.body));
    assert_eq!(
        stored_hashes(&app).await.len(),
        links_before,
        "no second link"
    );

    // A newer link spends the older one, and a link expires after an hour.
    let mut links = Vec::new();
    for round in 0..2 {
        app.clock.advance(chrono::Duration::seconds(61));
        inbox.received.lock().unwrap().clear();
        ask_for_reset(&mut visitor, &user.email).await;
        let text = mail_to(&inbox, &user.email, "Tacho: set a new password").await;
        links.push(link_in(&text, RESET).0);
        assert_eq!(links.len(), round + 1);
    }
    assert_eq!(visitor.get(&links[0]).await.status, StatusCode::GONE);
    assert_eq!(visitor.get(&links[1]).await.status, StatusCode::OK);
    app.clock.advance(chrono::Duration::minutes(61));
    assert_eq!(visitor.get(&links[1]).await.status, StatusCode::GONE);

    // A made-up link is refused the same way.
    let made_up = format!("{RESET}{}", "0".repeat(43));
    assert_eq!(visitor.get(&made_up).await.status, StatusCode::GONE);
}

#[tokio::test]
async fn an_address_change_is_confirmed_from_the_new_address() {
    let (app, inbox) = notifying_app().await;
    let user = app.user("mover").await;
    let other = app.user("neighbour").await;
    let mut browser = logged_in(&app, &user).await;
    let account = browser.get("/portal/account").await;
    assert!(account.body.contains("id=\"change-email\""));
    let change =
        |email: &'static str, password: &'static str| [("email", email), ("password", password)];

    let wrong = browser
        .post(
            "/portal/account",
            "/portal/account/email",
            &change("moved@tacho.test", "not my password"),
        )
        .await;
    assert!(
        wrong.body.contains("The current password is wrong"),
        "{}",
        wrong.body
    );
    let taken = browser
        .post(
            "/portal/account",
            "/portal/account/email",
            &[("email", other.email.as_str()), ("password", PASSWORD)],
        )
        .await;
    assert!(
        taken
            .body
            .contains("<span class=\"field-error\" id=\"new-email-error\" role=\"alert\">"),
        "beside the address: {}",
        taken.body
    );
    let invalid = browser
        .post(
            "/portal/account",
            "/portal/account/email",
            &change("not an address", PASSWORD),
        )
        .await;
    assert!(invalid.body.contains("This is not an e-mail address."));
    assert!(inbox.received.lock().unwrap().is_empty());

    let sent = browser
        .post(
            "/portal/account",
            "/portal/account/email",
            &change("Moved@Tacho.test", PASSWORD),
        )
        .await;
    assert!(
        sent.body
            .contains("We sent a confirmation link to moved@tacho.test."),
        "{}",
        sent.body
    );
    let text = mail_to(
        &inbox,
        "moved@tacho.test",
        "Tacho: confirm your new e-mail address",
    )
    .await;
    let (path, _) = link_in(&text, CONFIRM);
    // Nothing changes until the link is confirmed, and opening it (as a mail scanner would)
    // is not confirming it.
    let opened = Browser::new(&app).get(&path).await;
    assert_eq!(opened.status, StatusCode::OK);
    assert!(opened.body.contains("id=\"confirm-email\""));
    let me = format!("/users/v1/{}", user.id);
    assert_eq!(app.get(&me, &user.token).await.body["email"], user.email);

    let mut new_device = Browser::new(&app);
    let confirmed = new_device.post(&path, &path, &[]).await;
    assert_eq!(confirmed.status, StatusCode::OK, "{}", confirmed.body);
    assert!(
        confirmed
            .body
            .contains("Your e-mail address is now moved@tacho.test.")
    );
    // The API token stays valid: the login name changed, not who holds it.
    assert_eq!(
        app.get(&me, &user.token).await.body["email"],
        "moved@tacho.test"
    );
    let old = Browser::new(&app).login(&user.email, PASSWORD).await;
    assert_eq!(old.status, StatusCode::UNAUTHORIZED);
    let new = Browser::new(&app).login("moved@tacho.test", PASSWORD).await;
    assert_eq!(new.status, StatusCode::SEE_OTHER);
    let replay = new_device.post("/portal/login", &path, &[]).await;
    assert_eq!(replay.status, StatusCode::GONE);
}

#[tokio::test]
async fn an_administrator_resets_a_password_by_email() {
    let (app, inbox) = notifying_app().await;
    let admin = app.admin("keeper").await;
    let user = app.user("compromised").await;
    let mut browser = logged_in(&app, &admin).await;
    let users = browser.get("/portal/admin/users").await;
    assert!(
        users
            .body
            .contains(&format!("/portal/admin/users/{}/password-reset", user.id))
    );
    assert!(
        !users
            .body
            .contains(&format!("/portal/admin/users/{}/password-reset", admin.id)),
        "not one's own"
    );
    let reset = browser
        .post(
            "/portal/admin/users",
            &format!("/portal/admin/users/{}/password-reset", user.id),
            &[],
        )
        .await;
    assert!(
        reset.status.is_success() || reset.status == StatusCode::SEE_OTHER,
        "{}",
        reset.status
    );
    // At once: the old password and every login stop working.
    let me = format!("/users/v1/{}", user.id);
    assert_eq!(app.get(&me, &user.token).await.status, 401);
    let old = Browser::new(&app).login(&user.email, PASSWORD).await;
    assert_eq!(old.status, StatusCode::UNAUTHORIZED);
    let text = mail_to(&inbox, &user.email, "Tacho: your password was reset").await;
    assert!(text.contains("contact your clinic"), "{text}");
    let (path, _) = link_in(&text, RESET);
    let mut visitor = Browser::new(&app);
    let done = visitor
        .post(
            &path,
            &path,
            &[("new", "chosen again 7"), ("confirm", "chosen again 7")],
        )
        .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    let new = Browser::new(&app)
        .login(&user.email, "chosen again 7")
        .await;
    assert_eq!(new.status, StatusCode::SEE_OTHER);

    // Only administrators reset, and never their own password.
    let mut patient = logged_in(&app, &app.user("bystander").await).await;
    let refused = patient
        .post(
            "/portal/account",
            &format!("/portal/admin/users/{}/password-reset", user.id),
            &[],
        )
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let own = browser
        .post(
            "/portal/admin/users",
            &format!("/portal/admin/users/{}/password-reset", admin.id),
            &[],
        )
        .await;
    assert_eq!(own.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn without_e_mail_the_administrator_hands_the_reset_link_over() {
    let app = spawn_app().await;
    let admin = app.admin("keeper").await;
    let user = app.user("forgetful").await;
    let forgot = Browser::new(&app).get("/portal/password/forgot").await;
    assert!(forgot.body.contains("id=\"forgot-no-mail\""));
    assert!(!forgot.body.contains("id=\"send-reset\""));
    let mut browser = logged_in(&app, &admin).await;
    let reset = browser
        .post(
            "/portal/admin/users",
            &format!("/portal/admin/users/{}/password-reset", user.id),
            &[],
        )
        .await;
    // The administrator gets the link to hand over, once, on the page itself.
    assert_eq!(reset.status, StatusCode::OK, "{}", reset.body);
    assert!(reset.body.contains("This server does not send e-mail."));
    assert!(reset.body.contains("is not shown again"), "{}", reset.body);
    let shown = reset
        .body
        .split("<code id=\"handover\">")
        .nth(1)
        .and_then(|rest| rest.split("</code>").next())
        .expect("the link is on the page");
    let (path, _) = link_in(shown, RESET);
    // At once: the old password and every login stop working.
    assert_eq!(
        app.get(&format!("/users/v1/{}", user.id), &user.token)
            .await
            .status,
        401
    );
    let old = Browser::new(&app).login(&user.email, PASSWORD).await;
    assert_eq!(old.status, StatusCode::UNAUTHORIZED);
    // The link sets a new password, once.
    let form = [("new", "handed over 9"), ("confirm", "handed over 9")];
    let done = Browser::new(&app).post(&path, &path, &form).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    let again = Browser::new(&app).get(&path).await;
    assert_eq!(again.status, StatusCode::GONE, "a link works once");
    let login = Browser::new(&app).login(&user.email, "handed over 9").await;
    assert_eq!(login.status, StatusCode::SEE_OTHER);
    // The list shows it no more; the reset is in the audit trail.
    let users = browser.get("/portal/admin/users").await;
    assert!(!users.body.contains(shown), "shown once");
    assert!(!users.body.contains("id=\"handover\""));
    let by_admin = tacho::store::AuditFilter {
        actor: Some(tacho::domain::id::Id::parse(&admin.id).unwrap()),
        ..Default::default()
    };
    let trail = crate::audit::records(&app, by_admin).await;
    assert!(
        trail
            .iter()
            .any(|(action, _)| action == "user.password.reset"),
        "{trail:?}"
    );
    let mut patient = Browser::new(&app);
    patient.login(&user.email, "handed over 9").await;
    let account = patient.get("/portal/account").await;
    assert!(!account.body.contains("id=\"change-email\""));
    // With htmx, the user's row carries the link.
    browser.headers.push(("HX-Request", "true".into()));
    let row = browser
        .post(
            "/portal/admin/users",
            &format!("/portal/admin/users/{}/password-reset", user.id),
            &[],
        )
        .await;
    assert_eq!(row.status, StatusCode::OK);
    assert!(
        row.body
            .starts_with(&format!("<tr id=\"user-{}\"", user.id)),
        "{}",
        row.body
    );
    assert!(
        row.body
            .contains(&format!("<code id=\"handover-{}\">", user.id))
    );
    assert!(row.body.contains(RESET));
}
