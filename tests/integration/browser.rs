//! The portal in a real browser: headless Chromium driven over WebDriver (Debian's `chromium`
//! and `chromium-driver`, started here on a free port). Each role walks its main journey;
//! screenshots land in `target/screenshots/` for people to look at.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use tacho::demo;

use crate::helpers::{Spawned, TestApp, spawn_app};

/// The longest a step waits for the page it leads to: generous, since a test run shares two
/// cores with the other tests (a wait is a bound, not a speed check).
const WAIT: Duration = Duration::from_secs(30);

/// chromedriver, stopped with every Chromium it started when dropped.
struct Driver {
    _child: Spawned,
    url: String,
    _profile: tempfile::TempDir,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

async fn start_driver() -> Driver {
    let port = free_port();
    let child = Spawned::start(
        Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
    .expect(
        "chromedriver (Debian package chromium-driver) must be installed; scripts/test installs it",
    );
    let url = format!("http://127.0.0.1:{port}");
    let probe = reqwest::Client::new();
    for _ in 0..100 {
        if probe
            .get(format!("{url}/status"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Driver {
        _child: child,
        url,
        _profile: tempfile::tempdir().expect("a profile directory"),
    }
}

async fn browser(driver: &Driver) -> Client {
    session(driver, None).await
}

/// A Chromium session that emulates a phone `width` CSS pixels wide (its `screen.width`); a
/// plain headless window cannot be narrower than 500 px.
async fn phone(driver: &Driver, width: u32) -> Client {
    session(driver, Some(width)).await
}

async fn session(driver: &Driver, phone_width: Option<u32>) -> Client {
    let mut options = json!({
        "binary": "/usr/bin/chromium",
        "args": [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", "--disable-quic", "--window-size=1280,1000",
            format!("--user-data-dir={}", driver._profile.path().display()),
        ],
    });
    if let Some(width) = phone_width {
        options["mobileEmulation"] = json!({
            "deviceMetrics": { "width": width, "height": 740, "pixelRatio": 2.0, "mobile": true, "touch": true },
        });
    }
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("goog:chromeOptions".into(), options);
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(capabilities)
        .connect(&driver.url)
        .await
        .expect("a Chromium session")
}

/// Ends a Chromium session once its checks have passed. Quitting is cleanup, not part of what
/// a test checks: a Chromium that is slow to quit on a loaded machine is stopped with its
/// chromedriver when the `Driver` is dropped, so a failed quit is reported, not failed on.
async fn end_session(client: Client) {
    if let Err(error) = client.close().await {
        eprintln!("Chromium session did not quit cleanly: {error}");
    }
}

fn screenshot_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot directory");
    dir
}

async fn shot(client: &Client, name: &str) {
    let png = client.screenshot().await.expect("a screenshot");
    std::fs::write(screenshot_dir().join(format!("{name}.png")), png).expect("screenshot saved");
}

async fn login(client: &Client, app: &TestApp, email: &str) {
    client
        .goto(&app.url("/portal/login"))
        .await
        .expect("login page");
    type_into(client, "email", email).await;
    type_into(client, "password", demo::DEMO_PASSWORD).await;
    click(client, "login").await;
    client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("form.logout"))
        .await
        .expect("logged in");
}

async fn logout(client: &Client) {
    client
        .find(Locator::Css("form.logout button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Id("login"))
        .await
        .expect("back at the login page");
}

/// Clicks the element with `id`.
async fn click(client: &Client, id: &str) {
    press(client, Locator::Id(id)).await;
}

/// Clicks the first element `css` selects.
async fn click_css(client: &Client, css: &str) {
    press(client, Locator::Css(css)).await;
}

async fn press(client: &Client, locator: Locator<'_>) {
    client
        .find(locator)
        .await
        .unwrap_or_else(|e| panic!("{locator:?}: {e}"))
        .click()
        .await
        .unwrap();
}

/// Whether the element with `id` is within the screen's height as it is scrolled now.
async fn in_view(client: &Client, id: &str) -> bool {
    client
        .execute(
            "var r = document.getElementById(arguments[0]).getBoundingClientRect(); \
             return r.top >= 0 && r.bottom <= window.innerHeight;",
            vec![json!(id)],
        )
        .await
        .unwrap()
        == json!(true)
}

/// Types `text` into the field with `id`.
async fn type_into(client: &Client, id: &str, text: &str) {
    client
        .find(Locator::Id(id))
        .await
        .unwrap_or_else(|e| panic!("#{id}: {e}"))
        .send_keys(text)
        .await
        .unwrap();
}

/// Replaces the contents of the field with `id` by `text`.
async fn replace_text(client: &Client, id: &str, text: &str) {
    let field = client
        .find(Locator::Id(id))
        .await
        .unwrap_or_else(|e| panic!("#{id}: {e}"));
    field.clear().await.unwrap();
    field.send_keys(text).await.unwrap();
}

async fn text_of(client: &Client, css: &str) -> String {
    client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .text()
        .await
        .unwrap()
}

async fn value_of(client: &Client, id: &str) -> String {
    client
        .find(Locator::Id(id))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default()
}

async fn path_of(client: &Client) -> String {
    client.current_url().await.unwrap().path().to_owned()
}

#[tokio::test]
async fn each_role_walks_its_journey_in_chromium() {
    let app = demo_app().await;
    let driver = start_driver().await;
    let client = browser(&driver).await;

    // A patient logs in, saves the profile in place (htmx), opens a measurement and its PDF.
    login(&client, &app, "anna@tacho.test").await;
    assert_eq!(path_of(&client).await, "/portal/measurements");
    shot(&client, "01-patient-measurements").await;

    // A new result reaches the open page without a reload: the bell asks every 20 seconds.
    // The page loads the bell after itself; its count is read once it has come (it has its
    // icon), or the demo's unread notifications would be counted as the new result.
    let bell_loaded = "return document.querySelector('#bell svg') !== null;";
    let loaded = script_until(&client, bell_loaded, |v| *v == Value::Bool(true)).await;
    assert_eq!(loaded, Value::Bool(true), "the bell loads after the page");
    let unread = "const c = document.querySelector('#bell .count');
                  return c === null ? 0 : Number(c.textContent);";
    let before = client.execute(unread, vec![]).await.unwrap();
    client
        .execute("window.notReloaded = true;", vec![])
        .await
        .unwrap();
    let token = app.demo_token("anna@tacho.test").await;
    let fixture: Value = serde_json::from_str(include_str!("../fixtures/sinus_72.json")).unwrap();
    app.post("/data/v1/measurements/documents", &token, fixture)
        .await
        .assert_ok();
    app.work_queue().await;
    let after = script_until(&client, unread, |v| *v != before).await;
    assert_eq!(
        after.as_i64().unwrap(),
        before.as_i64().unwrap() + 1,
        "the bell counts the new result"
    );
    let same_page = client.execute("return window.notReloaded === true;", vec![]);
    assert_eq!(same_page.await.unwrap(), json!(true), "without a reload");
    shot(&client, "01b-patient-bell").await;
    click(&client, "bell").await;
    wait_for_path(&client, "/portal/notifications").await;
    shot(&client, "01c-patient-inbox").await;
    client.goto(&app.url("/portal/profile")).await.unwrap();
    replace_text(&client, "weight", "900").await;
    click(&client, "save-profile").await;
    let message = text_of(&client, "#weight-error").await;
    assert!(!message.is_empty());
    // The refused field takes the focus and comes into view, with its message tied to it.
    let focus = client
        .execute(
            "var e = document.activeElement, r = e.getBoundingClientRect(); \
             return [e.id, e.getAttribute('aria-describedby'), \
                     r.top >= 0 && r.bottom <= window.innerHeight];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        focus,
        serde_json::json!(["weight", "weight-error", true]),
        "the focus is on the refused field, in view"
    );
    shot(&client, "02-patient-profile-refused").await;
    replace_text(&client, "weight", "70.5").await;
    click(&client, "save-profile").await;
    let saved = text_of(&client, "#profile-saved").await;
    // A toast repeats it at the top of the screen, and goes away by itself.
    assert_eq!(text_of(&client, "#toast .toast-ok").await, saved);
    assert_eq!(
        path_of(&client).await,
        "/portal/profile",
        "saved without leaving the page"
    );
    // The confirmation stands beside the button just pressed: in view without scrolling.
    assert!(
        in_view(&client, "profile-saved").await,
        "the message is where the eye is"
    );
    shot(&client, "03-patient-profile-saved").await;
    // The session ends while a change is being typed (idle longer than the portal allows):
    // saving leads to the login page and back to the profile, with what was typed put back.
    replace_text(&client, "weight", "71.5").await;
    replace_text(&client, "length", "168").await;
    app.clock.advance(chrono::Duration::minutes(31));
    click(&client, "save-profile").await;
    wait_for_path(&client, "/portal/login").await;
    type_into(&client, "email", "anna@tacho.test").await;
    type_into(&client, "password", demo::DEMO_PASSWORD).await;
    click(&client, "login").await;
    wait_for_path(&client, "/portal/profile").await;
    let kept = text_of(&client, "#profile-form .draft-kept").await;
    assert!(!kept.is_empty(), "the form says what was kept");
    assert_eq!(
        (
            value_of(&client, "weight").await,
            value_of(&client, "length").await
        ),
        ("71.5".to_owned(), "168".to_owned()),
        "what was typed is back"
    );
    shot(&client, "03a-patient-profile-kept-after-login").await;
    click(&client, "save-profile").await;
    text_of(&client, "#profile-saved").await;
    client.goto(&app.url("/portal/profile")).await.unwrap();
    assert_eq!(value_of(&client, "weight").await, "71.5", "saved this time");
    assert!(
        client.find(Locator::Css(".draft-kept")).await.is_err(),
        "kept once, not on every visit"
    );
    // The trends: a tapped dot says what it is, below the chart.
    client
        .goto(&app.url("/portal/trends?period=month"))
        .await
        .unwrap();
    let before = text_of(&client, "#trend-value").await;
    client
        .find(Locator::Css("svg.trend circle.dot"))
        .await
        .expect("a dot")
        .click()
        .await
        .unwrap();
    let read = text_of(&client, "#trend-value").await;
    assert_ne!(read, before);
    assert!(read.contains("bpm ·"), "{read}");
    scroll_to(&client, "trend-chart").await;
    shot(&client, "03b-patient-trends").await;
    client.goto(&app.url("/portal/measurements")).await.unwrap();
    client
        .find(Locator::Css("table.measurements tbody tr a"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("svg.chart path.series"))
        .await
        .expect("a chart");
    let measurement_path = path_of(&client).await;
    shot(&client, "04-patient-measurement").await;
    // The strip draws its beats: a marker path as wide as the strip itself.
    let drawn: Value = client
        .execute(
            "const strip = document.querySelector('svg.strip .series').getBBox();
             const beats = document.querySelector('svg.strip .beats');
             return beats !== null && beats.getBBox().width > strip.width * 0.8;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(drawn, json!(true), "beats are marked along the strip");
    scroll_to(&client, "tachogram").await;
    // A tap on the tachogram reads its table's row for that moment.
    client
        .find(Locator::Css("svg.tachogram"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let read = text_of(&client, "#tachogram-value").await;
    assert!(read.contains(" ms (") && read.contains(" s: "), "{read}");
    assert!(
        client
            .find(Locator::Css("#tachogram-table tr.chosen"))
            .await
            .is_ok()
    );
    shot(&client, "04b-patient-measurement-charts").await;
    let pdf_form_action = client
        .find(Locator::Css("#report form"))
        .await
        .unwrap()
        .attr("action")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(pdf_form_action, format!("{measurement_path}/report"));
    click(&client, "report-pdf").await;
    let pdf_path = wait_for_path(&client, "/files/v1/").await;
    shot(&client, "05-patient-pdf").await;
    let pdf = app.client.get(app.url(&pdf_path)).send().await.unwrap();
    assert!(pdf.bytes().await.unwrap().starts_with(b"%PDF"));
    client.goto(&app.url(&measurement_path)).await.unwrap();
    logout(&client).await;

    // The physician opens the patient's measurement, passes the link on, reviews it: the old
    // report is out of date, and a new link is made.
    login(&client, &app, "dr.peeters@tacho.test").await;
    assert_eq!(
        path_of(&client).await,
        "/portal/worklist",
        "the work list is home"
    );
    let first = text_of(&client, "table.worklist tbody tr").await;
    assert!(!first.is_empty());
    shot(&client, "06-physician-worklist").await;
    client.goto(&app.url("/portal/patients")).await.unwrap();
    shot(&client, "06b-physician-patients").await;
    client.goto(&app.url(&measurement_path)).await.unwrap();
    let state = text_of(&client, "#report-state").await;
    assert!(
        client
            .find(Locator::Css("#report-state.report-current"))
            .await
            .is_ok(),
        "{state}"
    );
    // A shared link is made on purpose, shown once, and opens the PDF without an account.
    click(&client, "make-link").await;
    client
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Id("shared-link"))
        .await
        .expect("a link");
    let old_link = value_of(&client, "shared-link").await;
    assert!(old_link.contains("/share/"), "{old_link}");
    let shared_path = &old_link[old_link.find("/share/").unwrap()..];
    let shared_pdf = app.client.get(app.url(shared_path)).send().await.unwrap();
    assert!(shared_pdf.bytes().await.unwrap().starts_with(b"%PDF"));
    assert_ne!(shared_path, pdf_path, "not the app's token");
    // The conclusion is picked from the rhythm labels, in the physician's language.
    client
        .find(Locator::Id("label"))
        .await
        .unwrap()
        .select_by_value("sinus_rhythm")
        .await
        .unwrap();
    type_into(
        &client,
        "patient-note",
        "Geen aanwijzing voor voorkamerfibrillatie.",
    )
    .await;
    type_into(&client, "note", "Cafeïnegebruik navragen.").await;
    click(&client, "save-review").await;
    assert_eq!(text_of(&client, "#review-label").await, "Sinusritme");
    assert_eq!(
        text_of(&client, "#review-note").await,
        "Cafeïnegebruik navragen."
    );
    assert!(
        client
            .find(Locator::Css("#report-state.report-outdated"))
            .await
            .is_ok(),
        "the review makes the old report out of date"
    );
    assert!(client.find(Locator::Id("shared-link")).await.is_err());
    scroll_to(&client, "review").await;
    shot(&client, "07-physician-review-outdated").await;
    click(&client, "make-link").await;
    client
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Id("shared-link"))
        .await
        .expect("a new link");
    let new_link = value_of(&client, "shared-link").await;
    assert_ne!(new_link, old_link);
    scroll_to(&client, "report").await;
    shot(&client, "08-physician-new-link").await;
    logout(&client).await;

    // The administrator deactivates and reactivates a user in place, and reads the audit trail.
    login(&client, &app, "admin@tacho.test").await;
    assert_eq!(path_of(&client).await, "/portal/admin/users");
    let patient = demo_user(&app, "luc@tacho.test").await;
    let row = format!("#user-{} button.deactivate", patient.id);
    client
        .find(Locator::Css(&row))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    // It asks first.
    let question = client.get_alert_text().await.expect("a confirmation");
    assert!(
        question.starts_with("Deactivate this account?"),
        "{question}"
    );
    client.accept_alert().await.unwrap();
    client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(&format!(
            "#user-{} button.activate",
            patient.id
        )))
        .await
        .expect("the row is swapped in place");
    // Then says what it did, in the row.
    let notice = client
        .find(Locator::Css(&format!("#user-{} p.notice", patient.id)))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(notice.contains("is deactivated"), "{notice}");
    assert_eq!(path_of(&client).await, "/portal/admin/users");
    shot(&client, "09-admin-users").await;
    client
        .find(Locator::Css(&format!(
            "#user-{} button.activate",
            patient.id
        )))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(&row))
        .await
        .expect("reactivated");
    // A periodic report made now, for a patient.
    let anna = demo_user(&app, "anna@tacho.test").await;
    client
        .goto(&app.url(&format!("/portal/patients/{}", anna.id)))
        .await
        .unwrap();
    click(&client, "make-report").await;
    let reports = text_of(&client, "table.reports").await;
    assert!(reports.contains("On request"), "{reports}");
    scroll_to(&client, "reports").await;
    shot(&client, "10-admin-periodic-report").await;
    client.goto(&app.url("/portal/admin/jobs")).await.unwrap();
    shot(&client, "11-admin-scheduler").await;
    client.goto(&app.url("/portal/admin/audit")).await.unwrap();
    let trail = text_of(&client, "table.audit").await;
    assert!(trail.contains("measurement.review") && trail.contains("report.create"));
    shot(&client, "12-admin-audit").await;
    logout(&client).await;

    // A patient switches to Arabic: the pages are right to left.
    login(&client, &app, "anna@tacho.test").await;
    client.goto(&app.url("/portal/account")).await.unwrap();
    client
        .find(Locator::Id("language"))
        .await
        .unwrap()
        .select_by_value("ar")
        .await
        .unwrap();
    click(&client, "save-settings").await;
    client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("html[dir='rtl']"))
        .await
        .expect("an Arabic page");
    let direction: Value = client
        .execute(
            "return getComputedStyle(document.body).direction + ' ' + document.documentElement.lang",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(direction, json!("rtl ar"));
    shot(&client, "13-patient-account-arabic").await;
    client.goto(&app.url(&measurement_path)).await.unwrap();
    // The patient reads the conclusion in Arabic and the note written for them, never the
    // care team's clinical note.
    assert_eq!(text_of(&client, "#review-label").await, "نظم جيبي");
    assert_eq!(
        text_of(&client, "#review-patient-note").await,
        "Geen aanwijzing voor voorkamerfibrillatie."
    );
    assert!(client.find(Locator::Id("review-note")).await.is_err());
    assert!(client.find(Locator::Id("save-review")).await.is_err());
    // A Latin quantity stays one left-to-right run inside the right-to-left page: the number
    // is drawn left of its unit ("72 bpm", not "bpm 72").
    let number_left_of_unit: Value = client
        .execute(
            "const text = document.querySelector('#heart-rate bdi').firstChild;
             const at = (i) => { const r = document.createRange(); r.setStart(text, i);
                                 r.setEnd(text, i + 1); return r.getBoundingClientRect().left; };
             return at(text.data.search(/[0-9]/)) < at(text.data.indexOf('bpm'));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(number_left_of_unit, json!(true));
    shot(&client, "14-patient-measurement-arabic").await;
    scroll_to(&client, "tachogram").await;
    shot(&client, "15-patient-measurement-charts-arabic").await;
    end_session(client).await;
}

/// Scrolls the element `id` into view before a screenshot.
async fn scroll_to(client: &Client, id: &str) {
    client
        .execute(
            "document.getElementById(arguments[0]).scrollIntoView()",
            vec![json!(id)],
        )
        .await
        .expect("scrolled");
}

/// The path of the page once the browser has navigated to one under `prefix`.
/// What `script` returns once `done` holds of it, or its last answer after 30 s of asking
/// every 100 ms.
async fn script_until(client: &Client, script: &str, done: impl Fn(&Value) -> bool) -> Value {
    let mut answer = Value::Null;
    for _ in 0..300 {
        answer = client.execute(script, vec![]).await.unwrap();
        if done(&answer) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    answer
}

async fn wait_for_path(client: &Client, prefix: &str) -> String {
    for _ in 0..300 {
        let path = path_of(client).await;
        if path.starts_with(prefix) {
            return path;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("never reached {prefix}; at {}", path_of(client).await);
}

/// Sets the language of the demo account `email` (a lower-case code).
async fn set_demo_language(app: &TestApp, email: &str, code: &str) {
    let user = demo_user(app, email).await;
    let changes = tacho::store::UserChanges {
        language: Some(code.to_uppercase()),
        ..Default::default()
    };
    app.operator_writes(async |tx| tx.update_user(&user.id, changes).await)
        .await;
}

/// How wide the page is against the phone's screen: `[scrollWidth, screen.width]`. The
/// device width, not `innerWidth`: an emulated phone widens its layout viewport to fit
/// overflowing content.
async fn page_and_screen_width(client: &Client) -> (i64, i64) {
    let widths = client
        .execute(
            "return [document.documentElement.scrollWidth, screen.width];",
            vec![],
        )
        .await
        .unwrap();
    (widths[0].as_i64().unwrap(), widths[1].as_i64().unwrap())
}

/// A server with the demo world, whose own events reach their inboxes before anyone looks.
async fn demo_app() -> TestApp {
    let app = spawn_app().await;
    demo::seed(&app.store, app.operator.auth.hasher())
        .await
        .expect("demo world");
    app.work_queue().await;
    app
}

/// The demo account `email`.
async fn demo_user(app: &TestApp, email: &str) -> tacho::store::entities::user::Model {
    app.store
        .user_by_email(&tacho::store::Service::Operator, email)
        .await
        .unwrap()
        .expect("a demo account")
}

/// Every page of the portal, by the demo account that reads it: the patient's, the
/// physician's and the administrator's, the 404 page included.
async fn every_page(app: &TestApp, client: &Client) -> Vec<(&'static str, Vec<String>)> {
    let anna = demo_user(app, "anna@tacho.test").await;
    login(client, app, "anna@tacho.test").await;
    let measurement = client
        .find(Locator::Css("table.measurements tbody tr a"))
        .await
        .unwrap()
        .attr("href")
        .await
        .unwrap()
        .expect("a link to a measurement");
    logout(client).await;
    // A periodic report of Anna's, made by her physician, for its page.
    let physician = app.demo_token("dr.peeters@tacho.test").await;
    let report = app
        .post(
            "/reports/v1",
            &physician,
            json!({"user_id": anna.id.to_string()}),
        )
        .await
        .assert_ok()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let report = format!("/portal/reports/{report}");
    let owned = |pages: &[&str]| pages.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    vec![
        (
            "anna@tacho.test",
            owned(&[
                "/portal/measurements",
                &measurement,
                "/portal/trends?period=month",
                "/portal/profile",
                "/portal/reports",
                &report,
                "/portal/account",
                "/portal/notifications",
                "/portal/notifications/settings",
                "/portal/nope",
            ]),
        ),
        (
            "dr.peeters@tacho.test",
            owned(&[
                "/portal/worklist",
                "/portal/patients",
                &format!("/portal/patients/{}", anna.id),
                &format!("/portal/patients/{}/trends?period=prescription", anna.id),
                &measurement,
                &report,
                "/portal/account",
            ]),
        ),
        (
            "admin@tacho.test",
            owned(&[
                "/portal/admin/users",
                &format!("/portal/admin/users/{}", anna.id),
                "/portal/admin/groups",
                "/portal/admin/jobs",
                "/portal/admin/jobs/upcoming",
                "/portal/admin/audit",
                "/portal/admin/notifications",
                "/portal/account",
            ]),
        ),
    ]
}

/// axe-core's script: `TACHO_AXE_JS` (set by `scripts/test`), or installed here from
/// `tests/browser` into `target/browser-tools` with npm.
fn axe_script() -> String {
    let path = match std::env::var_os("TACHO_AXE_JS") {
        Some(path) => PathBuf::from(path),
        None => {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/browser-tools");
            let script = dir.join("node_modules/axe-core/axe.min.js");
            if !script.exists() {
                std::fs::create_dir_all(&dir).unwrap();
                for file in ["package.json", "package-lock.json"] {
                    std::fs::copy(
                        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                            .join("tests/browser")
                            .join(file),
                        dir.join(file),
                    )
                    .unwrap();
                }
                let status = Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                    .current_dir(&dir)
                    .status()
                    .expect("npm must be on the path to install axe-core");
                assert!(status.success(), "npm ci of axe-core failed");
            }
            script
        }
    };
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The serious and critical findings of axe-core on the open page, against WCAG 2.2 A and AA.
async fn axe_findings(client: &Client, axe: &str) -> Vec<String> {
    client.execute(axe, vec![]).await.expect("axe-core loads");
    let found = client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document, { runOnly: { type: 'tag', values:
                 ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } })
               .then(r => done(r.violations
                 .filter(v => v.impact === 'serious' || v.impact === 'critical')
                 .map(v => v.id + ' (' + v.impact + '): ' + v.nodes.length + ' × '
                   + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', '))))
               .catch(e => done(['axe failed: ' + e]));",
            vec![],
        )
        .await
        .expect("axe-core runs");
    serde_json::from_value(found).unwrap()
}

#[tokio::test]
async fn every_page_passes_axe_core_in_english_arabic_and_chinese() {
    let app = demo_app().await;
    let driver = start_driver().await;
    let client = browser(&driver).await;
    let journeys = every_page(&app, &client).await;
    let axe = axe_script();
    // A control: a planted image without a text alternative is found, so a clean page means
    // that axe-core ran and looked.
    login(&client, &app, "anna@tacho.test").await;
    client
        .execute(
            "document.querySelector('main').insertAdjacentHTML('beforeend', '<img src=\"/x.png\">');",
            vec![],
        )
        .await
        .unwrap();
    let planted = axe_findings(&client, &axe).await;
    assert!(
        planted
            .iter()
            .any(|f| f.starts_with("image-alt (critical)")),
        "{planted:?}"
    );
    logout(&client).await;
    let mut findings = Vec::new();
    for language in ["en", "ar", "zh"] {
        for (email, pages) in &journeys {
            set_demo_language(&app, email, language).await;
            login(&client, &app, email).await;
            for page in pages {
                client.goto(&app.url(page)).await.unwrap();
                for finding in axe_findings(&client, &axe).await {
                    findings.push(format!("{page} ({language}, {email}): {finding}"));
                }
            }
            logout(&client).await;
        }
    }
    assert!(
        findings.is_empty(),
        "axe-core's serious and critical findings: {findings:#?}"
    );
}

#[tokio::test]
async fn every_page_fits_a_360_px_phone_in_dutch_arabic_and_chinese() {
    let app = demo_app().await;
    let driver = start_driver().await;
    let client = phone(&driver, 360).await;
    let journeys = every_page(&app, &client).await;
    let mut too_wide = Vec::new();
    for (language, direction) in [("nl", "ltr"), ("ar", "rtl"), ("zh", "ltr")] {
        for (email, pages) in &journeys {
            set_demo_language(&app, email, language).await;
            login(&client, &app, email).await;
            for page in pages {
                client.goto(&app.url(page)).await.unwrap();
                let dir = client
                    .execute("return document.documentElement.dir;", vec![])
                    .await
                    .unwrap();
                assert_eq!(dir, json!(direction), "{page} in {language}");
                let (page_width, screen) = page_and_screen_width(&client).await;
                assert_eq!(screen, 360, "the emulated phone's screen");
                if page_width > screen {
                    // Names the elements whose edge sets the page's width, to say why.
                    let culprits = client
                        .execute(
                            "const width = document.documentElement.scrollWidth;
                             return [...document.querySelectorAll('body *')]
                               .filter(e => Math.abs(e.getBoundingClientRect().right + window.scrollX - width) < 2)
                               .slice(0, 8)
                               .map(e => e.tagName + '.' + e.className + '#' + e.id);",
                            vec![],
                        )
                        .await
                        .unwrap();
                    too_wide.push(format!(
                        "{email} {page} ({language}): {page_width} px, {culprits}"
                    ));
                }
            }
            let name = email.split('@').next().unwrap().replace('.', "-");
            client.goto(&app.url(&pages[0])).await.unwrap();
            shot(&client, &format!("phone-{language}-{name}")).await;
            logout(&client).await;
        }
    }
    assert!(
        too_wide.is_empty(),
        "pages wider than a 360 px phone: {too_wide:#?}"
    );
}

/// Each role's main actions on a 360 px phone and a 1280 px screen, in Dutch, Arabic and
/// Chinese: the patient saves the profile and reads the trends and a measurement's chart by
/// tapping them, the physician reviews from the work list, the administrator deactivates and
/// reactivates a user after confirming. Every check goes by id, so it holds in every language.
#[tokio::test]
async fn each_role_acts_at_360_and_1280_px_in_dutch_arabic_and_chinese() {
    let app = demo_app().await;
    let driver = start_driver().await;
    for width in [360, 1280] {
        let client = if width == 360 {
            phone(&driver, width).await
        } else {
            browser(&driver).await
        };
        act_in_dutch_arabic_and_chinese(&app, &client, width).await;
        end_session(client).await;
    }
}

async fn act_in_dutch_arabic_and_chinese(app: &TestApp, client: &Client, width: u32) {
    let luc = demo_user(app, "luc@tacho.test").await;
    // On the phone, no page may be wider than its screen.
    let fits = async |what: &str| {
        if width == 360 {
            let (page_width, screen) = page_and_screen_width(client).await;
            assert!(page_width <= screen, "{what}: {page_width} px");
        }
    };
    for language in ["nl", "ar", "zh"] {
        // The patient.
        set_demo_language(app, "anna@tacho.test", language).await;
        login(client, app, "anna@tacho.test").await;
        client.goto(&app.url("/portal/profile")).await.unwrap();
        replace_text(client, "weight", "71").await;
        click(client, "save-profile").await;
        assert!(!text_of(client, "#profile-saved").await.is_empty());
        assert!(
            in_view(client, "profile-saved").await,
            "{language}: the notice is in view"
        );
        fits(&format!("{language} profile")).await;
        client
            .goto(&app.url("/portal/trends?period=month"))
            .await
            .unwrap();
        let hint = text_of(client, "#trend-value").await;
        click_css(client, "svg.trend circle.dot").await;
        assert_ne!(text_of(client, "#trend-value").await, hint, "{language}");
        fits(&format!("{language} trends")).await;
        // A share reads "25 %" in every language: in Arabic too, the figures before the sign.
        let burden = text_of(client, "#trend-burden bdi").await;
        assert!(burden.ends_with('%'), "{language}: {burden}");
        let figures_first = client
            .execute(
                "const text = document.querySelector('#trend-burden bdi').firstChild;
                 const at = (i) => { const r = document.createRange();
                   r.setStart(text, i); r.setEnd(text, i + 1);
                   return r.getBoundingClientRect().left; };
                 return at(0) < at(text.length - 1);",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(figures_first, json!(true), "{language}: {burden}");
        client.goto(&app.url("/portal/measurements")).await.unwrap();
        click_css(client, "table.measurements tbody tr a").await;
        let hint = text_of(client, "#tachogram-value").await;
        // Before any tap (a tap scrolls what it taps into view): the charts open at the start
        // of the recording, their axis on screen. A chart wider than a phone scrolls in its
        // figure; right to left, it would open at the end.
        for tick in [
            "svg.tachogram text.tick[text-anchor='end']",
            "svg.strip text.tick:first-of-type",
        ] {
            assert!(
                on_screen(client, tick).await,
                "{language} at {width} px: {tick} is off screen"
            );
        }
        click_css(client, "svg.tachogram").await;
        assert_ne!(
            text_of(client, "#tachogram-value").await,
            hint,
            "{language}"
        );
        fits(&format!("{language} measurement")).await;
        shot(client, &format!("journey-{width}-{language}-patient")).await;
        logout(client).await;

        // The physician reviews the first entry of the work list.
        set_demo_language(app, "dr.peeters@tacho.test", language).await;
        login(client, app, "dr.peeters@tacho.test").await;
        assert_eq!(path_of(client).await, "/portal/worklist");
        fits(&format!("{language} work list")).await;
        // Every column of a row (result, urgent flag, status) is on screen without a swipe.
        assert!(
            on_screen(client, "table.worklist tbody tr:first-child td").await,
            "{language} at {width} px: a work list row runs off screen"
        );
        if width == 360 {
            shot(client, &format!("journey-{width}-{language}-worklist")).await;
        }
        click_css(client, "table.worklist tbody tr td:nth-child(2) a").await;
        wait_for_path(client, "/portal/measurements/").await;
        client
            .find(Locator::Id("label"))
            .await
            .unwrap()
            .select_by_value("sinus_rhythm")
            .await
            .unwrap();
        type_into(client, "patient-note", "OK").await;
        click(client, "save-review").await;
        assert!(!text_of(client, "#review-label").await.is_empty());
        assert_eq!(text_of(client, "#review-patient-note").await, "OK");
        fits(&format!("{language} review")).await;
        scroll_to(client, "review").await;
        shot(client, &format!("journey-{width}-{language}-physician")).await;

        // ... then has a report made for the last ten days, typed as from and to.
        let anna = demo_user(app, "anna@tacho.test").await;
        client
            .goto(&app.url(&format!("/portal/patients/{}", anna.id)))
            .await
            .unwrap();
        let reports = async || {
            client
                .execute(
                    "return document.querySelectorAll('table.reports tbody tr').length;",
                    vec![],
                )
                .await
                .unwrap()
                .as_u64()
                .unwrap()
        };
        let before = reports().await;
        let day = |days_ago: i64| {
            (chrono::Utc::now() - chrono::Duration::days(days_ago))
                .format("%Y-%m-%d")
                .to_string()
        };
        client
            .execute(
                "document.getElementById('report-from').value = arguments[0];
                 document.getElementById('report-to').value = arguments[1];",
                vec![json!(day(10)), json!(day(0))],
            )
            .await
            .unwrap();
        swipe_to(client, "#make-report").await;
        click(client, "make-report").await;
        // The same page comes back (its path does not change): wait for the new row.
        client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(&format!(
                "table.reports tbody tr:nth-child({})",
                before + 1
            )))
            .await
            .expect("the new report's row");
        assert_eq!(
            reports().await,
            before + 1,
            "{language} at {width} px: a report for the days typed"
        );
        fits(&format!("{language} patient's reports")).await;

        // ... and shares the new report (the newest comes first) with a link.
        swipe_to(client, "table.reports tbody tr:first-child a.share").await;
        click_css(client, "table.reports tbody tr:first-child a.share").await;
        client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Id("make-link"))
            .await
            .expect("the report's page");
        swipe_to(client, "#make-link").await;
        click(client, "make-link").await;
        client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Id("shared-link"))
            .await
            .expect("the new link");
        let address = value_of(client, "shared-link").await;
        assert!(address.contains("/share/"), "{language}: {address}");
        fits(&format!("{language} report's links")).await;
        shot(client, &format!("journey-{width}-{language}-report-link")).await;
        logout(client).await;

        // The administrator deactivates a user after confirming, then reactivates it.
        set_demo_language(app, "admin@tacho.test", language).await;
        login(client, app, "admin@tacho.test").await;
        let deactivate = format!("#user-{} button.deactivate", luc.id);
        let activate = format!("#user-{} button.activate", luc.id);
        // The list scrolls sideways in its own box on a phone, as a thumb would scroll it.
        swipe_to(client, &deactivate).await;
        click_css(client, &deactivate).await;
        client.accept_alert().await.expect("a confirmation");
        client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(&activate))
            .await
            .expect("deactivated in place");
        fits(&format!("{language} users")).await;
        shot(client, &format!("journey-{width}-{language}-admin")).await;
        swipe_to(client, &activate).await;
        click_css(client, &activate).await;
        client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(&deactivate))
            .await
            .expect("reactivated in place");

        // ... edits the user's details,
        client
            .goto(&app.url(&format!("/portal/admin/users/{}", luc.id)))
            .await
            .unwrap();
        replace_text(client, "phone_number", "+32 470 12 34 56").await;
        click(client, "save-user").await;
        assert!(
            !text_of(client, "#user-saved").await.is_empty(),
            "{language} at {width} px: the user's details are saved"
        );
        assert_eq!(value_of(client, "phone_number").await, "+32 470 12 34 56");
        fits(&format!("{language} user edit")).await;

        // ... moves the last day of the newest prescription a year on,
        client.goto(&app.url("/portal/admin/groups")).await.unwrap();
        let next_year = (chrono::Utc::now() + chrono::Duration::days(365))
            .format("%Y-%m-%d")
            .to_string();
        client
            .execute(
                "document.getElementById('extend-1').value = arguments[0];",
                vec![json!(next_year)],
            )
            .await
            .unwrap();
        swipe_to(client, "form.extend-prescription button").await;
        click_css(client, "form.extend-prescription button").await;
        wait_for_path(client, "/portal/admin").await;
        assert!(
            !text_of(client, "p.notice").await.is_empty(),
            "{language} at {width} px: the prescription is extended"
        );
        assert_eq!(value_of(client, "extend-1").await, next_year, "{language}");
        fits(&format!("{language} prescriptions")).await;

        // ... and has the due periodic reports made now.
        client.goto(&app.url("/portal/admin/jobs")).await.unwrap();
        assert!(
            on_screen(client, "table.upcoming tbody tr:first-child td").await,
            "{language} at {width} px: a row of the reports to come runs off screen"
        );
        click(client, "make-due").await;
        assert!(
            !text_of(client, "p.notice").await.is_empty(),
            "{language} at {width} px: the page says what was queued"
        );
        fits(&format!("{language} scheduler")).await;
        if width == 360 {
            shot(client, &format!("journey-{width}-{language}-scheduler")).await;
        }
        logout(client).await;

        // An account an administrator made chooses its own password at its first login.
        let email = account_due_a_password(app, &format!("new-{language}-{width}"), language).await;
        login(client, app, &email).await;
        client.goto(&app.url("/portal/measurements")).await.unwrap();
        wait_for_path(client, "/portal/account").await;
        assert!(
            !text_of(client, "#password-due").await.is_empty(),
            "{language} at {width} px: the page says a password of one's own is due"
        );
        fits(&format!("{language} password due")).await;
        type_into(client, "current", demo::DEMO_PASSWORD).await;
        type_into(client, "new", "a password of my own").await;
        type_into(client, "confirm", "a password of my own").await;
        click_css(client, "#password button[type=submit]").await;
        client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css("header.top nav"))
            .await
            .expect("the menu is back once the password is changed");
        client.goto(&app.url("/portal/measurements")).await.unwrap();
        assert_eq!(path_of(client).await, "/portal/measurements", "{language}");
        logout(client).await;
    }
}

/// Makes an account as an administrator would: it must choose its own password at its first
/// portal login (the demo password until then). Answers its address.
async fn account_due_a_password(app: &TestApp, name: &str, language: &str) -> String {
    let email = format!("{name}@tacho.test");
    let password_hash = tacho::auth::password::PasswordHasher::default()
        .hash(demo::DEMO_PASSWORD.to_owned())
        .await
        .unwrap();
    let new = tacho::store::NewUser {
        email: email.clone(),
        password_hash,
        first_name: name.to_owned(),
        last_name: "Nieuw".into(),
        phone_number: None,
        language: language.to_uppercase(),
        time_zone: "Europe/Brussels".into(),
        roles: Vec::new(),
        password_change_due: true,
    };
    app.operator_writes(async |tx| tx.create_user(new).await)
        .await;
    email
}

/// Whether every element `css` selects (at least one) lies within the screen's width as the
/// page opens, without scrolling any box sideways.
async fn on_screen(client: &Client, css: &str) -> bool {
    let inside = client
        .execute(
            "const all = [...document.querySelectorAll(arguments[0])];
             return all.length > 0 && all.every((e) => {
               const r = e.getBoundingClientRect();
               return r.left >= 0 && r.right <= window.innerWidth + 0.5;
             });",
            vec![json!(css)],
        )
        .await
        .unwrap();
    inside == json!(true)
}

/// Brings the element `css` to the middle of the screen, scrolling whatever box holds it
/// (ChromeDriver scrolls the page, not a table's own scrolling box).
async fn swipe_to(client: &Client, css: &str) {
    client
        .execute(
            "document.querySelector(arguments[0])\
               .scrollIntoView({block: 'center', inline: 'center'});",
            vec![json!(css)],
        )
        .await
        .unwrap();
}
