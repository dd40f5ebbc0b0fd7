//! The data of a single-measurement report: everything the PDF shows, translated and
//! formatted in the patient's time zone. The template only lays it out, so the hash of this
//! data (with the template revision) identifies the PDF exactly.

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde_json::{Map, Value, json};

use super::common::{
    INDICATORS, QUALITY_COLOURS, as_of, colour, indicator, labels, patient_block, risk_block,
    translated_or_raw,
};
use super::format;
use crate::domain::account::Language;
use crate::domain::json::string_list;
use crate::domain::measurement::signal_quality;
use crate::i18n::Translator;
use crate::store::entities::{measurement, profile, user};

/// Messages only the measurement template prints.
const LABELS: [&str; 14] = [
    "report-title",
    "report-subtitle",
    "reviewer-note",
    "diagnosis-label",
    "symptom-severity",
    "context-activity",
    "duration",
    "beats",
    "tachogram",
    "ppg-signal",
    "axis-time-s",
    "axis-rr-ms",
    "tachogram-caption",
    "ppg-caption",
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

    let (indicator_key, indicator_label) = indicator(&tr, m.indicator.as_deref());
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
    let rr: Vec<f64> = data
        .get("rr_intervals")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_f64).collect())
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
        });
    let quality = signal_quality(&data, m.heartrate.is_some());
    let measurement = json!({
        "date": format::long_date(input.language, measured),
        "time": format::time(measured),
        "zone": format::zone(measured),
        "heart_rate": m.heartrate.map(|hr| hr.round() as i64),
        "indicator": {"key": indicator_key, "label": indicator_label, "color": colour(&INDICATORS, indicator_key)},
        "status": {"key": m.status, "label": translated_or_raw(&tr, "status", &m.status)},
        "review_note": review.get("diagnosis").and_then(Value::as_str).filter(|s| !s.is_empty()),
        "diagnosis_label": review.get("label").and_then(Value::as_str).filter(|s| !s.is_empty()),
        "symptoms": string_list(context.get("symptoms")).iter().map(|s| translated_or_raw(&tr, "symptom", s)).collect::<Vec<_>>(),
        "severity": context.get("symptomSeverity").and_then(Value::as_i64).map(|v| tr.text_with("severity-value", &[("value", v.to_string())])),
        "activity": context.get("activity").and_then(Value::as_str).map(|a| translated_or_raw(&tr, "context", a)),
        "duration": duration_ms.map(|ms| tr.text_with("duration-seconds", &[("seconds", format::decimal(input.language, ms / 1000.0, 0))])),
        "beats": (!rr.is_empty()).then(|| rr.len() + 1),
        "quality": {"key": quality, "label": tr.text(&format!("quality-{quality}")), "color": colour(&QUALITY_COLOURS, quality)},
    });

    let risk = risk_block(&tr, input.language, &profile);

    let data = json!({
        // The measurement's version: any update makes a new PDF, even of fields not printed.
        "version": m.update_timestamp,
        "lang": input.language.code(),
        "dir": if input.language == Language::Ar { "rtl" } else { "ltr" },
        "labels": labels,
        "patient": patient,
        "measurement": measurement,
        "chart": chart(&tr, &data, &rr),
        "risk": risk,
    });
    ReportData { data, as_of }
}

fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// A tachogram from RR intervals, else the camera's pulse signal, else nothing.
fn chart(tr: &Translator, data: &Map<String, Value>, rr: &[f64]) -> Value {
    if rr.len() >= 2 {
        let mut elapsed = 0.0;
        let points: Vec<Value> = rr
            .iter()
            .map(|interval| {
                elapsed += interval / 1000.0;
                json!([round2(elapsed), interval.round()])
            })
            .collect();
        let low = rr.iter().cloned().fold(f64::INFINITY, f64::min);
        let high = rr.iter().cloned().fold(0.0, f64::max);
        return json!({
            "kind": "tachogram", "title": tr.text("tachogram"), "caption": tr.text("tachogram-caption"),
            "x_label": tr.text("axis-time-s"), "y_label": tr.text("axis-rr-ms"), "points": points,
            "x_max": elapsed.max(60.0).ceil(),
            "y_min": ((low - 100.0) / 100.0).floor().max(0.0) * 100.0,
            "y_max": ((high + 100.0) / 100.0).ceil() * 100.0,
        });
    }
    match pulse_signal(data) {
        Some((points, low, high, x_max)) => json!({
            "kind": "ppg", "title": tr.text("ppg-signal"), "caption": tr.text("ppg-caption"),
            "x_label": tr.text("axis-time-s"), "y_label": "", "points": points,
            "x_max": x_max, "y_min": low, "y_max": high,
        }),
        None => json!({"kind": "none"}),
    }
}

/// The mean brightness of the four central quadrants, inverted so that beats point up.
fn pulse_signal(data: &Map<String, Value>) -> Option<(Vec<Value>, f64, f64, f64)> {
    let times: Vec<f64> = data
        .get("time")?
        .as_array()?
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    let rows = data.get("quadrants")?.as_array()?;
    let mut traces: Vec<Vec<f64>> = Vec::new();
    for (r, c) in [(1, 1), (1, 2), (2, 1), (2, 2)] {
        let cell = rows.get(r)?.as_array()?.get(c)?;
        traces.push(
            cell.get("y")?
                .as_array()?
                .iter()
                .filter_map(Value::as_f64)
                .collect(),
        );
    }
    let n = traces.iter().map(Vec::len).min()?.min(times.len());
    if n < 2 {
        return None;
    }
    let signal: Vec<f64> = (0..n)
        .map(|i| 255.0 - traces.iter().map(|t| t[i]).sum::<f64>() / 4.0)
        .collect();
    let low = signal.iter().cloned().fold(f64::INFINITY, f64::min);
    let high = signal.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let points = (0..n)
        .map(|i| json!([round2(times[i] / 1000.0), round2(signal[i])]))
        .collect();
    let margin = ((high - low) * 0.1).max(0.5);
    Some((
        points,
        round2(low - margin),
        round2(high + margin),
        (times[n - 1] / 1000.0).max(60.0).ceil(),
    ))
}
