//! What every report shares: the page's labels, the patient header and risk factors (as
//! `templates/pdf/common.typ` shares the layout). Results and their colours are in
//! `findings.rs`.

use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use serde_json::{Map, Value, json};

use super::format;
use crate::domain::account::Language;
use crate::domain::json::string_list;
use crate::i18n::Translator;
use crate::store::entities::user;

/// Messages every report prints: page, patient header, risk factors, disclaimer.
const SHARED_LABELS: [&str; 26] = [
    "brand",
    "patient",
    "name",
    "birthday",
    "age",
    "gender",
    "physician",
    "not-given",
    "measurement",
    "measured-at",
    "time-zone",
    "heart-rate",
    "bpm",
    "result",
    "review",
    "symptoms",
    "no-symptoms",
    "signal-quality",
    "risk-factors",
    "comorbidities",
    "no-comorbidities",
    "smoker",
    "activity-level",
    "weight",
    "length",
    "disclaimer",
];

/// The instant a report reflects: the latest change of anything it shows. Printed as its
/// "generated on" time, so that rendering again gives the same PDF.
pub fn as_of(changes: &[i64]) -> DateTime<Utc> {
    let latest = changes.iter().copied().max().unwrap_or(0);
    Utc.timestamp_millis_opt(latest)
        .single()
        .unwrap_or_default()
}

/// The labels of a report: the shared ones, `own`, and the footer's "generated on" (at
/// `as_of` in `zone`) and "page x of y" (with `{page}` and `{total}` for the template).
pub fn labels(tr: &Translator, own: &[&str], as_of: DateTime<Utc>, zone: Tz) -> Map<String, Value> {
    let mut labels = Map::new();
    for key in SHARED_LABELS.iter().chain(own) {
        labels.insert((*key).into(), tr.text(key).into());
    }
    let local = as_of.with_timezone(&zone);
    let generated = format!(
        "{} {}",
        format::short_date(tr.language(), local.date_naive()),
        format::time(local)
    );
    labels.insert(
        "generated-on".into(),
        tr.text_with("generated-on", &[("date", generated)]).into(),
    );
    labels.insert(
        "page-of".into(),
        tr.text_with(
            "page-of",
            &[("page", "{page}".into()), ("total", "{total}".into())],
        )
        .into(),
    );
    labels
}

/// The translation of `prefix-value`, or the value itself when there is none (a value a
/// newer app sent that this release does not know).
pub fn translated_or_raw(tr: &Translator, prefix: &str, value: &str) -> String {
    tr.try_text(&format!("{prefix}-{value}"))
        .unwrap_or_else(|| value.to_owned())
}

/// The patient header: name, date of birth, age on `on`, sex and physician.
pub fn patient_block(
    tr: &Translator,
    language: Language,
    patient: &user::Model,
    profile: &Map<String, Value>,
    on: NaiveDate,
) -> Value {
    let birthday = profile
        .get("birthday")
        .and_then(Value::as_str)
        .and_then(|b| NaiveDate::parse_from_str(b, "%Y-%m-%d").ok());
    let age = birthday.map(|born| {
        let mut years = on.year() - born.year();
        if (on.month(), on.day()) < (born.month(), born.day()) {
            years -= 1;
        }
        tr.text_with("age-years", &[("years", years.max(0).to_string())])
    });
    json!({
        "name": format!("{} {}", patient.first_name, patient.last_name),
        "birthday": birthday.map(|b| format::short_date(language, b)),
        "age": age,
        "gender": profile.get("gender").and_then(Value::as_i64).map(|g| translated_or_raw(tr, "gender", &g.to_string())),
        "physician": profile.get("physician").and_then(Value::as_str),
    })
}

/// The profile's risk factors: conditions, smoking, activity, weight and height.
pub fn risk_block(tr: &Translator, language: Language, profile: &Map<String, Value>) -> Value {
    json!({
        "comorbidities": string_list(profile.get("comorbidities")).iter().map(|c| translated_or_raw(tr, "comorbidity", c)).collect::<Vec<_>>(),
        "smoker": profile.get("smoker").and_then(Value::as_bool).map(|s| tr.text(if s { "yes" } else { "no" })),
        "activity": profile.get("activity").and_then(Value::as_str).map(|a| translated_or_raw(tr, "activity", a)),
        "weight": profile.get("weight").and_then(Value::as_f64).map(|w| format!("{} {}", format::decimal(language, w, 1), tr.text("kg"))),
        "length": profile.get("length").and_then(Value::as_f64).map(|l| format!("{} {}", format::decimal(language, l, 1), tr.text("cm"))),
    })
}
