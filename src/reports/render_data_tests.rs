//! The render data as the templates receive it. Its shape is otherwise only checked when typst
//! compiles a template, and its serialised bytes are the PDF cache key, so a change of a key,
//! its place, its nesting or its JSON type (typst tells an integer from a float, and a `null`
//! from a missing key) is caught here.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Value, json};

use super::common::ReportData;
use super::{measurement, periodic};
use crate::domain::account::Language;
use crate::domain::measurement::Status;
use crate::pdf::TemplateData;
use crate::store::entities::{measurement as stored, profile, report, user};

const MEASUREMENT_TYP: &str = include_str!("../../templates/pdf/measurement.typ");
const PERIODIC_TYP: &str = include_str!("../../templates/pdf/periodic.typ");
const COMMON_TYP: &str = include_str!("../../templates/pdf/common.typ");
const CHARTS_TYP: &str = include_str!("../../templates/pdf/charts.typ");

/// A patient, shared with the other report tests and the actions' tests.
pub(crate) fn patient() -> user::Model {
    user::Model {
        id: "6740a0000000000000000002".into(),
        email: "anna@tacho.test".into(),
        password_hash: String::new(),
        first_name: "Anna".into(),
        last_name: "Janssens".into(),
        phone_number: None,
        language: "NL".into(),
        time_zone: "Europe/Brussels".into(),
        activation: true,
        roles: json!([]),
        profile_image: None,
        failed_count: 0,
        last_failed_timestamp: None,
        password_change_due: false,
        legal_hold: false,
        erased_timestamp: None,
        deactivation_timestamp: None,
        creation_timestamp: 0,
        update_timestamp: 0,
    }
}

fn profile() -> profile::Model {
    profile::Model {
        id: "6740a0000000000000000002".into(),
        data: json!({"birthday": "1958-03-14", "gender": 2, "comorbidities": ["HYPERTENSION"],
            "smoker": false, "activity": "MODERATELY_ACTIVE", "weight": 68, "length": 165,
            "physician": "Dr. Jan Peeters"}),
        country: None,
        city: None,
        physician: None,
        gender: Some(2),
        creation_timestamp: 0,
        update_timestamp: 0,
    }
}

/// A stored measurement of `payload`, analysed as the server analyses uploads.
fn measurement(payload: Value) -> stored::Model {
    let mut data = payload.as_object().cloned().unwrap_or_default();
    if !data.is_empty() {
        let (analysis, _) = crate::domain::measurement::analyse(&data);
        crate::domain::measurement::write_analysis(&mut data, &analysis);
    }
    stored::Model {
        id: "6740a0000000000000000001".into(),
        creator_id: "6740a0000000000000000002".into(),
        status: Status::Reviewed,
        data: Value::Object(data).to_string(),
        measurement_timestamp: Some(1_795_217_400_000),
        heartrate: None,
        indicator: None,
        heart_rate: None,
        result: None,
        summary: None,
        review_label: None,
        reviewer_id: None,
        review_timestamp: None,
        creation_timestamp: 1_795_217_400_000,
        update_timestamp: 1_795_217_460_000,
        status_changed_timestamp: 1_795_217_460_000,
    }
}

/// Measurement reports: a reviewed one with symptoms and both charts, a failed analysis, and
/// one with nothing but an empty payload and no profile.
fn measurement_reports() -> Vec<Value> {
    let mut sinus: Value =
        serde_json::from_str(include_str!("../../tests/fixtures/sinus_72.json")).unwrap();
    sinus["context"] =
        json!({"symptoms": ["PALPITATIONS"], "symptomSeverity": 3, "activity": "resting"});
    sinus["review"] = json!({"diagnosis": "Sinus rhythm.", "label": "sinus_rhythm", "patient_note": "No abnormalities.", "review_timestamp": 1_795_217_460_000_i64});
    let failed: Value =
        serde_json::from_str(include_str!("../../tests/fixtures/no_heartrate.json")).unwrap();
    let (patient, profile) = (patient(), profile());
    [(sinus, Some(&profile)), (failed, None), (json!({}), None)]
        .into_iter()
        .map(|(payload, profile)| {
            let m = measurement(payload);
            let ReportData { data, .. } =
                measurement::build(&measurement::MeasurementReportInput {
                    measurement: &m,
                    patient: &patient,
                    profile,
                    language: Language::En,
                    time_zone: chrono_tz::Europe::Brussels,
                    reviewer: Some("Dr Jan Peeters"),
                });
            serde_json::to_value(&data).unwrap()
        })
        .collect()
}

/// Periodic reports: a week of measurements of every result, with and without symptoms (and
/// one stored before measurements had results), a week of one measurement, and an empty week
/// without a profile.
fn periodic_reports() -> Vec<Value> {
    let start = 1_795_217_400_000_i64;
    let results = [
        "regular",
        "possibly_irregular",
        "possible_atrial_fibrillation",
        "quality_too_low",
    ];
    let items: Vec<Value> = (0..12)
        .map(|i| {
            json!({
                "id": format!("m{i}"),
                "measurement_timestamp": start + i * 40_000_000,
                "heart_rate": 61.5 + i as f64 * 3.0,
                "result": (results[i as usize % 4]),
                "indicator": "normal",
                "labels": ["sinus_rhythm", "tachycardia"],
                "status": "analyzed",
                "label": if i % 2 == 0 { json!("note") } else { Value::Null },
                "symptoms": if i % 3 == 0 { json!(["DIZZINESS"]) } else { json!([]) },
                "quality": "good",
            })
        })
        .collect();
    let mut items = items;
    items.push(
        json!({"id": "old", "measurement_timestamp": null, "status": "analyzed",
        "label": null, "symptoms": ["DIZZINESS"]}),
    );
    let one = items[..1].to_vec();
    // More than a table lists: a digest per day, and the flagged ones listed.
    let mut many: Vec<Value> = (0..150)
        .map(|i| {
            json!({
                "id": format!("n{i}"),
                "measurement_timestamp": start + i * 4_000_000,
                "heart_rate": if i % 7 == 0 { Value::Null } else { json!(70.0 + i as f64 * 0.1) },
                "result": (results[i as usize % 4]),
                "indicator": if i % 4 == 2 { "urgent" } else { "normal" },
                "labels": [],
                "status": if i % 5 == 0 { "reviewed" } else { "analyzed" },
                "label": null,
                "symptoms": [],
                "quality": "good",
            })
        })
        .collect();
    many.push(items[12].clone());
    let (patient, profile) = (patient(), profile());
    [
        (items, Some(&profile)),
        (one, None),
        (Vec::new(), None),
        (many, None),
    ]
    .into_iter()
    .map(|(items, profile)| {
        let report = report::Model {
            id: "r1".into(),
            user_id: patient.id,
            creator_id: None,
            group_id: None,
            trigger: crate::domain::periods::Trigger::Manual,
            status: report::ReportStatus::Complete,
            dedupe_key: None,
            period_start_timestamp: start,
            period_end_timestamp: start + 7 * 86_400_000,
            data: json!({ "measurements": items }).to_string(),
            creation_timestamp: start,
            update_timestamp: start,
        };
        let ReportData { data, .. } = periodic::build(&periodic::PeriodicReportInput {
            report: &report,
            patient: &patient,
            profile,
            language: Language::En,
            time_zone: chrono_tz::Europe::Brussels,
        })
        .expect("a readable report");
        serde_json::to_value(&data).unwrap()
    })
    .collect()
}

/// The fields a template reads of `object` (`object.field`, where `object` is a whole name).
fn fields_read<'a>(template: &'a str, object: &str) -> BTreeSet<&'a str> {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    let pattern = format!("{object}.");
    template
        .match_indices(&pattern)
        .filter(|(at, _)| !template[..*at].ends_with(ident))
        .map(|(at, _)| {
            let rest = &template[at + pattern.len()..];
            &rest[..rest.find(|c| !ident(c)).unwrap_or(rest.len())]
        })
        .filter(|field| !field.is_empty())
        .collect()
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every path in `values` with the JSON types met there, one line each, in the order of the
/// keys (each object's keys in the order first met): array items share the path `[]`, a key
/// some objects lack is also `absent`, and the labels (checked against the templates
/// instead) are not descended into.
fn shape(values: &[Value]) -> String {
    #[derive(Default)]
    struct Shape {
        kinds: HashMap<String, BTreeSet<&'static str>>,
        /// The keys met in the objects at a path, and `[]` for the items of arrays.
        children: HashMap<String, Vec<String>>,
    }
    fn join(path: &str, key: &str) -> String {
        match (path, key) {
            ("", _) => key.to_owned(),
            (_, "[]") => format!("{path}[]"),
            _ => format!("{path}.{key}"),
        }
    }
    impl Shape {
        fn add(&mut self, path: &str, kind: &'static str) {
            self.kinds.entry(path.to_owned()).or_default().insert(kind);
        }
        fn child(&mut self, path: &str, key: &str) {
            let known = self.children.entry(path.to_owned()).or_default();
            if !known.iter().any(|k| k == key) {
                known.push(key.to_owned());
            }
        }
        fn walk(&mut self, path: &str, value: &Value) {
            self.add(path, json_type(value));
            match value {
                Value::Object(_) if path == "labels" => {}
                Value::Object(map) => {
                    for (key, child) in map {
                        self.child(path, key);
                        self.walk(&join(path, key), child);
                    }
                }
                Value::Array(items) => {
                    for item in items {
                        self.child(path, "[]");
                        self.walk(&join(path, "[]"), item);
                    }
                }
                _ => {}
            }
        }
        /// Marks the keys an object lacks that others at its path have: all of them are
        /// known only once every value was walked.
        fn absent(&mut self, path: &str, value: &Value) {
            let keys = self.children.get(path).cloned().unwrap_or_default();
            match value {
                Value::Object(_) if path == "labels" => {}
                Value::Object(map) => {
                    for key in keys {
                        match map.get(&key) {
                            Some(child) => self.absent(&join(path, &key), child),
                            None => self.add(&join(path, &key), "absent"),
                        }
                    }
                }
                Value::Array(items) => {
                    for item in items {
                        self.absent(&join(path, "[]"), item);
                    }
                }
                _ => {}
            }
        }
        fn print(&self, path: &str, out: &mut String) {
            if let Some(kinds) = self.kinds.get(path).filter(|_| !path.is_empty()) {
                let kinds: Vec<&str> = kinds.iter().copied().collect();
                out.push_str(&format!("{path}: {}\n", kinds.join("|")));
            }
            for key in self.children.get(path).into_iter().flatten() {
                self.print(&join(path, key), out);
            }
        }
    }
    let mut shape = Shape::default();
    for value in values {
        shape.walk("", value);
    }
    for value in values {
        shape.absent("", value);
    }
    let mut out = String::new();
    shape.print("", &mut out);
    out
}

#[test]
fn the_templates_find_every_field_and_label_they_read() {
    for (name, template, reports) in [
        ("measurement", MEASUREMENT_TYP, measurement_reports()),
        ("periodic", PERIODIC_TYP, periodic_reports()),
    ] {
        // The page's fields are the data's too: `TemplateData::page` serves them apart.
        let fields = fields_read(COMMON_TYP, "P")
            .union(&fields_read(template, "d"))
            .copied()
            .collect::<BTreeSet<_>>();
        let labels = fields_read(COMMON_TYP, "L")
            .union(&fields_read(template, "L"))
            .copied()
            .collect::<BTreeSet<_>>();
        assert!(
            fields.contains("labels")
                && fields.contains("generated_on")
                && labels.contains("brand"),
            "{name}: {fields:?}"
        );
        for data in &reports {
            for field in &fields {
                assert!(data.get(field).is_some(), "{name}: no `{field}`");
            }
            for label in &labels {
                assert!(
                    data["labels"][label].is_string(),
                    "{name}: no label `{label}`"
                );
            }
        }
    }
}

/// The modules read `/page.json` alone, or typst could not keep them from one report to the
/// next; and the page is what the data says of the language, with nothing of one report.
#[test]
fn the_page_is_the_language_and_its_labels_only() {
    for module in [COMMON_TYP, CHARTS_TYP] {
        assert!(!module.contains(r#"json("/data.json")"#));
    }
    let (patient, profile) = (patient(), profile());
    let built: Vec<(Value, Value)> = [
        json!({}),
        json!({"context": {"symptoms": ["PALPITATIONS"]}}),
    ]
    .into_iter()
    .enumerate()
    .map(|(day, payload)| {
        let mut m = measurement(payload);
        m.update_timestamp += day as i64 * 86_400_000;
        let built = measurement::build(&measurement::MeasurementReportInput {
            measurement: &m,
            patient: &patient,
            profile: Some(&profile),
            language: Language::Ar,
            time_zone: chrono_tz::Europe::Brussels,
            reviewer: None,
        });
        let data = serde_json::to_value(&built.data).unwrap();
        let page = serde_json::to_value(built.data.page()).unwrap();
        assert_eq!(
            page,
            json!({"lang": data["lang"], "dir": data["dir"], "labels": data["labels"]})
        );
        assert_eq!(page["dir"], "rtl");
        (page, data)
    })
    .collect();
    assert_eq!(built[0].0, built[1].0, "two measurements, one page");
    assert_ne!(
        built[0].1["generated_on"], built[1].1["generated_on"],
        "each with its own footer"
    );
}

#[test]
fn the_measurement_report_data_keeps_its_shape() {
    assert_eq!(shape(&measurement_reports()), MEASUREMENT_SHAPE);
}

#[test]
fn the_periodic_report_data_keeps_its_shape() {
    assert_eq!(shape(&periodic_reports()), PERIODIC_SHAPE);
}

/// The shape of the data `measurement.typ` reads (labels aside), as the `json!` trees this
/// data replaced had it.
const MEASUREMENT_SHAPE: &str = "\
version: int
lang: string
dir: string
labels: object
generated_on: string
patient: object
patient.name: string
patient.birthday: null|string
patient.age: null|string
patient.gender: null|string
patient.physician: null|string
measurement: object
measurement.date: string
measurement.time: string
measurement.zone: string
measurement.status: object
measurement.status.key: string
measurement.status.label: string
measurement.review_note: null|string
measurement.conclusion: null|object
measurement.conclusion.label: string
measurement.conclusion.color: string
measurement.conclusion.by: string
measurement.symptoms: array
measurement.symptoms[]: string
measurement.severity: null|string
measurement.activity: null|string
measurement.duration: null|string
findings: object
findings.analysed: bool
findings.failed: bool
findings.heart_rate: int|null
findings.result: object
findings.result.key: string
findings.result.label: string
findings.result.colour: string
findings.result.color: string
findings.labels: array
findings.labels[]: string
findings.reasons: array
findings.reasons[]: string
findings.quality: null|object
findings.quality.key: string
findings.quality.label: string
findings.quality.color: string
findings.quality.score: string
findings.quality.accepted_beats: int
findings.quality.rejected_beats: int
findings.hrv: array
findings.hrv[]: object
findings.hrv[].name: string
findings.hrv[].meaning: string
findings.hrv[].value: string
findings.hrv[].unit: string
findings.tachogram: null|object
findings.tachogram.svg: string
findings.tachogram.marks: array
findings.tachogram.marks[]: array
findings.tachogram.marks[][]: float
findings.tachogram.points: int
findings.tachogram.markers: bool
findings.tachogram.stretches_svg: string
findings.tachogram.x_ticks: array
findings.tachogram.x_ticks[]: object
findings.tachogram.x_ticks[].at: float
findings.tachogram.x_ticks[].label: string
findings.tachogram.y_ticks: array
findings.tachogram.y_ticks[]: object
findings.tachogram.y_ticks[].at: float
findings.tachogram.y_ticks[].label: string
findings.strip: null|object
findings.strip.rows: array
findings.strip.rows[]: object
findings.strip.rows[].svg: string
findings.strip.rows[].accepted: array
findings.strip.rows[].accepted[]: array
findings.strip.rows[].accepted[][]: float
findings.strip.rows[].rejected: array
findings.strip.rows[].rejected[]: array
findings.strip.rows[].rejected[][]: float
findings.strip.rows[].unsure: array
findings.strip.rows[].x_ticks: array
findings.strip.rows[].x_ticks[]: object
findings.strip.rows[].x_ticks[].at: float
findings.strip.rows[].x_ticks[].label: string
findings.strip.row_seconds: float
findings.strip.accepted_beats: int
findings.strip.rejected_beats: int
findings.strip.unsure_beats: int
risk: object
risk.comorbidities: array
risk.comorbidities[]: string
risk.smoker: null|string
risk.activity: null|string
risk.weight: null|string
risk.length: null|string
";

/// The shape of the data `periodic.typ` reads (labels aside), as the `json!` trees this data
/// replaced had it.
const PERIODIC_SHAPE: &str = "\
version: int
report_id: string
lang: string
dir: string
labels: object
generated_on: string
period: object
period.range: string
period.zone: string
patient: object
patient.name: string
patient.birthday: null|string
patient.age: null|string
patient.gender: null|string
patient.physician: null|string
risk: object
risk.comorbidities: array
risk.comorbidities[]: string
risk.smoker: null|string
risk.activity: null|string
risk.weight: null|string
risk.length: null|string
summary: object
summary.count: int
summary.classes: array
summary.classes[]: object
summary.classes[].key: string
summary.classes[].label: string
summary.classes[].color: string
summary.classes[].count: int
summary.burden: null|object
summary.burden.share: string
summary.burden.detail: string
summary.burden.color: string
summary.heart_rate: null|object
summary.heart_rate.min: int
summary.heart_rate.mean: int
summary.heart_rate.max: int
summary.heart_rate.sd: null|string
summary.quality: array
summary.quality[]: object
summary.quality[].key: string
summary.quality[].label: string
summary.quality[].count: int
summary.good_share: null|string
chart: object
chart.points: array
chart.points[]: array
chart.points[][]: float|int|string
chart.marks: array
chart.marks[]: object
chart.marks[].color: string
chart.marks[].at: array
chart.marks[].at[]: array
chart.marks[].at[][]: float
chart.ticks: array
chart.ticks[]: array
chart.ticks[][]: float|string
chart.y_min: float
chart.y_max: float
time_of_day: array
time_of_day[]: object
time_of_day[].label: string
time_of_day[].count: int
symptoms: array
symptoms[]: object
symptoms[].label: string
symptoms[].count: int
symptoms[].by_class: array
symptoms[].by_class[]: object
symptoms[].by_class[].key: string
symptoms[].by_class[].label: string
symptoms[].by_class[].color: string
symptoms[].by_class[].count: int
symptoms[].muted: absent|bool
rows: array
rows[]: object
rows[].date: null|string
rows[].time: null|string
rows[].heart_rate: int|null
rows[].result: object
rows[].result.label: string
rows[].result.color: string
rows[].review: string
rows[].label: null|string
rows[].symptoms: string
digest: null|object
digest.title: string
digest.column: string
digest.note: string
digest.lines: array
digest.lines[]: object
digest.lines[].when: null|string
digest.lines[].count: int
digest.lines[].classes: array
digest.lines[].classes[]: object
digest.lines[].classes[].key: string
digest.lines[].classes[].label: string
digest.lines[].classes[].color: string
digest.lines[].classes[].count: int
digest.lines[].heart_rate: array|null
digest.lines[].heart_rate[]: int
digest.lines[].reviewed: int
digest.flagged_title: string
digest.flagged_note: string
";
