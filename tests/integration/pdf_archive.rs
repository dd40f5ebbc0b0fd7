//! Archival PDFs (issue 33): every report PDF, fetched through the API as a reader gets it,
//! declares PDF/A-3b and PDF/UA-1 and carries what both ask for. typst refuses to export a
//! document that misses either standard, so a PDF at all is the first proof; veraPDF, the
//! reference validator, cannot be installed on this machine, so these tests read what it
//! would look at first: the XMP identification, the output intent with its ICC profile,
//! embedded fonts, no encryption, and the document date, which must be the instant the
//! report reflects (its "generated on" time), not the clock of the render.

use chrono::{DateTime, Duration, NaiveDateTime, TimeZone, Utc};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tacho::pdf::{STANDARDS, Template, revision};
use tacho::reports::cache_key;

use crate::helpers::{TestApp, TestUser, World, fixture, pdf_fonts, save_artifact, spawn_app};

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// The document's XMP metadata packet, read from the PDF's bytes as they are: typst writes
/// the metadata stream without a filter, which the test checks on the stream's dictionary.
fn xmp(pdf: &[u8]) -> String {
    let start = find(pdf, b"<x:xmpmeta").expect("an XMP packet");
    let end = start
        + find(&pdf[start..], b"</x:xmpmeta>").expect("the packet's end")
        + b"</x:xmpmeta>".len();
    // The dictionary of the stream the packet is in: from the last `obj` before it.
    let object = pdf[..start]
        .windows(3)
        .rposition(|window| window == b"obj")
        .expect("the packet is in an object");
    let dictionary = String::from_utf8_lossy(&pdf[object..start]);
    assert!(
        dictionary.contains("/Type/Metadata") && dictionary.contains("/Subtype/XML"),
        "the packet is the metadata stream: {dictionary}"
    );
    assert!(
        !dictionary.contains("/Filter"),
        "the metadata stream is not compressed: {dictionary}"
    );
    String::from_utf8(pdf[start..end].to_vec()).expect("XMP is UTF-8")
}

/// A simple property of an XMP packet, written as an element (`<pdfaid:part>3</…>`) or as
/// an attribute (`pdfaid:part="3"`); both are valid RDF.
fn xmp_property(xmp: &str, name: &str) -> Option<String> {
    let element = format!("<{name}>");
    if let Some(at) = xmp.find(&element) {
        let value = &xmp[at + element.len()..];
        return value.find('<').map(|end| value[..end].to_owned());
    }
    let attribute = format!("{name}=\"");
    xmp.find(&attribute).and_then(|at| {
        let value = &xmp[at + attribute.len()..];
        value.find('"').map(|end| value[..end].to_owned())
    })
}

/// `pdfinfo -isodates` of a PDF: its document information, dates in ISO 8601.
fn pdf_info(pdf: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.pdf");
    std::fs::write(&path, pdf).unwrap();
    let output = std::process::Command::new("pdfinfo")
        .arg("-isodates")
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("pdfinfo (poppler-utils) must be installed: {e}"));
    assert!(
        output.status.success(),
        "pdfinfo failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The value of `field` in `pdfinfo`'s output, trimmed.
fn info_field<'a>(info: &'a str, field: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .map(str::trim)
}

/// Every row of `pdffonts`' table as (name, embedded): the columns are cut where the dashes
/// under the header are, since a font's type has spaces in it ("CID TrueType").
fn embedded_fonts(pdf: &[u8]) -> Vec<(String, bool)> {
    let table = pdf_fonts(pdf);
    let mut lines = table.lines();
    let header = lines.next().expect("a header");
    assert!(header.contains("emb"), "{table}");
    let dashes = lines.next().expect("the rule under the header");
    let mut columns = Vec::new();
    let mut at = 0;
    for run in dashes.split(' ') {
        columns.push(at..at + run.len());
        at += run.len() + 1;
    }
    // name, type, encoding, emb, sub, uni, object ID
    assert!(columns.len() >= 4, "{table}");
    let cell = |line: &str, column: usize| -> String {
        let range = columns[column].clone();
        line.get(range.start..range.end.min(line.len()))
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    lines
        .filter(|line| !line.trim().is_empty())
        .map(|line| (cell(line, 0), cell(line, 3) == "yes"))
        .collect()
}

/// The instant `ms` (epoch milliseconds) as a PDF date keeps it: to the second.
fn to_the_second(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(ms.div_euclid(1000), 0)
        .single()
        .expect("a valid instant")
}

/// Asserts everything the archival standards ask of `pdf` that a test can read, its date
/// being `date`.
#[track_caller]
fn assert_archival(pdf: &[u8], date: DateTime<Utc>, what: &str) {
    assert!(pdf.starts_with(b"%PDF-1.7"), "{what}: PDF/A-3 is PDF 1.7");

    // The XMP identification of both standards.
    let xmp = xmp(pdf);
    for (property, expected) in [
        ("pdfaid:part", "3"),
        ("pdfaid:conformance", "B"),
        ("pdfuaid:part", "1"),
    ] {
        assert_eq!(
            xmp_property(&xmp, property).as_deref(),
            Some(expected),
            "{what}: {property} in {xmp}"
        );
    }

    // An output intent for PDF/A whose destination profile is an embedded ICC stream.
    let text = String::from_utf8_lossy(pdf);
    assert!(text.contains("/OutputIntents"), "{what}: no /OutputIntents");
    assert!(
        text.contains("/S/GTS_PDFA1"),
        "{what}: no PDF/A output intent"
    );
    let profile = text
        .split("/DestOutputProfile")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|number| number.parse::<u32>().ok())
        .unwrap_or_else(|| panic!("{what}: no /DestOutputProfile reference"));
    let object = text
        .find(&format!("\n{profile} 0 obj"))
        .map(|at| &text[at..])
        .unwrap_or_else(|| panic!("{what}: no object {profile}"));
    let dictionary = &object[..object.find("stream").expect("the profile is a stream")];
    assert!(
        dictionary.contains("/N 3"),
        "{what}: the profile is not an RGB ICC profile: {dictionary}"
    );

    // Every font embedded.
    let fonts = embedded_fonts(pdf);
    assert!(!fonts.is_empty(), "{what}: no fonts listed");
    for (name, embedded) in &fonts {
        assert!(embedded, "{what}: {name} is not embedded: {fonts:?}");
    }

    // No encryption, tagged, and the document's date.
    let info = pdf_info(pdf);
    assert_eq!(info_field(&info, "Encrypted"), Some("no"), "{what}: {info}");
    assert_eq!(info_field(&info, "Tagged"), Some("yes"), "{what}: {info}");
    let created = info_field(&info, "CreationDate")
        .unwrap_or_else(|| panic!("{what}: no CreationDate in {info}"));
    // pdfinfo prints UTC as `Z` (older versions `+00`).
    let (local, zone) = created.split_at(created.len().min(19));
    assert!(
        ["Z", "+00", "+00:00"].contains(&zone),
        "{what}: CreationDate {created} is not UTC"
    );
    let created = NaiveDateTime::parse_from_str(local, "%Y-%m-%dT%H:%M:%S")
        .unwrap_or_else(|e| panic!("{what}: CreationDate {created}: {e}"))
        .and_utc();
    assert_eq!(created, date, "{what}: CreationDate");
    // The XMP says the same.
    assert_eq!(
        xmp_property(&xmp, "xmp:CreateDate")
            .and_then(|at| DateTime::parse_from_rfc3339(&at).ok())
            .map(|at| at.with_timezone(&Utc)),
        Some(date),
        "{what}: xmp:CreateDate in {xmp}"
    );
}

/// A periodic report's PDF in `query`'s language, as `user` downloads it.
async fn periodic_pdf(app: &TestApp, user: &TestUser, id: &str, query: &str) -> Vec<u8> {
    let response = app
        .client
        .get(app.url(&format!("/reports/v1/{id}/pdf{query}")))
        .bearer_auth(&user.token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/pdf");
    response.bytes().await.unwrap().to_vec()
}

#[tokio::test]
async fn measurement_reports_are_pdf_a_3b_and_pdf_ua_1() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    // A tachogram and a pulse strip (every kind of image the report has), in a left-to-right,
    // a right-to-left and a CJK script. Each measurement is made at its own instant, some
    // way into a second, after everything else about the patient: that is what its report
    // reflects and must be dated.
    for (n, (name, language)) in [
        ("sinus_72", "en"),
        ("ppg_only", "ar"),
        ("irregular_af", "zh"),
    ]
    .into_iter()
    .enumerate()
    {
        app.clock
            .advance(Duration::milliseconds(61_000 + 250 * n as i64));
        let measured_at = app.clock_millis();
        let measurement = app.measure(&world.patient, fixture(name)).await;
        assert_eq!(
            measurement.update_timestamp.timestamp_millis(),
            measured_at,
            "the clock is the test's"
        );
        let (document, pdf) = app
            .report_pdf(&world.patient, &measurement.id, Some(language))
            .await;
        assert_eq!(
            document["data"]["forMeasurementUpdatedTimestamp"],
            json!(measured_at),
            "{name}: the report is of the measurement as it is now"
        );
        save_artifact(&format!("archive-measurement-{name}-{language}.pdf"), &pdf);
        assert_archival(
            &pdf,
            to_the_second(measured_at),
            &format!("measurement report {name}, {language}"),
        );
    }
}

#[tokio::test]
async fn periodic_reports_are_pdf_a_3b_and_pdf_ua_1() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let now = app.clock_millis();
    app.measure_at(&world.patient, now - 2 * 86_400_000, 64.0, "normal", &[])
        .await;
    app.measure_at(
        &world.patient,
        now - 86_400_000,
        88.0,
        "irregular",
        &["palpitations"],
    )
    .await;
    // The report is made later than anything about the patient: its PDF is dated then.
    app.clock.advance(Duration::milliseconds(90_750));
    let made_at = app.clock_millis();
    let made = app
        .post(
            "/reports/v1",
            &world.staff_a.token,
            json!({"user_id": world.patient.id}),
        )
        .await;
    let report: Value = made.assert_ok().clone();
    assert_eq!(report["update_timestamp"], json!(made_at), "{report}");
    assert_eq!(
        report["data"]["measurements"].as_array().map(Vec::len),
        Some(2)
    );
    let id = report["id"].as_str().expect("an id");
    for (language, query) in [("en", ""), ("ar", "?language=ar"), ("zh", "?language=zh")] {
        let pdf = periodic_pdf(&app, &world.patient, id, query).await;
        save_artifact(&format!("archive-periodic-{language}.pdf"), &pdf);
        assert_archival(
            &pdf,
            to_the_second(made_at),
            &format!("periodic report, {language}"),
        );
    }
}

/// The cache key names the standards: a PDF stored under a key made before they were
/// declared is never found for a report that must meet them, even for a template revision
/// and data that did not change.
#[test]
fn the_cache_key_names_the_standards() {
    assert_eq!(STANDARDS, "PDF/A-3b+PDF/UA-1");
    let data = json!({"lang": "en", "labels": {}});
    for template in [Template::Measurement, Template::Periodic] {
        let key = cache_key(template, &data);
        assert_eq!(key.len(), 64, "a SHA-256 in hex");
        // The key as it was made before: the revision, the template, the data.
        let mut before = Sha256::new();
        before.update(revision().as_bytes());
        before.update([0, template as u8, 0]);
        before.update(serde_json::to_vec(&data).unwrap());
        assert_ne!(key, hex::encode(before.finalize()), "{template:?}");
        assert_eq!(key, cache_key(template, &data), "stable");
    }
}
