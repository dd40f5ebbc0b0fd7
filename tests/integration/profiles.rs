//! Profiles: merge rules and validation (contract section 4).

use serde_json::json;

use tacho_client::{
    Activity, AppInfo, Birthday, Comorbidity, DeviceInfo, DeviceType, Gender, Impediment, Profile,
    ServiceInfo,
};

use crate::helpers::{World, spawn_app};

#[tokio::test]
async fn partial_profiles_merge_into_the_stored_one() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    let first = Profile {
        country: Some("be".into()),
        city: Some("Gent".into()),
        weight: Some(68.5),
        length: Some(165.0),
        birthday: Some(Birthday {
            year: 1958,
            month: 3,
            day: 14,
        }),
        gender: Some(Gender::Female),
        comorbidities: Some(vec![Comorbidity::HeartFailure, Comorbidity::Diabetes]),
        smoker: Some(false),
        activity: Some(Activity::NotActive),
        impediments: Some(vec![Impediment::Tremor]),
        physician: Some("Dr. Peeters".into()),
        service_info: Some(ServiceInfo {
            app: Some(AppInfo {
                version: Some("3.4.1".into()),
            }),
            device: Some(DeviceInfo {
                os: Some("17.2".into()),
                device_type: Some(DeviceType::Ios),
                model: Some("iPhone 13".into()),
                manufacturer: None,
            }),
        }),
        custom_fields: Some(
            [("ward", "3B"), ("bed", "12")]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .into(),
        ),
        ..Profile::default()
    };
    assert_eq!(user.client.update_profile(&first).await.unwrap(), 1);

    // Clearing needs `null`, which a typed partial leaves out: that part speaks raw JSON.
    let second = json!({
        "comorbidities": ["COPD"], "smoker": null, "service_info": {"device": {"os": "18.0"}},
        "custom_fields": {"bed": null, "diet": "low salt"}
    });
    app.put(
        &format!("/profiles/v1?eq(id,{})", user.id),
        &user.token,
        second,
    )
    .await
    .assert_ok();

    let stored = user.client.profile().await.unwrap();
    assert_eq!(stored.id, user.id);
    let p = stored.profile;
    assert_eq!(
        p.country.as_deref(),
        Some("BE"),
        "country codes are stored upper-case"
    );
    assert_eq!(
        p.comorbidities,
        Some(vec![Comorbidity::Copd]),
        "arrays replace"
    );
    assert_eq!(p.smoker, None, "null clears");
    assert_eq!(p.gender, Some(Gender::Female));
    let device = p.service_info.as_ref().unwrap().device.as_ref().unwrap();
    assert_eq!(
        (device.os.as_deref(), device.model.as_deref()),
        (Some("18.0"), Some("iPhone 13")),
        "objects merge key by key"
    );
    assert_eq!(
        p.custom_fields,
        Some(
            [("ward", "3B"), ("diet", "low salt")]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .into()
        )
    );
    assert_eq!(p.weight, Some(68.5));
    assert!(stored.update_timestamp >= stored.creation_timestamp);
    let raw = app
        .get(&format!("/profiles/v1/{}", user.id), &user.token)
        .await;
    assert_eq!(
        raw.assert_ok()["birthday"],
        "1958-03-14",
        "birthdays are stored as YYYY-MM-DD"
    );

    let listed = app
        .get(&format!("/profiles/v1?id={}", user.id), &user.token)
        .await;
    assert_eq!(listed.body["data"][0]["city"], "Gent");
    let selected = app
        .get(
            &format!(
                "/profiles/v1?eq(id,{})&select(weight,service_info.device.os)",
                user.id
            ),
            &user.token,
        )
        .await;
    assert_eq!(
        selected.body["data"][0],
        json!({"id": user.id, "weight": 68.5, "service_info": {"device": {"os": "18.0"}}})
    );
    app.get("/profiles/v1?select(wieght)", &user.token)
        .await
        .assert_error(400, 19);
    let by_country = app.get("/profiles/v1?eq(country,BE)", &user.token).await;
    assert_eq!(by_country.body["page"]["total"], 1);
}

#[tokio::test]
async fn every_profile_rule_is_enforced() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    let path = format!("/profiles/v1?id={}", user.id);
    let cases = [
        ("gender", json!({"gender": 3})),
        ("activity", json!({"activity": "RUNNING"})),
        (
            "comorbidities",
            json!({"comorbidities": ["HEART_FAILURE", "FLU"]}),
        ),
        ("impediments", json!({"impediments": ["BLIND"]})),
        ("weight", json!({"weight": 0})),
        ("weight", json!({"weight": 501})),
        ("length", json!({"length": 301})),
        ("birthday", json!({"birthday": "2999-01-01"})),
        ("birthday", json!({"birthday": "1990-02-30"})),
        (
            "birthday",
            json!({"birthday": {"year": 1990, "month": 13, "day": 1}}),
        ),
        ("country", json!({"country": "XX"})),
        (
            "service_info.device.type",
            json!({"service_info": {"device": {"type": "windows"}}}),
        ),
        ("custom_fields", json!({"custom_fields": {"n": 5}})),
        ("smoker", json!({"smoker": "no"})),
        ("nickname", json!({"nickname": "Annie"})),
    ];
    for (field, body) in cases {
        let reply = app.put(&path, &user.token, body.clone()).await;
        reply.assert_error(400, 15);
        assert!(
            reply.body["message"].as_str().unwrap().contains(field),
            "{field}: {}",
            reply.body["message"]
        );
    }
    let untouched = app
        .get(&format!("/profiles/v1/{}", user.id), &user.token)
        .await;
    assert_eq!(
        untouched.body.as_object().unwrap().len(),
        3,
        "failed updates change nothing"
    );
}

#[tokio::test]
async fn profile_updates_need_rql_and_count_what_they_touch() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let body = json!({"city": "Leuven"});
    app.put("/profiles/v1", &world.patient.token, body.clone())
        .await
        .assert_error(400, 20);
    app.put("/profiles/v1?sort(id)", &world.patient.token, body.clone())
        .await
        .assert_error(400, 20);
    app.put(
        "/profiles/v1?eq(id,nope)",
        &world.patient.token,
        body.clone(),
    )
    .await
    .assert_error(400, 19);
    let other = format!("/profiles/v1?id={}", world.patient_b.id);
    assert_eq!(
        app.put(&other, &world.patient.token, body.clone())
            .await
            .body["records_affected"],
        0
    );
    // Staff of group A update both of its patients with one RQL query.
    let both = format!(
        "/profiles/v1?in(id,({},{}))",
        world.patient.id, world.other_patient.id
    );
    assert_eq!(
        app.put(&both, &world.staff_a.token, body.clone())
            .await
            .body["records_affected"],
        2
    );
    let leuven = app
        .get("/profiles/v1?city=Leuven", &world.admin.token)
        .await;
    assert_eq!(leuven.body["page"]["total"], 2);
    app.put(
        &format!("/profiles/v1?id={}", world.patient.id),
        &world.patient.token,
        json!([1]),
    )
    .await
    .assert_error(400, 15);
}
