//! Measurements as the camera apps upload them: the payload is kept verbatim; the fields Tacho
//! queries and reports on are read from it here, once.

use serde_json::{Map, Value};

use super::json::string_list;
use super::recording_limits::{self, TooLong};
use super::time::MAX_MILLIS;
use crate::analysis::{Abnormality, Analysis, Source, analyse_payload};
use crate::domain::id::Id;

/// Where a measurement is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Stored, not analysed yet.
    Measured,
    /// Results available.
    Analyzed,
    /// The signal could not be analysed.
    AnalysisFailed,
    /// A physician was asked to look at it.
    PendingReview,
    /// A physician reviewed it.
    Reviewed,
}

impl Status {
    /// Every status.
    pub const ALL: [Status; 5] = [
        Status::Measured,
        Status::Analyzed,
        Status::AnalysisFailed,
        Status::PendingReview,
        Status::Reviewed,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Measured => "measured",
            Status::Analyzed => "analyzed",
            Status::AnalysisFailed => "analysis_failed",
            Status::PendingReview => "pending_review",
            Status::Reviewed => "reviewed",
        }
    }

    /// Parses a wire name.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether results exist, so a report can be made.
    pub fn has_results(self) -> bool {
        matches!(
            self,
            Status::Analyzed | Status::PendingReview | Status::Reviewed
        )
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Statuses are written as their wire names.
impl serde::Serialize for Status {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Fields the server writes into `data`; clients may not send them (400 code 15 on upload and
/// update): the physician's review, and the analysis' result ([`ANALYSIS_FIELDS`]).
pub const SERVER_FIELDS: [&str; 5] = ["review", "indicator", "mostSevereLabel", "af", "analysis"];
/// The fields of `data` an analysis writes, in the order they are appended to a payload.
pub const ANALYSIS_FIELDS: [&str; 4] = ["indicator", "mostSevereLabel", "af", "analysis"];
const MAX_TAGS: usize = 50;
const MAX_TAG_CHARS: usize = 100;

/// What is wrong with a measurement payload or update.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataError {
    /// A required field is missing.
    #[error("missing required field `{0}`")]
    Missing(&'static str),
    /// A field has the wrong type or value.
    #[error("`{field}` {rule}")]
    Invalid { field: String, rule: String },
    /// Only staff may write this field.
    #[error("only staff of the patient's group may set `{0}`")]
    StaffOnly(String),
}

impl From<TooLong> for DataError {
    fn from(err: TooLong) -> Self {
        let rule = err.rule();
        invalid(err.field, rule)
    }
}

fn invalid(field: impl Into<String>, rule: impl Into<String>) -> DataError {
    DataError::Invalid {
        field: field.into(),
        rule: rule.into(),
    }
}

/// A new measurement, parsed and analysed.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMeasurement {
    /// The payload as sent, followed by the analysis' fields ([`ANALYSIS_FIELDS`]).
    pub data: Map<String, Value>,
    pub measurement_timestamp: i64,
    /// The heart rate the phone sent, bpm (not the server's: that is in `data.analysis`).
    pub heartrate: Option<f64>,
    /// The server's indicator (`data.indicator`).
    pub indicator: Option<String>,
    pub tags: Vec<String>,
    /// `analyzed`, or `analysis_failed` when the analysis found no result.
    pub status: Status,
    /// How the analysis went, for the metrics the caller records.
    pub run: AnalysisRun,
}

/// How one analysis went: its source, whether the recording could be read, and how long it
/// took. The domain measures; its callers record (`telemetry::metrics::analysis`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnalysisRun {
    pub source: &'static str,
    pub readable: bool,
    pub took: std::time::Duration,
}

/// The fields an analysis writes into a measurement's `data`, as the wire shows them:
/// `indicator`, `mostSevereLabel: {key, color}`, `af` (1 or 0) and `analysis`.
pub fn analysis_fields(analysis: &Analysis) -> Map<String, Value> {
    let verdict = analysis.verdict();
    let mut fields = Map::new();
    fields.insert("indicator".into(), verdict.indicator.as_str().into());
    fields.insert(
        "mostSevereLabel".into(),
        serde_json::json!({"key": verdict.key.as_str(), "color": verdict.colour.as_str()}),
    );
    fields.insert("af".into(), u8::from(verdict.af).into());
    // The analysis is plain data (numbers, strings, lists); serialising it cannot fail, and
    // if it ever did the result would still be recorded as failed rather than lost.
    let analysis = serde_json::to_value(analysis).unwrap_or(Value::Null);
    fields.insert("analysis".into(), analysis);
    fields
}

/// Analyses the recording in a measurement's `data`. The analysis is built never to panic; if
/// a fault in it ever did, the measurement is still stored (and can be analysed again once
/// the fault is fixed), as failed with `bad_signal_quality`, instead of the upload being lost
/// to an internal error.
pub fn analyse(data: &Map<String, Value>) -> (Analysis, AnalysisRun) {
    let started = std::time::Instant::now();
    let analysis = analyse_guarded(data);
    let run = AnalysisRun {
        source: analysis.source.as_str(),
        readable: !analysis.failed(),
        took: started.elapsed(),
    };
    (analysis, run)
}

fn analyse_guarded(data: &Map<String, Value>) -> Analysis {
    // The panic itself is reported by the process' panic hook, with its location.
    std::panic::catch_unwind(|| analyse_payload(data)).unwrap_or_else(|_| {
        let camera = data.contains_key("time") || data.contains_key("quadrants");
        let source = if camera {
            Source::Camera
        } else {
            Source::RrIntervals
        };
        Analysis::unreadable(source, Abnormality::BadSignalQuality)
    })
}

/// Writes an analysis into `data`: fields already there keep their place (a re-analysis
/// changes values, not the order of the document), new ones are appended.
pub fn write_analysis(data: &mut Map<String, Value>, analysis: &Analysis) {
    for (key, value) in analysis_fields(analysis) {
        data.insert(key, value);
    }
}

/// The status a measurement in `current` has once `analysis` is its result. `measured`,
/// `analyzed` and `analysis_failed` follow the result. `pending_review` and `reviewed` are a
/// person's doing (a patient asked, a physician answered) and stay as they are, also when a
/// new analysis fails: a re-run of the software must not drop a review request from a
/// physician's list or hide a review; the failure shows in the result itself
/// (`indicator: quality`).
pub fn status_after(current: Status, analysis: &Analysis) -> Status {
    match current {
        Status::PendingReview | Status::Reviewed => current,
        Status::Measured | Status::Analyzed | Status::AnalysisFailed => {
            if analysis.failed() {
                Status::AnalysisFailed
            } else {
                Status::Analyzed
            }
        }
    }
}

fn tags_of(value: Option<&Value>) -> Result<Vec<String>, DataError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = value else {
        return Err(invalid("tags", "must be an array of strings"));
    };
    if items.len() > MAX_TAGS {
        return Err(invalid("tags", format!("may hold at most {MAX_TAGS} tags")));
    }
    let mut tags = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(tag) if !tag.is_empty() && tag.chars().count() <= MAX_TAG_CHARS => {
                if !tags.contains(tag) {
                    tags.push(tag.clone());
                }
            }
            _ => {
                return Err(invalid(
                    format!("tags[{i}]"),
                    format!("must be a string of 1 to {MAX_TAG_CHARS} characters"),
                ));
            }
        }
    }
    Ok(tags)
}

impl NewMeasurement {
    /// Parses the bare `data` object of `POST /data/v1/measurements/documents` and analyses
    /// its recording. Only the envelope's fields are checked here: a camera trace that cannot
    /// be read is not an error of the upload but a failed analysis, stored with its reason.
    /// Every signal array is bounded ([`recording_limits`]), so the cost of the analysis is
    /// too. Pure, and CPU-bound in proportion to the payload's signal.
    pub fn parse(value: Value) -> Result<Self, DataError> {
        let Value::Object(mut data) = value else {
            return Err(invalid("data", "must be a JSON object"));
        };
        if let Some(field) = SERVER_FIELDS.iter().find(|f| data.contains_key(**f)) {
            return Err(invalid(*field, "is written by the server"));
        }
        recording_limits::check_payload(&data)?;
        let measurement_timestamp = match data.get("measurement_timestamp") {
            None | Some(Value::Null) => return Err(DataError::Missing("measurement_timestamp")),
            Some(v) => v
                .as_i64()
                .filter(|ms| (0..=MAX_MILLIS).contains(ms))
                .ok_or_else(|| {
                    invalid(
                        "measurement_timestamp",
                        "must be epoch milliseconds (a whole number) from 0 (1970) to the end of 9999",
                    )
                })?,
        };
        let heartrate = match data.get("heartrate") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_f64()
                    .ok_or_else(|| invalid("heartrate", "must be a number (beats per minute)"))?,
            ),
        };
        if let Some(rr) = data.get("rr_intervals").filter(|v| !v.is_null()) {
            let valid = rr.as_array().is_some_and(|items| {
                items
                    .iter()
                    .all(|i| i.as_f64().is_some_and(|ms| ms > 0.0 && ms < 10_000.0))
            });
            if !valid {
                return Err(invalid(
                    "rr_intervals",
                    "must be an array of intervals in milliseconds (0 to 10000)",
                ));
            }
        }
        if data
            .get("context")
            .is_some_and(|c| !c.is_null() && !c.is_object())
        {
            return Err(invalid("context", "must be an object"));
        }
        let tags = tags_of(data.get("tags"))?;
        let (analysis, run) = analyse(&data);
        let status = status_after(Status::Measured, &analysis);
        let indicator = Some(analysis.verdict().indicator.as_str().to_owned());
        write_analysis(&mut data, &analysis);
        Ok(NewMeasurement {
            data,
            measurement_timestamp,
            heartrate,
            indicator,
            tags,
            status,
            run,
        })
    }
}

/// A physician's review.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Review {
    /// The clinical note, for the care team (`diagnosis` on the wire).
    pub diagnosis: Option<String>,
    /// The conclusion: a rhythm label's wire name (`sinus_rhythm`, …) or free text.
    pub label: Option<String>,
    /// The note written for the patient: the only note the patient's portal and the PDF show.
    pub patient_note: Option<String>,
}

/// The longest conclusion, in characters.
const LABEL_LIMIT: usize = 100;
/// The longest note (for the care team, or for the patient), in characters.
const NOTE_LIMIT: usize = 2000;

impl Review {
    /// The parts the review writes a text to, by their wire names (what an audit record
    /// names: never the text, which is health data and may be free text). An empty part is
    /// not named: the portal's form sends every part, the API only those it changes, and the
    /// two doors' records of the same review are the same.
    pub fn fields(&self) -> Vec<&'static str> {
        let written = |part: &Option<String>| part.as_deref().is_some_and(|t| !t.is_empty());
        [
            ("label", written(&self.label)),
            ("diagnosis", written(&self.diagnosis)),
            ("patient_note", written(&self.patient_note)),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect()
    }

    /// A review from its texts (the portal's form): each trimmed and held to its limit.
    pub fn parse(
        label: Option<&str>,
        diagnosis: Option<&str>,
        patient_note: Option<&str>,
    ) -> Result<Self, DataError> {
        let text = |field, limit, text: Option<&str>| {
            text.map(|t| review_text(field, limit, t)).transpose()
        };
        Ok(Review {
            label: text("label", LABEL_LIMIT, label)?,
            diagnosis: text("diagnosis", NOTE_LIMIT, diagnosis)?,
            patient_note: text("patient_note", NOTE_LIMIT, patient_note)?,
        })
    }

    fn is_empty(&self) -> bool {
        self.diagnosis.is_none() && self.label.is_none() && self.patient_note.is_none()
    }
}

/// One text of a review, trimmed, if it is within `limit` characters.
fn review_text(field: &str, limit: usize, text: &str) -> Result<String, DataError> {
    if text.chars().count() <= limit {
        Ok(text.trim().to_owned())
    } else {
        Err(not_review_text(field, limit))
    }
}

fn not_review_text(field: &str, limit: usize) -> DataError {
    invalid(field, format!("must be text of at most {limit} characters"))
}

/// A parsed partial update of a measurement.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeasurementUpdate {
    /// New `context` (replaces the old one).
    pub context: Option<Value>,
    /// New `tags` (replace the old ones).
    pub tags: Option<Vec<String>>,
    /// Ask a physician to review (`analyzed` → `pending_review`).
    pub review_requested: bool,
    /// A review (staff only): `→ reviewed`.
    pub review: Option<Review>,
    /// The first field of the review the body named, for the refusal of a reader who may
    /// not review ([`MeasurementUpdate::check_author`]).
    first_review_field: Option<&'static str>,
}

impl MeasurementUpdate {
    /// A review, and nothing else.
    pub fn review(review: Review) -> Self {
        let first_review_field = [
            ("label", review.label.is_some()),
            ("diagnosis", review.diagnosis.is_some()),
            ("patient_note", review.patient_note.is_some()),
        ]
        .into_iter()
        .find_map(|(field, given)| given.then_some(field));
        MeasurementUpdate {
            review: (!review.is_empty()).then_some(review),
            first_review_field,
            ..MeasurementUpdate::default()
        }
    }

    /// Parses the body of `PUT /data/v1/measurements/documents/<id>`: `context`, `tags`,
    /// `review_requested`, and a review's `diagnosis`, `label` and `patient_note`, which only
    /// staff may write ([`MeasurementUpdate::check_author`]).
    pub fn parse(value: Value) -> Result<Self, DataError> {
        let Value::Object(fields) = value else {
            return Err(invalid("data", "must be a JSON object"));
        };
        let mut update = MeasurementUpdate::default();
        let mut review = Review::default();
        for (key, value) in &fields {
            match key.as_str() {
                "context" => {
                    if !value.is_object() {
                        return Err(invalid("context", "must be an object"));
                    }
                    update.context = Some(value.clone());
                }
                "tags" => update.tags = Some(tags_of(Some(value))?),
                "review_requested" => match value {
                    Value::Bool(b) => update.review_requested = *b,
                    _ => return Err(invalid("review_requested", "must be true or false")),
                },
                "diagnosis" | "label" | "patient_note" => {
                    let (field, slot, limit) = match key.as_str() {
                        "label" => ("label", &mut review.label, LABEL_LIMIT),
                        "diagnosis" => ("diagnosis", &mut review.diagnosis, NOTE_LIMIT),
                        _ => ("patient_note", &mut review.patient_note, NOTE_LIMIT),
                    };
                    update.first_review_field.get_or_insert(field);
                    let Value::String(text) = value else {
                        return Err(not_review_text(field, limit));
                    };
                    *slot = Some(review_text(field, limit, text)?);
                }
                server if SERVER_FIELDS.contains(&server) => {
                    return Err(invalid(server, "is written by the server"));
                }
                other => {
                    return Err(invalid(
                        other.chars().take(64).collect::<String>(),
                        "cannot be changed (changeable: context, tags, review_requested; staff also diagnosis, label, patient_note)",
                    ));
                }
            }
        }
        if !review.is_empty() {
            update.review = Some(review);
        }
        if fields.is_empty() {
            return Err(invalid("data", "must change at least one field"));
        }
        Ok(update)
    }

    /// Whether a reader may make this update: a review only if `staff` (the staff of the
    /// patient's groups, or an administrator).
    pub fn check_author(&self, staff: bool) -> Result<(), DataError> {
        match self.first_review_field {
            Some(field) if !staff => Err(DataError::StaffOnly(field.to_owned())),
            _ => Ok(()),
        }
    }

    /// The names of the fields this update changes, for the audit trail (never their values).
    pub fn changed_fields(&self) -> Vec<&'static str> {
        let mut fields = Vec::new();
        if self.context.is_some() {
            fields.push("context");
        }
        if self.tags.is_some() {
            fields.push("tags");
        }
        if self.review_requested {
            fields.push("review_requested");
        }
        if self.review.is_some() {
            fields.push("review");
        }
        fields
    }

    /// Writes the update into a measurement's `data`: `context` and `tags` replace the old
    /// values; a review is merged into `review` with the reviewer and the time (epoch ms).
    pub fn apply_to(&self, data: &mut Map<String, Value>, reviewer_id: &Id, now: i64) {
        if let Some(context) = &self.context {
            data.insert("context".into(), context.clone());
        }
        if let Some(tags) = &self.tags {
            data.insert("tags".into(), Value::from(tags.clone()));
        }
        if let Some(review) = &self.review {
            let mut stored = data
                .get("review")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            if let Some(diagnosis) = &review.diagnosis {
                stored.insert("diagnosis".into(), Value::from(diagnosis.clone()));
            }
            if let Some(label) = &review.label {
                stored.insert("label".into(), Value::from(label.clone()));
            }
            if let Some(note) = &review.patient_note {
                stored.insert("patient_note".into(), Value::from(note.clone()));
            }
            stored.insert("reviewer_id".into(), Value::from(reviewer_id.to_string()));
            stored.insert("review_timestamp".into(), Value::from(now));
            data.insert("review".into(), Value::Object(stored));
        }
    }

    /// The status after this update, or why it is not allowed from `current`.
    pub fn next_status(&self, current: Status) -> Result<Status, String> {
        if self.review.is_some() {
            return if current.has_results() {
                Ok(Status::Reviewed)
            } else {
                Err(format!(
                    "a measurement with status `{}` has no results to review",
                    current.as_str()
                ))
            };
        }
        if self.review_requested {
            return match current {
                Status::Analyzed => Ok(Status::PendingReview),
                Status::PendingReview | Status::Reviewed => Ok(current),
                other => Err(format!(
                    "a measurement with status `{}` cannot be reviewed",
                    other.as_str()
                )),
            };
        }
        Ok(current)
    }
}

/// The few fields of a measurement that periodic reports and lists show, read from its `data`
/// once when it is stored or changed, so that reports over many measurements never parse
/// payloads. Rows written before a field existed read it as its default.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// The physician's conclusion (`data.review.label`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Symptoms reported with the measurement (`data.context.symptoms`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symptoms: Vec<String>,
    /// The analysis' signal quality class (`data.analysis.quality.class`): `good`, `fair` or
    /// `poor`; `poor` when there is no analysis.
    #[serde(default = "poor")]
    pub quality: String,
    /// The server's heart rate (`data.analysis.heart_rate`), bpm; none when the analysis failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heart_rate: Option<f64>,
    /// The server's headline result (`data.mostSevereLabel.key`): `regular`,
    /// `possibly_irregular`, `possible_atrial_fibrillation`, `quality_too_low`, `no_result`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// The rhythm labels the analysis gave (`data.analysis.rhythm.labels`), least severe first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
}

fn poor() -> String {
    "poor".to_owned()
}

/// A physician's conclusion as a measurement's row keeps it (`data.review`): the label, and
/// who gave it when. A review that gives no label (a note only) concludes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conclusion {
    /// A rhythm label's wire name, or free text.
    pub label: String,
    pub reviewer: Option<Id>,
    /// Epoch ms.
    pub at: Option<i64>,
}

impl Conclusion {
    /// The conclusion in a measurement's `data`, if it has one.
    pub fn of(data: &Map<String, Value>) -> Option<Self> {
        let review = data.get("review")?.as_object()?;
        let label = review
            .get("label")
            .and_then(Value::as_str)
            .filter(|label| !label.is_empty())?;
        Some(Conclusion {
            label: label.to_owned(),
            reviewer: review
                .get("reviewer_id")
                .and_then(Value::as_str)
                .and_then(|id| Id::parse(id).ok()),
            at: review.get("review_timestamp").and_then(Value::as_i64),
        })
    }
}

impl Summary {
    /// Reads the summary of a measurement's `data` (the payload with the server's fields).
    pub fn of(data: &Map<String, Value>) -> Self {
        let label = data
            .get("review")
            .and_then(|r| r.get("label"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        let symptoms = string_list(data.get("context").and_then(|c| c.get("symptoms")));
        let analysis = data.get("analysis");
        let quality = analysis
            .and_then(|a| a.get("quality"))
            .and_then(|q| q.get("class"))
            .and_then(Value::as_str)
            .map_or_else(poor, str::to_owned);
        Summary {
            label,
            symptoms,
            quality,
            heart_rate: analysis
                .and_then(|a| a.get("heart_rate"))
                .and_then(Value::as_f64),
            result: data
                .get("mostSevereLabel")
                .and_then(|l| l.get("key"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            labels: string_list(
                analysis
                    .and_then(|a| a.get("rhythm"))
                    .and_then(|r| r.get("labels")),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A regular series of `n` intervals of `ms`, with a little jitter as real beats have.
    fn regular(ms: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| ms + [0.0, 6.0, -4.0, 3.0, -5.0][i % 5])
            .collect()
    }

    #[test]
    fn the_analysis_decides_the_status_and_the_phone_keeps_its_heart_rate() {
        let m = NewMeasurement::parse(json!({
            "measurement_timestamp": 5,
            "heartrate": 99,
            "rr_intervals": regular(833.0, 70),
            "tags": ["a", "a", "b"],
        }))
        .unwrap();
        assert_eq!(m.status, Status::Analyzed);
        assert_eq!(m.heartrate, Some(99.0), "the phone's value, as sent");
        assert_eq!(m.data["heartrate"], 99);
        assert_eq!(m.tags, vec!["a", "b"]);
        assert_eq!(m.indicator.as_deref(), Some("normal"));
        assert_eq!(m.data["indicator"], "normal");
        assert_eq!(
            m.data["mostSevereLabel"],
            json!({"key": "regular", "color": "green"})
        );
        assert_eq!(m.data["af"], 0);
        let bpm = m.data["analysis"]["heart_rate"].as_f64().unwrap();
        assert!((bpm - 72.0).abs() < 1.0, "{bpm}");
        let keys: Vec<&str> = m.data.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "measurement_timestamp",
                "heartrate",
                "rr_intervals",
                "tags",
                "indicator",
                "mostSevereLabel",
                "af",
                "analysis"
            ],
            "the payload first, as sent, then the server's fields"
        );

        // A heart rate alone is no signal: the phone's value does not make a result.
        for payload in [
            json!({"measurement_timestamp": 5, "heartrate": 72}),
            json!({"measurement_timestamp": 5}),
        ] {
            let m = NewMeasurement::parse(payload).unwrap();
            assert_eq!(m.status, Status::AnalysisFailed);
            assert_eq!(m.data["indicator"], "quality");
            assert_eq!(m.data["mostSevereLabel"]["key"], "no_result");
            assert_eq!(m.data["analysis"]["abnormalities"], json!(["too_short"]));
        }
    }

    #[test]
    fn re_analysis_moves_results_but_not_reviews() {
        let ok = crate::analysis::analyse_payload(
            json!({"rr_intervals": regular(800.0, 70)})
                .as_object()
                .unwrap(),
        );
        let failed = crate::analysis::analyse_payload(&Map::new());
        assert!(failed.failed());
        for current in [Status::Measured, Status::Analyzed, Status::AnalysisFailed] {
            assert_eq!(status_after(current, &failed), Status::AnalysisFailed);
        }
        for current in [Status::PendingReview, Status::Reviewed] {
            assert_eq!(status_after(current, &failed), current);
        }
        assert!(!ok.failed());
        assert_eq!(status_after(Status::AnalysisFailed, &ok), Status::Analyzed);
        assert_eq!(status_after(Status::Reviewed, &ok), Status::Reviewed);
    }

    #[test]
    fn a_rewritten_analysis_keeps_its_place() {
        let mut data = json!({"measurement_timestamp": 1, "analysis": {}, "af": 1, "z": 2})
            .as_object()
            .cloned()
            .unwrap();
        write_analysis(&mut data, &crate::analysis::analyse_payload(&Map::new()));
        let keys: Vec<&str> = data.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "measurement_timestamp",
                "analysis",
                "af",
                "z",
                "indicator",
                "mostSevereLabel"
            ]
        );
        assert_eq!(data["af"], 0);
    }

    #[test]
    fn summaries_read_the_server_result_and_old_rows_still_read() {
        let m = NewMeasurement::parse(json!({
            "measurement_timestamp": 5,
            "context": {"symptoms": ["dizzy"]},
        }))
        .unwrap();
        let summary = Summary::of(&m.data);
        assert_eq!(summary.quality, "poor");
        assert_eq!(summary.heart_rate, None);
        assert_eq!(summary.result.as_deref(), Some("no_result"));
        assert_eq!(summary.symptoms, vec!["dizzy"]);
        assert!(summary.labels.is_empty());
        let old: Summary = serde_json::from_str(r#"{"label":"normal","quality":"good"}"#).unwrap();
        assert_eq!(old.label.as_deref(), Some("normal"));
        assert_eq!((old.heart_rate, old.result), (None, None));
    }

    #[test]
    fn payload_errors_name_the_field() {
        assert_eq!(
            NewMeasurement::parse(json!({})),
            Err(DataError::Missing("measurement_timestamp"))
        );
        let cases = [
            (json!([1]), "data"),
            (
                json!({"measurement_timestamp": "today"}),
                "measurement_timestamp",
            ),
            (
                json!({"measurement_timestamp": i64::MIN}),
                "measurement_timestamp",
            ),
            (
                json!({"measurement_timestamp": MAX_MILLIS + 1}),
                "measurement_timestamp",
            ),
            (
                json!({"measurement_timestamp": u64::MAX}),
                "measurement_timestamp",
            ),
            (
                json!({"measurement_timestamp": 1, "heartrate": "fast"}),
                "heartrate",
            ),
            (
                json!({"measurement_timestamp": 1, "rr_intervals": [800, -1]}),
                "rr_intervals",
            ),
            (
                json!({"measurement_timestamp": 1, "rr_intervals": vec![800; 18_001]}),
                "rr_intervals",
            ),
            (
                json!({"measurement_timestamp": 1, "time": vec![1; 30_001]}),
                "time",
            ),
            (json!({"measurement_timestamp": 1, "tags": "x"}), "tags"),
            (json!({"measurement_timestamp": 1, "tags": [1]}), "tags[0]"),
            (json!({"measurement_timestamp": 1, "context": 3}), "context"),
            (json!({"measurement_timestamp": 1, "review": {}}), "review"),
            (
                json!({"measurement_timestamp": 1, "indicator": "normal"}),
                "indicator",
            ),
            (
                json!({"measurement_timestamp": 1, "mostSevereLabel": {}}),
                "mostSevereLabel",
            ),
            (json!({"measurement_timestamp": 1, "af": 0}), "af"),
            (
                json!({"measurement_timestamp": 1, "analysis": null}),
                "analysis",
            ),
        ];
        for (payload, field) in cases {
            match NewMeasurement::parse(payload.clone()) {
                Err(DataError::Invalid { field: f, .. }) => assert_eq!(f, field, "{payload}"),
                other => panic!("{payload}: {other:?}"),
            }
        }
    }

    #[test]
    fn updates_follow_roles_and_states() {
        let patient =
            MeasurementUpdate::parse(json!({"tags": ["x"], "review_requested": true})).unwrap();
        assert_eq!(patient.check_author(false), Ok(()));
        assert_eq!(
            patient.next_status(Status::Analyzed),
            Ok(Status::PendingReview)
        );
        assert!(patient.next_status(Status::AnalysisFailed).is_err());
        let author = |body: Value, staff: bool| MeasurementUpdate::parse(body)?.check_author(staff);
        assert_eq!(
            author(json!({"diagnosis": "AF"}), false),
            Err(DataError::StaffOnly("diagnosis".into()))
        );
        assert_eq!(
            author(
                json!({"tags": [], "patient_note": "All is well", "label": "x"}),
                false
            ),
            Err(DataError::StaffOnly("patient_note".into()))
        );
        assert_eq!(author(json!({"diagnosis": "AF"}), true), Ok(()));
        let staff = MeasurementUpdate::parse(
            json!({"diagnosis": " Sinus rhythm ", "label": "normal", "patient_note": " Fine "}),
        )
        .unwrap();
        assert_eq!(
            staff.review,
            Some(Review {
                diagnosis: Some("Sinus rhythm".into()),
                label: Some("normal".into()),
                patient_note: Some("Fine".into()),
            })
        );
        let mut data = Map::new();
        staff.apply_to(&mut data, &Id::ZERO, 7);
        assert_eq!(data["review"]["patient_note"], "Fine");
        assert_eq!(data["review"]["diagnosis"], "Sinus rhythm");
        assert!(MeasurementUpdate::parse(json!({"patient_note": "x".repeat(2001)})).is_err());
        assert!(MeasurementUpdate::parse(json!({"label": 7})).is_err());
        let form = Review::parse(Some(" normal "), Some(""), Some(" Fine ")).unwrap();
        assert_eq!(form.label.as_deref(), Some("normal"));
        assert_eq!(form.patient_note.as_deref(), Some("Fine"));
        assert_eq!(
            form.fields(),
            ["label", "patient_note"],
            "the parts with a text, never the texts"
        );
        assert!(Review::parse(Some(&"x".repeat(101)), None, None).is_err());
        assert_eq!(
            MeasurementUpdate::review(form).check_author(false),
            Err(DataError::StaffOnly("label".into()))
        );
        assert_eq!(
            staff.next_status(Status::PendingReview),
            Ok(Status::Reviewed)
        );
        assert!(staff.next_status(Status::AnalysisFailed).is_err());
        assert!(MeasurementUpdate::parse(json!({"heartrate": 50})).is_err());
        for field in SERVER_FIELDS {
            assert_eq!(
                MeasurementUpdate::parse(json!({ field: 1 })),
                Err(invalid(field, "is written by the server"))
            );
        }
        assert!(MeasurementUpdate::parse(json!({})).is_err());
    }
}
