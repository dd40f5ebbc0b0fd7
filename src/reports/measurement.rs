//! The data of a single-measurement report: everything the PDF shows, translated and
//! formatted in the patient's time zone. The template only lays it out, so the hash of this
//! data (with the template revision) identifies the PDF exactly.

use chrono::TimeZone;
use chrono_tz::Tz;
use serde::Serialize;
use serde_json::{Map, Value};

use super::common::{
    Page, PatientHeader, ReportData, RiskFactors, as_of, conclusion_colour, generated_on,
    patient_block, reviewed_by, risk_block, translated_or_raw,
};
use super::findings::{Findings, hex};
use super::format;
use crate::domain::account::Language;
use crate::domain::json::string_list;
use crate::domain::time::local_time;
use crate::i18n::Translator;
use crate::store::entities::{measurement, profile, user};

/// Messages only the measurement template prints.
const LABELS: [&str; 25] = [
    "report-title",
    "automatic-screening",
    "report-subtitle",
    "reviewer-note",
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
    "legend-beat-unsure",
];

/// Everything a measurement report is made from.
pub struct MeasurementReportInput<'a> {
    pub measurement: &'a measurement::Model,
    pub patient: &'a user::Model,
    pub profile: Option<&'a profile::Model>,
    pub language: Language,
    pub time_zone: Tz,
    /// The name of the physician who reviewed the measurement, when it was reviewed and the
    /// name is known.
    pub reviewer: Option<&'a str>,
}

/// What `templates/pdf/measurement.typ` reads as `/data.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasurementReportData {
    /// The measurement's version: any update makes a new PDF, even of fields not printed.
    pub version: i64,
    /// The language, its direction and the labels.
    #[serde(flatten)]
    pub page: Page,
    /// The footer's "generated on" sentence.
    pub generated_on: String,
    pub patient: PatientHeader,
    pub measurement: MeasurementDetails,
    pub findings: Findings,
    pub risk: RiskFactors,
}

impl crate::pdf::TemplateData for MeasurementReportData {
    fn page(&self) -> &impl Serialize {
        &self.page
    }
}

/// When and how the measurement was taken and what the reviewer said; every missing fact is
/// `null`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasurementDetails {
    /// The local date, with the month's name.
    pub date: String,
    /// The local time of day.
    pub time: String,
    /// The time zone with its offset on that date.
    pub zone: String,
    pub status: StatusView,
    /// The reviewer's note to the patient (`data.review.patient_note`). The clinical note
    /// (`diagnosis`) is for the care team and never printed: the PDF goes to the patient and
    /// to anyone holding a shared link.
    pub review_note: Option<String>,
    /// The physician's conclusion, which the report leads with when there is one; the
    /// analysis' result then stands beneath it as the automatic screening.
    pub conclusion: Option<ConclusionView>,
    /// The symptoms the patient reported, translated.
    pub symptoms: Vec<String>,
    pub severity: Option<String>,
    /// What the patient was doing, translated.
    pub activity: Option<String>,
    /// The recording's length, as a sentence.
    pub duration: Option<String>,
}

/// A physician's conclusion as the report prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConclusionView {
    /// In the reader's words when it is a rhythm label; free text as written.
    pub label: String,
    /// The label's indicator colour, `#rrggbb`; grey for free text, whose words carry it.
    pub color: &'static str,
    /// "Reviewed by … on …", or "Reviewed on …" when the reviewer's name is not known; empty
    /// without the review's time.
    pub by: String,
}

/// The measurement's review status: its wire key, which picks the colour, and its label.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusView {
    pub key: String,
    pub label: String,
}

/// Builds the data of a single-measurement report.
pub fn build(input: &MeasurementReportInput) -> ReportData<MeasurementReportData> {
    let tr = Translator::new(input.language);
    let zone = input.time_zone;
    let m = input.measurement;
    let data = m.payload();
    let profile: Map<String, Value> = input
        .profile
        .and_then(|p| p.data.as_object().cloned())
        .unwrap_or_default();

    let measured_ms = m.measurement_timestamp.unwrap_or(m.creation_timestamp);
    let measured =
        local_time(zone, measured_ms).unwrap_or_else(|| zone.timestamp_millis_opt(0).unwrap());
    let as_of = as_of(&[
        m.update_timestamp,
        input.patient.update_timestamp,
        input.profile.map_or(0, |p| p.update_timestamp),
    ]);

    let patient = patient_block(
        &tr,
        input.language,
        input.patient,
        &profile,
        measured.date_naive(),
    );

    let object = |key| match data.value(key) {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let context = object("context");
    let review = object("review");
    let duration_ms = data
        .value("technical_details")
        .and_then(|t| t.get("duration_ms").and_then(Value::as_f64))
        .or_else(|| {
            data.value("time")
                .and_then(|t| t.as_array()?.last()?.as_f64())
        })
        .filter(|ms| ms.is_finite() && *ms >= 0.0);
    let review_text = |key: &str| {
        review
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let conclusion = review_text("label").map(|label| {
        let date = review
            .get("review_timestamp")
            .and_then(Value::as_i64)
            .and_then(|at| local_time(zone, at))
            .map(|at| format::long_date(input.language, at));
        ConclusionView {
            label: translated_or_raw(&tr, "label", &label),
            color: hex(conclusion_colour(&label)),
            by: date
                .map(|date| reviewed_by(&tr, input.reviewer, date))
                .unwrap_or_default(),
        }
    });
    let measurement = MeasurementDetails {
        date: format::long_date(input.language, measured),
        time: format::time(measured),
        zone: format::zone(measured),
        status: StatusView {
            key: m.status.as_str().to_owned(),
            label: translated_or_raw(&tr, "status", m.status.as_str()),
        },
        review_note: review_text("patient_note"),
        conclusion,
        symptoms: string_list(context.get("symptoms"))
            .iter()
            .map(|s| translated_or_raw(&tr, "symptom", s))
            .collect(),
        severity: context
            .get("symptomSeverity")
            .and_then(Value::as_i64)
            .map(|v| tr.text_with("severity-value", &[("value", v.to_string())])),
        activity: context
            .get("activity")
            .and_then(Value::as_str)
            .map(|a| translated_or_raw(&tr, "context", a)),
        duration: duration_ms.map(|ms| {
            tr.text_with(
                "duration-seconds",
                &[("seconds", format::decimal(input.language, ms / 1000.0, 0))],
            )
        }),
    };
    let findings = Findings::of(&tr, &data);

    let risk = risk_block(&tr, input.language, &profile);

    let data = MeasurementReportData {
        version: m.update_timestamp,
        page: Page::new(&tr, input.language, &LABELS),
        generated_on: generated_on(&tr, as_of, zone),
        patient,
        measurement,
        findings,
        risk,
    };
    ReportData { data, as_of }
}
