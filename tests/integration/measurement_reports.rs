//! Measurement reports (contract section 6, interface.md 4.1–4.3, rules 3.1–3.2).

use serde_json::json;

use crate::helpers::{
    CLINICAL_NOTE, World, fixture, pdf_fonts, pdf_pages, pdf_text, save_artifact, spawn_app,
};

/// The report title in each language, as the PDF's text layer shows it.
const TITLES: [(&str, &str); 8] = [
    ("en", "Heart rhythm measurement report"),
    ("de", "Herzrhythmus"),
    ("es", "ritmo card"),
    ("fr", "rythme cardiaque"),
    ("it", "ritmo cardiaco"),
    ("nl", "hartritme"),
    ("ar", "نظم القلب"),
    ("zh", "心律"),
];

#[tokio::test]
async fn a_report_is_rendered_then_found_as_the_latest_document() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let measurement = app.measure(&world.patient, fixture("sinus_72")).await;
    let id = measurement.id.as_str();
    let (document, pdf) = app.report_pdf(&world.patient, id, Some("en")).await;
    assert_eq!(document["status"], "rendered");
    assert_eq!(document["data"]["measurementId"], id);
    assert_eq!(document["data"]["language"], "en");
    assert_eq!(document["data"]["timeZone"], "Europe/Brussels");
    assert_eq!(
        document["data"]["forMeasurementUpdatedTimestamp"],
        measurement.update_timestamp.timestamp_millis(),
        "epoch ms, a number"
    );
    assert_eq!(
        document["data"]["status"], "rendered",
        "interface.md 2.1 names data.status"
    );
    assert!(pdf.starts_with(b"%PDF"));
    let text = pdf_text(&pdf);
    for expected in [
        "Heart rhythm measurement report",
        "patient Tester",
        "72",
        "Europe/Brussels",
        "not a diagnosis",
    ] {
        assert!(
            text.contains(expected),
            "`{expected}` missing from:\n{text}"
        );
    }

    for query in [
        format!("limit(1)&sort(-id)&eq(data.measurementId,{id})"),
        format!("data.measurementId={id}&sort(-id)"),
    ] {
        let latest = app
            .get(
                &format!("/data/v1/measurement-reports/documents?{query}"),
                &world.patient.token,
            )
            .await;
        let body = latest.assert_ok();
        assert_eq!(body["data"][0]["id"], document["id"], "{query}");
        assert_eq!(
            body["data"][0]["data"]["readFileToken"],
            document["data"]["readFileToken"]
        );
    }
    let by_id = app
        .get(
            &format!(
                "/data/v1/measurement-reports/documents/{}",
                document["id"].as_str().unwrap()
            ),
            &world.staff_a.token,
        )
        .await;
    assert_eq!(by_id.assert_ok()["id"], document["id"]);
}

#[tokio::test]
async fn every_language_prints_its_own_words() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "irregular_af").await;
    for (language, title) in TITLES {
        let (document, pdf) = app.report_pdf(&world.patient, &id, Some(language)).await;
        assert_eq!(document["data"]["language"], language);
        crate::helpers::assert_no_overlapping_words(&pdf, &format!("measurement, {language}"));
        let text = pdf_text(&pdf);
        assert!(
            text.contains(title),
            "{language}: `{title}` missing from:\n{text}"
        );
        if language != "en" {
            assert!(
                !text.contains("Heart rhythm measurement report"),
                "{language} is translated"
            );
        }
    }
    for (asked, expected) in [
        (Some("xx"), "en"),
        (None, "en"),
        (Some("DE"), "de"),
        (Some("Zh"), "zh"),
    ] {
        let document = app.report(&world.patient, &id, asked).await;
        assert_eq!(
            document.assert_ok()["data"]["language"],
            expected,
            "{asked:?}"
        );
    }
}

#[tokio::test]
async fn arabic_is_right_to_left_and_chinese_glyphs_are_embedded() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let (_, arabic) = app.report_pdf(&world.patient, &id, Some("ar")).await;
    let text = pdf_text(&arabic);
    assert!(text.contains("نظم القلب"), "{text}");
    assert!(text.contains("2026"), "dates stay readable: {text}");
    // In a right-to-left page the labels stand on the right: with -layout, Arabic lines are
    // indented and end at the right margin.
    let layout = crate::helpers::pdf_layout_text(&arabic);
    let patient_label = layout
        .lines()
        .find(|l| l.contains("المريض"))
        .expect("the patient label");
    assert!(
        patient_label.trim_end().len() > 40 && patient_label.starts_with("  "),
        "right-aligned: `{patient_label}`"
    );
    let fonts = pdf_fonts(&arabic);
    assert!(fonts.contains("NotoSansArabic"), "{fonts}");

    let (_, chinese) = app.report_pdf(&world.patient, &id, Some("zh")).await;
    let text = pdf_text(&chinese);
    assert!(text.contains("心律") && text.contains("患者"), "{text}");
    let fonts = pdf_fonts(&chinese);
    assert!(fonts.contains("NotoSansCJK"), "{fonts}");
    for line in fonts.lines().skip(2) {
        let columns: Vec<&str> = line.split_whitespace().collect();
        // name type encoding emb sub uni object ID: every font is embedded.
        let emb = columns.iter().rev().nth(4).copied();
        assert_eq!(emb, Some("yes"), "not embedded: {line}");
    }
}

#[tokio::test]
async fn the_report_shows_the_patients_zone() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let path = format!("/users/v1/{}", world.patient.id);
    app.put(
        &path,
        &world.patient.token,
        json!({"time_zone": "Asia/Tokyo"}),
    )
    .await
    .assert_ok();
    // 2026-11-20T23:30:00Z is already the 21st in Tokyo.
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let (document, pdf) = app.report_pdf(&world.patient, &id, Some("en")).await;
    assert_eq!(document["data"]["timeZone"], "Asia/Tokyo");
    let text = pdf_text(&pdf);
    assert!(text.contains("21 November 2026"), "{text}");
    assert!(text.contains("08:30"), "{text}");
    assert!(text.contains("Asia/Tokyo (UTC+09:00)"), "{text}");

    // Rule 3.2: the zone is frozen per document; a new report after a change uses the new zone.
    app.put(
        &path,
        &world.patient.token,
        json!({"time_zone": "America/New_York"}),
    )
    .await
    .assert_ok();
    let (newer, pdf) = app.report_pdf(&world.patient, &id, Some("en")).await;
    assert_eq!(newer["data"]["timeZone"], "America/New_York");
    assert!(pdf_text(&pdf).contains("20 November 2026"));
    let old = app
        .get(
            &format!(
                "/data/v1/measurement-reports/documents/{}",
                document["id"].as_str().unwrap()
            ),
            &world.patient.token,
        )
        .await;
    assert_eq!(old.body["data"]["timeZone"], "Asia/Tokyo");
}

#[tokio::test]
async fn repeats_reuse_the_pdf_and_changes_make_a_new_one() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "sinus_72").await;
    let first = app.report(&world.patient, &id, Some("en")).await.body;
    let again = app.report(&world.patient, &id, Some("en")).await.body;
    assert_ne!(first["id"], again["id"], "each POST makes a document");
    assert_eq!(
        first["data"]["readFileToken"], again["data"]["readFileToken"],
        "the PDF is reused"
    );

    // Rule 3.1: a measurement update makes the latest report out of date.
    app.review(&world.staff_a, &id).await;
    let measurement = world.patient.client.get_measurement(&id).await.unwrap();
    let updated_ms = measurement.update_timestamp.timestamp_millis();
    assert!(
        updated_ms
            > first["data"]["forMeasurementUpdatedTimestamp"]
                .as_i64()
                .unwrap(),
        "out of date"
    );
    let (fresh, pdf) = app.report_pdf(&world.patient, &id, Some("en")).await;
    assert_ne!(
        fresh["data"]["readFileToken"],
        first["data"]["readFileToken"]
    );
    assert_eq!(fresh["data"]["forMeasurementUpdatedTimestamp"], updated_ms);
    // The PDF goes to the patient: it prints the conclusion in words and the note to the
    // patient, never the care team's clinical note.
    let text = pdf_text(&pdf);
    assert!(text.contains("Sinus rhythm, no pauses"), "{text}");
    assert!(!text.contains("sinus_rhythm"), "{text}");
    assert!(!text.contains(CLINICAL_NOTE), "{text}");

    // A corrected name is printed on a fresh PDF.
    app.put(
        &format!("/users/v1/{}", world.patient.id),
        &world.patient.token,
        json!({"last_name": "Janssens"}),
    )
    .await
    .assert_ok();
    let (renamed, pdf) = app.report_pdf(&world.patient, &id, Some("en")).await;
    assert_ne!(
        renamed["data"]["readFileToken"],
        fresh["data"]["readFileToken"]
    );
    assert!(pdf_text(&pdf).contains("patient Janssens"));
}

#[tokio::test]
async fn fifty_concurrent_first_requests_render_once() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let id = app.measurement_id(&world.patient, "bradycardia_48").await;
    let before = app.operator.reports.renders();
    let requests = (0..50).map(|_| app.report(&world.patient, &id, Some("nl")));
    let replies = futures_util::future::join_all(requests).await;
    let tokens: std::collections::HashSet<String> = replies
        .iter()
        .map(|r| {
            r.assert_ok()["data"]["readFileToken"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(tokens.len(), 1, "one PDF for all");
    assert_eq!(app.operator.reports.renders() - before, 1, "rendered once");
}

/// The result key's words in English, as the report prints them.
fn english_result(key: &str) -> &'static str {
    match key {
        "regular" => "Regular rhythm",
        "possibly_irregular" => "Possibly irregular rhythm",
        "possible_atrial_fibrillation" => "Possible atrial fibrillation",
        "quality_too_low" => "Signal quality too low",
        _ => "No result",
    }
}

#[tokio::test]
async fn reports_show_the_servers_heart_rate_result_quality_hrv_and_charts() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    for (name, key, german, arabic, chinese) in [
        (
            "sinus_72",
            "regular",
            "Regelmäßiger Rhythmus",
            "نظم منتظم",
            "心律规则",
        ),
        (
            "irregular_af",
            "possible_atrial_fibrillation",
            "Mögliches Vorhofflimmern",
            "رجفان أذيني محتمل",
            "可能存在心房颤动",
        ),
    ] {
        let measurement = app.measure(&world.patient, fixture(name)).await;
        let analysis = &measurement.data["analysis"];
        assert_eq!(
            measurement.data["mostSevereLabel"]["key"], key,
            "{name}: {analysis}"
        );
        let bpm = analysis["heart_rate"]
            .as_f64()
            .expect("a heart rate")
            .round() as i64;
        if name == "sinus_72" {
            assert!((70..=74).contains(&bpm), "{bpm} bpm");
        }
        let (_, pdf) = app
            .report_pdf(&world.patient, &measurement.id, Some("en"))
            .await;
        save_artifact(&format!("measurement-{name}-en.pdf"), &pdf);
        assert_eq!(pdf_pages(&pdf), 1, "{name} fits one page");
        let text = pdf_text(&pdf);
        let accepted = analysis["quality"]["accepted_beats"].to_string();
        for expected in [
            bpm.to_string().as_str(),
            english_result(key),
            "Signal quality",
            "Quality score",
            "Beats accepted",
            accepted.as_str(),
            "Heart-rate variability",
            "SDNN",
            "RMSSD",
            "pNN50",
            "SD1",
            "SD2",
            "Tachogram",
            "RR interval",
            "Pulse signal",
            "Detected beat",
            "not a diagnosis",
        ] {
            assert!(
                text.contains(expected),
                "{name}: `{expected}` missing from:\n{text}"
            );
        }
        // Weak beats kept by the second pass are drawn apart, and the legend names them.
        let unsure = analysis["unsure_beats"].as_array().map_or(0, Vec::len);
        assert_eq!(
            text.contains("Weak beat (unsure)"),
            unsure > 0,
            "{name}: {unsure} unsure beats, legend:\n{text}"
        );
        for (language, words) in [
            ("de", vec![german, "Herzfrequenzvariabilität", "Pulssignal"]),
            ("ar", vec![arabic, "ضربة مكتشفة"]),
            ("zh", vec![chinese, "心率变异性"]),
        ] {
            let (_, pdf) = app
                .report_pdf(&world.patient, &measurement.id, Some(language))
                .await;
            save_artifact(&format!("measurement-{name}-{language}.pdf"), &pdf);
            assert_eq!(pdf_pages(&pdf), 1, "{name} in {language} fits one page");
            let text = pdf_text(&pdf);
            for word in words {
                assert!(
                    text.contains(word),
                    "{name} in {language}: `{word}` missing from:\n{text}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_failed_analysis_has_no_pdf_report() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let failed = app.measure(&world.patient, fixture("no_heartrate")).await;
    assert_eq!(
        failed.status,
        tacho_client::MeasurementStatus::AnalysisFailed
    );
    assert_eq!(failed.data["indicator"], "quality");
    let key = failed.data["mostSevereLabel"]["key"].as_str().unwrap();
    assert!(matches!(key, "quality_too_low" | "no_result"), "{key}");
    // The wire contract (section 6): a report needs an analysed measurement, else 27. The
    // reason is shown on the measurement itself (its `analysis.abnormalities`, and the
    // portal's page).
    app.report(&world.patient, &failed.id, Some("en"))
        .await
        .assert_error(400, 27);
}

#[tokio::test]
async fn reports_need_results_and_visibility() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let theirs = app.measure(&world.patient_b, fixture("sinus_72")).await;
    let their_id = theirs.id.as_str();
    app.report(&world.patient, their_id, None)
        .await
        .assert_error(404, 16);
    app.report(&world.staff_a, their_id, None)
        .await
        .assert_error(404, 16);
    app.report(&world.staff_b, their_id, Some("fr"))
        .await
        .assert_ok();
    app.report(&world.patient, "nope", None)
        .await
        .assert_error(400, 12);
    app.report(&world.patient, "0123456789abcdef01234567", None)
        .await
        .assert_error(404, 16);
    let mine = app
        .get(
            "/data/v1/measurement-reports/documents",
            &world.patient.token,
        )
        .await;
    assert_eq!(
        mine.body["page"]["total"], 0,
        "the other patient's report stays invisible"
    );
    let bad = app
        .post(
            "/data/v1/measurement-reports/documents",
            &world.patient.token,
            json!({"language": "en"}),
        )
        .await;
    bad.assert_error(400, 14);
}

#[tokio::test]
async fn hostile_names_print_as_text() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let path = format!("/users/v1/{}", world.patient.id);
    app.put(
        &path,
        &world.patient.token,
        json!({"first_name": "#eval(\"1+1\")", "last_name": "<script>x</script>"}),
    )
    .await
    .assert_ok();
    let id = app.measurement_id(&world.patient, "ppg_only").await;
    let (_, pdf) = app.report_pdf(&world.patient, &id, None).await;
    // The column is narrow, so the name may wrap: compare without whitespace.
    let text: String = pdf_text(&pdf)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    assert!(text.contains("#eval(\"1+1\")<script>x</script>"), "{text}");
}
