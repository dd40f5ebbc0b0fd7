//! What every report shares: the page's labels, the patient header and risk factors (as
//! `templates/pdf/common.typ` shares the layout). Results and their colours are in
//! `findings.rs`.

use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::format;
use crate::domain::account::Language;
use crate::domain::json::string_list;
use crate::domain::person_name::full_name;
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

/// The render data of a report and the instant it reflects (the latest change of anything
/// it shows).
pub struct ReportData<D> {
    /// What the template reads as `/data.json`.
    pub data: D,
    /// Printed as the "generated on" time and stamped on the PDF.
    pub as_of: DateTime<Utc>,
}

/// The direction a report's language is written in, which the templates lay the page out by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Left to right.
    Ltr,
    /// Right to left (Arabic).
    Rtl,
}

impl Direction {
    /// The direction of `language`.
    pub fn of(language: Language) -> Self {
        if language == Language::Ar {
            Direction::Rtl
        } else {
            Direction::Ltr
        }
    }
}

/// A report's messages by key, as the templates read them (`L`, from `/page.json`).
///
/// Kept in the order they were added, since the serialised order is part of the PDF's cache
/// key; a key added again keeps its place and takes the new text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Labels(Vec<(&'static str, String)>);

impl Labels {
    /// Sets the text of `key`.
    pub fn insert(&mut self, key: &'static str, text: String) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some((_, old)) => *old = text,
            None => self.0.push((key, text)),
        }
    }
}

impl Serialize for Labels {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// The patient header every report prints. Each missing fact is `null`, which the templates
/// print as "not given".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PatientHeader {
    pub name: String,
    /// The date of birth in the language's figures.
    pub birthday: Option<String>,
    /// The age in years on the day the report is about, as a sentence.
    pub age: Option<String>,
    pub gender: Option<String>,
    pub physician: Option<String>,
}

/// The profile's risk factors, translated and formatted; each missing one is `null`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RiskFactors {
    pub comorbidities: Vec<String>,
    /// "Yes" or "No".
    pub smoker: Option<String>,
    pub activity: Option<String>,
    /// With its unit.
    pub weight: Option<String>,
    /// The height, with its unit.
    pub length: Option<String>,
}

/// The instant a report reflects: the latest change of anything it shows. Printed as its
/// "generated on" time, so that rendering again gives the same PDF.
pub fn as_of(changes: &[i64]) -> DateTime<Utc> {
    let latest = changes.iter().copied().max().unwrap_or(0);
    Utc.timestamp_millis_opt(latest)
        .single()
        .unwrap_or_default()
}

/// What every report of one template in one language shares: the language, its direction
/// and the messages. Part of the render data as its `lang`, `dir` and `labels`, and served to
/// the templates apart as `/page.json` ([`crate::pdf::TemplateData`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Page {
    /// The language's code.
    pub lang: &'static str,
    pub dir: Direction,
    pub labels: Labels,
}

impl Page {
    /// The page of `language`: the shared labels, `own`, and "page x of y" (with `{page}` and
    /// `{total}` for the template).
    pub fn new(tr: &Translator, language: Language, own: &[&'static str]) -> Page {
        let mut labels = Labels::default();
        for &key in SHARED_LABELS.iter().chain(own) {
            labels.insert(key, tr.text(key));
        }
        labels.insert(
            "page-of",
            tr.text_with(
                "page-of",
                &[("page", "{page}".into()), ("total", "{total}".into())],
            ),
        );
        Page {
            lang: language.code(),
            dir: Direction::of(language),
            labels,
        }
    }
}

/// The footer's "generated on" sentence: `as_of` in `zone`. Kept out of the labels, which
/// are the same for every report of a language.
pub fn generated_on(tr: &Translator, as_of: DateTime<Utc>, zone: Tz) -> String {
    let local = as_of.with_timezone(&zone);
    let generated = format!(
        "{} {}",
        format::short_date(tr.language(), local.date_naive()),
        format::time(local)
    );
    tr.text_with("generated-on", &[("date", generated)])
}

/// The colour of a physician's conclusion: its rhythm label's indicator colour, grey for free
/// text, whose words carry it.
pub fn conclusion_colour(label: &str) -> crate::analysis::Colour {
    crate::analysis::Label::from_wire(label)
        .map_or(crate::analysis::Colour::Grey, |l| l.indicator().colour())
}

/// "Reviewed by `name` on `date`", or "Reviewed on `date`" when the reviewer's name is not
/// known: the words beside a conclusion in the portal and in the PDF.
pub fn reviewed_by(tr: &Translator, name: Option<&str>, date: String) -> String {
    match name {
        Some(name) => tr.text_with(
            "reviewed-by-on",
            &[("name", name.to_owned()), ("date", date)],
        ),
        None => tr.text_with("reviewed-on", &[("date", date)]),
    }
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
) -> PatientHeader {
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
    PatientHeader {
        name: full_name(&patient.first_name, &patient.last_name),
        birthday: birthday.map(|b| format::short_date(language, b)),
        age,
        gender: profile
            .get("gender")
            .and_then(Value::as_i64)
            .map(|g| translated_or_raw(tr, "gender", &g.to_string())),
        physician: profile
            .get("physician")
            .and_then(Value::as_str)
            .map(str::to_owned),
    }
}

/// The profile's risk factors: conditions, smoking, activity, weight and height.
pub fn risk_block(
    tr: &Translator,
    language: Language,
    profile: &Map<String, Value>,
) -> RiskFactors {
    let measure = |key: &str, unit: &str| {
        profile
            .get(key)
            .and_then(Value::as_f64)
            .map(|v| format!("{} {}", format::decimal(language, v, 1), tr.text(unit)))
    };
    RiskFactors {
        comorbidities: string_list(profile.get("comorbidities"))
            .iter()
            .map(|c| translated_or_raw(tr, "comorbidity", c))
            .collect(),
        smoker: profile
            .get("smoker")
            .and_then(Value::as_bool)
            .map(|s| tr.text(if s { "yes" } else { "no" })),
        activity: profile
            .get("activity")
            .and_then(Value::as_str)
            .map(|a| translated_or_raw(tr, "activity", a)),
        weight: measure("weight", "kg"),
        length: measure("length", "cm"),
    }
}
