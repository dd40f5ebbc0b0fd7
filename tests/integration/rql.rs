//! RQL over HTTP: the contract's query forms, paging, clamping, select, errors (section 2).

use serde_json::json;

use crate::helpers::{World, spawn_app};

#[tokio::test]
async fn contract_query_forms_work() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let token = &world.admin.token;
    let uid = &world.patient.id;
    for query in [
        format!("?id={uid}"),
        format!("?eq(id,{uid})"),
        format!("?limit(1)&sort(-id)&eq(id,{uid})"),
        format!("?sort(-creation_timestamp)&id={uid}"),
        format!("?id={uid}&select(id,email)"),
        format!("?and(eq(id,{uid}),eq(activation,true))"),
        format!("?or(eq(id,{uid}),eq(id,000000000000000000000000))"),
        format!("?(id={uid}|id=000000000000000000000000)&activation=true"),
        format!("?in(id,({uid},000000000000000000000000))"),
        "?eq(email,string:patient%2540tacho.test)".to_owned(),
        "?like(email,patient%40*)".to_owned(),
        "?eq(email,PATIENT%40tacho.test)".to_owned(),
    ] {
        let reply = app.get(&format!("/users/v1{query}"), token).await;
        let body = reply.assert_ok();
        assert_eq!(body["page"]["total"], 1, "{query}: {body}");
        assert_eq!(body["data"][0]["id"], uid.as_str(), "{query}");
    }
    let excluded = app
        .get(
            &format!("/users/v1?out(id,({uid}))&ne(activation,false)"),
            token,
        )
        .await;
    assert_eq!(excluded.body["page"]["total"], 5);
    let timestamps = app.get("/users/v1?gt(creation_timestamp,2020-01-01T00:00:00.000Z)&le(creation_timestamp,epoch:9999999999999)", token).await;
    assert_eq!(timestamps.body["page"]["total"], 6);
}

#[tokio::test]
async fn paging_clamps_and_orders() {
    let app = spawn_app().await;
    let admin = app.admin("admin").await;
    for n in 0..55 {
        app.group(&admin, &format!("group {n:02}")).await;
    }
    let page = app
        .get("/groups/v1?sort(-name)&limit(100)", &admin.token)
        .await;
    let body = page.assert_ok();
    assert_eq!(body["page"], json!({"total": 55, "offset": 0, "limit": 50}));
    assert_eq!(body["data"].as_array().unwrap().len(), 50);
    assert_eq!(body["data"][0]["name"], "group 54");
    let default = app.get("/groups/v1", &admin.token).await;
    assert_eq!(default.body["page"]["limit"], 20);
    let last = app
        .get("/groups/v1?sort(name)&limit(20,40)", &admin.token)
        .await;
    assert_eq!(
        last.body["page"],
        json!({"total": 55, "offset": 40, "limit": 20})
    );
    let names: Vec<&str> = last.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 15);
    assert_eq!(names[0], "group 40");
    let selected = app
        .get("/groups/v1?select(name)&limit(1)", &admin.token)
        .await;
    let item = selected.body["data"][0].as_object().unwrap();
    assert_eq!(item.keys().collect::<Vec<_>>(), vec!["id", "name"]);
}

#[tokio::test]
async fn bad_rql_answers_19_with_where_and_why() {
    let app = spawn_app().await;
    let admin = app.admin("admin").await;
    for (query, hint) in [
        ("eq(password_hash,x)", "password_hash"),
        ("eq(activation,maybe)", "activation"),
        ("eq(id,xyz)", "id"),
        ("eq(email", "position"),
        ("frobnicate(a,b)", "frobnicate"),
        ("sort(-password_hash)", "password_hash"),
        ("limit(ten)", "integer"),
        ("eq(creation_timestamp,yesterday)", "creation_timestamp"),
        ("contains(email,x)", "contains"),
    ] {
        let reply = app.get(&format!("/users/v1?{query}"), &admin.token).await;
        reply.assert_error(400, 19);
        assert!(
            reply.body["message"].as_str().unwrap().contains(hint),
            "{query}: {}",
            reply.body["message"]
        );
    }
    let deep = format!(
        "/users/v1?{}eq(id,x){}",
        "and(".repeat(200),
        ")".repeat(200)
    );
    app.get(&deep, &admin.token).await.assert_error(400, 19);
}

#[tokio::test]
async fn rql_never_widens_visibility() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let token = &world.patient.token;
    for query in [
        format!("?id={}", world.patient_b.id),
        format!("?or(id={},id={})", world.patient.id, world.patient_b.id),
        "?ne(id,000000000000000000000000)".to_owned(),
        "?gt(creation_timestamp,0)|gt(update_timestamp,0)".to_owned(),
    ] {
        let users = app.get(&format!("/users/v1{query}"), token).await;
        for user in users.body["data"].as_array().unwrap() {
            assert_eq!(user["id"], world.patient.id.as_str(), "{query}");
        }
        let profiles = app.get(&format!("/profiles/v1{query}"), token).await;
        for profile in profiles.body["data"].as_array().unwrap() {
            assert_eq!(profile["id"], world.patient.id.as_str(), "{query}");
        }
    }
}
