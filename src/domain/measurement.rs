//! Measurements as the camera apps upload them: the payload is kept verbatim; the fields Tacho
//! queries and reports on are read from it here, once.

use serde_json::{Map, Value};

use super::json::string_list;

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

/// Heart rates outside this range (bpm) are not a usable result.
pub const USABLE_HEART_RATE: std::ops::RangeInclusive<f64> = 20.0..=300.0;
/// Fields the server writes into `data`; clients may not send them.
pub const SERVER_FIELDS: [&str; 1] = ["review"];
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

fn invalid(field: impl Into<String>, rule: impl Into<String>) -> DataError {
    DataError::Invalid {
        field: field.into(),
        rule: rule.into(),
    }
}

/// A new measurement, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMeasurement {
    /// The payload as sent.
    pub data: Map<String, Value>,
    pub measurement_timestamp: i64,
    pub heartrate: Option<f64>,
    pub indicator: Option<String>,
    pub tags: Vec<String>,
    /// `analyzed` with a usable heart rate, else `analysis_failed`.
    pub status: Status,
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
    /// Parses the bare `data` object of `POST /data/v1/measurements/documents`.
    pub fn parse(value: Value) -> Result<Self, DataError> {
        let Value::Object(data) = value else {
            return Err(invalid("data", "must be a JSON object"));
        };
        if let Some(field) = SERVER_FIELDS.iter().find(|f| data.contains_key(**f)) {
            return Err(invalid(*field, "is written by the server"));
        }
        let measurement_timestamp = match data.get("measurement_timestamp") {
            None | Some(Value::Null) => return Err(DataError::Missing("measurement_timestamp")),
            Some(v) => v.as_i64().filter(|ms| *ms >= 0).ok_or_else(|| {
                invalid(
                    "measurement_timestamp",
                    "must be epoch milliseconds (a whole number)",
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
        let indicator = match data.get("indicator") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if !s.is_empty() && s.chars().count() <= 64 => Some(s.clone()),
            Some(_) => {
                return Err(invalid(
                    "indicator",
                    "must be a string of 1 to 64 characters",
                ));
            }
        };
        if data
            .get("context")
            .is_some_and(|c| !c.is_null() && !c.is_object())
        {
            return Err(invalid("context", "must be an object"));
        }
        let tags = tags_of(data.get("tags"))?;
        let usable = heartrate.is_some_and(|hr| USABLE_HEART_RATE.contains(&hr));
        let status = if usable {
            Status::Analyzed
        } else {
            Status::AnalysisFailed
        };
        Ok(NewMeasurement {
            data,
            measurement_timestamp,
            heartrate,
            indicator,
            tags,
            status,
        })
    }
}

/// A physician's review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    pub diagnosis: Option<String>,
    pub label: Option<String>,
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
}

impl MeasurementUpdate {
    /// Parses the body of `PUT /data/v1/measurements/documents/<id>`. Patients may change
    /// `context`, `tags` and set `review_requested`; staff may also write `diagnosis` and `label`.
    pub fn parse(value: Value, staff: bool) -> Result<Self, DataError> {
        let Value::Object(fields) = value else {
            return Err(invalid("data", "must be a JSON object"));
        };
        let mut update = MeasurementUpdate::default();
        let mut review = Review {
            diagnosis: None,
            label: None,
        };
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
                "diagnosis" | "label" => {
                    if !staff {
                        return Err(DataError::StaffOnly(key.clone()));
                    }
                    let limit = if key == "label" { 100 } else { 2000 };
                    let text = match value {
                        Value::String(s) if s.chars().count() <= limit => s.trim().to_owned(),
                        _ => {
                            return Err(invalid(
                                key.as_str(),
                                format!("must be text of at most {limit} characters"),
                            ));
                        }
                    };
                    if key == "label" {
                        review.label = Some(text);
                    } else {
                        review.diagnosis = Some(text);
                    }
                }
                other => {
                    return Err(invalid(
                        other.chars().take(64).collect::<String>(),
                        "cannot be changed (changeable: context, tags, review_requested; staff also diagnosis, label)",
                    ));
                }
            }
        }
        if review.diagnosis.is_some() || review.label.is_some() {
            update.review = Some(review);
        }
        if fields.is_empty() {
            return Err(invalid("data", "must change at least one field"));
        }
        Ok(update)
    }

    /// Writes the update into a measurement's `data`: `context` and `tags` replace the old
    /// values; a review is merged into `review` with the reviewer and the time (epoch ms).
    pub fn apply_to(&self, data: &mut Map<String, Value>, reviewer_id: &str, now: i64) {
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
            stored.insert("reviewer_id".into(), Value::from(reviewer_id));
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

/// Good with a heart rate and a still phone; fair when the phone moved; poor without a result.
pub fn signal_quality(data: &Map<String, Value>, has_heart_rate: bool) -> &'static str {
    if !has_heart_rate {
        return "poor";
    }
    let axis = |name: &str| -> Vec<f64> {
        data.get("acc")
            .and_then(|a| a.get(name))
            .and_then(Value::as_array)
            .map(|v| v.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };
    let (x, y, z) = (axis("x"), axis("y"), axis("z"));
    let n = x.len().min(y.len()).min(z.len());
    if n < 2 {
        return "good";
    }
    let magnitudes: Vec<f64> = (0..n)
        .map(|i| (x[i] * x[i] + y[i] * y[i] + z[i] * z[i]).sqrt())
        .collect();
    let mean = magnitudes.iter().sum::<f64>() / n as f64;
    let deviation = (magnitudes.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
    if deviation > 0.05 { "fair" } else { "good" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_heart_rate_makes_a_measurement_analysed() {
        let m = NewMeasurement::parse(
            json!({"measurement_timestamp": 5, "heartrate": 72, "tags": ["a", "a", "b"]}),
        )
        .unwrap();
        assert_eq!(m.status, Status::Analyzed);
        assert_eq!(m.heartrate, Some(72.0));
        assert_eq!(m.tags, vec!["a", "b"]);
        for payload in [
            json!({"measurement_timestamp": 5}),
            json!({"measurement_timestamp": 5, "heartrate": 0}),
            json!({"measurement_timestamp": 5, "heartrate": null}),
        ] {
            assert_eq!(
                NewMeasurement::parse(payload).unwrap().status,
                Status::AnalysisFailed
            );
        }
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
                json!({"measurement_timestamp": 1, "heartrate": "fast"}),
                "heartrate",
            ),
            (
                json!({"measurement_timestamp": 1, "rr_intervals": [800, -1]}),
                "rr_intervals",
            ),
            (json!({"measurement_timestamp": 1, "tags": "x"}), "tags"),
            (json!({"measurement_timestamp": 1, "tags": [1]}), "tags[0]"),
            (json!({"measurement_timestamp": 1, "context": 3}), "context"),
            (json!({"measurement_timestamp": 1, "review": {}}), "review"),
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
            MeasurementUpdate::parse(json!({"tags": ["x"], "review_requested": true}), false)
                .unwrap();
        assert_eq!(
            patient.next_status(Status::Analyzed),
            Ok(Status::PendingReview)
        );
        assert!(patient.next_status(Status::AnalysisFailed).is_err());
        assert_eq!(
            MeasurementUpdate::parse(json!({"diagnosis": "AF"}), false),
            Err(DataError::StaffOnly("diagnosis".into()))
        );
        let staff = MeasurementUpdate::parse(
            json!({"diagnosis": " Sinus rhythm ", "label": "normal"}),
            true,
        )
        .unwrap();
        assert_eq!(
            staff.review,
            Some(Review {
                diagnosis: Some("Sinus rhythm".into()),
                label: Some("normal".into())
            })
        );
        assert_eq!(
            staff.next_status(Status::PendingReview),
            Ok(Status::Reviewed)
        );
        assert!(staff.next_status(Status::AnalysisFailed).is_err());
        assert!(MeasurementUpdate::parse(json!({"heartrate": 50}), true).is_err());
        assert!(MeasurementUpdate::parse(json!({}), true).is_err());
    }
}
