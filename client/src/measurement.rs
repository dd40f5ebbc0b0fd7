//! Measurements (`/data/v1/measurements`) and their partial updates.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::enums::wire_enum;

wire_enum! {
    /// Where a measurement stands.
    MeasurementStatus {
        /// Stored, not analysed yet.
        Measured => "measured",
        /// Analysed: results are in `data`, a report can be made.
        Analyzed => "analyzed",
        /// The patient asked for a review.
        PendingReview => "pending_review",
        /// A physician reviewed it.
        Reviewed => "reviewed",
        /// The signal could not be analysed.
        AnalysisFailed => "analysis_failed",
    }
}

impl MeasurementStatus {
    /// Whether the measurement has results, which a report needs.
    pub fn has_results(&self) -> bool {
        matches!(
            self,
            MeasurementStatus::Analyzed
                | MeasurementStatus::PendingReview
                | MeasurementStatus::Reviewed
        )
    }
}

/// A measurement document: the server's envelope around the payload the app sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Measurement {
    /// The measurement id (24 hex characters).
    pub id: String,
    /// The user who measured.
    pub creator_id: String,
    /// Users the measurement belongs to.
    #[serde(default)]
    pub user_ids: Vec<String>,
    /// The groups whose staff see it (the patient's active groups when it was made).
    #[serde(default)]
    pub group_ids: Vec<String>,
    /// Where the measurement stands.
    pub status: MeasurementStatus,
    /// The payload as sent, with the analysis results and review added by the server.
    pub data: Value,
    /// When it was stored.
    pub creation_timestamp: DateTime<Utc>,
    /// When it last changed; a report made before this is out of date.
    pub update_timestamp: DateTime<Utc>,
    /// When its status last changed.
    #[serde(default)]
    pub status_changed_timestamp: Option<DateTime<Utc>>,
}

wire_enum! {
    /// How urgent the server's result is (`data.indicator`).
    Indicator {
        /// Sinus rhythm, or isolated premature beats.
        Normal => "normal",
        /// Slow, fast, frequent premature beats or an irregular rhythm.
        Warning => "warning",
        /// Possible atrial fibrillation.
        Urgent => "urgent",
        /// No rhythm result: the recording could not be analysed.
        Quality => "quality",
    }
}

wire_enum! {
    /// The server's headline result (`data.mostSevereLabel.key`).
    ResultKey {
        /// A regular rhythm (possibly slow or fast: see the indicator).
        Regular => "regular",
        /// Frequent premature beats or an irregular rhythm.
        PossiblyIrregular => "possibly_irregular",
        /// Irregularly irregular, as in atrial fibrillation.
        PossibleAtrialFibrillation => "possible_atrial_fibrillation",
        /// A signal was recorded but could not be read.
        QualityTooLow => "quality_too_low",
        /// No signal, or far too little.
        NoResult => "no_result",
    }
}

/// The server's analysis of a measurement, read from its `data` (see "Rhythm analysis" in the
/// server's `docs/api.md`). Tacho screens; it does not diagnose.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalysisResult {
    /// How urgent it is.
    pub indicator: Indicator,
    /// The headline result.
    pub key: ResultKey,
    /// The result's colour: `green`, `orange`, `red` or `grey`.
    pub color: String,
    /// Whether the result is possible atrial fibrillation (`data.af` is 1).
    pub af: bool,
    /// The server's heart rate in beats per minute (not the phone's `data.heartrate`); none
    /// when the analysis failed.
    pub heart_rate: Option<f64>,
    /// The rhythm labels, least severe first (e.g. `sinus_rhythm`, `bradycardia`).
    pub labels: Vec<String>,
    /// Why there is no result (e.g. `too_short`); empty when there is one.
    pub abnormalities: Vec<String>,
}

impl Measurement {
    /// The server's analysis, or none for a measurement stored before the server analysed
    /// measurements.
    ///
    /// ```
    /// use tacho_client::{Indicator, Measurement, ResultKey};
    ///
    /// let measurement: Measurement = serde_json::from_value(serde_json::json!({
    ///     "id": "6740a0000000000000000001", "creatorId": "6740a0000000000000000002",
    ///     "status": "analyzed",
    ///     "creationTimestamp": "2026-11-22T08:00:00.000Z",
    ///     "updateTimestamp": "2026-11-22T08:00:00.000Z",
    ///     "data": {
    ///         "measurement_timestamp": 1795305600000_i64, "heartrate": 70,
    ///         "indicator": "normal", "mostSevereLabel": {"key": "regular", "color": "green"},
    ///         "af": 0,
    ///         "analysis": {"heart_rate": 71.6, "rhythm": {"labels": ["sinus_rhythm"]},
    ///                      "abnormalities": []}
    ///     }
    /// })).unwrap();
    /// let result = measurement.result().unwrap();
    /// assert_eq!((result.indicator, result.key), (Indicator::Normal, ResultKey::Regular));
    /// assert_eq!(result.heart_rate, Some(71.6));
    /// assert!(!result.af);
    /// ```
    pub fn result(&self) -> Option<AnalysisResult> {
        let data = &self.data;
        let strings = |value: &Value| -> Vec<String> {
            value
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|i| i.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let label = &data["mostSevereLabel"];
        let analysis = &data["analysis"];
        Some(AnalysisResult {
            indicator: Indicator::from(data["indicator"].as_str()?),
            key: ResultKey::from(label["key"].as_str()?),
            color: label["color"].as_str().unwrap_or_default().to_owned(),
            af: data["af"].as_i64() == Some(1),
            heart_rate: analysis["heart_rate"].as_f64(),
            labels: strings(&analysis["rhythm"]["labels"]),
            abnormalities: strings(&analysis["abnormalities"]),
        })
    }
}

/// The part of a measurement to change.
///
/// Patients may change `context` and `tags` and ask for a review; staff of the patient's
/// group may also write the review (`diagnosis`, `label`).
///
/// ```
/// use tacho_client::MeasurementUpdate;
///
/// let update = MeasurementUpdate {
///     tags: Some(vec!["after coffee".into()]),
///     review_requested: Some(true),
///     ..MeasurementUpdate::default()
/// };
/// assert_eq!(
///     serde_json::to_value(&update).unwrap(),
///     serde_json::json!({"tags": ["after coffee"], "review_requested": true})
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MeasurementUpdate {
    /// The circumstances: symptoms, activity, severity (an object).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
    /// Free tags; replace the stored ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// `true` asks a physician to review the measurement.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_requested: Option<bool>,
    /// Staff only: the clinical note, for the care team (the patient's pages never show it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<String>,
    /// Staff only: the conclusion, a rhythm label's wire name (e.g. `sinus_rhythm`) or free
    /// text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Staff only: the note to the patient, shown in the patient's portal and the PDF.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patient_note: Option<String>,
    /// Fields this version of the client has no name for, sent as they are.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}
