//! Integration tests of the patient's rights over their data: export.
//!
//! A patient's whole record as one ZIP (`GET /users/v1/{id}/export`, and the portal's links),
//! unzipped and held against what every other door says of the same record: the measurements
//! as the API reports them and as the portal lists them, each PDF as its own download route
//! gives it, the FHIR Bundle through an independent validator, the audit trail, and who may
//! ask and how often.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::{Cursor, Read};
use std::path::PathBuf;
use std::process::Command;

use chrono::{Duration, SecondsFormat, TimeZone, Utc};
use chrono_tz::Tz;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use tacho::domain::id::Id;
use tacho::store::AuditFilter;

use crate::audit::records;
use crate::helpers::{TestApp, World, spawn_app};
use crate::portal::{Browser, logged_in};

const DAY: i64 = 86_400_000;

/// One entry of an archive: its bytes and how it was stored.
struct Entry {
    bytes: Vec<u8>,
    method: zip::CompressionMethod,
}

/// An archive's entries by name, read with the `zip` crate's reader.
fn unzip(bytes: &[u8]) -> BTreeMap<String, Entry> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).expect("a readable ZIP");
    let mut entries = BTreeMap::new();
    for index in 0..archive.len() {
        let mut file = archive.by_index(index).expect("an entry");
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .expect("its contents, CRC checked");
        let method = file.compression();
        let name = file.name().expect("a UTF-8 name").into_owned();
        entries.insert(name, Entry { bytes, method });
    }
    entries
}

/// A download's status, headers and bytes.
struct Download {
    status: StatusCode,
    headers: HeaderMap,
    bytes: Vec<u8>,
}

async fn fetch(request: reqwest::RequestBuilder) -> Download {
    let response = request.send().await.expect("request sent");
    Download {
        status: response.status(),
        headers: response.headers().clone(),
        bytes: response.bytes().await.expect("the whole body").to_vec(),
    }
}

/// `GET /users/v1/{id}/export` with `token`.
async fn api_export(app: &TestApp, token: &str, user_id: &str) -> Download {
    let request = app
        .client
        .get(app.url(&format!("/users/v1/{user_id}/export")))
        .bearer_auth(token);
    fetch(request).await
}

/// A portal path fetched with `browser`'s session, its body kept as bytes.
async fn portal_download(app: &TestApp, browser: &Browser<'_>, path: &str) -> Download {
    let cookie = browser.cookie.clone().expect("a session");
    fetch(app.client.get(app.url(path)).header("Cookie", cookie)).await
}

/// The error envelope of a refused download.
fn envelope(download: &Download) -> Value {
    serde_json::from_slice(&download.bytes).expect("the error envelope")
}

/// The rows of `measurements.csv` by measurement id, after checking its byte-order mark and
/// header.
fn csv_rows(csv: &[u8]) -> BTreeMap<String, BTreeMap<String, String>> {
    let text = csv
        .strip_prefix("\u{feff}".as_bytes())
        .expect("a UTF-8 byte-order mark");
    let mut reader = csv::Reader::from_reader(text);
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        header,
        [
            "measurement_id",
            "taken_at",
            "heart_rate_bpm",
            "result_code",
            "result",
            "signal_quality_code",
            "signal_quality",
            "review_conclusion_code",
            "review_conclusion",
            "reviewed_by",
            "reviewed_at",
            "review_note"
        ]
    );
    let mut rows = BTreeMap::new();
    for record in reader.records() {
        let record = record.expect("a well-formed row");
        let row: BTreeMap<String, String> = header
            .iter()
            .cloned()
            .zip(record.iter().map(str::to_owned))
            .collect();
        let id = row["measurement_id"].clone();
        assert!(rows.insert(id, row).is_none(), "a measurement listed twice");
    }
    rows
}

/// The FHIR validator (Medplum's, R4 definitions): `TACHO_FHIR_VALIDATOR`, or where
/// `tests/integration/fhir.rs` installs it.
fn validator() -> PathBuf {
    let script = std::env::var_os("TACHO_FHIR_VALIDATOR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/fhir-validator/validate.mjs"),
        PathBuf::from,
    );
    assert!(
        script.exists(),
        "the FHIR validator is needed: set TACHO_FHIR_VALIDATOR (scripts/test does) or run the \
         fhir tests once, which install it ({})",
        script.display()
    );
    script
}

fn assert_valid_fhir(json: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("record.json");
    std::fs::write(&path, json).unwrap();
    let output = Command::new("node")
        .arg(validator())
        .arg(&path)
        .output()
        .expect("node must be on the path to validate FHIR resources");
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && report.contains("0 failed"),
        "record.json is not valid FHIR R4:\n{report}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The measurements of the portal's list as `(id, result key, result label, heart rate,
/// conclusion label)`, read from the page's rows.
fn portal_rows(html: &str) -> BTreeMap<String, (String, String, String, Option<String>)> {
    let unescape = |s: &str| {
        s.replace("&#39;", "'")
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    };
    let between = |text: &str, start: &str, end: &str| -> Option<String> {
        let from = text.find(start)? + start.len();
        let to = text[from..].find(end)? + from;
        Some(unescape(&text[from..to]))
    };
    let mut rows = BTreeMap::new();
    for row in html
        .split("<tr><td><a href=\"/portal/measurements/")
        .skip(1)
    {
        let row = &row[..row.find("</tr>").expect("a row's end")];
        let id = row[..24].to_owned();
        let result = row.find("data-result=\"").expect("a result");
        let key = between(&row[result..], "data-result=\"", "\"").unwrap();
        let label = between(&row[result..], "\">", "</span>").unwrap();
        let heart_rate = between(row, "<td><bdi>", "</bdi>").unwrap();
        let conclusion = row
            .find("data-conclusion=\"")
            .map(|at| between(&row[at..], "\">", "</span>").unwrap());
        rows.insert(id, (key, label, heart_rate, conclusion));
    }
    rows
}

/// A patient in German on Shanghai's clock (whose offset an ISO 8601 time must carry) with a
/// week of measurements of every kind of result, one reviewed; two measurement reports and a
/// weekly report made by the scheduler, each PDF downloaded through its own route.
struct Record {
    app: TestApp,
    world: World,
    /// Measurement ids, oldest first.
    measurements: Vec<String>,
    /// The reviewed measurement.
    reviewed: String,
    /// Every PDF as its download route gave it, by the name it has in the archive.
    pdfs: BTreeMap<String, Vec<u8>>,
    /// A manual periodic report nobody opened: its PDF is made by the export.
    unopened: String,
}

async fn record() -> Record {
    let app = spawn_app().await;
    let now = Utc::now();
    app.clock.set(now - Duration::days(8));
    let mut world = World::new(&app).await;
    let patient = world.patient.clone();
    app.set_language(&patient, "DE").await;
    app.put(
        &format!("/users/v1/{}", patient.id),
        &patient.token,
        json!({"time_zone": "Asia/Shanghai"}),
    )
    .await
    .assert_ok();
    let start = app.clock_millis();
    let mut measurements = Vec::new();
    for (day, rate, kind) in [
        (0.5, 72.0, "normal"),
        (1.5, 110.0, "irregular"),
        (2.25, 44.0, "bradycardia"),
        (3.75, 128.0, "tachycardia"),
        (5.1, 64.0, "normal"),
    ] {
        let at = start + (day * DAY as f64) as i64;
        measurements.push(app.measure_at(&patient, at, rate, kind, &[]).await);
    }
    // A recording with no pulse: analysed, without a heart rate or a verdict.
    let mut unreadable = crate::helpers::fixture("no_heartrate");
    unreadable["measurement_timestamp"] = json!(start + 6 * DAY);
    measurements.push(app.measure(&patient, unreadable).await.id);
    let reviewed = measurements[0].clone();
    app.review(&world.staff_a, &reviewed).await;

    let mut pdfs = BTreeMap::new();
    for id in [&measurements[0], &measurements[1]] {
        let (_, pdf) = app.report_pdf(&patient, id, Some("de")).await;
        pdfs.insert(format!("reports/tacho-measurement-{id}-de.pdf"), pdf);
    }

    // A week later the scheduler makes the prescription's first weekly report.
    app.clock.set(now);
    for user in [&mut world.patient, &mut world.staff_a, &mut world.admin] {
        user.token = app.login(&user.email).await;
    }
    let made = app
        .scheduler()
        .run_due(|_| {})
        .await
        .expect("scheduler runs");
    assert_eq!(made.failed, 0);
    let token = &world.patient.token;
    let reports = app
        .get(&format!("/reports/v1?user_id={}", patient.id), token)
        .await;
    let weekly = reports.assert_ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["trigger"] == "PERIOD_DAYS_PASSED_7")
        .expect("a weekly report")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let pdf = fetch(
        app.client
            .get(app.url(&format!("/reports/v1/{weekly}/pdf")))
            .bearer_auth(token),
    )
    .await;
    assert_eq!(pdf.status, 200);
    pdfs.insert(format!("reports/tacho-report-{weekly}-de.pdf"), pdf.bytes);
    let manual = app
        .post(
            "/reports/v1",
            &world.staff_a.token,
            serde_json::json!({"user_id": patient.id}),
        )
        .await;
    let unopened = manual.assert_ok()["id"].as_str().unwrap().to_owned();
    Record {
        app,
        world,
        measurements,
        reviewed,
        pdfs,
        unopened,
    }
}

#[tokio::test]
async fn a_patient_exports_the_whole_record_as_every_other_door_shows_it() {
    let Record {
        app,
        world,
        measurements,
        reviewed,
        pdfs,
        unopened,
    } = record().await;
    let patient = &world.patient;

    let download = api_export(&app, &patient.token, &patient.id).await;
    assert_eq!(
        download.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&download.bytes)
    );
    assert_eq!(download.headers["content-type"], "application/zip");
    assert_eq!(
        download.headers["content-disposition"],
        format!("attachment; filename=\"tacho-export-{}.zip\"", patient.id).as_str()
    );
    assert_eq!(download.headers["cache-control"], "no-store");
    assert!(
        !download.headers.contains_key("content-length"),
        "the archive is sent as it is made, its length unknown before its end"
    );
    crate::helpers::save_artifact("export.zip", &download.bytes);
    let entries = unzip(&download.bytes);
    let mut expected: BTreeSet<String> = pdfs.keys().cloned().collect();
    expected.extend(["README.txt", "record.json", "measurements.csv"].map(str::to_owned));
    let made_for_it = format!("reports/tacho-report-{unopened}-de.pdf");
    expected.insert(made_for_it.clone());
    assert_eq!(entries.keys().cloned().collect::<BTreeSet<_>>(), expected);
    for (name, entry) in &entries {
        let method = if name.ends_with(".pdf") {
            zip::CompressionMethod::Stored
        } else {
            zip::CompressionMethod::Deflated
        };
        assert_eq!(entry.method, method, "{name}");
    }

    // Each PDF byte for byte as its own route gave it; the report nobody had opened, as its
    // route gives it now.
    for (name, pdf) in &pdfs {
        assert!(
            entries[name].bytes == *pdf,
            "{name} differs from its download"
        );
    }
    let now_opened = fetch(
        app.client
            .get(app.url(&format!("/reports/v1/{unopened}/pdf")))
            .bearer_auth(&patient.token),
    )
    .await;
    assert_eq!(now_opened.status, 200);
    assert!(
        entries[&made_for_it].bytes == now_opened.bytes,
        "the PDF made for the archive is the report's own"
    );

    // One row per measurement, as the API reports it.
    let rows = csv_rows(&entries["measurements.csv"].bytes);
    let listed = app
        .get("/data/v1/measurements/documents?limit(50)", &patient.token)
        .await;
    let listed = listed.assert_ok()["data"].as_array().unwrap().clone();
    assert_eq!(listed.len(), measurements.len());
    assert_eq!(
        rows.keys().cloned().collect::<BTreeSet<_>>(),
        measurements.iter().cloned().collect::<BTreeSet<_>>()
    );
    let shanghai: Tz = "Asia/Shanghai".parse().unwrap();
    let mut times = Vec::new();
    for measurement in &listed {
        let id = measurement["id"].as_str().unwrap();
        let data = &measurement["data"];
        let row = &rows[id];
        let taken = data["measurement_timestamp"].as_i64().unwrap();
        let expected_time = shanghai
            .timestamp_millis_opt(taken)
            .unwrap()
            .to_rfc3339_opts(SecondsFormat::Millis, false);
        assert_eq!(row["taken_at"], expected_time, "{id}");
        assert!(row["taken_at"].ends_with("+08:00"), "{}", row["taken_at"]);
        times.push((taken, id.to_owned()));
        let heart_rate = data["analysis"]["heart_rate"]
            .as_f64()
            .map(|hr| (hr.round() as i64).to_string())
            .unwrap_or_default();
        assert_eq!(row["heart_rate_bpm"], heart_rate, "{id}");
        let key = data["mostSevereLabel"]["key"]
            .as_str()
            .unwrap_or("no_result");
        assert_eq!(row["result_code"], key, "{id}");
        let quality = data["analysis"]["quality"]["class"].as_str().unwrap_or("");
        assert_eq!(row["signal_quality_code"], quality, "{id}");
    }
    // Oldest first.
    times.sort();
    let mut by_time: Vec<&str> = Vec::new();
    for line in std::str::from_utf8(&entries["measurements.csv"].bytes)
        .unwrap()
        .lines()
        .skip(1)
    {
        by_time.push(&line[..24]);
    }
    assert_eq!(
        by_time,
        times.iter().map(|(_, id)| id.as_str()).collect::<Vec<_>>(),
        "rows in the order the measurements were taken"
    );
    assert!(rows.values().any(|r| r["heart_rate_bpm"].is_empty()));
    assert!(rows.values().all(|r| !r["result"].is_empty()));

    // The result and conclusion as the portal lists them, in the patient's language.
    let mut browser = logged_in(&app, patient).await;
    let page = browser.get("/portal/measurements").await;
    assert_eq!(page.status, 200);
    let shown = portal_rows(&page.body);
    assert_eq!(shown.len(), measurements.len());
    for (id, (key, label, heart_rate, conclusion)) in &shown {
        let row = &rows[id];
        assert_eq!(&row["result_code"], key, "{id}");
        assert_eq!(&row["result"], label, "{id}");
        assert!(
            heart_rate.starts_with(&row["heart_rate_bpm"]),
            "{id}: {heart_rate} against {}",
            row["heart_rate_bpm"]
        );
        assert_eq!(
            conclusion.as_deref(),
            Some(row["review_conclusion"].as_str()).filter(|c| !c.is_empty()),
            "{id}"
        );
    }
    let review = &rows[&reviewed];
    assert_eq!(review["review_conclusion_code"], "sinus_rhythm");
    assert_eq!(review["review_conclusion"], "Sinusrhythmus");
    assert_eq!(review["reviewed_by"], "staff_a Tester");
    assert!(review["reviewed_at"].ends_with("+08:00"));
    assert_eq!(review["review_note"], "Sinus rhythm, no pauses");
    assert!(
        rows.values()
            .filter(|r| r["measurement_id"] != reviewed)
            .all(|r| r["review_note"].is_empty())
    );
    assert!(
        !String::from_utf8_lossy(&entries["measurements.csv"].bytes)
            .contains(crate::helpers::CLINICAL_NOTE),
        "the clinical note is the care team's, never the patient's"
    );

    // The README in the patient's language.
    let readme = String::from_utf8(entries["README.txt"].bytes.clone()).unwrap();
    assert!(readme.starts_with("Ihre Tacho-Daten"), "{readme}");
    assert!(readme.contains("keine Diagnose"), "{readme}");
    assert!(readme.contains("patient Tester"), "{readme}");
    for name in ["record.json", "measurements.csv", "reports/"] {
        assert!(readme.contains(name), "{readme}");
    }

    // The FHIR record: a valid collection of the patient's resources, each once.
    let record: Value = serde_json::from_slice(&entries["record.json"].bytes).unwrap();
    assert_eq!(record["resourceType"], "Bundle");
    assert_eq!(record["type"], "collection");
    let bundle_entries = record["entry"].as_array().unwrap();
    let urls: HashSet<&str> = bundle_entries
        .iter()
        .map(|e| e["fullUrl"].as_str().unwrap())
        .collect();
    assert_eq!(urls.len(), bundle_entries.len(), "every fullUrl once");
    let of_kind = |kind: &str| {
        bundle_entries
            .iter()
            .filter(|e| e["resource"]["resourceType"] == kind)
            .count()
    };
    assert_eq!(of_kind("Patient"), 1);
    let patient_entry = bundle_entries
        .iter()
        .find(|e| e["resource"]["resourceType"] == "Patient")
        .unwrap();
    assert_eq!(patient_entry["resource"]["id"], patient.id.as_str());
    assert!(of_kind("Observation") >= measurements.len());
    assert_eq!(
        of_kind("DiagnosticReport"),
        4,
        "two measurement reports, the weekly one and a manual one"
    );
    assert!(bundle_entries.iter().all(|e| e.get("search").is_none()));
    assert_valid_fhir(&entries["record.json"].bytes);

    // The same archive from the account page.
    let from_portal = portal_download(&app, &browser, "/portal/account/export").await;
    assert_eq!(from_portal.status, 200);
    assert_eq!(from_portal.headers["content-type"], "application/zip");
    let again = unzip(&from_portal.bytes);
    assert_eq!(
        again.keys().collect::<Vec<_>>(),
        entries.keys().collect::<Vec<_>>()
    );
    for name in ["measurements.csv", "README.txt"]
        .into_iter()
        .chain(pdfs.keys().map(String::as_str))
    {
        assert!(again[name].bytes == entries[name].bytes, "{name}");
    }

    // Each export is in the audit trail, by the patient, about the patient.
    let filter = AuditFilter {
        patient: Some(Id::parse(&patient.id).unwrap()),
        actor: Some(Id::parse(&patient.id).unwrap()),
        ..AuditFilter::default()
    };
    let exports = records(&app, filter)
        .await
        .into_iter()
        .filter(|(action, _)| action == "user.export")
        .count();
    assert_eq!(exports, 2);
}

#[tokio::test]
async fn only_the_patient_and_administrators_export_and_each_account_a_few_times_an_hour() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let (patient, staff) = (&world.patient, &world.staff_a);
    let measured = app
        .measure_at(patient, app.clock_millis() - DAY, 70.0, "normal", &[])
        .await;

    // Another patient does not see the patient: 404, as for anything hidden.
    let other = api_export(&app, &world.other_patient.token, &patient.id).await;
    assert_eq!(other.status, 404);
    assert_eq!(envelope(&other)["code"], 16);
    // The patient's physician sees the record, but an export is not its to make: 403.
    let physician = api_export(&app, &staff.token, &patient.id).await;
    assert_eq!(physician.status, 403);
    assert_eq!(envelope(&physician)["code"], 10);
    assert!(
        envelope(&physician)["message"]
            .as_str()
            .unwrap()
            .contains("exported by the patient and by administrators")
    );
    let mut physician_browser = logged_in(&app, staff).await;
    let page = physician_browser
        .get(&format!("/portal/admin/users/{}/export", patient.id))
        .await;
    assert_eq!(page.status, 403);
    // A malformed id names nothing.
    let malformed = api_export(&app, &patient.token, "not-an-id").await;
    assert_eq!(malformed.status, 400);
    assert_eq!(envelope(&malformed)["code"], 12);

    // An administrator exports the patient's record, through both doors.
    let by_admin = api_export(&app, &world.admin.token, &patient.id).await;
    assert_eq!(by_admin.status, 200);
    let rows = csv_rows(&unzip(&by_admin.bytes)["measurements.csv"].bytes);
    assert_eq!(rows.keys().collect::<Vec<_>>(), [&measured]);
    let mut admin_browser = logged_in(&app, &world.admin).await;
    let from_page = portal_download(
        &app,
        &admin_browser,
        &format!("/portal/admin/users/{}/export", patient.id),
    )
    .await;
    assert_eq!(from_page.status, 200);
    assert!(unzip(&from_page.bytes).contains_key("measurements.csv"));
    let admin_page = admin_browser
        .get(&format!("/portal/admin/users/{}", patient.id))
        .await;
    assert!(
        admin_page.body.contains(&format!(
            "href=\"/portal/admin/users/{}/export\"",
            patient.id
        )),
        "the user page links to the export"
    );

    // The patient may export five times an hour; the sixth is refused with when to retry,
    // through either door, and refused before anything is recorded.
    let mut patient_browser = logged_in(&app, patient).await;
    let account = patient_browser.get("/portal/account").await;
    assert!(account.body.contains("href=\"/portal/account/export\""));
    // Another site's link does not start an export in the patient's name.
    let cookie = patient_browser.cookie.clone().unwrap();
    let cross_site = app
        .client
        .get(app.url("/portal/account/export"))
        .header("Cookie", cookie)
        .header("Sec-Fetch-Site", "cross-site");
    assert_eq!(fetch(cross_site).await.status, 403);
    for _ in 0..tacho::actions::EXPORTS_PER_HOUR {
        let allowed = api_export(&app, &patient.token, &patient.id).await;
        assert_eq!(allowed.status, 200);
        unzip(&allowed.bytes);
    }
    let refused = api_export(&app, &patient.token, &patient.id).await;
    assert_eq!(refused.status, 429);
    assert_eq!(envelope(&refused)["code"], 429);
    let wait: u64 = refused.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=3600).contains(&wait), "{wait}");
    let page = portal_download(&app, &patient_browser, "/portal/account/export").await;
    assert_eq!(page.status, 429);
    assert!(
        page.headers.contains_key("retry-after"),
        "the portal's page says when to come back too"
    );
    let text = String::from_utf8_lossy(&page.bytes);
    assert!(text.contains("several times in the last hour"), "{text}");
    // Another account's allowance is its own; a record without measurements is an archive
    // with the header row alone.
    let empty = api_export(&app, &world.other_patient.token, &world.other_patient.id).await;
    assert_eq!(empty.status, 200);
    let entries = unzip(&empty.bytes);
    assert!(csv_rows(&entries["measurements.csv"].bytes).is_empty());
    assert!(!entries.keys().any(|name| name.starts_with("reports/")));

    let filter = AuditFilter {
        patient: Some(Id::parse(&patient.id).unwrap()),
        ..AuditFilter::default()
    };
    let exports = records(&app, filter)
        .await
        .into_iter()
        .filter(|(action, _)| action == "user.export")
        .count();
    let made = 2 + tacho::actions::EXPORTS_PER_HOUR as usize;
    assert_eq!(
        exports, made,
        "one record per archive made, none for a refusal"
    );
}

#[tokio::test]
async fn a_record_longer_than_a_page_is_exported_whole_each_measurement_once() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let patient = &world.patient;
    // More rows than a page of the CSV reads (200) and than ten pages of the record (20
    // each); three measurements share each time, so that pages end between equal times.
    let first = app.clock_millis() - 30 * DAY;
    let mut ids = BTreeSet::new();
    for i in 0..205_i64 {
        let payload = json!({
            "measurement_timestamp": first + (i / 3) * 60_000,
            "heartrate": 70,
            "rr_intervals": crate::helpers::regular_rr(70.0),
        });
        ids.insert(app.measure(patient, payload).await.id);
    }
    let download = api_export(&app, &patient.token, &patient.id).await;
    assert_eq!(download.status, 200);
    let entries = unzip(&download.bytes);
    let rows = csv_rows(&entries["measurements.csv"].bytes);
    assert_eq!(rows.len(), 205, "each measurement once");
    assert_eq!(rows.keys().cloned().collect::<BTreeSet<_>>(), ids);
    let times: Vec<i64> = std::str::from_utf8(&entries["measurements.csv"].bytes)
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| {
            let taken = line.split(',').nth(1).unwrap();
            chrono::DateTime::parse_from_rfc3339(taken)
                .unwrap()
                .timestamp_millis()
        })
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "oldest first");

    let record: Value = serde_json::from_slice(&entries["record.json"].bytes).unwrap();
    let resources: Vec<&Value> = record["entry"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["resource"])
        .collect();
    let phones: BTreeSet<&str> = resources
        .iter()
        .filter(|r| r["resourceType"] == "Device")
        .filter_map(|r| r["id"].as_str())
        .filter(|id| id.ends_with("-phone"))
        .collect();
    assert_eq!(phones.len(), 205, "every measurement's phone, once");
    let analysis_devices = resources
        .iter()
        .filter(|r| r["resourceType"] == "Device" && !r["id"].as_str().unwrap().ends_with("-phone"))
        .count();
    assert_eq!(
        analysis_devices, 1,
        "the analysis, named once for every page"
    );
    assert_valid_fhir(&entries["record.json"].bytes);
}

/// chromedriver on a free port, stopped with its Chromium when dropped.
async fn chromedriver() -> (crate::helpers::Spawned, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let driver = crate::helpers::Spawned::start(
        Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
    )
    .expect("chromedriver (Debian package chromium-driver) must be installed");
    let url = format!("http://127.0.0.1:{port}");
    for _ in 0..100 {
        let ready = reqwest::get(format!("{url}/status")).await;
        if ready.is_ok_and(|r| r.status().is_success()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    (driver, url)
}

#[tokio::test]
async fn with_scripts_the_account_page_shows_the_archive_arriving_then_saves_it() {
    use fantoccini::{ClientBuilder, Locator};
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let patient = &world.patient;
    app.measure_at(patient, app.clock_millis() - DAY, 66.0, "normal", &[])
        .await;
    let (_driver, url) = chromedriver().await;
    let profile = tempfile::tempdir().unwrap();
    let downloads = tempfile::tempdir().unwrap();
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": "/usr/bin/chromium",
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     format!("--user-data-dir={}", profile.path().display())],
            "prefs": {
                "download.default_directory": downloads.path().display().to_string(),
                "download.prompt_for_download": false,
            },
        }),
    );
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&url)
        .await
        .expect("a Chromium session");
    let wait = std::time::Duration::from_secs(30);
    client.goto(&app.url("/portal/login")).await.unwrap();
    for (field, text) in [
        ("email", patient.email.as_str()),
        ("password", crate::helpers::PASSWORD),
    ] {
        let input = client.find(Locator::Id(field)).await.unwrap();
        input.send_keys(text).await.unwrap();
    }
    client
        .find(Locator::Id("login"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    client
        .wait()
        .at_most(wait)
        .for_element(Locator::Css("form.logout"))
        .await
        .expect("logged in");
    client.goto(&app.url("/portal/account")).await.unwrap();
    let status = client.find(Locator::Id("export-status")).await.unwrap();
    assert!(!status.is_displayed().await.unwrap(), "hidden until asked");
    client
        .find(Locator::Id("export-link"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let state = "return [document.getElementById('export-message').textContent, \
                 document.getElementById('export-bytes').textContent, \
                 document.getElementById('export-progress').value, \
                 document.getElementById('export-status').hidden];";
    let mut shown = Value::Null;
    for _ in 0..300 {
        shown = client.execute(state, vec![]).await.unwrap();
        if shown[0] == "The archive has been downloaded." {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(shown[0], "The archive has been downloaded.", "{shown}");
    let received = shown[1].as_str().unwrap();
    assert!(received.ends_with("kB") && received != "0 kB", "{received}");
    assert_eq!(shown[2], 1, "the bar is full once the archive is whole");
    assert_eq!(shown[3], false, "the progress stays in view");
    // The section as it now shows, held to WCAG 2.2 AA by axe-core as every page is.
    let axe = std::env::var_os("TACHO_AXE_JS").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target/browser-tools/node_modules/axe-core/axe.min.js")
        },
        PathBuf::from,
    );
    let axe = std::fs::read_to_string(&axe).unwrap_or_else(|e| {
        panic!(
            "axe-core is needed (TACHO_AXE_JS, or the browser tests install it): {}: {e}",
            axe.display()
        )
    });
    client.execute(&axe, vec![]).await.expect("axe-core loads");
    let check = "const done = arguments[arguments.length - 1];
         axe.run(document.getElementById('export'), { runOnly: { type: 'tag', values:
             ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } })
           .then(r => done(r.violations.map(v => v.id)))
           .catch(e => done(['axe failed: ' + e]));";
    // A control: an image planted without a text alternative is found.
    let plant = "document.getElementById('export').insertAdjacentHTML('beforeend', \
                 '<img id=\"planted\" src=\"/x.png\">');";
    client.execute(plant, vec![]).await.unwrap();
    let planted = client.execute_async(check, vec![]).await.unwrap();
    assert_eq!(planted, json!(["image-alt"]), "axe-core ran and looked");
    let unplant = "document.getElementById('planted').remove();";
    client.execute(unplant, vec![]).await.unwrap();
    let findings = client.execute_async(check, vec![]).await.unwrap();
    assert_eq!(
        findings,
        json!([]),
        "axe-core's findings on the export section"
    );
    // The browser saved the archive under the server's name, whole.
    let saved = downloads
        .path()
        .join(format!("tacho-export-{}.zip", patient.id));
    let mut bytes = Vec::new();
    for _ in 0..100 {
        if let Ok(read) = std::fs::read(&saved) {
            bytes = read;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(!bytes.is_empty(), "{} was not saved", saved.display());
    let entries = unzip(&bytes);
    assert_eq!(csv_rows(&entries["measurements.csv"].bytes).len(), 1);
    if let Err(error) = client.close().await {
        eprintln!("Chromium session did not quit cleanly: {error}");
    }
}

#[tokio::test]
async fn a_demo_patients_export_opens_and_matches_the_portal() {
    let app = spawn_app().await;
    tacho::demo::seed(&app.store, app.operator.auth.hasher())
        .await
        .unwrap();
    let token = app.demo_token("anna@tacho.test").await;
    let me = app.get("/users/v1/me", &token).await;
    let id = me.assert_ok()["id"].as_str().unwrap().to_owned();
    // A periodic report nobody opened: the archive holds its PDF all the same.
    let admin = app.demo_token("admin@tacho.test").await;
    let report = app
        .post("/reports/v1", &admin, serde_json::json!({"user_id": id}))
        .await;
    let report = report.assert_ok()["id"].as_str().unwrap().to_owned();

    let download = api_export(&app, &token, &id).await;
    assert_eq!(download.status, 200);
    let entries = unzip(&download.bytes);
    let rows = csv_rows(&entries["measurements.csv"].bytes);
    let mut browser = crate::portal::Browser::new(&app);
    let logged = browser
        .login("anna@tacho.test", tacho::demo::DEMO_PASSWORD)
        .await;
    assert_eq!(logged.status, 303);
    let page = browser.get("/portal/measurements").await;
    let shown = portal_rows(&page.body);
    assert_eq!(shown.len(), 4, "the demo's four measurements");
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        shown.keys().collect::<Vec<_>>()
    );
    for (measurement, (key, label, _, _)) in &shown {
        assert_eq!(&rows[measurement]["result_code"], key);
        assert_eq!(&rows[measurement]["result"], label);
    }
    let pdf = entries
        .get(&format!("reports/tacho-report-{report}-nl.pdf"))
        .expect("the periodic report's PDF, in Anna's language");
    let served = fetch(
        app.client
            .get(app.url(&format!("/reports/v1/{report}/pdf")))
            .bearer_auth(&token),
    )
    .await;
    assert!(
        pdf.bytes == served.bytes,
        "the PDF the portal and API serve"
    );
}
