//! Public files (contract section 7).

use reqwest::Method;

use crate::helpers::{World, spawn_app, spawn_app_with};
use tacho::domain::id::Id;

#[tokio::test]
async fn pdfs_are_served_with_their_headers_and_etag() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let document = app.report(&world.patient, &id, Some("en")).await.body;
    let token = document["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned();
    let (id_part, secret) = token.split_once('-').unwrap();
    assert_eq!(id_part.len(), 24);
    assert_eq!(uuid::Uuid::parse_str(secret).unwrap().get_version_num(), 4);

    let (status, headers, pdf) = app.download(&token).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/pdf");
    let disposition = headers["content-disposition"].to_str().unwrap();
    assert!(
        disposition.starts_with("inline; filename=\"") && disposition.ends_with(".pdf\""),
        "{disposition}"
    );
    assert_eq!(
        headers["content-length"].to_str().unwrap(),
        pdf.len().to_string()
    );
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    let etag = headers["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"') && etag.len() == 66);

    let head = app
        .client
        .head(app.url(&format!("/files/v1/{token}/file")))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["etag"].to_str().unwrap(), etag);
    assert_eq!(head.headers()["content-type"], "application/pdf");
    assert!(head.bytes().await.unwrap().is_empty());

    let cached = app
        .client
        .get(app.url(&format!("/files/v1/{token}/file")))
        .header("If-None-Match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(cached.status(), 304);
    assert_eq!(cached.headers()["etag"].to_str().unwrap(), etag);

    let details = app
        .request(
            Method::GET,
            &format!("/files/v1/{token}/details"),
            None,
            None,
        )
        .await;
    let details = details.assert_ok();
    assert_eq!(details["mimetype"], "application/pdf");
    assert_eq!(details["size"], pdf.len());
    assert!(details["name"].as_str().unwrap().ends_with(".pdf"));
    assert!(
        details["creationTimestamp"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
}

#[tokio::test]
async fn bad_tokens_are_2605_or_404_and_never_echoed() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let token = app.report(&world.patient, &id, None).await.body["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned();
    for malformed in [
        "nope",
        "5f3c2b1a0d9e8f7a6b5c4d3e",
        "5f3c2b1a0d9e8f7a6b5c4d3e-not-a-uuid",
        "x-2c1f1e0a-7b6c-4d5e-8f90-a1b2c3d4e5f6",
    ] {
        for suffix in ["file", "details"] {
            let reply = app
                .request(
                    Method::GET,
                    &format!("/files/v1/{malformed}/{suffix}"),
                    None,
                    None,
                )
                .await;
            reply.assert_error(400, 2605);
            assert!(
                !reply.body["message"].as_str().unwrap().contains(malformed),
                "the token is not echoed"
            );
        }
    }
    let (file_id, _) = token.split_once('-').unwrap();
    let wrong_secret = format!("{file_id}-2c1f1e0a-7b6c-4d5e-8f90-a1b2c3d4e5f6");
    let unknown_file = "0123456789abcdef01234567-2c1f1e0a-7b6c-4d5e-8f90-a1b2c3d4e5f6";
    for unknown in [wrong_secret.as_str(), unknown_file] {
        let reply = app
            .request(
                Method::GET,
                &format!("/files/v1/{unknown}/file"),
                None,
                None,
            )
            .await;
        reply.assert_error(404, 16);
        assert!(!reply.body.to_string().contains(unknown));
    }
}

#[tokio::test]
async fn the_database_storage_shares_pdfs_between_instances() {
    let app = spawn_app_with(|s| s.file_storage = tacho::config::FileStorageKind::Database).await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let token = app.report(&world.patient, &id, None).await.body["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned();
    let other = app.second_instance().await;
    let (status, _, pdf) = other.download(&token).await;
    assert_eq!(status, 200);
    assert!(pdf.starts_with(b"%PDF"));
    let repeat = other.report(&world.patient, &id, None).await;
    assert_eq!(
        repeat.body["data"]["readFileToken"],
        token.as_str(),
        "the other instance reuses the PDF"
    );
}

/// The token of a fresh English report of the patient's `sinus_72` measurement.
async fn report_token(app: &crate::helpers::TestApp, world: &World) -> String {
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    app.report(&world.patient, &id, Some("en")).await.body["data"]["readFileToken"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_cached_pdf_is_the_same_answer_and_still_needs_its_secret() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let token = report_token(&app, &world).await;
    let (file_id, _) = token.split_once('-').unwrap();

    let (status, first_headers, pdf) = app.download(&token).await;
    assert_eq!(status, 200);
    let hot = app
        .state
        .files
        .get(&Id::parse(file_id).unwrap())
        .expect("kept in memory after a download");
    assert_eq!(&hot.contents[..], &pdf[..]);

    // Without the stored copy only memory can answer: the answer must not change.
    let stored = app
        .settings
        .data_dir
        .join("files")
        .join(&hot.file.cache_key[..2])
        .join(&hot.file.cache_key);
    let aside = stored.with_extension("aside");
    std::fs::rename(&stored, &aside).unwrap();
    let (status, headers, again) = app.download(&token).await;
    assert_eq!(status, 200);
    assert_eq!(again, pdf, "the same bytes");
    for name in [
        "content-type",
        "content-disposition",
        "content-length",
        "etag",
        "cache-control",
        "referrer-policy",
        "x-content-type-options",
    ] {
        assert_eq!(headers.get(name), first_headers.get(name), "{name}");
    }
    let etag = headers["etag"].to_str().unwrap();
    let unchanged = app
        .client
        .get(app.url(&format!("/files/v1/{token}/file")))
        .header("If-None-Match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(unchanged.status(), 304);
    assert_eq!(unchanged.headers()["etag"], etag);
    let head = app
        .client
        .head(app.url(&format!("/files/v1/{token}/file")))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(
        head.headers()["content-length"],
        first_headers["content-length"]
    );

    // A cached file is no capability of its own: a wrong secret is still 404, on both routes.
    let wrong_secret = format!("{file_id}-2c1f1e0a-7b6c-4d5e-8f90-a1b2c3d4e5f6");
    for suffix in ["file", "details"] {
        let reply = app
            .request(
                Method::GET,
                &format!("/files/v1/{wrong_secret}/{suffix}"),
                None,
                None,
            )
            .await;
        reply.assert_error(404, 16);
    }
    let upper = format!("{file_id}-{}", token[25..].to_ascii_uppercase());
    assert_eq!(
        app.download(&upper).await.2,
        pdf,
        "secrets match in any case"
    );

    // Forgotten, the file is read from the storage again; a wrong secret does not bring it back.
    std::fs::rename(&aside, &stored).unwrap();
    app.state.files.forget(&Id::parse(file_id).unwrap());
    let reply = app
        .request(
            Method::GET,
            &format!("/files/v1/{wrong_secret}/file"),
            None,
            None,
        )
        .await;
    reply.assert_error(404, 16);
    assert!(app.state.files.get(&Id::parse(file_id).unwrap()).is_none());
    assert_eq!(app.download(&token).await.2, pdf);
    assert!(app.state.files.get(&Id::parse(file_id).unwrap()).is_some());
}

#[tokio::test]
async fn the_file_cache_can_be_turned_off() {
    let app = spawn_app_with(|s| s.file_cache_bytes = 0).await;
    let world = World::new(&app).await;
    let token = report_token(&app, &world).await;
    let (file_id, _) = token.split_once('-').unwrap();
    let (status, _, pdf) = app.download(&token).await;
    assert_eq!(status, 200);
    assert!(pdf.starts_with(b"%PDF"));
    assert!(app.state.files.get(&Id::parse(file_id).unwrap()).is_none());
}

/// One row per content: when two instances finish the same render, the second to record the
/// file gets the first one's row back (same id, so tokens already handed out keep working).
#[tokio::test]
async fn a_file_recorded_twice_keeps_its_first_row() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let new = |name: &str| tacho::store::NewFile {
        cache_key: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".into(),
        name: name.into(),
        patient_id: Id::parse(&world.patient.id).unwrap(),
        mimetype: "application/pdf".into(),
        size: 4,
        sha256: "sha256".into(),
        sha1: "sha1".into(),
    };
    let record = |file: tacho::store::NewFile| {
        app.store
            .write(tacho::store::Unaudited::Renders, async |tx| {
                tx.insert_file(file).await
            })
    };
    let first = record(new("first.pdf")).await.unwrap();
    assert_eq!(first.name, "first.pdf");
    assert_eq!(first.size, 4);
    let second = record(new("second.pdf")).await.unwrap();
    assert_eq!(second, first);
}
