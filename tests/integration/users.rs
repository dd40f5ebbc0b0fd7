//! Registration, the user record, updates, enlistments, roles (contract sections 4 and 9).

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{PASSWORD, World, spawn_app};

fn registration(email: &str) -> Value {
    json!({
        "first_name": "Zoë", "last_name": "Lambert", "email": email, "password": PASSWORD,
        "phone_number": "+32 475 12 34 56", "language": "fr", "time_zone": "Europe/Brussels"
    })
}

#[tokio::test]
async fn register_creates_the_user_and_an_empty_profile() {
    let app = spawn_app().await;
    let reply = app
        .request(
            Method::POST,
            "/users/v1/register",
            None,
            Some(registration("Zoe@Example.org")),
        )
        .await;
    let user = reply.assert_ok().clone();
    assert_eq!(user["email"], "zoe@example.org");
    assert_eq!(user["language"], "FR");
    assert_eq!(user["time_zone"], "Europe/Brussels");
    assert_eq!(user["activation"], true);
    assert_eq!(user["roles"], json!([]));
    assert_eq!(user["patient_enlistments"], json!([]));
    assert_eq!(user["failed_count"], 0);
    assert!(user.get("password").is_none() && user.get("password_hash").is_none());
    let id = user["id"].as_str().unwrap();
    assert_eq!(id.len(), 24);
    assert!(user["creation_timestamp"].is_i64());

    let token = app.login("zoe@example.org").await;
    let profile = app.get(&format!("/profiles/v1/{id}"), &token).await;
    let profile = profile.assert_ok();
    assert_eq!(profile["id"], id);
    assert_eq!(
        profile.as_object().unwrap().len(),
        3,
        "only id and timestamps: {profile}"
    );
}

#[tokio::test]
async fn register_rejects_used_emails_and_bad_fields() {
    let app = spawn_app().await;
    let post = |body: Value| app.request(Method::POST, "/users/v1/register", None, Some(body));
    post(registration("zoe@example.org")).await.assert_ok();
    post(registration("ZOE@example.org"))
        .await
        .assert_error(400, 203);

    let mut missing = registration("new@example.org");
    missing.as_object_mut().unwrap().remove("last_name");
    let reply = post(missing).await;
    reply.assert_error(400, 14);
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("last_name")
    );

    for (field, value) in [
        ("email", json!("not-an-email")),
        ("password", json!("short")),
        ("language", json!("klingon")),
        ("time_zone", json!("Mars/Olympus")),
        ("phone_number", json!("call me")),
        ("first_name", json!("   ")),
        ("first_name", json!(12)),
        ("surprise", json!("field")),
    ] {
        let mut body = registration("new@example.org");
        body[field] = value;
        let reply = post(body).await;
        reply.assert_error(400, 15);
        assert!(
            reply.body["message"].as_str().unwrap().contains(field),
            "{field}: {}",
            reply.body
        );
    }
}

#[tokio::test]
async fn me_returns_the_record_with_enlistments() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let me = world.patient.client.me().await.unwrap();
    assert_eq!(me.id, world.patient.id);
    assert_eq!(me.email, world.patient.email);
    assert_eq!(
        (me.language.as_str(), me.report_language()),
        ("EN", "en".into())
    );
    assert_eq!(me.time_zone, "Europe/Brussels");
    assert!(me.activation && me.roles.is_empty());
    let enlistment = &me.patient_enlistments[0];
    assert_eq!(enlistment.group_id, world.group_a);
    assert!(!enlistment.expired);
    assert!(enlistment.expiry_timestamp.timestamp_millis() > app.clock_millis());
    let staff = world.staff_a.client.me().await.unwrap();
    let staff_enlistment = &staff.staff_enlistments[0];
    assert_eq!(staff_enlistment.group_id, world.group_a);
    assert_eq!(staff_enlistment.roles, vec!["physician".to_owned()]);
    let admin = world.admin.client.me().await.unwrap();
    assert_eq!(admin.roles, vec!["admin".to_owned()]);
}

#[tokio::test]
async fn users_update_their_own_fields() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    let path = format!("/users/v1/{}", user.id);
    let reply = app
        .put(&path, &user.token, json!({"first_name": "Anne", "language": "zh", "time_zone": "Asia/Tokyo", "phone_number": "+81 3 1234 5678"}))
        .await;
    let body = reply.assert_ok();
    assert_eq!(
        (
            body["first_name"].as_str(),
            body["language"].as_str(),
            body["time_zone"].as_str()
        ),
        (Some("Anne"), Some("ZH"), Some("Asia/Tokyo"))
    );
    assert_eq!(body["phone_number"], "+81 3 1234 5678");
    assert!(body["update_timestamp"].as_i64() >= body["creation_timestamp"].as_i64());
    let cleared = app
        .put(&path, &user.token, json!({"phone_number": null}))
        .await;
    assert_eq!(cleared.assert_ok().get("phone_number"), Some(&Value::Null));
    app.put(&path, &user.token, json!({"language": "xx"}))
        .await
        .assert_error(400, 15);
    app.put(&path, &user.token, json!({"time_zone": "Europe/Atlantis"}))
        .await
        .assert_error(400, 15);
    app.put(&path, &user.token, json!({"email": "new@x.org"}))
        .await
        .assert_error(400, 15);
    app.put(&path, &user.token, json!({"first_name": null}))
        .await
        .assert_error(400, 15);
}

#[tokio::test]
async fn prescriptions_start_extend_and_end() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let path = format!("/users/v1/{}/patient_enlistments", world.patient.id);
    let later = app.clock_millis() + 90 * 24 * 3600 * 1000;
    let extended = app
        .post(
            &path,
            &world.staff_a.token,
            json!({"group_id": world.group_a, "expiry_timestamp": later}),
        )
        .await;
    let enlistments = extended.assert_ok()["patient_enlistments"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        enlistments.len(),
        1,
        "an active prescription is extended, not duplicated"
    );
    assert_eq!(enlistments[0]["expiry_timestamp"], later);

    let past = app
        .post(
            &path,
            &world.admin.token,
            json!({"group_id": world.group_a, "expiry_timestamp": 1000}),
        )
        .await;
    past.assert_error(400, 15);
    let no_group = app
        .post(
            &path,
            &world.admin.token,
            json!({"group_id": "0123456789abcdef01234567", "expiry_timestamp": later}),
        )
        .await;
    no_group.assert_error(404, 16);
    app.post(
        &path,
        &world.admin.token,
        json!({"group_id": "nope", "expiry_timestamp": later}),
    )
    .await
    .assert_error(400, 12);
    app.post(
        &path,
        &world.admin.token,
        json!({"group_id": world.group_a}),
    )
    .await
    .assert_error(400, 14);

    let ended = app
        .delete(
            &format!("{path}/{}", world.group_a),
            &world.admin.token,
            None,
        )
        .await;
    assert_eq!(ended.assert_ok()["patient_enlistments"][0]["expired"], true);
    app.delete(
        &format!("{path}/{}", world.group_a),
        &world.admin.token,
        None,
    )
    .await
    .assert_error(404, 16);
}

#[tokio::test]
async fn staff_enlistments_and_roles_are_managed_by_admins() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let staff_path = format!("/users/v1/{}/staff_enlistments", world.other_patient.id);
    let added = app
        .post(
            &staff_path,
            &world.admin.token,
            json!({"group_id": world.group_b, "roles": ["nurse"]}),
        )
        .await;
    assert_eq!(
        added.assert_ok()["staff_enlistments"][0]["roles"],
        json!(["nurse"])
    );
    let bad_role = app
        .post(
            &staff_path,
            &world.admin.token,
            json!({"group_id": world.group_b, "roles": ["drop table"]}),
        )
        .await;
    bad_role.assert_error(400, 15);
    let removed = app
        .delete(
            &format!("{staff_path}/{}", world.group_b),
            &world.admin.token,
            None,
        )
        .await;
    assert_eq!(removed.assert_ok()["staff_enlistments"], json!([]));

    let roles_path = format!("/users/v1/{}/roles", world.staff_a.id);
    let granted = app
        .post(&roles_path, &world.admin.token, json!({"roles": ["admin"]}))
        .await;
    assert_eq!(granted.assert_ok()["roles"], json!(["admin"]));
    // The new administrator sees everyone at once.
    let everyone = app.get("/users/v1", &world.staff_a.token).await;
    assert_eq!(everyone.body["page"]["total"], 6);
    app.post(&roles_path, &world.admin.token, json!({"roles": ["root"]}))
        .await
        .assert_error(400, 15);
    let revoked = app
        .delete(
            &roles_path,
            &world.admin.token,
            Some(json!({"roles": ["admin"]})),
        )
        .await;
    assert_eq!(revoked.assert_ok()["roles"], json!([]));
}

#[tokio::test]
async fn listing_users_follows_visibility() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let ids = |reply: &crate::helpers::Reply| -> Vec<String> {
        reply.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let own = app.get("/users/v1", &world.patient.token).await;
    assert_eq!(ids(&own), vec![world.patient.id.clone()]);
    let staff = app
        .get("/users/v1?sort(+email)", &world.staff_a.token)
        .await;
    let mut expected = vec![
        world.other_patient.id.clone(),
        world.patient.id.clone(),
        world.staff_a.id.clone(),
    ];
    assert_eq!(staff.body["page"]["total"], 3);
    expected.sort();
    let mut got = ids(&staff);
    got.sort();
    assert_eq!(got, expected);
    let admin = app.get("/users/v1?skipCount()", &world.admin.token).await;
    assert!(admin.body["page"].get("total").is_none());
    assert_eq!(ids(&admin).len(), 6);
}

/// The fields of interface.md 2.4, every one of them on every user record.
const RECORD_FIELDS: [&str; 15] = [
    "id",
    "first_name",
    "last_name",
    "language",
    "time_zone",
    "email",
    "phone_number",
    "activation",
    "patient_enlistments",
    "staff_enlistments",
    "last_failed_timestamp",
    "failed_count",
    "creation_timestamp",
    "update_timestamp",
    "profile_image",
];

#[track_caller]
fn assert_full_record(record: &Value, what: &str) {
    let missing: Vec<&str> = RECORD_FIELDS
        .iter()
        .copied()
        .filter(|f| record.get(f).is_none())
        .collect();
    assert!(missing.is_empty(), "{what} lacks {missing:?}: {record}");
}

#[tokio::test]
async fn every_user_record_answers_every_field_of_the_interface_unset_ones_as_null() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let patient = &world.patient;
    let me = app.get("/users/v1/me", &patient.token).await;
    let me = me.assert_ok();
    assert_full_record(me, "me");
    for unset in ["phone_number", "last_failed_timestamp", "profile_image"] {
        assert_eq!(me[unset], Value::Null, "{unset}");
    }
    assert_eq!(me["failed_count"], 0);

    let by_id = format!("/users/v1/{}", patient.id);
    assert_full_record(
        app.get(&by_id, &world.staff_a.token).await.assert_ok(),
        "by id",
    );
    let list = app.get("/users/v1", &world.admin.token).await;
    let list = list.assert_ok()["data"].as_array().unwrap().clone();
    assert_eq!(list.len(), 6);
    for record in &list {
        assert_full_record(record, "a list item");
    }
    let registered = app
        .request(
            Method::POST,
            "/users/v1/register",
            None,
            Some(registration("new@example.org")),
        )
        .await;
    assert_full_record(registered.assert_ok(), "a registration");
    let update = json!({"first_name": "Pat"});
    let updated = app.put(&by_id, &patient.token, update).await;
    assert_full_record(updated.assert_ok(), "an update");

    // Once set, the same fields carry their values.
    app.password_grant(&patient.email, "wrong password").await;
    let me = app.get("/users/v1/me", &patient.token).await;
    assert!(me.body["last_failed_timestamp"].is_i64(), "{}", me.body);
    assert_eq!(me.body["failed_count"], 1);
}
