//! The audit trail: append-only in the database itself, every read of another's data recorded
//! through either door, and the administrators' filter and export.

use sea_orm::{ConnectionTrait, DbBackend, Statement};
use serde_json::json;
use tacho::domain::id::Id;
use tacho::store::{AuditFilter, Viewer};

use crate::helpers::{TestApp, World, fixture, spawn_app};
use crate::portal::logged_in;

/// The audit records matching `filter`, oldest first, as (action, detail).
pub async fn records(app: &TestApp, filter: AuditFilter) -> Vec<(String, String)> {
    let admin = Viewer {
        user_id: Id::generate(),
        admin: true,
    };
    let (events, _) = app
        .store
        .audit_page(&admin, &filter, 0, 1000)
        .await
        .unwrap();
    events
        .into_iter()
        .rev()
        .map(|e| (e.action, e.detail))
        .collect()
}

/// The audit records about `patient` done by `actor`.
async fn actions_of(app: &TestApp, actor: &str, patient: &str) -> Vec<(String, String)> {
    let filter = AuditFilter {
        patient: Some(Id::parse(patient).unwrap()),
        actor: Some(Id::parse(actor).unwrap()),
        ..AuditFilter::default()
    };
    records(app, filter).await
}

async fn count(app: &TestApp) -> i64 {
    let db = app.store.connection();
    let row = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT COUNT(*) AS n FROM audit_events",
        ))
        .await
        .unwrap()
        .unwrap();
    row.try_get::<i64>("", "n").unwrap()
}

#[tokio::test]
async fn the_audit_trail_refuses_every_update_and_delete() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    app.get(
        &format!("/users/v1/{}", world.patient.id),
        &world.staff_a.token,
    )
    .await
    .assert_ok();
    let before = count(&app).await;
    assert!(before > 0);
    assert_append_only(app.store.connection()).await;
    assert_eq!(count(&app).await, before, "nothing changed");
}

/// Asserts that `db` refuses to change or delete any record of the trail.
async fn assert_append_only(db: &sea_orm::DatabaseConnection) {
    for sql in [
        "UPDATE audit_events SET detail = 'rewritten'",
        "UPDATE audit_events SET actor_id = patient_id WHERE patient_id IS NOT NULL",
        "DELETE FROM audit_events",
    ] {
        let refused = db
            .execute_raw(Statement::from_string(db.get_database_backend(), sql))
            .await;
        let error = refused.expect_err(sql).to_string();
        assert!(error.contains("append-only"), "{sql}: {error}");
    }
}

/// The definition of `audit_events` and the names of its indexes and triggers, on SQLite.
async fn sqlite_schema(db: &sea_orm::DatabaseConnection) -> (String, Vec<String>) {
    let rows = db
        .query_all_raw(Statement::from_string(
            DbBackend::Sqlite,
            "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'audit_events' \
             ORDER BY type, name",
        ))
        .await
        .unwrap();
    let mut table = String::new();
    let mut others = Vec::new();
    for row in rows {
        let kind: String = row.try_get("", "type").unwrap();
        let name: String = row.try_get("", "name").unwrap();
        match kind.as_str() {
            "table" => table = row.try_get("", "sql").unwrap(),
            _ => others.push(name),
        }
    }
    (table, others)
}

/// The ids of the trail's records, once it has refused to change or delete them.
async fn sqlite_records(db: &sea_orm::DatabaseConnection) -> Vec<String> {
    assert_append_only(db).await;
    db.query_all_raw(Statement::from_string(
        DbBackend::Sqlite,
        "SELECT id FROM audit_events ORDER BY id",
    ))
    .await
    .unwrap()
    .into_iter()
    .map(|row| row.try_get("", "id").unwrap())
    .collect()
}

/// On SQLite the trail is a `WITHOUT ROWID` table (a record goes into three B-trees rather
/// than four). Its migration, the last one, goes down to a rowid table and up again keeping
/// every record, both indexes and the append-only triggers. Runs on a SQLite file of its own
/// in every pass.
#[tokio::test]
async fn on_sqlite_the_trail_is_kept_in_key_order_both_ways_of_its_migration() {
    use migration::MigratorTrait;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/audit.db?mode=rwc", dir.path().display());
    tacho::store::Store::migrate_url(&url).await.unwrap();
    let db = sea_orm::Database::connect(&url).await.unwrap();
    let ids: Vec<String> = (0..3).map(|_| Id::generate().to_string()).collect();
    for (at, id) in ids.iter().enumerate() {
        db.execute_raw(Statement::from_sql_and_values(
            DbBackend::Sqlite,
            "INSERT INTO audit_events (id, actor_id, action, patient_id, object_kind, \
             object_id, detail, creation_timestamp) VALUES (?, ?, 'read', ?, 'user', NULL, '', ?)",
            [
                id.as_str().into(),
                ids[0].as_str().into(),
                ids[1].as_str().into(),
                (at as i64).into(),
            ],
        ))
        .await
        .unwrap();
    }
    let mut sorted = ids.clone();
    sorted.sort();
    let kept = vec![
        "audit_events_no_delete".to_owned(),
        "audit_events_no_update".to_owned(),
        "audit_events_patient".to_owned(),
        "audit_events_time".to_owned(),
    ];
    let others = |mut names: Vec<String>| {
        // SQLite's own index of a rowid table's text key.
        names.retain(|name| !name.starts_with("sqlite_autoindex"));
        names.sort();
        names
    };

    let (table, names) = sqlite_schema(&db).await;
    assert!(table.ends_with("WITHOUT ROWID"), "{table}");
    assert_eq!(others(names), kept);
    assert_eq!(sqlite_records(&db).await, sorted);

    migration::Migrator::down(&db, Some(1)).await.unwrap();
    let (table, names) = sqlite_schema(&db).await;
    assert!(!table.contains("WITHOUT ROWID"), "{table}");
    assert_eq!(others(names), kept);
    assert_eq!(sqlite_records(&db).await, sorted);

    migration::Migrator::up(&db, None).await.unwrap();
    let (table, names) = sqlite_schema(&db).await;
    assert!(table.ends_with("WITHOUT ROWID"), "{table}");
    assert_eq!(others(names), kept);
    assert_eq!(sqlite_records(&db).await, sorted);
}

#[tokio::test]
async fn reads_of_a_patients_data_are_recorded_through_either_door() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let (patient, staff) = (&world.patient, &world.staff_a);
    for name in ["sinus_72", "sinus_72"] {
        app.post(
            "/data/v1/measurements/documents",
            &patient.token,
            fixture(name),
        )
        .await
        .assert_ok();
    }
    app.get(&format!("/users/v1/{}", patient.id), &staff.token)
        .await
        .assert_ok();
    app.get("/data/v1/measurements/documents", &staff.token)
        .await
        .assert_ok();
    app.get(&format!("/profiles/v1?id={}", patient.id), &staff.token)
        .await
        .assert_ok();
    app.get(&format!("/reports/v1?user_id={}", patient.id), &staff.token)
        .await
        .assert_ok();
    // The portal's patient page, and the list fragment htmx asks for.
    let mut browser = logged_in(&app, staff).await;
    let page = format!("/portal/patients/{}", patient.id);
    assert_eq!(browser.get(&page).await.status, 200);
    browser.headers.push(("HX-Request", "true".to_owned()));
    assert_eq!(browser.get(&page).await.status, 200);

    let actions: Vec<String> = actions_of(&app, &staff.id, &patient.id)
        .await
        .into_iter()
        .map(|(action, detail)| format!("{action}: {detail}"))
        .collect();
    assert_eq!(
        actions,
        [
            "user.view: ",
            "measurement.list: 2 measurements",
            "profile.list: 1 profiles",
            "user.view: ",
            "measurement.list: 2 measurements",
            "profile.view: ",
            "user.view: ",
            "measurement.list: 2 measurements",
        ],
        "one record per read, per patient of a list page"
    );
    // A page with nothing of the patient's records nothing about the patient.
    app.get("/data/v1/measurements/documents", &world.staff_b.token)
        .await
        .assert_ok();
    assert!(
        actions_of(&app, &world.staff_b.id, &patient.id)
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn token_grants_and_revocations_are_recorded() {
    let app = spawn_app().await;
    let user = app.user("granted").await;
    let grant = app
        .password_grant(&user.email, crate::helpers::PASSWORD)
        .await;
    let tokens = grant.assert_ok().clone();
    let refreshed = app
        .request(
            reqwest::Method::POST,
            "/auth/v2/oauth2/tokens",
            None,
            Some(json!({"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]})),
        )
        .await;
    let refreshed = refreshed.assert_ok().clone();
    let revoked = app
        .client
        .post(app.url("/auth/v2/oauth2/tokens/revoke"))
        .form(&[("token", refreshed["access_token"].as_str().unwrap())])
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    let filter = AuditFilter {
        actor: Some(Id::parse(&user.id).unwrap()),
        ..AuditFilter::default()
    };
    let actions: Vec<String> = records(&app, filter)
        .await
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert!(
        actions.ends_with(&[
            "session.login".into(),
            "token.refresh".into(),
            "token.revoke".into()
        ]),
        "{actions:?}"
    );
}

#[tokio::test]
async fn administrators_filter_the_trail_and_export_a_patients_entries() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    app.get(
        &format!("/users/v1/{}", world.patient.id),
        &world.staff_a.token,
    )
    .await
    .assert_ok();
    app.get(
        &format!("/users/v1/{}", world.patient_b.id),
        &world.staff_b.token,
    )
    .await
    .assert_ok();
    let mut admin = logged_in(&app, &world.admin).await;
    let staff_a = app
        .store
        .user_by_id(
            &tacho::store::Service::Operator,
            &Id::parse(&world.staff_a.id).unwrap(),
        )
        .await
        .unwrap()
        .unwrap();
    let staff_a_name = format!("{} {}", staff_a.first_name, staff_a.last_name);

    let filtered = admin
        .get(&format!(
            "/portal/admin/audit?user={}&actor=",
            world.patient.email
        ))
        .await;
    assert_eq!(filtered.status, 200);
    assert!(filtered.body.contains(&staff_a_name), "{}", filtered.body);
    assert!(
        !filtered.body.contains("staff_b"),
        "only the patient's entries"
    );
    let unknown = admin
        .get("/portal/admin/audit?user=nobody@example.com")
        .await;
    assert_eq!(unknown.status, 400);
    let later = admin.get("/portal/admin/audit?from=2999-01-01").await;
    assert!(!later.body.contains("user.view"), "nothing is that late");
    // Free text in the action, the object's kind or the detail, in any case; LIKE's wildcards
    // are taken literally.
    let rows = |body: &str| body.matches("<tr><td>").count();
    let views = admin.get("/portal/admin/audit?q=USER.VIEW").await;
    assert!(rows(&views.body) > 0, "{}", views.body);
    assert!(
        views
            .body
            .split("<tr><td>")
            .skip(1)
            .all(|row| row.contains("user.view")),
        "{}",
        views.body
    );
    assert!(views.body.contains("value=\"USER.VIEW\""));
    let all = admin.get("/portal/admin/audit").await;
    assert!(rows(&views.body) < rows(&all.body));
    for literal in ["%25", "_"] {
        let none = admin
            .get(&format!("/portal/admin/audit?q=user{literal}view"))
            .await;
        assert_eq!(none.status, 200);
        assert_eq!(rows(&none.body), 0, "{literal}");
    }

    let export = app
        .client
        .get(app.url(&format!(
            "/portal/admin/audit/export?user={}",
            world.patient.id
        )))
        .header("Cookie", admin.cookie.clone().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(export.status(), 200);
    assert_eq!(export.headers()["content-type"], "text/csv; charset=utf-8");
    let text = export.text().await.unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("time,actor_id,actor,action,patient_id,patient,object_kind,object_id,detail")
    );
    let rows: Vec<&str> = lines.collect();
    assert!(!rows.is_empty());
    assert!(
        rows.iter().all(|row| row.contains(&world.patient.id)),
        "{text}"
    );
    assert!(
        rows.iter()
            .any(|row| row.contains("user.view") && row.contains(&staff_a_name))
    );
    // The export itself is recorded.
    let admin_id = world.admin.id.clone();
    let exports = actions_of(&app, &admin_id, &world.patient.id).await;
    assert!(
        exports.iter().any(|(action, _)| action == "audit.export"),
        "{exports:?}"
    );
    // Others may not read or export it.
    let mut staff = logged_in(&app, &world.staff_a).await;
    assert_eq!(staff.get("/portal/admin/audit/export").await.status, 403);
}

/// On PostgreSQL, Tacho can serve as a role that may only insert into and read the audit
/// trail (`docs/postgres/app-role.sql`, applied by the role that owns the database and runs
/// the migrations): the service works, and that role can neither delete, change nor empty the
/// trail, nor drop or disable the triggers that guard it. Runs on the PostgreSQL server of
/// `crate::helpers::postgres_server` in every pass.
#[tokio::test]
async fn the_service_role_on_postgresql_may_only_append_to_and_read_the_audit_trail() {
    let Some(admin_url) = crate::helpers::postgres_server() else {
        return;
    };
    let role = format!("tacho_test_app_{}", uuid::Uuid::new_v4().simple());
    let admin = sea_orm::Database::connect(&admin_url).await.unwrap();
    let owner_url = crate::helpers::fresh_postgres_database(&admin_url).await;
    let database = owner_url
        .rsplit_once('/')
        .map(|(_, name)| name.split('?').next().unwrap_or(name).to_owned())
        .unwrap();
    // The app role connects as itself: the owner's URL with the role's name as the user.
    let parsed = url::Url::parse(&owner_url).unwrap();
    let mut app_url = parsed.clone();
    app_url.set_username(&role).unwrap();
    app_url.set_password(None).unwrap();
    let app_url = app_url.to_string();

    // The owner migrates, then grants the app role what the documented script grants.
    tacho::store::Store::migrate_url(&owner_url).await.unwrap();
    let owner = sea_orm::Database::connect(&owner_url).await.unwrap();
    let script = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/postgres/app-role.sql"
    ))
    .unwrap()
    .replace("app_service", &role);
    owner.execute_unprepared(&script).await.unwrap();

    // The service runs as the app role, and its actions leave their records.
    let app =
        crate::helpers::spawn_unmigrated_app_with(|s| s.database_url = app_url.clone().into())
            .await;
    let world = World::new(&app).await;
    app.get(
        &format!("/users/v1/{}", world.patient.id),
        &world.staff_a.token,
    )
    .await
    .assert_ok();
    let as_app = sea_orm::Database::connect(&app_url).await.unwrap();
    let written: i64 = as_app
        .query_one_raw(Statement::from_string(
            DbBackend::Postgres,
            "SELECT COUNT(*) AS n FROM audit_events WHERE action = 'user.view'",
        ))
        .await
        .unwrap()
        .unwrap()
        .try_get("", "n")
        .unwrap();
    assert!(written >= 1, "the app role appended and reads the trail");
    let before = count(&app).await;
    for sql in [
        "DELETE FROM audit_events",
        "UPDATE audit_events SET detail = 'rewritten'",
        "TRUNCATE audit_events",
        "DROP TRIGGER audit_events_no_change ON audit_events",
        "ALTER TABLE audit_events DISABLE TRIGGER ALL",
        "DROP TABLE audit_events",
    ] {
        let refused = as_app
            .execute_unprepared(sql)
            .await
            .expect_err(sql)
            .to_string();
        assert!(
            refused.contains("permission denied") || refused.contains("must be owner"),
            "{sql}: {refused}"
        );
    }
    assert_eq!(count(&app).await, before, "the trail is whole");

    drop(app);
    as_app.close().await.ok();
    owner.close().await.ok();
    for cleanup in [
        format!("DROP DATABASE IF EXISTS \"{database}\" WITH (FORCE)"),
        format!("DROP ROLE IF EXISTS \"{role}\""),
    ] {
        admin.execute_unprepared(&cleanup).await.unwrap();
    }
}

#[tokio::test]
async fn the_audit_trails_pages_count_no_further_than_a_thousand_entries() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    // Each read of a patient's record by its physician leaves an entry.
    let path = format!("/users/v1/{}", world.patient.id);
    for _ in 0..1_001 {
        app.get(&path, &world.staff_a.token).await.assert_ok();
    }
    let mut admin = logged_in(&app, &world.admin).await;
    let first = admin.get("/portal/admin/audit").await;
    assert_eq!(first.status, 200);
    assert!(
        first
            .body
            .contains("Page 1 of more than 50 (more than 1000)"),
        "{}",
        first.body
    );
    assert!(first.body.contains("rel=\"next\""), "{}", first.body);
    // Past the last entry, a page comes back short and has no next one.
    let past = admin.get("/portal/admin/audit?page=60").await;
    assert_eq!(past.status, 200);
    assert!(!past.body.contains("rel=\"next\""), "{}", past.body);
    let viewed = records(
        &app,
        AuditFilter {
            text: Some("audit.view".into()),
            ..AuditFilter::default()
        },
    )
    .await;
    assert!(
        viewed
            .iter()
            .any(|(_, detail)| detail == "20 of more than 1000 entries from 0"),
        "{viewed:?}"
    );
}
