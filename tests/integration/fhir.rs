//! `/fhir/R4`: an EHR-side client pages through a patient's record, reads each result as a
//! coded Observation and each report's PDF through `presentedForm`, and every resource it
//! gets validates against the R4 core definitions with an independent validator (Medplum's,
//! `tests/fhir`, installed by `scripts/test`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

use base64::Engine;
use serde_json::{Value, json};
use sha1::Digest;
use tacho::domain::id::Id;
use tacho::store::AuditFilter;

use crate::audit::records;
use crate::helpers::{TestApp, World, spawn_app};

const DAY: i64 = 24 * 3600 * 1000;

/// The validator's script: `TACHO_FHIR_VALIDATOR` (set by `scripts/test`), or installed here
/// from `tests/fhir` into `target/fhir-validator` with npm.
fn validator() -> PathBuf {
    if let Some(path) = std::env::var_os("TACHO_FHIR_VALIDATOR") {
        return PathBuf::from(path);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target/fhir-validator");
    let script = dir.join("validate.mjs");
    if !dir.join("node_modules/@medplum/core").exists() {
        std::fs::create_dir_all(&dir).unwrap();
        for file in ["package.json", "package-lock.json", "validate.mjs"] {
            std::fs::copy(root.join("tests/fhir").join(file), dir.join(file)).unwrap();
        }
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .status()
            .expect("npm must be on the path to install the FHIR validator");
        assert!(status.success(), "npm ci of the FHIR validator failed");
    }
    script
}

/// Validates every resource; fails with the validator's report.
fn assert_valid(resources: &[(String, Value)]) {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (name, resource) in resources {
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, serde_json::to_vec(resource).unwrap()).unwrap();
        files.push(path);
    }
    let output = Command::new("node")
        .arg(validator())
        .args(&files)
        .output()
        .expect("node must be on the path to validate FHIR resources");
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "FHIR validation failed:\n{report}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(report.contains("0 failed"), "{report}");
}

async fn fhir(app: &TestApp, path: &str, token: &str) -> (u16, Value) {
    let response = app
        .client
        .get(app.url(path))
        .bearer_auth(token)
        .header("Accept", "application/fhir+json")
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert_eq!(kind, "application/fhir+json", "{path}");
    (status, response.json().await.unwrap())
}

async fn read(app: &TestApp, path: &str, token: &str) -> Value {
    let (status, body) = fhir(app, path, token).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

/// The path and query of an absolute link of this server.
fn path_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest[rest.find('/').unwrap()..].to_owned()
}

/// The PDF an attachment (`presentedForm`) points at, checked against the size and SHA-1 the
/// attachment states.
async fn attached_pdf(app: &TestApp, form: &Value, token: &str) -> Vec<u8> {
    let pdf = app
        .client
        .get(app.url(&path_of(form["url"].as_str().unwrap())))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(pdf.status(), 200);
    assert_eq!(pdf.headers()["content-type"], "application/pdf");
    let pdf = pdf.bytes().await.unwrap().to_vec();
    assert!(pdf.starts_with(b"%PDF"));
    assert_eq!(form["size"], pdf.len());
    assert_eq!(
        form["hash"],
        base64::engine::general_purpose::STANDARD.encode(sha1::Sha1::digest(&pdf))
    );
    pdf
}

fn link(bundle: &Value, relation: &str) -> Option<String> {
    bundle["link"]
        .as_array()?
        .iter()
        .find(|l| l["relation"] == relation)
        .map(|l| path_of(l["url"].as_str().unwrap()))
}

fn resources(bundle: &Value) -> Vec<Value> {
    bundle["entry"]
        .as_array()
        .map(|entries| entries.iter().map(|e| e["resource"].clone()).collect())
        .unwrap_or_default()
}

fn coding(concept: &Value) -> (String, String) {
    let c = &concept["coding"][0];
    (
        c["system"].as_str().unwrap().to_owned(),
        c["code"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test]
async fn an_ehr_client_pages_a_record_reads_coded_results_and_pdfs_and_all_of_it_validates() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let (patient, staff) = (&world.patient, &world.staff_a);
    app.put(
        &format!("/profiles/v1?eq(id,{})", patient.id),
        &patient.token,
        json!({"birthday": "1961-04-12", "gender": 2}),
    )
    .await
    .assert_ok();

    // Three results whose truth is known: a regular series at 72 bpm, an irregularly
    // irregular one at 110 bpm, and a recording with no pulse in it.
    let now = app.clock_millis();
    let regular = app
        .measure_at(patient, now - 3 * DAY, 72.0, "normal", &["palpitations"])
        .await;
    let irregular = app
        .measure_at(patient, now - 2 * DAY, 110.0, "irregular", &[])
        .await;
    let unreadable = app.measurement_id(patient, "no_heartrate").await;
    // A report of the regular one, then the physician's conclusion, which amends it.
    let document = app.report(staff, &regular, Some("nl")).await;
    let report_id = document.assert_ok()["id"].as_str().unwrap().to_owned();
    app.review(staff, &regular).await;
    let periodic = app
        .post(
            "/reports/v1",
            &staff.token,
            json!({"user_id": patient.id, "period_start_timestamp": now - 7 * DAY, "period_end_timestamp": now}),
        )
        .await;
    let periodic_id = periodic.assert_ok()["id"].as_str().unwrap().to_owned();

    let mut seen: Vec<(String, Value)> = Vec::new();
    let token = &staff.token;

    // What is served, exactly.
    let metadata = read(&app, "/fhir/R4/metadata", token).await;
    assert_eq!(metadata["resourceType"], "CapabilityStatement");
    assert_eq!(metadata["fhirVersion"], "4.0.1");
    let served: BTreeSet<&str> = metadata["rest"][0]["resource"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        served,
        BTreeSet::from([
            "Binary",
            "Device",
            "DiagnosticReport",
            "DocumentReference",
            "Observation",
            "Patient"
        ])
    );
    seen.push(("metadata".into(), metadata));

    // The Patient, by id and by identifier.
    let record = read(&app, &format!("/fhir/R4/Patient/{}", patient.id), token).await;
    assert_eq!(record["birthDate"], "1961-04-12");
    assert_eq!(record["gender"], "female");
    assert_eq!(record["identifier"][0]["system"], "urn:tacho:user-id");
    assert_eq!(record["identifier"][0]["value"], patient.id.as_str());
    assert_eq!(
        record["communication"][0]["language"]["coding"][0]["code"],
        "en"
    );
    let found = read(
        &app,
        &format!(
            "/fhir/R4/Patient?identifier=urn:tacho:user-id|{}",
            patient.id
        ),
        token,
    )
    .await;
    assert_eq!(found["total"], 1);
    assert_eq!(resources(&found)[0]["id"], patient.id.as_str());
    seen.push(("patient".into(), record));
    seen.push(("patient-search".into(), found));

    // Heart rates, against the rates the series were made at.
    let rates = read(
        &app,
        &format!(
            "/fhir/R4/Observation?patient=Patient/{}&code=http://loinc.org|8867-4",
            patient.id
        ),
        token,
    )
    .await;
    assert_eq!(rates["total"], 3);
    let by_measurement: BTreeMap<String, Value> = resources(&rates)
        .into_iter()
        .map(|o| {
            (
                o["id"]
                    .as_str()
                    .unwrap()
                    .trim_end_matches("-heart-rate")
                    .to_owned(),
                o,
            )
        })
        .collect();
    // A resource says the same last change whether it is read or found.
    let read_again = read(
        &app,
        &format!("/fhir/R4/Observation/{regular}-heart-rate"),
        token,
    )
    .await;
    assert_eq!(
        read_again["meta"]["lastUpdated"],
        by_measurement[regular.as_str()]["meta"]["lastUpdated"]
    );
    for (id, rate) in [(&regular, 72.0), (&irregular, 110.0)] {
        let o = &by_measurement[id.as_str()];
        assert_eq!(
            coding(&o["code"]),
            ("http://loinc.org".into(), "8867-4".into())
        );
        assert_eq!(o["valueQuantity"]["system"], "http://unitsofmeasure.org");
        assert_eq!(o["valueQuantity"]["code"], "/min");
        let value = o["valueQuantity"]["value"].as_f64().unwrap();
        assert!(
            (value - rate).abs() <= 2.0,
            "{value} bpm for a series at {rate}"
        );
        assert_eq!(o["category"][0]["coding"][0]["code"], "vital-signs");
        assert_eq!(o["subject"]["reference"], format!("Patient/{}", patient.id));
        // In the patient's zone (Europe/Brussels), with its offset.
        let at = o["effectiveDateTime"].as_str().unwrap();
        assert!(at.ends_with("+01:00") || at.ends_with("+02:00"), "{at}");
    }
    // An unreadable recording has no rate, and says why.
    let none = &by_measurement[unreadable.as_str()];
    assert!(none.get("valueQuantity").is_none(), "{none}");
    assert_eq!(coding(&none["dataAbsentReason"]).1, "error");
    assert_eq!(coding(&none["interpretation"][0]).1, "IND");
    seen.push(("heart-rates".into(), rates));

    // Rhythms: SNOMED CT, from the analysis; the physician's conclusion with its performer.
    let rhythm = read(
        &app,
        &format!("/fhir/R4/Observation/{irregular}-rhythm"),
        token,
    )
    .await;
    assert_eq!(
        coding(&rhythm["code"]),
        ("http://loinc.org".into(), "8884-9".into())
    );
    assert_eq!(
        coding(&rhythm["valueCodeableConcept"]),
        ("http://snomed.info/sct".into(), "49436004".into())
    );
    assert!(
        rhythm["note"][0]["text"]
            .as_str()
            .unwrap()
            .contains("not a diagnosis")
    );
    let unread_rhythm = read(
        &app,
        &format!("/fhir/R4/Observation/{unreadable}-rhythm"),
        token,
    )
    .await;
    assert!(unread_rhythm.get("valueCodeableConcept").is_none());
    let conclusion = read(
        &app,
        &format!("/fhir/R4/Observation/{regular}-conclusion"),
        token,
    )
    .await;
    assert_eq!(conclusion["status"], "final");
    assert_eq!(
        coding(&conclusion["valueCodeableConcept"]),
        ("http://snomed.info/sct".into(), "426783006".into())
    );
    assert_eq!(
        conclusion["performer"][0]["identifier"]["value"],
        staff.id.as_str()
    );
    let pending = read(
        &app,
        &format!("/fhir/R4/Observation/{irregular}-conclusion"),
        token,
    )
    .await;
    assert_eq!(pending["status"], "registered");
    let sdnn = read(
        &app,
        &format!("/fhir/R4/Observation/{irregular}-sdnn"),
        token,
    )
    .await;
    assert_eq!(coding(&sdnn["code"]).1, "80404-7");
    assert_eq!(sdnn["valueQuantity"]["code"], "ms");
    let symptoms = read(
        &app,
        &format!("/fhir/R4/Observation/{regular}-symptoms"),
        token,
    )
    .await;
    assert_eq!(symptoms["valueString"], "palpitations");
    let device = read(
        &app,
        &sdnn["device"]["reference"]
            .as_str()
            .map(|r| format!("/fhir/R4/{r}"))
            .unwrap(),
        token,
    )
    .await;
    assert_eq!(device["manufacturer"], "Tacho");
    for (name, r) in [
        ("rhythm", rhythm),
        ("unread-rhythm", unread_rhythm),
        ("conclusion", conclusion),
        ("pending", pending),
        ("sdnn", sdnn),
        ("symptoms", symptoms),
        ("device", device),
    ] {
        seen.push((name.into(), r));
    }

    // Reports: the measurement's (amended by the review after it) and the periodic one.
    let reports = read(
        &app,
        &format!("/fhir/R4/DiagnosticReport?patient={}", patient.id),
        token,
    )
    .await;
    assert_eq!(reports["total"], 2);
    let listed: BTreeMap<String, Value> = resources(&reports)
        .into_iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r))
        .collect();
    let measured = &listed[&report_id];
    assert_eq!(measured["status"], "amended");
    assert_eq!(
        coding(&measured["category"][0]),
        (
            "http://terminology.hl7.org/CodeSystem/v2-0074".into(),
            "EC".into()
        )
    );
    assert_eq!(coding(&measured["conclusionCode"][0]).1, "426783006");
    assert_eq!(measured["result"].as_array().unwrap().len(), 8);
    let form = &measured["presentedForm"][0];
    assert_eq!(form["contentType"], "application/pdf");
    assert_eq!(form["language"], "nl");
    let pdf = attached_pdf(&app, form, token).await;
    let binary = read(&app, &path_of(form["url"].as_str().unwrap()), token).await;
    assert_eq!(binary["resourceType"], "Binary");
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(binary["data"].as_str().unwrap())
            .unwrap(),
        pdf
    );
    assert!(listed[&periodic_id]["effectivePeriod"]["start"].is_string());
    // The periodic report's results: the rhythm of each analysed measurement of its period,
    // each a resource the reader can read (the unreadable one has no Observations).
    let results: Vec<String> = listed[&periodic_id]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["reference"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        results,
        [
            format!("Observation/{regular}-rhythm"),
            format!("Observation/{irregular}-rhythm")
        ]
    );
    for reference in &results {
        let observation = read(&app, &format!("/fhir/R4/{reference}"), token).await;
        assert_eq!(observation["code"]["coding"][0]["code"], "8884-9");
    }
    // Nobody had opened the periodic report's PDF: it is made for its attachment, whose size
    // and hash are those of what its Binary serves.
    let form = &listed[&periodic_id]["presentedForm"][0];
    attached_pdf(&app, form, token).await;
    let only_periodic = read(
        &app,
        &format!(
            "/fhir/R4/DiagnosticReport?patient={}&category=urn:tacho:codes|periodic-report",
            patient.id
        ),
        token,
    )
    .await;
    assert_eq!(only_periodic["total"], 1);
    let documents = read(
        &app,
        &format!("/fhir/R4/DocumentReference?patient={}", patient.id),
        token,
    )
    .await;
    assert_eq!(documents["total"], 2);
    for (name, r) in [
        ("reports", reports),
        ("binary", binary),
        ("documents", documents),
    ] {
        seen.push((name.into(), r));
    }

    // The whole record, a measurement per page, by the `next` links.
    let mut page = Some(format!(
        "/fhir/R4/Patient/{}/$everything?_count=1",
        patient.id
    ));
    let mut everything: Vec<Value> = Vec::new();
    let mut pages = 0;
    while let Some(path) = page {
        let bundle = read(&app, &path, token).await;
        assert_eq!(bundle["type"], "searchset");
        page = link(&bundle, "next");
        everything.extend(resources(&bundle));
        seen.push((format!("everything-{pages}"), bundle));
        pages += 1;
        assert!(pages < 10, "the pages never end");
    }
    // Three measurements and a periodic report, one per page.
    assert_eq!(pages, 4);
    let ids: Vec<String> = everything
        .iter()
        .filter(|r| r["resourceType"] != "Device")
        .map(|r| {
            format!(
                "{}/{}",
                r["resourceType"].as_str().unwrap(),
                r["id"].as_str().unwrap()
            )
        })
        .collect();
    let unique: BTreeSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "a resource twice: {ids:?}");
    let count = |kind: &str| {
        everything
            .iter()
            .filter(|r| r["resourceType"] == kind)
            .count()
    };
    assert_eq!(count("Patient"), 1);
    assert_eq!(count("Observation"), 3 * 8);
    assert_eq!(count("DiagnosticReport"), 2);
    assert_eq!(count("DocumentReference"), 2);

    assert_valid(&seen);

    // The same through the Rust SDK: every page of the record, and each report's PDF as its
    // attachment describes it.
    let mut page = staff.client.fhir_everything(&patient.id, 2).await.unwrap();
    let mut observations = page.observations().count();
    while let Some(next) = page.next().await.unwrap() {
        page = next;
        observations += page.observations().count();
    }
    assert_eq!(observations, 3 * 8);
    let reports = staff
        .client
        .fhir_diagnostic_reports(&patient.id, 10)
        .await
        .unwrap();
    assert_eq!(reports.total, Some(2));
    let report = reports
        .diagnostic_reports()
        .find(|r| r.id == report_id)
        .expect("the measurement's report");
    assert_eq!(report.status, "amended");
    let attachment = &report.presented_form[0];
    let bytes = staff.client.fhir_attachment(attachment).await.unwrap();
    assert_eq!(Some(bytes.len() as u64), attachment.size);
    assert_eq!(
        attachment.hash.as_deref(),
        Some(
            base64::engine::general_purpose::STANDARD
                .encode(sha1::Sha1::digest(&bytes))
                .as_str()
        )
    );

    // Every read was audited, for the physician, about the patient.
    let trail = records(
        &app,
        AuditFilter {
            patient: Some(Id::parse(&patient.id).unwrap()),
            actor: Some(Id::parse(&staff.id).unwrap()),
            ..AuditFilter::default()
        },
    )
    .await;
    let fhir_reads = trail
        .iter()
        .filter(|(action, _)| action == "fhir.read")
        .count();
    assert!(fhir_reads >= 10, "{trail:?}");
}

#[tokio::test]
async fn errors_are_operation_outcomes_and_the_access_rules_hold() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let measurement = app.measurement_id(&world.patient, "sinus_72").await;
    let mut outcomes = Vec::new();

    // No token; a patient another group cares for; an unknown parameter; a bad date.
    let response = app
        .client
        .get(app.url(&format!("/fhir/R4/Patient/{}", world.patient.id)))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(response.headers()["content-type"], "application/fhir+json");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["resourceType"], "OperationOutcome");
    assert_eq!(body["issue"][0]["code"], "login");
    outcomes.push(("unauthenticated".to_owned(), body));

    for (who, path) in [
        (
            &world.staff_b,
            format!("/fhir/R4/Patient/{}", world.patient.id),
        ),
        (
            &world.staff_b,
            format!("/fhir/R4/Observation/{measurement}-heart-rate"),
        ),
        (
            &world.other_patient,
            format!("/fhir/R4/Patient/{}/$everything", world.patient.id),
        ),
        (&world.staff_b, "/fhir/R4/Patient/not-an-id".to_owned()),
    ] {
        let (status, body) = fhir(&app, &path, &who.token).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert_eq!(body["issue"][0]["code"], "not-found");
        outcomes.push(("not-found".to_owned(), body));
    }
    // The Rust SDK hands the OperationOutcome over as it is.
    let refused = world
        .staff_b
        .client
        .fhir_everything(&world.patient.id, 10)
        .await
        .expect_err("another group's patient");
    let tacho_client::Error::Fhir(outcome) = refused else {
        panic!("an OperationOutcome: {refused:?}")
    };
    assert_eq!((outcome.status, outcome.code()), (404, Some("not-found")));
    // An access token that expired meanwhile is refreshed, as on the rest of the API.
    app.clock.advance(chrono::Duration::hours(2));
    let reports = world
        .staff_a
        .client
        .fhir_diagnostic_reports(&world.patient.id, 10)
        .await
        .expect("read after a refresh");
    assert_eq!(reports.total, Some(0));
    app.clock.advance(chrono::Duration::hours(-2));

    // A search the reader may not see is empty, never a leak.
    let (status, body) = fhir(
        &app,
        &format!("/fhir/R4/Observation?patient={}", world.patient.id),
        &world.staff_b.token,
    )
    .await;
    assert_eq!(status, 404, "{body}");

    let id = &world.patient.id;
    for (path, code) in [
        (
            format!("/fhir/R4/Observation?patient={id}&name=x"),
            "not-supported",
        ),
        (
            format!("/fhir/R4/Observation?patient={id}&date=yesterday"),
            "invalid",
        ),
        (
            format!("/fhir/R4/Observation?patient={id}&_sort=name"),
            "invalid",
        ),
        ("/fhir/R4/Observation?code=8867-4".to_owned(), "invalid"),
        (
            format!("/fhir/R4/DocumentReference?patient={id}&category=EC"),
            "not-supported",
        ),
    ] {
        let (status, body) = fhir(&app, &path, &world.staff_a.token).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["issue"][0]["code"], code, "{path}");
        outcomes.push(("bad-search".to_owned(), body));
    }
    // Their own record, to the patient.
    let own = read(
        &app,
        &format!("/fhir/R4/Observation?patient={id}&_count=2"),
        &world.patient.token,
    )
    .await;
    assert_eq!(own["total"], 8);
    assert_eq!(resources(&own).len(), 2);
    assert!(link(&own, "next").is_some());
    outcomes.push(("own".to_owned(), own));
    let outcomes: Vec<(String, Value)> = outcomes
        .into_iter()
        .enumerate()
        .map(|(i, (name, body))| (format!("{name}-{i}"), body))
        .collect();
    assert_valid(&outcomes);
}

/// The parts of a resource that do not change from one run to the next (no ids, no times), with
/// every reference named by what it points at: `Patient`, `Observation/<n>-<kind>` (the `n`th
/// measurement, oldest first), `Device/<n>-phone`, `Device/tacho-analysis-*`.
fn golden_projection(resource: &Value, measurements: &[String], patient: &str) -> Value {
    let name = |text: &str| -> String {
        let mut text = text.replace(patient, "<patient>");
        for (n, id) in measurements.iter().enumerate() {
            text = text.replace(id, &format!("<m{}>", n + 1));
        }
        text
    };
    let codings = |concept: &Value| -> Value {
        concept["coding"]
            .as_array()
            .map(|codings| {
                codings
                    .iter()
                    .map(|c| {
                        json!(format!(
                            "{}|{}",
                            c["system"].as_str().unwrap_or(""),
                            c["code"].as_str().unwrap_or("")
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let reference = |value: &Value| name(value["reference"].as_str().unwrap_or(""));
    match resource["resourceType"].as_str().unwrap_or("") {
        "Patient" => json!({
            "resourceType": "Patient",
            "gender": resource["gender"],
            "birthDate": resource["birthDate"],
            "language": codings(&resource["communication"][0]["language"]),
            "identifier": resource["identifier"].as_array().map(|ids| ids.iter().map(|i| json!(i["system"])).collect::<Vec<_>>()),
        }),
        "Observation" => json!({
            "resourceType": "Observation",
            "id": name(resource["id"].as_str().unwrap_or("")),
            "status": resource["status"],
            "category": resource["category"].as_array().map(|c| c.iter().map(codings).collect::<Vec<_>>()),
            "code": codings(&resource["code"]),
            "value": resource.get("valueQuantity").map(|q| json!({
                "value": q["value"], "unit": q["unit"], "system": q["system"], "code": q["code"],
            })).or_else(|| resource.get("valueCodeableConcept").map(codings))
              .or_else(|| resource.get("valueString").cloned()),
            "dataAbsentReason": resource.get("dataAbsentReason").map(codings),
            "interpretation": resource["interpretation"].as_array().map(|i| i.iter().map(codings).collect::<Vec<_>>()),
            "subject": reference(&resource["subject"]),
            "device": resource.get("device").map(reference),
            "performer": resource["performer"].as_array().map(|p| p.len()),
        }),
        "Device" => json!({
            "resourceType": "Device",
            "id": name(resource["id"].as_str().unwrap_or("")),
            "type": codings(&resource["type"]),
            "patient": resource.get("patient").map(reference),
        }),
        other => json!({"resourceType": other}),
    }
}

#[tokio::test]
async fn the_demo_patients_record_matches_its_golden_file() {
    let app = spawn_app().await;
    tacho::demo::seed(&app.store, app.operator.auth.hasher())
        .await
        .unwrap();
    let token = app.demo_token("anna@tacho.test").await;
    let me = app.get("/users/v1/me", &token).await;
    let patient = me.assert_ok()["id"].as_str().unwrap().to_owned();
    let listed = app
        .get(
            "/data/v1/measurements/documents?sort(data.measurement_timestamp)&limit(50)",
            &token,
        )
        .await;
    let measurements: Vec<String> = listed.assert_ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(measurements.len(), 4);
    let everything = read(
        &app,
        &format!("/fhir/R4/Patient/{patient}/$everything?_count=100"),
        &token,
    )
    .await;
    let mut projected: Vec<Value> = resources(&everything)
        .iter()
        .map(|r| golden_projection(r, &measurements, &patient))
        .collect();
    projected.sort_by_key(|v| v.to_string());
    let actual = serde_json::to_string_pretty(&projected).unwrap() + "\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fhir_demo_anna.golden.json");
    if std::env::var("TACHO_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &actual).unwrap();
    }
    let golden = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} ({e}); TACHO_BLESS=1 writes it", path.display()));
    assert!(
        golden == actual,
        "the demo patient's FHIR record changed; if on purpose, run with TACHO_BLESS=1 and review the diff of {}:\n{actual}",
        path.display()
    );
}
