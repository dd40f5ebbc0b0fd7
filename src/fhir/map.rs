//! From Tacho's records to FHIR resources: pure functions of what the store read (through the
//! reader's scope), with no access of their own.

use chrono_tz::Tz;
use serde_json::Value;

use super::codes::{self, ObservationKind};
use super::model::*;
use crate::domain::id::Id;
use crate::domain::time::local_time;

/// What every result says: Tacho screens, it does not diagnose.
pub const SCREENING_NOTE: &str = "Screening result of a fingertip photoplethysmography \
recording, analysed by Tacho; not a diagnosis.";

/// A FHIR `instant`/`dateTime` of `millis` in `zone` (the patient's), with its offset.
pub fn date_time(millis: i64, zone: Tz) -> String {
    match local_time(zone, millis) {
        Some(local) => local.to_rfc3339_opts(chrono::SecondsFormat::Millis, false),
        None => crate::domain::time::rfc3339_millis(millis),
    }
}

fn meta(updated: i64, zone: Tz) -> Meta {
    Meta {
        last_updated: date_time(updated, zone),
    }
}

/// What a Patient is made of: the account and, when it has one, the profile.
pub struct PatientFacts<'a> {
    pub id: &'a Id,
    pub first_name: &'a str,
    pub last_name: &'a str,
    pub language: &'a str,
    pub active: bool,
    pub updated: i64,
    pub zone: Tz,
    /// ISO/IEC 5218 (0 not known, 1 male, 2 female, 9 not applicable).
    pub gender: Option<i32>,
    /// `YYYY-MM-DD`.
    pub birthday: Option<&'a str>,
}

/// The Patient resource of an account.
pub fn patient(facts: &PatientFacts) -> Patient {
    let gender = facts.gender.and_then(|code| match code {
        0 => Some("unknown"),
        1 => Some("male"),
        2 => Some("female"),
        // ISO/IEC 5218 "not applicable" has no FHIR administrative gender; FHIR's `other`
        // is for a gender the patient states, which this is not.
        _ => None,
    });
    let text = format!("{} {}", facts.first_name, facts.last_name)
        .trim()
        .to_owned();
    let language = facts.language.to_ascii_lowercase();
    Patient {
        id: facts.id.to_string(),
        meta: meta(facts.updated, facts.zone),
        identifier: vec![Identifier {
            system: codes::PATIENT_ID_SYSTEM.to_owned(),
            value: facts.id.to_string(),
        }],
        active: facts.active,
        name: vec![HumanName {
            use_: "official".to_owned(),
            family: Some(facts.last_name.to_owned()).filter(|s| !s.is_empty()),
            given: [facts.first_name]
                .into_iter()
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            text,
        }],
        gender: gender.map(str::to_owned),
        birth_date: facts.birthday.map(str::to_owned),
        communication: vec![PatientCommunication {
            language: CodeableConcept::of(Coding {
                system: codes::LANGUAGE.to_owned(),
                code: language,
                display: None,
            }),
            preferred: true,
        }],
    }
}

/// The id of Tacho's analysis as a Device, by its version.
pub fn analysis_device_id(version: &str) -> String {
    let version: String = version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    format!("tacho-analysis-{version}")
}

/// Tacho's rhythm analysis as a software Device.
pub fn analysis_device(version: &str) -> Device {
    Device {
        id: analysis_device_id(version),
        status: "active".to_owned(),
        manufacturer: Some("Tacho".to_owned()),
        device_name: vec![DeviceName {
            name: "Tacho rhythm analysis".to_owned(),
            kind: "user-friendly-name".to_owned(),
        }],
        model_number: None,
        kind: CodeableConcept::of(Coding::new(
            codes::TACHO,
            "analysis",
            "Rhythm analysis software",
        )),
        version: vec![DeviceVersion {
            kind: None,
            value: version.to_owned(),
        }],
        patient: None,
    }
}

/// The id of the phone and app a measurement was recorded with.
pub fn phone_device_id(measurement: &Id) -> String {
    format!("{measurement}-phone")
}

/// The phone and app a measurement was recorded with, as its payload names them.
pub fn phone_device(measurement: &Id, patient: &Id, data: &Value) -> Device {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let device = data.get("device");
    let field = |name: &str| text(device.and_then(|d| d.get(name)));
    let model = field("model");
    let mut version = Vec::new();
    if let Some(os) = field("os") {
        version.push(DeviceVersion {
            kind: Some(CodeableConcept::text("operating system")),
            value: os,
        });
    }
    if let Some(app) = text(data.get("app").and_then(|a| a.get("version"))) {
        version.push(DeviceVersion {
            kind: Some(CodeableConcept::text("app")),
            value: app,
        });
    }
    Device {
        id: phone_device_id(measurement),
        status: "active".to_owned(),
        manufacturer: field("manufacturer"),
        device_name: vec![DeviceName {
            name: model.clone().unwrap_or_else(|| "Phone".to_owned()),
            kind: "model-name".to_owned(),
        }],
        model_number: model,
        kind: CodeableConcept::of(Coding::new(codes::TACHO, "phone", "Phone with a camera")),
        version,
        patient: Some(Reference::to("Patient", &patient.to_string())),
    }
}

/// One analysed measurement, as its Observations need it.
pub struct MeasurementFacts<'a> {
    pub id: &'a Id,
    pub patient: &'a Id,
    /// The payload with the server's fields (`analysis`, `mostSevereLabel`, `review`).
    pub data: &'a Value,
    pub taken: i64,
    pub updated: i64,
    pub zone: Tz,
}

impl MeasurementFacts<'_> {
    fn analysis(&self) -> Option<&Value> {
        self.data.get("analysis")
    }

    /// The analysis' result key; unreadable unless it read the rhythm.
    fn result(&self) -> Option<&str> {
        self.data
            .get("mostSevereLabel")
            .and_then(|l| l.get("key"))
            .and_then(Value::as_str)
    }

    /// Whether the analysis read the recording: a result other than "quality too low" or
    /// "no result". Nothing is taken from an analysis that did not.
    pub fn readable(&self) -> bool {
        matches!(
            self.result(),
            Some("regular" | "possibly_irregular" | "possible_atrial_fibrillation")
        )
    }

    fn number(&self, path: &[&str]) -> Option<f64> {
        if !self.readable() {
            return None;
        }
        let mut value = self.analysis()?;
        for key in path {
            value = value.get(key)?;
        }
        value.as_f64().filter(|v| v.is_finite())
    }

    /// The analysis version, for its Device.
    pub fn analysis_version(&self) -> String {
        self.analysis()
            .and_then(|a| a.get("version"))
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_owned()
    }

    /// The physician's conclusion: label, reviewer and time.
    fn review(&self) -> Option<(&str, Option<&str>, Option<i64>)> {
        let review = self.data.get("review")?;
        let label = review
            .get("label")
            .and_then(Value::as_str)
            .filter(|l| !l.is_empty())?;
        Some((
            label,
            review.get("reviewer_id").and_then(Value::as_str),
            review.get("review_timestamp").and_then(Value::as_i64),
        ))
    }

    /// The most severe rhythm label the analysis gave (labels come least severe first).
    fn rhythm_label(&self) -> Option<&str> {
        if !self.readable() {
            return None;
        }
        self.analysis()?
            .get("rhythm")?
            .get("labels")?
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .next_back()
    }

    fn symptoms(&self) -> Vec<&str> {
        self.data
            .get("context")
            .and_then(|c| c.get("symptoms"))
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

/// The id of one Observation of a measurement.
pub fn observation_id(measurement: &Id, kind: ObservationKind) -> String {
    format!("{measurement}-{}", kind.suffix())
}

fn quantity(value: f64, unit: &str, code: &str) -> Quantity {
    Quantity {
        value: (value * 100.0).round() / 100.0,
        unit: unit.to_owned(),
        system: codes::UCUM.to_owned(),
        code: code.to_owned(),
    }
}

/// The Observation of `kind` of an analysed measurement.
pub fn observation(facts: &MeasurementFacts, kind: ObservationKind) -> Observation {
    let patient = facts.patient.to_string();
    let mut observation = Observation {
        id: observation_id(facts.id, kind),
        meta: meta(facts.updated, facts.zone),
        status: "final".to_owned(),
        category: vec![codes::observation_category(kind)],
        code: CodeableConcept::of(kind.coding()),
        subject: Reference::to("Patient", &patient),
        effective_date_time: date_time(facts.taken, facts.zone),
        issued: None,
        performer: Vec::new(),
        value_quantity: None,
        value_codeable_concept: None,
        value_string: None,
        data_absent_reason: None,
        interpretation: Vec::new(),
        note: vec![Annotation {
            text: SCREENING_NOTE.to_owned(),
        }],
        device: Reference::to("Device", &analysis_device_id(&facts.analysis_version())),
        derived_from: Vec::new(),
    };
    let unreadable = |o: &mut Observation| {
        o.data_absent_reason = Some(codes::unreadable());
        o.interpretation = vec![codes::indeterminate()];
    };
    match kind {
        ObservationKind::HeartRate => match facts.number(&["heart_rate"]) {
            Some(bpm) => observation.value_quantity = Some(quantity(bpm, "beats/minute", "/min")),
            None => unreadable(&mut observation),
        },
        ObservationKind::Rhythm => match facts.rhythm_label().and_then(codes::rhythm) {
            Some(coding) => observation.value_codeable_concept = Some(CodeableConcept::of(coding)),
            None => unreadable(&mut observation),
        },
        ObservationKind::Sdnn => match facts.number(&["hrv", "sdnn"]) {
            Some(ms) => observation.value_quantity = Some(quantity(ms, "ms", "ms")),
            None => unreadable(&mut observation),
        },
        ObservationKind::Rmssd => match facts.number(&["hrv", "rmssd"]) {
            Some(ms) => observation.value_quantity = Some(quantity(ms, "ms", "ms")),
            None => unreadable(&mut observation),
        },
        ObservationKind::Pnn50 => match facts.number(&["hrv", "pnn50"]) {
            Some(share) => observation.value_quantity = Some(quantity(share * 100.0, "%", "%")),
            None => unreadable(&mut observation),
        },
        ObservationKind::SignalQuality => {
            // The quality is what tells an unreadable recording from a readable one: it is
            // given whether or not the rest could be read.
            let class = facts
                .analysis()
                .and_then(|a| a.get("quality"))
                .and_then(|q| q.get("class"))
                .and_then(Value::as_str);
            match class {
                Some(class) => {
                    observation.value_codeable_concept = Some(CodeableConcept::of(Coding::new(
                        codes::TACHO,
                        &format!("quality-{class}"),
                        &format!("Signal quality: {class}"),
                    )))
                }
                None => observation.data_absent_reason = Some(codes::unreadable()),
            }
            observation.device = Reference::to("Device", &phone_device_id(facts.id));
        }
        ObservationKind::Symptoms => {
            let symptoms = facts.symptoms();
            observation.value_string = Some(if symptoms.is_empty() {
                "none reported".to_owned()
            } else {
                symptoms.join(", ")
            });
            observation.note.clear();
            observation.device = Reference::to("Device", &phone_device_id(facts.id));
        }
        ObservationKind::Conclusion => match facts.review() {
            Some((label, reviewer, at)) => {
                observation.value_codeable_concept = Some(match codes::rhythm(label) {
                    Some(coding) => CodeableConcept::of(coding),
                    None => CodeableConcept::text(label),
                });
                if let Some(reviewer) = reviewer {
                    observation.performer = vec![Reference::practitioner(reviewer)];
                }
                observation.issued = at.map(|at| date_time(at, facts.zone));
                observation.note.clear();
                observation.derived_from = vec![Reference::to(
                    "Observation",
                    &observation_id(facts.id, ObservationKind::Rhythm),
                )];
            }
            None => {
                observation.status = "registered".to_owned();
                observation.data_absent_reason = Some(codes::not_yet());
                observation.note.clear();
            }
        },
    }
    observation
}

/// A stored PDF, as a FHIR attachment pointing at its Binary.
pub struct PdfFacts<'a> {
    pub binary_url: String,
    pub language: &'a str,
    pub title: String,
    pub created: i64,
    pub size: Option<u64>,
    /// SHA-1 of the bytes, base64.
    pub sha1: Option<String>,
}

fn attachment(pdf: &PdfFacts, zone: Tz) -> Attachment {
    Attachment {
        content_type: "application/pdf".to_owned(),
        language: Some(pdf.language.to_owned()),
        url: pdf.binary_url.clone(),
        size: pdf.size,
        hash: pdf.sha1.clone(),
        title: pdf.title.clone(),
        creation: Some(date_time(pdf.created, zone)),
    }
}

/// A measurement's report document as a DiagnosticReport: the measurement's Observations,
/// the physician's conclusion if there is one (else the analysis'), and the PDF.
pub fn measurement_report(
    id: &Id,
    facts: &MeasurementFacts,
    pdf: &PdfFacts,
    created: i64,
) -> DiagnosticReport {
    let review = facts.review();
    // Amended when the physician's conclusion came after the report was made.
    let amended = review
        .and_then(|(_, _, at)| at)
        .is_some_and(|at| at > created);
    let (conclusion, code) = match (review, facts.rhythm_label()) {
        (Some((label, _, _)), _) => (
            label.replace('_', " "),
            codes::rhythm(label).map(CodeableConcept::of),
        ),
        (None, Some(label)) => (
            format!(
                "{} (automatic screening, not reviewed)",
                label.replace('_', " ")
            ),
            codes::rhythm(label).map(CodeableConcept::of),
        ),
        (None, None) => ("unreadable recording: measure again".to_owned(), None),
    };
    DiagnosticReport {
        id: id.to_string(),
        meta: meta(facts.updated.max(created), facts.zone),
        status: if amended { "amended" } else { "final" }.to_owned(),
        category: codes::report_category(false),
        code: CodeableConcept::of(Coding::new(codes::LOINC, "11524-6", "EKG study")),
        subject: Reference::to("Patient", &facts.patient.to_string()),
        effective_date_time: Some(date_time(facts.taken, facts.zone)),
        effective_period: None,
        issued: date_time(created, facts.zone),
        performer: Vec::new(),
        results_interpreter: review
            .and_then(|(_, reviewer, _)| reviewer)
            .map(|r| vec![Reference::practitioner(r)])
            .unwrap_or_default(),
        result: ObservationKind::ALL
            .into_iter()
            .map(|kind| Reference::to("Observation", &observation_id(facts.id, kind)))
            .collect(),
        conclusion: Some(format!("{conclusion}. {SCREENING_NOTE}")),
        conclusion_code: code.into_iter().collect(),
        presented_form: vec![attachment(pdf, facts.zone)],
    }
}

/// A periodic report as a DiagnosticReport over its period.
pub struct PeriodicFacts<'a> {
    pub id: &'a Id,
    pub patient: &'a Id,
    /// The analysed measurements the report lists, each referenced by its rhythm
    /// Observation.
    pub measurements: &'a [Id],
    pub start: i64,
    pub end: i64,
    pub created: i64,
    pub updated: i64,
    pub zone: Tz,
}

/// A periodic report as a DiagnosticReport: its period and its PDF.
pub fn periodic_report(facts: &PeriodicFacts, pdf: &PdfFacts) -> DiagnosticReport {
    DiagnosticReport {
        id: facts.id.to_string(),
        meta: meta(facts.updated, facts.zone),
        status: "final".to_owned(),
        category: codes::report_category(true),
        code: CodeableConcept::of(Coding::new(codes::LOINC, "11524-6", "EKG study")),
        subject: Reference::to("Patient", &facts.patient.to_string()),
        effective_date_time: None,
        effective_period: Some(Period {
            start: date_time(facts.start, facts.zone),
            end: date_time(facts.end, facts.zone),
        }),
        issued: date_time(facts.created, facts.zone),
        performer: Vec::new(),
        results_interpreter: Vec::new(),
        result: facts
            .measurements
            .iter()
            .map(|m| Reference::to("Observation", &observation_id(m, ObservationKind::Rhythm)))
            .collect(),
        conclusion: Some(SCREENING_NOTE.to_owned()),
        conclusion_code: Vec::new(),
        presented_form: vec![attachment(pdf, facts.zone)],
    }
}

/// A report's PDF as a DocumentReference, related to its DiagnosticReport.
pub fn document_reference(report: &DiagnosticReport) -> DocumentReference {
    DocumentReference {
        id: report.id.clone(),
        meta: report.meta.clone(),
        status: "current".to_owned(),
        kind: CodeableConcept::of(Coding::new(codes::LOINC, "11524-6", "EKG study")),
        category: report.category.clone(),
        subject: report.subject.clone(),
        date: report.issued.clone(),
        content: report
            .presented_form
            .iter()
            .map(|attachment| DocumentContent {
                attachment: attachment.clone(),
            })
            .collect(),
        context: DocumentContext {
            related: vec![Reference::to("DiagnosticReport", &report.id)],
        },
    }
}

/// The SHA-1 of `bytes` in base64: FHIR's `Attachment.hash`.
pub fn sha1_base64(bytes: &[u8]) -> String {
    use base64::Engine;
    use sha1::Digest;
    base64::engine::general_purpose::STANDARD.encode(sha1::Sha1::digest(bytes))
}
