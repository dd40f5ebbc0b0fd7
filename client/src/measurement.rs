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
    /// Staff only: the physician's reading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<String>,
    /// Staff only: a short label, e.g. `normal`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Fields this version of the client has no name for, sent as they are.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}
