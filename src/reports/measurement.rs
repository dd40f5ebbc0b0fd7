//! The data of a single-measurement report: everything the PDF shows, translated and
//! formatted in the patient's time zone. The template only lays it out, so the hash of this
//! data (with the template revision) identifies the PDF exactly.

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde_json::{Map, Value, json};

use super::common::{as_of, labels, patient_block, risk_block, translated_or_raw};
use super::findings::Findings;
use super::format;
use crate::domain::account::Language;
use crate::domain::json::string_list;
use crate::i18n::Translator;
use crate::store::entities::{measurement, profile, user};

/// Messages only the measurement template prints.
const LABELS: [&str; 24] = [
    "report-title",
    "report-subtitle",
    "reviewer-note",
    "diagnosis-label",
    "symptom-severity",
    "context-activity",
    "duration",
    "tachogram",
    "ppg-signal",
    "axis-time-s",
    "axis-rr-ms",
    "tachogram-caption",
    "ppg-caption",
    "rhythm-labels",
    "result-reason",
    "quality-score",
    "beats-accepted",
    "beats-rejected",
    "hrv-title",
    "no-hrv",
    "legend-intervals",
    "legend-irregular",
    "legend-beat-accepted",
    "legend-beat-rejected",
];

/// Everything a measurement report is made from.
pub struct MeasurementReportInput<'a> {
    pub measurement: &'a measurement::Model,
    pub patient: &'a user::Model,
    pub profile: Option<&'a profile::Model>,
    pub language: Language,
    pub time_zone: Tz,
}

/// The render data and the instant it reflects (the latest change of anything shown).
pub struct ReportData {
    pub data: Value,
    pub as_of: DateTime<Utc>,
}

/// Builds the data of a single-measurement report.
pub fn build(input: &MeasurementReportInput) -> ReportData {
    let tr = Translator::new(input.language);
    let zone = input.time_zone;
    let m = input.measurement;
    let data = m.data_object();
    let profile: Map<String, Value> = input
        .profile
        .and_then(|p| p.data.as_object().cloned())
        .unwrap_or_default();

    let measured_ms = m.measurement_timestamp.unwrap_or(m.creation_timestamp);
    let measured = zone
        .timestamp_millis_opt(measured_ms)
        .single()
        .unwrap_or_else(|| zone.timestamp_millis_opt(0).unwrap());
    let as_of = as_of(&[
        m.update_timestamp,
        input.patient.update_timestamp,
        input.profile.map_or(0, |p| p.update_timestamp),
    ]);
    let labels = labels(&tr, &LABELS, as_of, zone);

    let patient = patient_block(
        &tr,
        input.language,
        input.patient,
        &profile,
        measured.date_naive(),
    );

    let context = data
        .get("context")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let review = data
        .get("review")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let duration_ms = data
        .get("technical_details")
        .and_then(|t| t.get("duration_ms"))
        .and_then(Value::as_f64)
        .or_else(|| {
            data.get("time")
                .and_then(Value::as_array)
                .and_then(|t| t.last())
                .and_then(Value::as_f64)
        })
        .filter(|ms| ms.is_finite() && *ms >= 0.0);
    let measurement = json!({
        "date": format::long_date(input.language, measured),
        "time": format::time(measured),
        "zone": format::zone(measured),
        "status": {"key": m.status, "label": translated_or_raw(&tr, "status", &m.status)},
        "review_note": review.get("diagnosis").and_then(Value::as_str).filter(|s| !s.is_empty()),
        "diagnosis_label": review.get("label").and_then(Value::as_str).filter(|s| !s.is_empty()),
        "symptoms": string_list(context.get("symptoms")).iter().map(|s| translated_or_raw(&tr, "symptom", s)).collect::<Vec<_>>(),
        "severity": context.get("symptomSeverity").and_then(Value::as_i64).map(|v| tr.text_with("severity-value", &[("value", v.to_string())])),
        "activity": context.get("activity").and_then(Value::as_str).map(|a| translated_or_raw(&tr, "context", a)),
        "duration": duration_ms.map(|ms| tr.text_with("duration-seconds", &[("seconds", format::decimal(input.language, ms / 1000.0, 0))])),
    });
    let findings = Findings::of(&tr, &data);

    let risk = risk_block(&tr, input.language, &profile);

    let data = json!({
        // The measurement's version: any update makes a new PDF, even of fields not printed.
        "version": m.update_timestamp,
        "lang": input.language.code(),
        "dir": if input.language == Language::Ar { "rtl" } else { "ltr" },
        "labels": labels,
        "patient": patient,
        "measurement": measurement,
        "findings": findings,
        "risk": risk,
    });
    ReportData { data, as_of }
}
