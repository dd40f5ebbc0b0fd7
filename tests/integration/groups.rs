//! Groups (contract section 9).

use serde_json::json;

use crate::helpers::{World, spawn_app};

#[tokio::test]
async fn admins_create_groups_and_members_see_theirs() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let created = app
        .post(
            "/groups/v1",
            &world.admin.token,
            json!({"name": "  Night shift ", "description": "after hours"}),
        )
        .await;
    let group = created.assert_ok();
    assert_eq!(group["name"], "Night shift");
    assert_eq!(group["description"], "after hours");
    assert_eq!(group["id"].as_str().unwrap().len(), 24);
    assert!(group["creation_timestamp"].is_i64());
    app.post("/groups/v1", &world.admin.token, json!({"name": ""}))
        .await
        .assert_error(400, 15);
    app.post("/groups/v1", &world.admin.token, json!({}))
        .await
        .assert_error(400, 14);
    app.post("/groups/v1", &world.staff_a.token, json!({"name": "Mine"}))
        .await
        .assert_error(403, 10);

    let names = |reply: &crate::helpers::Reply| -> Vec<String> {
        reply.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(&app.get("/groups/v1", &world.patient.token).await),
        vec!["Group A"]
    );
    assert_eq!(
        names(&app.get("/groups/v1", &world.staff_b.token).await),
        vec!["Group B"]
    );
    assert_eq!(
        app.get("/groups/v1", &world.admin.token).await.body["page"]["total"],
        3
    );
    let by_name = app
        .get("/groups/v1?eq(name,Group%20B)", &world.admin.token)
        .await;
    assert_eq!(by_name.body["data"][0]["id"], world.group_b.as_str());
}
