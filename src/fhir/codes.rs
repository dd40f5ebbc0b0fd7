//! The code systems and codes of Tacho's FHIR resources. `docs/fhir.md` lists each with its
//! source; a change here is a change of that table.

use super::model::{CodeableConcept, Coding};

/// LOINC.
pub const LOINC: &str = "http://loinc.org";
/// SNOMED CT.
pub const SNOMED: &str = "http://snomed.info/sct";
/// UCUM, the units of measure.
pub const UCUM: &str = "http://unitsofmeasure.org";
/// FHIR's observation categories.
pub const OBSERVATION_CATEGORY: &str = "http://terminology.hl7.org/CodeSystem/observation-category";
/// HL7 v2 table 0074, the diagnostic service sections (`EC`: electrocardiac).
pub const DIAGNOSTIC_SECTION: &str = "http://terminology.hl7.org/CodeSystem/v2-0074";
/// FHIR's reasons for a missing value.
pub const DATA_ABSENT_REASON: &str = "http://terminology.hl7.org/CodeSystem/data-absent-reason";
/// HL7 v3 observation interpretations (`IND`: indeterminate).
pub const INTERPRETATION: &str =
    "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation";
/// BCP-47 language tags.
pub const LANGUAGE: &str = "urn:ietf:bcp:47";
/// The system of a user's identifier (a patient's, a reviewing physician's): the Tacho user
/// id.
pub const PATIENT_ID_SYSTEM: &str = "urn:tacho:user-id";
/// Tacho's own codes, where LOINC and SNOMED CT have none (see `docs/fhir.md`).
pub const TACHO: &str = "urn:tacho:codes";

/// The kinds of Observation made of one analysed measurement, in the order a search lists
/// them. Every analysed measurement has all of them: a value that could not be read is an
/// Observation with a `dataAbsentReason`, never a missing one (and never a guess).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObservationKind {
    HeartRate,
    Rhythm,
    Sdnn,
    Rmssd,
    Pnn50,
    SignalQuality,
    Symptoms,
    Conclusion,
}

impl ObservationKind {
    pub const ALL: [ObservationKind; 8] = [
        ObservationKind::HeartRate,
        ObservationKind::Rhythm,
        ObservationKind::Sdnn,
        ObservationKind::Rmssd,
        ObservationKind::Pnn50,
        ObservationKind::SignalQuality,
        ObservationKind::Symptoms,
        ObservationKind::Conclusion,
    ];

    /// The suffix of its id: `<measurement id>-<suffix>`.
    pub fn suffix(self) -> &'static str {
        match self {
            ObservationKind::HeartRate => "heart-rate",
            ObservationKind::Rhythm => "rhythm",
            ObservationKind::Sdnn => "sdnn",
            ObservationKind::Rmssd => "rmssd",
            ObservationKind::Pnn50 => "pnn50",
            ObservationKind::SignalQuality => "signal-quality",
            ObservationKind::Symptoms => "symptoms",
            ObservationKind::Conclusion => "conclusion",
        }
    }

    pub fn from_suffix(suffix: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.suffix() == suffix)
    }

    /// Its code: LOINC where LOINC has one, Tacho's otherwise.
    pub fn coding(self) -> Coding {
        match self {
            ObservationKind::HeartRate => Coding::new(LOINC, "8867-4", "Heart rate"),
            ObservationKind::Rhythm => Coding::new(LOINC, "8884-9", "Heart rate rhythm"),
            ObservationKind::Sdnn => Coding::new(
                LOINC,
                "80404-7",
                "R-R interval.standard deviation (Heart rate variability)",
            ),
            ObservationKind::Rmssd => Coding::new(
                TACHO,
                "rmssd",
                "Root mean square of successive R-R interval differences",
            ),
            ObservationKind::Pnn50 => Coding::new(
                TACHO,
                "pnn50",
                "Share of successive R-R intervals differing by more than 50 ms",
            ),
            ObservationKind::SignalQuality => {
                Coding::new(TACHO, "signal-quality", "Signal quality of the recording")
            }
            ObservationKind::Symptoms => {
                Coding::new(TACHO, "symptoms", "Symptoms reported with the recording")
            }
            ObservationKind::Conclusion => {
                Coding::new(TACHO, "rhythm-conclusion", "Physician's rhythm conclusion")
            }
        }
    }

    /// Whether a search's `code` token (`system|code`, `|code` or `code`) names this kind.
    pub fn matches(self, token: &str) -> bool {
        let coding = self.coding();
        match token.split_once('|') {
            Some(("", code)) => code == coding.code,
            Some((system, code)) => system == coding.system && code == coding.code,
            None => token == coding.code,
        }
    }
}

/// The category of an Observation: heart rate is a vital sign, the rest are findings of an
/// examination.
pub fn observation_category(kind: ObservationKind) -> CodeableConcept {
    match kind {
        ObservationKind::HeartRate => CodeableConcept::of(Coding::new(
            OBSERVATION_CATEGORY,
            "vital-signs",
            "Vital Signs",
        )),
        ObservationKind::Symptoms => {
            CodeableConcept::of(Coding::new(OBSERVATION_CATEGORY, "survey", "Survey"))
        }
        _ => CodeableConcept::of(Coding::new(OBSERVATION_CATEGORY, "exam", "Exam")),
    }
}

/// A rhythm label (an analysis' label, or a physician's conclusion by its wire name) as a
/// concept: SNOMED CT where it has the finding, Tacho's code otherwise.
pub fn rhythm(label: &str) -> Option<Coding> {
    let snomed = |code: &str, display: &str| Some(Coding::new(SNOMED, code, display));
    match label {
        "sinus_rhythm" => snomed("426783006", "Sinus rhythm"),
        "bradycardia" => snomed("48867003", "Bradycardia"),
        "tachycardia" => snomed("3424008", "Tachycardia"),
        "irregular_rhythm" => snomed("361137007", "Irregular heart beat"),
        "atrial_fibrillation" => snomed("49436004", "Atrial fibrillation"),
        "extrasystoles_isolated" => Some(Coding::new(
            TACHO,
            "extrasystoles-isolated",
            "One or two premature beats in an otherwise regular rhythm",
        )),
        "extrasystoles_frequent" => Some(Coding::new(
            TACHO,
            "extrasystoles-frequent",
            "Three or more premature beats in a minute",
        )),
        _ => None,
    }
}

/// The category of every DiagnosticReport: electrocardiac (HL7 v2 table 0074, `EC`), and
/// Tacho's kind of report.
pub fn report_category(periodic: bool) -> Vec<CodeableConcept> {
    let kind = if periodic {
        Coding::new(TACHO, "periodic-report", "Periodic report")
    } else {
        Coding::new(TACHO, "measurement-report", "Measurement report")
    };
    vec![
        CodeableConcept::of(Coding::new(DIAGNOSTIC_SECTION, "EC", "Electrocardiac")),
        CodeableConcept::of(kind),
    ]
}

/// Whether a search's `category` token names a report of this kind.
pub fn report_category_matches(periodic: bool, token: &str) -> bool {
    report_category(periodic).iter().any(|concept| {
        concept.coding.iter().any(|c| match token.split_once('|') {
            Some(("", code)) => code == c.code,
            Some((system, code)) => system == c.system && code == c.code,
            None => token == c.code,
        })
    })
}

/// A value that could not be read: the recording's signal was too poor, or there was none.
pub fn unreadable() -> CodeableConcept {
    CodeableConcept::of(Coding::new(DATA_ABSENT_REASON, "error", "Error"))
}

/// A value not given yet (a review still to come).
pub fn not_yet() -> CodeableConcept {
    CodeableConcept::of(Coding::new(
        DATA_ABSENT_REASON,
        "not-performed",
        "Not Performed",
    ))
}

/// The interpretation of a finding that could not be made.
pub fn indeterminate() -> CodeableConcept {
    CodeableConcept::of(Coding::new(INTERPRETATION, "IND", "Indeterminate"))
}
