//! Shared links: made in the portal by the patient or the patient's staff, opening one report's
//! PDF without an account until they expire or are revoked, on every instance at once; only
//! their secret's hash is stored; every download, through a link or an app's token, is audited.

use sea_orm::{ConnectionTrait, Statement};
use tacho::domain::id::Id;
use tacho::store::AuditFilter;

use crate::helpers::{TestApp, World, spawn_app};
use crate::portal::{Browser, Page, logged_in};

/// Makes a link of measurement `id` for `days` through the portal: its address and its id.
pub async fn make_link(browser: &mut Browser<'_>, id: &str, days: &str) -> (String, String) {
    let page = format!("/portal/measurements/{id}");
    let made = browser
        .post(&page, &format!("{page}/links"), &[("days", days)])
        .await;
    assert_eq!(made.status, 200, "{}", made.body);
    (value_of_link(&made), first_link_id(&made))
}

/// Makes a link of periodic report `id` in `browser`'s portal: its address and its id.
pub async fn make_report_link(browser: &mut Browser<'_>, id: &str, days: &str) -> (String, String) {
    let page = format!("/portal/reports/{id}");
    let made = browser
        .post(&page, &format!("{page}/links"), &[("days", days)])
        .await;
    assert_eq!(made.status, 200, "{}", made.body);
    (value_of_link(&made), first_link_id(&made))
}

fn value_of_link(page: &Page) -> String {
    let marker = "id=\"shared-link\" readonly value=\"";
    let start = page.body.find(marker).expect("the new link") + marker.len();
    let end = page.body[start..].find('"').unwrap() + start;
    page.body[start..end].to_owned()
}

fn first_link_id(page: &Page) -> String {
    let marker = "<tr id=\"link-";
    let start = page.body.find(marker).expect("a listed link") + marker.len();
    page.body[start..start + 24].to_owned()
}

/// GET of a link's address: status and `Cache-Control`.
async fn open(app: &TestApp, address: &str) -> (u16, String, Vec<u8>) {
    let path = &address[address.find("/share/").unwrap()..];
    let reply = app.client.get(app.url(path)).send().await.unwrap();
    let status = reply.status().as_u16();
    let cache = reply
        .headers()
        .get("cache-control")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, cache, reply.bytes().await.unwrap().to_vec())
}

/// The audit records about `patient`, oldest first.
async fn audit_actions(app: &TestApp, patient: &str) -> Vec<(String, String)> {
    let filter = AuditFilter {
        patient: Some(Id::parse(patient).unwrap()),
        ..AuditFilter::default()
    };
    crate::audit::records(app, filter).await
}

#[tokio::test]
async fn a_link_opens_the_pdf_until_it_is_revoked_on_every_instance() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let other = app.second_instance().await;
    let mut staff = logged_in(&app, &world.staff_a).await;
    let (address, link) = make_link(&mut staff, &id, "30").await;
    assert!(
        address.starts_with(&app.state.settings.base_url),
        "{address}"
    );
    for instance in [&app, &other] {
        let (status, cache, pdf) = open(instance, &address).await;
        assert_eq!((status, cache.as_str()), (200, "no-store"));
        assert!(pdf.starts_with(b"%PDF"));
    }
    // The page lists it with its maker, and shows its secret no more.
    let page = staff.get(&format!("/portal/measurements/{id}")).await;
    assert!(
        page.body
            .contains(&format!("id=\"link-{link}\" class=\"link-open\"")),
        "{}",
        &page.body[page.body.find("id=\"links\"").unwrap_or(0)..]
    );
    assert!(!page.body.contains(address.rsplit('/').next().unwrap()));

    let revoked = staff
        .post(
            &format!("/portal/measurements/{id}"),
            &format!("/portal/measurements/{id}/links/{link}/revoke"),
            &[],
        )
        .await;
    assert_eq!(revoked.status, 303);
    for instance in [&app, &other] {
        assert_eq!(open(instance, &address).await.0, 404, "revoked at once");
    }
    // The person the link was sent to, in a browser, reads why in their language; a program
    // gets the error envelope.
    let path = &address[address.find("/share/").unwrap()..];
    let page = app
        .client
        .get(app.url(path))
        .header("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
        .header("Accept-Language", "fr-BE,fr;q=0.9")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 404);
    assert!(
        page.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert!(page.headers().contains_key("content-security-policy"));
    let text = page.text().await.unwrap();
    assert!(text.contains("plus ouvert : il a été retiré"), "{text}");
    assert!(text.starts_with("<!DOCTYPE html>"), "{text}");
    let program = app.client.get(app.url(path)).send().await.unwrap();
    assert_eq!(program.status(), 404);
    let body: serde_json::Value = program.json().await.unwrap();
    assert_eq!(body["code"], 16, "{body}");
    // The patient makes links too; a link of another patient's measurement is not the
    // patient's to revoke.
    let mut patient = logged_in(&app, &world.patient).await;
    let (own, own_link) = make_link(&mut patient, &id, "7").await;
    assert_eq!(open(&app, &own).await.0, 200);
    let mut stranger = logged_in(&app, &world.staff_b).await;
    let refused = stranger
        .post(
            "/portal/account",
            &format!("/portal/measurements/{id}/links/{own_link}/revoke"),
            &[],
        )
        .await;
    assert_eq!(refused.status, 404);
    assert_eq!(open(&app, &own).await.0, 200);
}

#[tokio::test]
async fn a_link_expires_with_its_days_and_days_are_bounded() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let mut patient = logged_in(&app, &world.patient).await;
    let (address, _) = make_link(&mut patient, &id, "1").await;
    assert_eq!(open(&app, &address).await.0, 200);
    app.clock.advance(chrono::Duration::hours(25));
    assert_eq!(open(&app, &address).await.0, 404, "expired");
    let mut patient = logged_in(&app, &world.patient).await;
    let page = format!("/portal/measurements/{id}");
    for days in ["0", "366", "soon"] {
        let refused = patient
            .post(&page, &format!("{page}/links"), &[("days", days)])
            .await;
        assert_eq!(refused.status, 400, "{days}");
    }
}

#[tokio::test]
async fn only_hashes_of_secrets_are_stored_and_every_download_is_audited() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let mut patient = logged_in(&app, &world.patient).await;
    let (address, _) = make_link(&mut patient, &id, "30").await;
    let secret = address.rsplit('/').next().unwrap().to_owned();
    open(&app, &address).await;
    let db = app.store.connection();
    let rows = db
        .query_all_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT * FROM shared_links",
        ))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let hash: String = rows[0].try_get("", "secret_hash").unwrap();
    assert_eq!(hash, tacho::auth::token::hash(&secret));
    assert_ne!(hash, secret);

    // An app's token downloads are audited too.
    let report = app.report(&world.patient, &id, Some("en")).await;
    let token = report.assert_ok()["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(app.download(&token).await.0, 200);
    // Nor is the app's token: it is derived each time it is shown.
    let (_, token_secret) = token.split_once('-').unwrap();
    let files = db
        .query_all_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT legacy_secret_hash, token_version FROM files",
        ))
        .await
        .unwrap();
    for row in &files {
        let legacy: String = row.try_get("", "legacy_secret_hash").unwrap();
        assert!(legacy.is_empty() && !legacy.contains(token_secret));
    }
    let actions = audit_actions(&app, &world.patient.id).await;
    for action in ["link.create", "link.download", "file.download"] {
        assert!(
            actions.iter().any(|(a, _)| a == action),
            "{action} in {actions:?}"
        );
    }
    assert!(
        actions
            .iter()
            .filter(|(a, _)| a.ends_with(".download"))
            .all(|(_, detail)| detail == "from 127.0.0.0/24"),
        "the client's network, never its address: {actions:?}"
    );
}

#[tokio::test]
async fn the_apps_tokens_are_revoked_on_every_instance_and_replaced() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let other = app.second_instance().await;
    let token = app
        .report(&world.patient, &id, Some("en"))
        .await
        .assert_ok()["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned();
    // Hot in both instances' memory before the revocation.
    assert_eq!(app.download(&token).await.0, 200);
    assert_eq!(other.download(&token).await.0, 200);
    let mut staff = logged_in(&app, &world.staff_a).await;
    let page = format!("/portal/measurements/{id}");
    let revoked = staff
        .post(&page, &format!("{page}/app-tokens/revoke"), &[])
        .await;
    assert_eq!(revoked.status, 303);
    assert_eq!(app.download(&token).await.0, 404, "revoked here");
    assert_eq!(
        other.download(&token).await.0,
        404,
        "and on the other instance"
    );
    // The document shows a new token, which opens the same PDF.
    let documents = app
        .get(
            &format!("/data/v1/measurement-reports/documents?eq(data.measurementId,{id})"),
            &world.patient.token,
        )
        .await;
    let renewed = documents.assert_ok()["data"][0]["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(renewed, token);
    assert_eq!(other.download(&renewed).await.0, 200);
    let actions = audit_actions(&app, &world.patient.id).await;
    assert!(
        actions.iter().any(|(a, _)| a == "file.revoke"),
        "{actions:?}"
    );
}

#[tokio::test]
async fn a_burst_of_downloads_is_recorded_one_by_one_and_a_stale_copy_opens_nothing() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let other = app.second_instance().await;
    let old = app
        .report(&world.patient, &id, Some("en"))
        .await
        .assert_ok()["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        other.download(&old).await.0,
        200,
        "hot on the other instance"
    );
    let mut patient = logged_in(&app, &world.patient).await;
    let page = format!("/portal/measurements/{id}");
    patient
        .post(&page, &format!("{page}/app-tokens/revoke"), &[])
        .await;
    let new = app
        .get(
            &format!("/data/v1/measurement-reports/documents?eq(data.measurementId,{id})"),
            &world.patient.token,
        )
        .await
        .assert_ok()["data"][0]["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned();
    let before = audit_actions(&app, &world.patient.id).await;
    // The other instance still holds the copy from before the revocation: old and new tokens
    // at once, so that the records of both share group commits.
    let burst = (0..60).map(|i| {
        let token = if i % 2 == 0 { old.clone() } else { new.clone() };
        let other = &other;
        async move { (i % 2 == 0, other.download(&token).await.0) }
    });
    let answers = futures_util::future::join_all(burst).await;
    for (stale, status) in &answers {
        assert_eq!(*status, if *stale { 404 } else { 200 }, "{answers:?}");
    }
    let after = audit_actions(&app, &world.patient.id).await;
    let recorded =
        |actions: &[(String, String)]| actions.iter().filter(|(a, _)| a == "file.download").count();
    assert_eq!(
        recorded(&after) - recorded(&before),
        30,
        "one record for each download answered, none for a refused one"
    );
}

#[tokio::test]
async fn tokens_handed_out_before_derivation_open_until_revoked() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let token = app
        .report(&world.patient, &id, Some("en"))
        .await
        .assert_ok()["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned();
    let (file_id, _) = token.split_once('-').unwrap();
    // What the migration leaves of a secret stored before: its hash.
    let old = "2c1f1e0a-7b6c-4d5e-8f90-a1b2c3d4e5f6";
    let db = app.store.connection();
    db.execute_raw(Statement::from_string(
        db.get_database_backend(),
        format!(
            "UPDATE files SET legacy_secret_hash = '{}' WHERE id = '{file_id}'",
            tacho::auth::token::hash(old)
        ),
    ))
    .await
    .unwrap();
    let legacy = format!("{file_id}-{old}");
    assert_eq!(app.download(&legacy).await.0, 200);
    assert_eq!(app.download(&token).await.0, 200, "and the derived one");
    let mut patient = logged_in(&app, &world.patient).await;
    let page = format!("/portal/measurements/{id}");
    patient
        .post(&page, &format!("{page}/app-tokens/revoke"), &[])
        .await;
    assert_eq!(app.download(&legacy).await.0, 404);
    assert_eq!(app.download(&token).await.0, 404);
}

#[tokio::test]
async fn the_migration_keeps_only_the_hash_of_a_stored_secret() {
    use migration::MigratorTrait;
    let dir = tempfile::tempdir().unwrap();
    let url = crate::helpers::database_url(dir.path()).await;
    let db = sea_orm::Database::connect(&url).await.unwrap();
    let before = migration::Migrator::migrations().len() as u32;
    // Every migration up to the one that derives tokens.
    let derived = migration::Migrator::migrations()
        .iter()
        .position(|m| m.name().contains("file_token_hashes"))
        .unwrap() as u32;
    migration::Migrator::up(&db, Some(derived)).await.unwrap();
    let old = "2c1f1e0a-7b6c-4d5e-8f90-a1b2c3d4e5f6";
    db.execute_raw(Statement::from_string(
        db.get_database_backend(),
        format!(
            "INSERT INTO files (id, secret, cache_key, name, mimetype, size, sha256, creation_timestamp) \
             VALUES ('6740a0000000000000000001', '{old}', 'k', 'r.pdf', 'application/pdf', 1, 's', 0)"
        ),
    ))
    .await
    .unwrap();
    migration::Migrator::up(&db, None).await.unwrap();
    assert_eq!(
        migration::Migrator::get_applied_migrations(&db)
            .await
            .unwrap()
            .len() as u32,
        before
    );
    let row = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT legacy_secret_hash, token_version FROM files",
        ))
        .await
        .unwrap()
        .unwrap();
    let hash: String = row.try_get("", "legacy_secret_hash").unwrap();
    assert_eq!(hash, tacho::auth::token::hash(old));
    assert_eq!(row.try_get::<i32>("", "token_version").unwrap(), 0);
}

/// A periodic report made by `by` for `patient` (the group of the prescription they share).
async fn periodic_report(app: &TestApp, by: &crate::helpers::TestUser, patient: &str) -> String {
    app.post(
        "/reports/v1",
        &by.token,
        serde_json::json!({"user_id": patient}),
    )
    .await
    .assert_ok()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_periodic_reports_link_opens_its_pdf_until_revoked_and_ends_with_its_makers_access() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let leaving = app.user("leavingdoctor").await;
    app.enlist_staff(&world.admin, &leaving, &world.group_a)
        .await;
    app.measurement_id(&world.patient, "sinus_72").await;
    app.work_queue().await;
    let report = periodic_report(&app, &world.staff_a, &world.patient.id).await;
    let other = app.second_instance().await;

    // The patient's page lists the report with the way to its own page and its links.
    let mut staff = logged_in(&app, &world.staff_a).await;
    let patient_page = staff
        .get(&format!("/portal/patients/{}", world.patient.id))
        .await;
    assert!(
        patient_page
            .body
            .contains(&format!("href=\"/portal/reports/{report}#links\"")),
        "{}",
        patient_page.body
    );
    let page = staff.get(&format!("/portal/reports/{report}")).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("id=\"links\""), "{}", page.body);
    assert!(
        page.body
            .contains(&format!("href=\"/portal/patients/{}\"", world.patient.id)),
        "the patient is a link for a reader who sees the patient"
    );

    let (address, link) = make_report_link(&mut staff, &report, "30").await;
    for instance in [&app, &other] {
        let (status, cache, pdf) = open(instance, &address).await;
        assert_eq!((status, cache.as_str()), (200, "no-store"));
        assert!(pdf.starts_with(b"%PDF"));
    }
    let page = staff.get(&format!("/portal/reports/{report}")).await;
    assert!(
        page.body
            .contains(&format!("id=\"link-{link}\" class=\"link-open\"")),
        "{}",
        page.body
    );
    assert!(!page.body.contains(address.rsplit('/').next().unwrap()));
    let records = audit_actions(&app, &world.patient.id).await;
    for action in ["link.create", "link.download"] {
        assert!(
            records.iter().any(|(a, _)| a == action),
            "{action}: {records:?}"
        );
    }

    // A stranger may not revoke it; its maker does, and it opens nothing on any instance.
    let mut stranger = logged_in(&app, &world.staff_b).await;
    let refused = stranger
        .post(
            "/portal/account",
            &format!("/portal/reports/{report}/links/{link}/revoke"),
            &[],
        )
        .await;
    assert_eq!(refused.status, 404);
    assert_eq!(open(&app, &address).await.0, 200);
    let revoked = staff
        .post(
            &format!("/portal/reports/{report}"),
            &format!("/portal/reports/{report}/links/{link}/revoke"),
            &[],
        )
        .await;
    assert_eq!(revoked.status, 303);
    for instance in [&app, &other] {
        assert_eq!(open(instance, &address).await.0, 404, "revoked at once");
    }
    let path = &address[address.find("/share/").unwrap()..];
    let closed = app
        .client
        .get(app.url(path))
        .header("Accept", "text/html")
        .header("Accept-Language", "nl")
        .send()
        .await
        .unwrap();
    assert_eq!(closed.status(), 404);
    assert!(closed.text().await.unwrap().starts_with("<!DOCTYPE html>"));

    // A physician who leaves the group ends the links they made.
    let mut leaving_browser = logged_in(&app, &leaving).await;
    let (leavers, _) = make_report_link(&mut leaving_browser, &report, "30").await;
    assert_eq!(open(&app, &leavers).await.0, 200);
    app.delete(
        &format!(
            "/users/v1/{}/staff_enlistments/{}",
            leaving.id, world.group_a
        ),
        &world.admin.token,
        None,
    )
    .await
    .assert_ok();
    assert_eq!(
        open(&app, &leavers).await.0,
        404,
        "its maker left the group"
    );

    // Ending the prescription ends the staff's links; the patient's own stays.
    let (staffs, _) = make_report_link(&mut staff, &report, "30").await;
    let mut patient = logged_in(&app, &world.patient).await;
    let (own, _) = make_report_link(&mut patient, &report, "30").await;
    app.delete(
        &format!(
            "/users/v1/{}/patient_enlistments/{}",
            world.patient.id, world.group_a
        ),
        &world.staff_a.token,
        None,
    )
    .await
    .assert_ok();
    assert_eq!(open(&app, &staffs).await.0, 404, "the prescription ended");
    assert_eq!(
        open(&app, &own).await.0,
        200,
        "the patient's own link stays"
    );

    // Days are bounded as for a measurement's links, and a link expires with them.
    let page = format!("/portal/reports/{report}");
    for days in ["0", "366", "soon"] {
        let refused = patient
            .post(&page, &format!("{page}/links"), &[("days", days)])
            .await;
        assert_eq!(refused.status, 400, "{days}");
    }
    let (short, _) = make_report_link(&mut patient, &report, "1").await;
    assert_eq!(open(&app, &short).await.0, 200);
    app.clock.advance(chrono::Duration::hours(25));
    assert_eq!(open(&app, &short).await.0, 404, "expired");
    assert_eq!(open(&app, &own).await.0, 200);
}
